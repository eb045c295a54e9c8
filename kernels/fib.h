/* Fibonacci by naive recursion: the classic test of task overhead, since
 * each call does almost nothing besides making two more. */
#ifndef UP_KERNEL_FIB_H
#define UP_KERNEL_FIB_H

#include <stdint.h>

/* fib(n) by the recursion itself (fib(0) = 0, fib(1) = 1), n <= 92. */
uint64_t up_k_fib(int n);
/* fib(n) by iteration: the reference the verifier uses. */
uint64_t up_k_fib_iter(int n);
/* Calls the recursion makes for fib(n), the root included:
 * 2 fib(n + 1) - 1. With every call a task, this is the task count. */
uint64_t up_k_fib_calls(int n);
/* 0 when r is fib(n). */
int up_k_fib_verify(int n, uint64_t r);

#endif
