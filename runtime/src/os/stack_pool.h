/* Small stacks for fibers, each with an inaccessible guard page below it,
 * recycled through a free list, and the handler that turns an overflow
 * into that guard page into a clear crash.
 *
 * Memory. A stack is a slot of an anonymous mapping that holds up to 64
 * of them (stack_pool.c maps them in chunks): a guard page (a guard
 * region or PROT_NONE, below) and the stack above it, whose top 64 bytes
 * hold its descriptor. Pages are
 * committed by the kernel only when touched, so a parked fiber costs the
 * pages its frames reach (one or two for a shallow waiter), not the whole
 * stack. A released stack stays "hot" (pages kept, reuse costs nothing)
 * while the pool holds fewer than hot_max free stacks, or fewer than the
 * recent peak of stacks in use; beyond that it is released to the OS
 * (MADV_DONTNEED on Linux: every page but the top one, which holds the
 * descriptor), and beyond free_max (or that peak, when more) it is
 * unmapped. The bounds follow the peak, which halves every peak_decay_ns, so
 * that a pool whose parked tasks keep resuming and parking does not give
 * pages back per task (stack_pool.c).
 *
 * The kernel's map count. Linux caps a process's mappings (VMAs) at
 * vm.max_map_count, 65,530 by default; mmap and mprotect fail beyond it,
 * and so would the malloc of the rest of the program. Where the kernel
 * has lightweight guard regions (MADV_GUARD_INSTALL, Linux 6.13 and
 * later; probed once) the guard page is installed inside the stack's own
 * mapping, and a guarded stack takes at most one mapping (neighbours
 * often merge). Elsewhere the guard is a PROT_NONE page, a mapping of its
 * own that cannot merge with the stack or its neighbours: two per stack.
 * The pools stop mapping guarded stacks at (max_map_count - 4096) / M of
 * them, process-wide, M being 1 or 2 as above: 61,434 or 30,717 at the
 * default, leaving 4,096 mappings to the rest of the program. For more
 * parked stackful tasks, raise the limit to at least M * N + 4096, e.g.
 * for a million with PROT_NONE guards: sysctl -w vm.max_map_count=2004096
 * (as root; put vm.max_map_count=2004096 in /etc/sysctl.d/ to keep it).
 * Unguarded pools (guard = 0) have no such limit (their stacks need one
 * mapping each and neighbours merge), but an overflow then corrupts
 * memory silently: they are for measurements and tests only. */
#ifndef UP_STACK_POOL_H
#define UP_STACK_POOL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Stacks mapped at a time, at most (stack_pool.c). */
#define UP__STACK_CHUNK_MAX 64

#define UP__STACK_DEFAULT_SIZE ((size_t)64 * 1024)
#define UP__STACK_MIN_SIZE     ((size_t)16 * 1024)
#define UP__STACK_MAX_SIZE     ((size_t)1 << 30)

/* A stack's descriptor, in the top bytes of its own mapping (an overflow
 * runs downwards, away from it). */
typedef struct up__stack {
    char *lo;               /* usable stack: [lo, lo + size) */
    size_t size;            /* bytes usable, below this descriptor */
    struct up__stack *next; /* cold list link (pool lock) */
    char *map;              /* the mapping, guard included */
    size_t map_size;
    unsigned char cold; /* 1: its pages were given back to the OS (pool lock) */
} up__stack;

typedef struct up__stack_pool_config {
    size_t stack_size;      /* bytes per stack, descriptor included, rounded up to
                               pages; UP__STACK_MIN_SIZE..UP__STACK_MAX_SIZE, default 64 KiB */
    unsigned guard;         /* 1 (default): a guard page below each stack; 0: none */
    size_t hot_max;         /* free stacks kept with their pages (default 16) */
    size_t free_max;        /* free stacks kept mapped at all (default 1024, >= hot_max) */
    size_t max_stacks;      /* stacks mapped at once by this pool, 0: no own limit
                               (the map-count budget still applies to guarded ones) */
    uint64_t peak_decay_ns; /* the recent peak of stacks in use, which raises both
                               bounds above, halves once per this long (default 1 s) */
} up__stack_pool_config;

typedef struct up__stack_pool_stats {
    size_t mapped;    /* stacks mapped now (in use + free) */
    size_t in_use;    /* acquired, not released */
    size_t free_hot;  /* free, pages kept */
    size_t free_cold; /* free, pages given back */
    uint64_t created; /* stacks mapped since the pool was made */
    uint64_t reused;  /* acquires served from the free list */
} up__stack_pool_stats;

/* The pool. Invariant (under lock): the hot stacks are a ring of
 * pointers (hot[(hot_first + i) & (hot_cap - 1)] for i < n_hot, oldest
 * first; pointers, not links in the stacks, so that taking one touches no
 * stack memory while the lock is held: a free stack's top page is often
 * out of the TLB), cold is a singly linked free list, no stack is on both
 * or on either while acquired; n_cold counts the cold list plus the
 * stacks a release is making cold outside the lock (they join the list
 * next); a release lists a stack
 * hot only while n_hot < max(hot_max, use_peak) and keeps it mapped only
 * while n_hot + n_cold < max(free_max, use_peak), and mapped = in_use +
 * n_hot + n_cold except while an acquire maps a stack or a release unmaps
 * one (counted before the system call). A plain mutex: acquiring a stack is rare next
 * to running on it (a worker keeps its own few in an up__stack_cache), so
 * contention on it does not matter. */
