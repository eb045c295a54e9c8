/* OpenMP's memory allocators on the host: omp_alloc and its companions,
 * omp_init_allocator with traits, and GCC's GOMP_alloc/GOMP_free (the
 * allocate directive and clause).
 *
 * Every memory space is the host's heap. A block carries a header just
 * before the pointer returned: the start of the underlying malloc, its
 * size and the allocator that made it, so that omp_free and omp_realloc
 * find them from the pointer alone (OpenMP lets omp_free be passed
 * omp_null_allocator). Traits honoured: alignment (a power of two), pool
 * size (bytes in use at most, counted atomically), fallback (default
 * memory, null, abort, or another allocator) and fb_data; the others are
 * accepted with their OpenMP values and change nothing on the host. */
#include <stdlib.h>
#include <string.h>

#include "gomp.h"

enum {
    ATK_SYNC = 1,
    ATK_ALIGN,
    ATK_ACCESS,
    ATK_POOL,
    ATK_FALLBACK,
    ATK_FB_DATA,
    ATK_PINNED,
    ATK_PARTITION
};
enum { ATV_DEFAULT_FB = 11, ATV_NULL_FB, ATV_ABORT_FB, ATV_ALLOCATOR_FB };
#define ATV_DEFAULT  ((uintptr_t)-1)
#define PREDEFINED   8 /* omp_default_mem_alloc (1) .. omp_thread_mem_alloc (8) */
#define MAX_MEMSPACE 4 /* omp_low_lat_mem_space */

typedef struct omp_trait {
    int key;
    uintptr_t value;
} omp_trait;

typedef struct allocator {
    size_t align;
    size_t pool; /* 0: no limit */
    _Atomic size_t used;
    uintptr_t fallback;
    uintptr_t fb_data;
} allocator;

typedef struct header {
    void *base;
    size_t size; /* what the caller asked for */
    uintptr_t allocator;
} header;

static allocator *custom(uintptr_t a) { return a > PREDEFINED ? (allocator *)a : NULL; }

GOMP_API uintptr_t omp_init_allocator(uintptr_t memspace, int ntraits, const omp_trait *traits)
{
    allocator a = {.align = 1, .fallback = ATV_DEFAULT_FB};
    if (memspace > MAX_MEMSPACE)
        return 0;
    for (int i = 0; i < ntraits; i++) {
        uintptr_t v = traits[i].value;
        switch (traits[i].key) {
        case ATK_ALIGN:
            if (v == ATV_DEFAULT)
                break;
            if (v == 0 || (v & (v - 1)))
                return 0; /* not a power of two: omp_null_allocator */
            a.align = v;
            break;
        case ATK_POOL:
            a.pool = v == ATV_DEFAULT ? 0 : v;
            break;
        case ATK_FALLBACK:
            if (v != ATV_DEFAULT && (v < ATV_DEFAULT_FB || v > ATV_ALLOCATOR_FB))
                return 0;
            a.fallback = v == ATV_DEFAULT ? ATV_DEFAULT_FB : v;
            break;
        case ATK_FB_DATA:
            a.fb_data = v;
            break;
        case ATK_SYNC:
        case ATK_ACCESS:
        case ATK_PINNED:
        case ATK_PARTITION:
            break;
        default:
            return 0;
        }
    }
    if (a.fallback == ATV_ALLOCATOR_FB && a.fb_data == 0)
        return 0;
    allocator *p = malloc(sizeof *p);
    if (!p)
        return 0;
    *p = a;
    return (uintptr_t)p;
}

GOMP_API void omp_destroy_allocator(uintptr_t a) { free(custom(a)); }

static uintptr_t resolve(uintptr_t a) { return a ? a : omp_get_default_allocator(); }

GOMP_API void *omp_aligned_alloc(size_t align, size_t size, uintptr_t a)
{
    a = resolve(a);
    allocator *c = custom(a);
    if (c && c->align > align)
        align = c->align;
    if (align < sizeof(void *))
        align = sizeof(void *);
    if (align & (align - 1))
        return NULL;
    if (size == 0)
        return NULL;
    size_t extra = align + sizeof(header);
    void *base = NULL;
    int over_pool = 0;
    if (c && c->pool) {
        size_t used = atomic_fetch_add(&c->used, size);
        over_pool = used + size > c->pool || used + size < used;
        if (over_pool)
            atomic_fetch_sub(&c->used, size);
    }
    if (!over_pool && size <= SIZE_MAX - extra)
        base = malloc(size + extra);
    if (!base) {
        if (!over_pool && c && c->pool)
            atomic_fetch_sub(&c->used, size);
        uintptr_t fb = c ? c->fallback : ATV_DEFAULT_FB;
        if (fb == ATV_NULL_FB)
            return NULL;
        if (fb == ATV_ABORT_FB)
            gomp_fatal("omp_alloc: %zu bytes cannot be allocated (abort_fb)", size);
        if (fb == ATV_ALLOCATOR_FB)
            return omp_aligned_alloc(align, size, c->fb_data);
        if (!c) /* the default memory itself failed */
            return NULL;
        return omp_aligned_alloc(align, size, 1);
    }
    uintptr_t p = ((uintptr_t)base + sizeof(header) + align - 1) & ~(uintptr_t)(align - 1);
    header *h = (header *)p - 1;
    h->base = base;
    h->size = size;
    h->allocator = a;
    return (void *)p;
}

GOMP_API void *omp_alloc(size_t size, uintptr_t a) { return omp_aligned_alloc(1, size, a); }

GOMP_API void omp_free(void *ptr, uintptr_t a)
{
    (void)a; /* the header says which allocator made it */
    if (!ptr)
        return;
    header *h = (header *)ptr - 1;
    allocator *c = custom(h->allocator);
    if (c && c->pool)
        atomic_fetch_sub(&c->used, h->size);
    free(h->base);
}

GOMP_API void *omp_aligned_calloc(size_t align, size_t n, size_t size, uintptr_t a)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *p = omp_aligned_alloc(align, n * size, a);
    if (p)
        memset(p, 0, n * size);
    return p;
}

GOMP_API void *omp_calloc(size_t n, size_t size, uintptr_t a)
{
    return omp_aligned_calloc(1, n, size, a);
}

GOMP_API void *omp_realloc(void *ptr, size_t size, uintptr_t a, uintptr_t free_a)
{
    if (!ptr)
        return omp_alloc(size, a);
    if (size == 0) {
        omp_free(ptr, free_a);
        return NULL;
    }
    header *h = (header *)ptr - 1;
    void *p = omp_alloc(size, a ? a : h->allocator);
    if (!p)
        return NULL; /* the old block stays, as realloc's */
    memcpy(p, ptr, h->size < size ? h->size : size);
    omp_free(ptr, free_a);
    return p;
}

GOMP_API void *GOMP_alloc(size_t align, size_t size, uintptr_t a)
{
    void *p = omp_aligned_alloc(align, size, a);
    if (!p && size)
        gomp_fatal("GOMP_alloc: out of memory for %zu bytes", size);
    return p;
}

GOMP_API void GOMP_free(void *ptr, uintptr_t a) { omp_free(ptr, a); }
