/* Fibers: user-space execution contexts, each a saved stack pointer on a
 * stack of its own, switched without the kernel. They are the mechanism
 * under the stackful waits (up_sleep_ns, up_event_wait, up_yield inside a
 * task): a task that waits switches from its fiber back to its worker's
 * scheduling context, and a worker later switches into it again, maybe on
 * another thread.
 *
 * Which switch the runtime uses, and why. Three were measured side by
 * side on the 2-vCPU development VM (experiments/fiber_switch --n 1e6
 * --rounds 15: peers interleaved in random order each round; median ns
 * per one-way switch of two runs, seeds 16 and 17, under a load average
 * of 40-50 from other builds):
 *   up__fiber_switch, this runtime's assembly (os/fiber_switch.c) 7.8, 9.0
 *   Boost.Context's jump_fcontext (libboost-context 1.74)         9.7, 8.2
 *   swapcontext, the ucontext fallback (os/fiber_ucontext.c)    406, 406
 * Ours and fcontext save the same registers and control words and run
 * at the same speed within the noise, far inside the 20 ns target;
 * swapcontext is 50x slower because every call makes a sigprocmask
 * system call. The runtime uses its own switch: equal speed, no C++
 * library at build or run time, the sanitizer annotations right around
 * it, and about 40 lines of assembly per architecture (x86-64 System V,
 * AArch64 AAPCS64) that the tests run on both. ucontext serves other
 * processors, chosen by CMake (UP_FIBER=ucontext forces it, so that its
 * path is tested on Linux too).
 *
 * Rules every caller must follow:
 *  - Switch only from the fiber running now: `from` is the context the
 *    calling code runs on.
 *  - Never let another thread resume `from` before the switch away from it
 *    is done. A fiber that parks itself must not publish itself (on an
 *    event's waiter list, a run queue) before switching: it passes the
 *    request through `arg`, and the context it switches to publishes it.
 *    Otherwise two threads could run on one stack.
 *  - Code on a fiber must not keep the address of a thread-local variable
 *    across a switch: the fiber may resume on another thread. This file's
 *    functions read thread-local data only before they switch.
 *  - A fiber's function must never return; it ends with up__fiber_exit.
 *
 * Sanitizers: AddressSanitizer is told of every switch
 * (__sanitizer_start_switch_fiber / __sanitizer_finish_switch_fiber), and
 * a stack is unpoisoned when a fiber is set up on it; ThreadSanitizer gets
 * a fiber context per fiber, made at its first start (__tsan_create_fiber,
 * __tsan_switch_to_fiber). ASan's fake stacks (detect_stack_use_after_return)
 * are saved and restored across each switch.
 * Both are compiled in only in their sanitizer builds; the fields exist in
 * every build so that the layout does not depend on the build. */
#ifndef UP_FIBER_H
#define UP_FIBER_H

#include <stddef.h>

/* The smallest stack a fiber may be given: the first frame, a signal
 * frame (up to ~3.5 KiB on x86-64 with AVX-512 state) and room to work. */
#define UP__FIBER_MIN_STACK ((size_t)16 * 1024)

typedef struct up__fiber up__fiber;

/* A fiber's function: self is the fiber, arg the value passed by the
 * first switch into it. It must never return (see up__fiber_exit). */
typedef void (*up__fiber_fn)(up__fiber *self, void *arg);

/* Owner: the code that runs on the fiber or is about to resume it; a
 * fiber is handed between threads only through the caller's own
 * synchronization (a release store or a lock), which orders these fields
 * like any other data. */
struct up__fiber {
    void *ctx;           /* the backend's saved context while suspended */
    char *stack_lo;      /* usable stack [stack_lo, stack_lo + stack_size); NULL: a thread's own */
    size_t stack_size;   /* bytes usable */
    size_t guard_size;   /* bytes of inaccessible guard just below stack_lo, 0 when none */
    up__fiber_fn fn;     /* run by the first switch into the fiber */
    void *tsan;          /* ThreadSanitizer's fiber context (TSan builds) */
    void *asan_fake;     /* AddressSanitizer's fake stack across a switch (ASan builds) */
    const void *asan_lo; /* a thread context's stack as ASan reports it (ASan builds) */
    size_t asan_size;
    void *handoff; /* the value of the switch into it (sanitizer builds) */
};

/* Makes f the calling thread's own context (its native stack), the one a
 * worker's fibers switch back to. Resume it only on its own thread. */
void up__fiber_init_thread(up__fiber *f);

/* Prepares f to run fn(f, arg) on the stack [stack_lo, stack_lo +
 * stack_size) at the first switch into it (arg being that switch's
 * value). guard_size says how many bytes below stack_lo are a guard page
 * (0 if none), so that an overflow into it is reported as one. The stack
 * must stay mapped until the fiber has exited and been destroyed. 0, or
 * UP_EINVAL for a NULL f, stack or fn, or a stack under
 * UP__FIBER_MIN_STACK; UP_ENOMEM when the backend cannot make a context. */
int up__fiber_init(up__fiber *f, void *stack_lo, size_t stack_size, size_t guard_size,
                   up__fiber_fn fn);

/* Saves the running context into from (the fiber running now), then runs
 * to, which gets arg: as the return value of its own pending switch, or
 * as fn's argument when it starts. Returns when some thread switches back
 * to from, with the arg that switch passed. */
void *up__fiber_switch(up__fiber *from, up__fiber *to, void *arg);

/* The last switch of a fiber whose work is done: like up__fiber_switch,
 * but from is never resumed, and its stack may be reused or unmapped as
 * soon as to runs (to may destroy from). */
_Noreturn void up__fiber_exit(up__fiber *from, up__fiber *to, void *arg);

/* Frees what a sanitizer keeps for a fiber made by up__fiber_init that
 * is not running (exited, or never started). Nothing to do otherwise. */
void up__fiber_destroy(up__fiber *f);

/* Async-signal-safe, for the SIGSEGV handler: 1 when addr lies in the
 * guard of the fiber the calling thread runs now (then *guard_lo and
 * *stack_size describe it), else 0. */
int up__fiber_fault_in_guard(const void *addr, void **guard_lo, size_t *stack_size);

/* The switch this build uses: "x86_64", "aarch64" or "ucontext". */
const char *up__fiber_backend(void);

/* The backends' raw primitives, without sanitizer annotations (the
 * benchmark and the tests call them directly; everything else goes through
 * the functions above). jump saves the running context, stores it in
 * *save, resumes the context `to` and hands it arg; it returns the arg of
 * the jump that resumes the saved context. make prepares a context on a
 * stack that, when first jumped to, calls start(arg, data); start must
 * never return. The assembly pair exists on x86-64 and AArch64 only
 * (UP__FIBER_HAVE_ASM); the ucontext pair wherever <ucontext.h> does. */
#if defined(__x86_64__) || defined(__aarch64__)
#define UP__FIBER_HAVE_ASM 1
void *up__fiber_asm_jump(void **save, void *to, void *arg);
void *up__fiber_asm_make(void *stack_lo, size_t stack_size, void (*start)(void *arg, void *data),
                         void *data);
#endif
void *up__fiber_uc_jump(void **save, void *to, void *arg);
void *up__fiber_uc_make(void *stack_lo, size_t stack_size, void (*start)(void *arg, void *data),
                        void *data);

#endif