typedef struct up__stack_pool {
    pthread_mutex_t lock;
    up__stack_pool_config cfg; /* read-only after init */
    size_t page;               /* read-only after init */
    up__stack **hot;           /* lock: the hot ring, hot_cap entries (a power of two) */
    size_t hot_first, hot_cap; /* lock */
    up__stack *cold;           /* lock */
    size_t n_hot, n_cold;      /* lock */
    size_t mapped, in_use;     /* lock */
    size_t use_peak;           /* lock: the recent peak of in_use (stack_pool.c) */
    pthread_mutex_t chunk_mu;  /* the chunk new stacks are cut from (stack_pool.c) */
    char *chunk_next;          /* chunk_mu: where the next stack starts */
    size_t chunk_left;         /* chunk_mu: stacks left in the chunk */
    size_t chunk_stacks;       /* chunk_mu: stacks in the next chunk */
    int chunk_guarded;         /* chunk_mu: the current chunk's guards are all installed */
    struct iovec chunk_iov[UP__STACK_CHUNK_MAX]; /* chunk_mu: guard_chunk's (stack_pool.c) */
    uint64_t peak_at;                            /* lock: when use_peak last decayed */
    uint64_t created, reused;                    /* lock */
} up__stack_pool;

/* Defaults (see the fields). */
void up__stack_pool_config_init(up__stack_pool_config *cfg);

/* 0, or UP_EINVAL for a size out of range or free_max < hot_max (NULL cfg:
 * the defaults). */
int up__stack_pool_init(up__stack_pool *p, const up__stack_pool_config *cfg);

/* Unmaps every free stack. All stacks must have been released: a stack
 * still in use is a broken invariant (abort), since a fiber may run on it. */
void up__stack_pool_destroy(up__stack_pool *p);

/* A stack, most recently released first, else a new one. 0, or UP_ENOMEM
 * when the pool's max_stacks, the map-count budget (once said on stderr)
 * or the OS refuses; *out is then NULL. */
int up__stack_acquire(up__stack_pool *p, up__stack **out);

/* Gives s back to p (the pool it came from); no fiber may run on it any
 * more. */
void up__stack_release(up__stack_pool *p, up__stack *s);

void up__stack_pool_read_stats(up__stack_pool *p, up__stack_pool_stats *out);

/* The bytes of guard below each stack of p (0 for an unguarded pool), for
 * up__fiber_init. */
static inline size_t up__stack_guard_size(const up__stack_pool *p)
{
    return p->cfg.guard ? p->page : 0;
}

/* A worker's own few stacks in front of a pool, so that running a task on
 * a fresh fiber touches no lock: owner-only (one thread at a time, no
 * atomics), holding up to UP__STACK_CACHE stacks of one pool, most
 * recently put first. A stack put here stays hot (its pages kept). */
#define UP__STACK_CACHE 4
typedef struct up__stack_cache {
    up__stack *s[UP__STACK_CACHE]; /* owner */
    unsigned n;                    /* owner */
} up__stack_cache;

static inline int up__stack_cache_get(up__stack_cache *c, up__stack_pool *p, up__stack **out)
{
    if (c->n) {
        *out = c->s[--c->n];
        return 0;
    }
    return up__stack_acquire(p, out);
}

static inline void up__stack_cache_put(up__stack_cache *c, up__stack_pool *p, up__stack *s)
{
    if (c->n < UP__STACK_CACHE)
        c->s[c->n++] = s;
    else
        up__stack_release(p, s);
}

/* Gives every cached stack back to p (before the owner exits). */
static inline void up__stack_cache_flush(up__stack_cache *c, up__stack_pool *p)
{
    while (c->n)
        up__stack_release(p, c->s[--c->n]);
}

/* vm.max_map_count as /proc/sys/vm/max_map_count says now, -1 where it
 * cannot be read (not Linux). */
long up__stack_max_map_count(void);

/* How many guarded stacks all pools of the process may map together:
 * (max_map_count - 4096) / M (M: see the top of this file), read once; SIZE_MAX where there is no
 * such limit to read. */
size_t up__stack_guarded_budget(void);
/* Tests: lowers that budget to n (never raises it), before any pool maps
 * a stack, so a test can go beyond it with fewer tasks (a sanitizer run). */
void up__stack_lower_budget(size_t n);
/* Kernel mappings one guarded stack takes here: 1 with guard regions, 2
 * with a PROT_NONE guard page (for tools that size a run by the budget). */
unsigned up__stack_maps_per_stack(void);

/* Makes the calling thread report an overflow into a guard page: installs
 * the process's SIGSEGV and SIGBUS handler once (it chains to the handler
 * in place before it for every other fault, or to the default action),
 * and gives the thread an alternate signal stack unless it has one (the
 * handler cannot run on the stack that just overflowed). Call it on every
 * thread that runs fibers; 0, or UP_ENOMEM. On an overflow the handler
 * writes "ultrapool: stack overflow in a task (guard page at 0x...,
 * stack size N; raise UP_STACK_SIZE ...)" to stderr and aborts. */
int up__stack_guard_thread_init(void);

/* Removes and unmaps the alternate stack up__stack_guard_thread_init gave
 * the calling thread (not one that was there before). */
void up__stack_guard_thread_fini(void);

#endif
