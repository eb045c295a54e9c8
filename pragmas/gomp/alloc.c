/* OpenMP's memory allocators on the host: omp_alloc and its companions,
 * omp_init_allocator with traits, and GCC's GOMP_alloc/GOMP_free (the
 * allocate directive and clause).
 *
 * Every memory space is the host's heap. A block carries a header just
 * before the pointer returned: the start of the underlying malloc, the
 * block's whole size and the allocator that made it, so that omp_free
 * and omp_realloc find them from the pointer alone (OpenMP lets omp_free
 * be passed omp_null_allocator). The accounting is libgomp's, so that a
 * program sees the same successes and fallbacks on both: a pool counts
 * whole blocks (the 32-byte header and the alignment's slack included),
 * omp_realloc within one pooled allocator without extra alignment grows
 * the block in place and counts only the difference, and a failed
 * request moves to the fallback (default memory, null, abort, or the
 * fb_data allocator; default memory only where a retry can succeed).
 * Traits honoured: alignment, pool size, fallback and fb_data; the others
 * are checked and accepted and change nothing on the host; pinned memory
 * and the high-bandwidth space are refused (omp_null_allocator), as in
 * libgomp. */
#include <stdatomic.h>
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
enum {
    ATV_FALSE = 0,
    ATV_TRUE = 1,
    ATV_CONTENDED = 3,
    ATV_PRIVATE = 6,
    ATV_ALL = 7,
    ATV_CGROUP = 10,
    ATV_DEFAULT_FB = 11,
    ATV_NULL_FB,
    ATV_ABORT_FB,
    ATV_ALLOCATOR_FB,
    ATV_ENVIRONMENT,
    ATV_INTERLEAVED = 18
};
#define ATV_DEFAULT      ((uintptr_t)-1)
#define DEFAULT_MEM      1 /* omp_default_mem_alloc */
#define PREDEFINED       8 /* omp_default_mem_alloc (1) .. omp_thread_mem_alloc (8) */
#define HIGH_BW_MEMSPACE 3
#define MAX_MEMSPACE     4 /* omp_low_lat_mem_space */
#define NO_POOL          SIZE_MAX
#define WORD             sizeof(void *)

typedef struct omp_trait {
    int key;
    uintptr_t value;
} omp_trait;

typedef struct allocator {
    size_t align; /* at least a word */
    size_t pool;  /* NO_POOL: no limit */
    _Atomic size_t used;
    uintptr_t fallback;
    uintptr_t fb_data;
} allocator;

typedef struct header {
    void *base;
    size_t size; /* of the whole block, as the pool counts it */
    uintptr_t allocator;
    void *pad;
} header;

static allocator *custom(uintptr_t a) { return a > PREDEFINED ? (allocator *)a : NULL; }

/* A trait value: v when it is one of [lo, hi], dflt for omp_atv_default,
 * else -1 (the trait is malformed). */
