/* Counting wrappers around the C allocator: every malloc, calloc,
 * realloc, aligned_alloc and posix_memalign of the process is counted
 * (calls and requested bytes), so a program can measure the allocations of
 * a stretch of code. They replace the allocator symbols, which works with
 * glibc (they forward to __libc_malloc and friends); elsewhere, and in
 * sanitizer builds (which bring their own allocator), nothing is replaced
 * and alloc_count_enabled() says so. Link this file into the program
 * itself, never into a library. */
#ifndef UP_ALLOC_COUNT_H
#define UP_ALLOC_COUNT_H

#include <stddef.h>
#include <stdint.h>

/* 1 when the wrappers are in place and counting. */
int alloc_count_enabled(void);
/* Allocations and requested bytes since the program started. */
void alloc_count_read(uint64_t *calls, uint64_t *bytes);

/* Allocations since the program started. */
static inline uint64_t alloc_count_calls(void)
{
    uint64_t calls, bytes;
    alloc_count_read(&calls, &bytes);
    return calls;
}

/* While a hook is set, free() offers it every block (with its usable
 * size) and frees only those it declines (hook returns 0). Blocks a hook
 * kept are given back with alloc_count_release(). */
typedef int (*alloc_free_hook)(void *block, size_t usable_size);
void alloc_count_set_free_hook(alloc_free_hook hook);
void alloc_count_release(void *block);

#endif
