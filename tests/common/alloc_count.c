#include "alloc_count.h"

#include <stdatomic.h>

#if defined(__GLIBC__) && !defined(UP_SANITIZER_BUILD)
#include <malloc.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static _Atomic uint64_t calls, bytes;
static _Atomic(alloc_free_hook) free_hook;

static void count(size_t n)
{
    atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&bytes, n, memory_order_relaxed);
}

void *malloc(size_t n)
{
    count(n);
    return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
    count(a * b);
    return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
    count(n);
    return __libc_realloc(p, n);
}

void *aligned_alloc(size_t a, size_t n)
{
    count(n);
    return __libc_memalign(a, n);
}

int posix_memalign(void **out, size_t a, size_t n)
{
    count(n);
    *out = __libc_memalign(a, n);
    return *out ? 0 : 12; /* ENOMEM */
}

void free(void *p)
{
    alloc_free_hook hook = atomic_load(&free_hook);
    if (p && hook && hook(p, malloc_usable_size(p)))
        return;
    __libc_free(p);
}

int alloc_count_enabled(void) { return 1; }

void alloc_count_read(uint64_t *c, uint64_t *b)
{
    *c = atomic_load(&calls);
    *b = atomic_load(&bytes);
}

void alloc_count_set_free_hook(alloc_free_hook hook) { atomic_store(&free_hook, hook); }

void alloc_count_release(void *block) { __libc_free(block); }

#else

#include <stdlib.h>

int alloc_count_enabled(void) { return 0; }

void alloc_count_read(uint64_t *c, uint64_t *b)
{
    *c = 0;
    *b = 0;
}

void alloc_count_set_free_hook(alloc_free_hook hook) { (void)hook; }

void alloc_count_release(void *block) { free(block); }

#endif