static int pick(uintptr_t v, uintptr_t lo, uintptr_t hi, uintptr_t dflt, uintptr_t *out)
{
    if (v == ATV_DEFAULT)
        v = dflt;
    if (v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

GOMP_API uintptr_t omp_init_allocator(uintptr_t memspace, int ntraits, const omp_trait *traits)
{
    allocator a = {.align = 1, .pool = NO_POOL, .fallback = ATV_DEFAULT_FB};
    uintptr_t ignored, pinned = ATV_FALSE;
    if (memspace > MAX_MEMSPACE)
        return 0;
    for (int i = 0; i < ntraits; i++) {
        uintptr_t v = traits[i].value;
        int bad = 0;
        switch (traits[i].key) {
        case ATK_SYNC:
            bad = pick(v, ATV_CONTENDED, ATV_PRIVATE, ATV_CONTENDED, &ignored);
            break;
        case ATK_ALIGN:
            if (v == ATV_DEFAULT)
                v = 1;
            bad = v == 0 || (v & (v - 1)) ? -1 : 0;
            a.align = v;
            break;
        case ATK_ACCESS:
            bad = pick(v, ATV_ALL, ATV_CGROUP, ATV_ALL, &ignored);
            break;
        case ATK_POOL:
            a.pool = v == ATV_DEFAULT ? NO_POOL : v;
            break;
        case ATK_FALLBACK:
            bad = pick(v, ATV_DEFAULT_FB, ATV_ALLOCATOR_FB, ATV_DEFAULT_FB, &a.fallback);
            break;
        case ATK_FB_DATA:
            a.fb_data = v;
            break;
        case ATK_PINNED:
            bad = pick(v, ATV_FALSE, ATV_TRUE, ATV_FALSE, &pinned);
            break;
        case ATK_PARTITION:
            bad = pick(v, ATV_ENVIRONMENT, ATV_INTERLEAVED, ATV_ENVIRONMENT, &ignored);
            break;
        default:
            bad = -1;
        }
        if (bad)
            return 0;
    }
    if (a.align < WORD)
        a.align = WORD;
    /* Pinned and high-bandwidth memory: none here, as libgomp has none
     * without memkind. An allocator_fb without an allocator to fall
     * back to is refused rather than loop on the default allocator. */
    if (pinned == ATV_TRUE || memspace == HIGH_BW_MEMSPACE ||
        (a.fallback == ATV_ALLOCATOR_FB && a.fb_data == 0))
        return 0;
    allocator *p = malloc(sizeof *p);
    if (!p)
        return 0;
    memcpy(p, &a, sizeof a);
    atomic_init(&p->used, 0);
    return (uintptr_t)p;
}

GOMP_API void omp_destroy_allocator(uintptr_t a) { free(custom(a)); }

static uintptr_t resolve(uintptr_t a)
{
    if (!a)
        a = omp_get_default_allocator();
    return a ? a : DEFAULT_MEM;
}

/* The pool's count grows by add and shrinks by prev (the block being
 * replaced); 0 when that would pass the pool's size. */
static int pool_take(allocator *c, size_t add, size_t prev)
{
    if (!c || c->pool == NO_POOL)
        return 1;
    size_t used = up__load_relaxed(&c->used), next;
    do {
        if (add > prev) {
            if (add - prev > c->pool || __builtin_add_overflow(used, add - prev, &next) ||
                next > c->pool)
                return 0;
        } else {
            next = used - (prev - add);
        }
    } while (!up__cas_weak_relaxed(&c->used, &used, next));
    return 1;
}

/* Undoes pool_take(c, add, prev) (modular: prev - add may wrap). */
static void pool_undo(allocator *c, size_t add, size_t prev)
{
    if (c && c->pool != NO_POOL)
        up__fetch_add_relaxed(&c->used, prev - add);
}

/* The block for size bytes aligned to align (a power of two, at least a
 * word): header and slack included; 0 when it overflows. */
static size_t block_size(size_t size, size_t align)
{
    size_t total;
    size_t extra = sizeof(header) + (align > WORD ? align - WORD : 0);
    return __builtin_add_overflow(size, extra, &total) ? 0 : total;
}

static void *place(void *base, size_t total, size_t align, uintptr_t a)
{
    uintptr_t p = (uintptr_t)base + sizeof(header);
    if (align > WORD)
        p = ((uintptr_t)base + sizeof(header) + align - WORD) & ~(uintptr_t)(align - 1);
    header *h = (header *)p - 1;
    h->base = base;
    h->size = total;
    h->allocator = a;
    return (void *)p;
}

/* The allocator to try after c failed, 0 to return NULL. Default memory
 * is tried again only where it can succeed: when c had a pool, or added
 * alignment that the request did not ask for (asked 0: any alignment). */
static uintptr_t fallback(const allocator *c, size_t align, size_t asked, size_t size)
{
    if (!c)
        return 0;
    switch (c->fallback) {
    case ATV_DEFAULT_FB:
        return (align > WORD && align > asked) || c->pool != NO_POOL ? DEFAULT_MEM : 0;
    case ATV_NULL_FB:
        return 0;
    case ATV_ALLOCATOR_FB:
        return c->fb_data;
    default:
        gomp_fatal("omp_alloc: out of memory allocating %zu bytes (abort_fb)", size);
    }
}

GOMP_API void *omp_aligned_alloc(size_t align, size_t size, uintptr_t a)
{
    if (size == 0)
        return NULL;
    for (;;) {
        a = resolve(a);
        allocator *c = custom(a);
        size_t al = align < WORD ? WORD : align;
        if (c && c->align > al)
            al = c->align;
        if (al & (al - 1))
            return NULL; /* not a power of two */
        size_t total = block_size(size, al);
        if (total && pool_take(c, total, 0)) {
            void *base = malloc(total);
            if (base)
                return place(base, total, al, a);
            pool_undo(c, total, 0);
        }
        if (!(a = fallback(c, al, align, size)))
            return NULL;
    }
}

GOMP_API void *omp_alloc(size_t size, uintptr_t a) { return omp_aligned_alloc(1, size, a); }

GOMP_API void omp_free(void *ptr, uintptr_t a)
{
    (void)a; /* the header says which allocator made it */
    if (!ptr)
        return;
    header *h = (header *)ptr - 1;
    pool_undo(custom(h->allocator), h->size, 0);
    free(h->base);
}

GOMP_API void *omp_aligned_calloc(size_t align, size_t n, size_t size, uintptr_t a)
{
    if (n == 0 || size == 0)
        return NULL;
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes))
        bytes = SIZE_MAX; /* fails, through the allocator's fallback */
    void *p = omp_aligned_alloc(align, bytes, a);
    if (p)
        memset(p, 0, bytes);
    return p;
}

GOMP_API void *omp_calloc(size_t n, size_t size, uintptr_t a)
{
    return omp_aligned_calloc(1, n, size, a);
}

/* omp_realloc with the free allocator the block's own (the header's). The
 * block grows in place (realloc) when nothing needs realignment and the
 * pools allow: within the same pooled allocator, which then counts the
 * difference only, or between allocators without pools. */
GOMP_API void *omp_realloc(void *ptr, size_t size, uintptr_t a, uintptr_t free_a)
{
    if (!ptr)
        return omp_aligned_alloc(1, size, a);
    if (size == 0) {
        omp_free(ptr, free_a);
        return NULL;
    }
    header *h = (header *)ptr - 1;
    allocator *from = custom(h->allocator);
    size_t offset = (size_t)((char *)ptr - (char *)h->base);
    int plain = offset == sizeof(header); /* no alignment slack before ptr */
    for (;;) {
        if (!a)
            a = h->allocator;
        allocator *c = custom(a);
        size_t al = c && c->align > WORD ? c->align : WORD;
        size_t total = block_size(size, al);
        void *base = NULL;
        if (!total) {
            /* overflow: the fallback */
        } else if (c && c->pool != NO_POOL) {
            size_t prev = from == c && al == WORD && plain ? h->size : 0;
            if (pool_take(c, total, prev)) {
                base = prev ? realloc(h->base, total) : malloc(total);
                if (!base)
                    pool_undo(c, total, prev);
                else if (prev)
                    return place(base, total, al, a);
            }
        } else if (al == WORD && plain && (!from || from->pool == NO_POOL)) {
            base = realloc(h->base, total);
            if (base)
                return place(base, total, al, a);
        } else {
            base = malloc(total);
        }
        if (base) {
            void *p = place(base, total, al, a);
            size_t keep = h->size - offset;
            memcpy(p, ptr, keep < size ? keep : size);
            pool_undo(from, h->size, 0);
            free(h->base);
            return p;
        }
        if (!(a = fallback(c, al, 0, size)))
            return NULL; /* the old block stays, as realloc's */
    }
}

GOMP_API void *GOMP_alloc(size_t align, size_t size, uintptr_t a)
{
    void *p = omp_aligned_alloc(align, size, a);
    if (!p && size)
        gomp_fatal("GOMP_alloc: out of memory for %zu bytes", size);
    return p;
}

GOMP_API void GOMP_free(void *ptr, uintptr_t a) { omp_free(ptr, a); }
