/* Parallel regions, barriers, single, critical and atomic's lock fallback:
 * GOMP_parallel and its companions. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gomp.h"

typedef struct region {
    void (*fn)(void *);
    void *data;
    gomp_icv icv; /* the opening thread's, which every member inherits */
    void (*pre)(const void *);
    const void *pre_arg;
    /* The split form's (gomp_parallel_open): the opener's ICVs outside the
     * region, the regions it opened before (innermost first), and the
     * copy of pre's argument. */
    gomp_icv saved;
    gomp_icv_outer outer;
    struct region *prev;
    _Alignas(16) unsigned char pre_copy[GOMP_PRE_MAX];
} region;

/* A member's ICVs from before the region, restored when it leaves the
 * team: after the closing barrier, so that the region's tasks that run
 * there see the region's ICVs. Nested regions on one thread leave in
 * the reverse order of their entries (a stack; nodes are reused). */
typedef struct saved_icv {
    struct saved_icv *next;
    const region *of; /* the region whose run_region pushed it */
    gomp_icv icv;
    gomp_icv_outer outer; /* and whether those were its region's */
} saved_icv;

static _Thread_local saved_icv *saved_top UP__TLS_IE, *saved_free UP__TLS_IE;

/* A pool worker that retires, or any thread that ends, frees its nodes:
 * the key's value is the thread's free list (every node is on it between
 * regions). */
static pthread_key_t saved_key;
static pthread_once_t saved_key_once = PTHREAD_ONCE_INIT;

static void saved_free_all(void *list)
{
    saved_icv *s = *(saved_icv **)list;
    while (s) {
        saved_icv *next = s->next;
        free(s);
        s = next;
    }
    *(saved_icv **)list = NULL;
}

static void saved_make_key(void) { pthread_key_create(&saved_key, saved_free_all); }

static saved_icv *saved_new(void)
{
    pthread_once(&saved_key_once, saved_make_key);
    saved_icv *s = malloc(sizeof *s);
    if (!s || pthread_setspecific(saved_key, &saved_free) != 0)
        gomp_fatal("out of memory for a region member's ICVs");
    return s;
}

/* A member's entry into region r, the master's included: the region's
 * ICVs over its own (outer keeps what leaving restores), then the
 * construct's pre-step. */
static void member_enter(region *r, gomp_icv_outer *outer)
{
    gomp_icv_region_enter(outer);
    gomp_icv_inherit(&r->icv);
    if (r->pre)
        r->pre(r->pre_arg);
}

/* A member's leaving, after the closing barrier: back to icv, its ICVs
 * from before the region. */
static void member_leave(const gomp_icv *icv, const gomp_icv_outer *outer)
{
    *gomp_icv_get() = *icv;
    gomp_icv_region_leave(outer);
}

static void run_region(void *ctx)
{
    region *r = ctx;
    saved_icv *s = saved_free;
    if (s)
        saved_free = s->next;
    else
        s = saved_new();
    s->of = r;
    s->icv = *gomp_icv_get();
    s->next = saved_top;
    saved_top = s;
    member_enter(r, &s->outer);
    r->fn(r->data);
}

/* Every member's last step (the team's leave hook). The split form's
 * master entered in gomp_parallel_open, not through run_region, and
 * pushed nothing: it finds an enclosing region's node on top, or none,
 * and leaves in GOMP_parallel_end. */
static void leave_region(void *ctx)
{
    saved_icv *s = saved_top;
    if (!s || s->of != ctx)
        return;
    member_leave(&s->icv, &s->outer);
    saved_top = s->next;
    s->next = saved_free;
    saved_free = s;
}

static par_team_mode region_mode(const gomp_icv *v)
{
    return v->dynamic ? PAR_TEAM_UPTO : PAR_TEAM_FULL;
}

void gomp_parallel_run(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags,
                       void (*pre)(const void *), const void *pre_arg)
{
    gomp_icv *v = gomp_icv_get();
    region r = {fn, data, *v, pre, pre_arg, {0}, {0}, NULL, {0}};
    /* The proc_bind clause (flags' low bits) is the region's bind-var
     * unless binding is off, as in libgomp; OMP_PROC_BIND's list for the
     * new level still wins (gomp_icv_inherit). */
    if (r.icv.bind != 0 && (flags & 7) != 0)
        r.icv.bind = (int)(flags & 7);
    unsigned n = num_threads ? num_threads : v->nthreads;
    int rc = par_parallel_hooked(gomp_pool(), n, run_region, leave_region, &r, region_mode(v),
                                 "GOMP_parallel");
    if (rc != UP_OK)
        gomp_fatal("a parallel region of %u threads cannot run: %s", n, up_last_error());
}

/* The split form's open regions of this thread, innermost first. */
static _Thread_local region *open_regions UP__TLS_IE;

void gomp_parallel_open(void (*fn)(void *), void *data, unsigned num_threads,
                        void (*pre)(const void *), const void *pre_arg, size_t pre_size,
                        const char *who)
{
    if (pre_size > GOMP_PRE_MAX)
        gomp_fatal("%s: %zu bytes of construct arguments, above %d", who, pre_size, GOMP_PRE_MAX);
    gomp_icv *v = gomp_icv_get();
    region *r = malloc(sizeof *r);
    if (!r)
        gomp_fatal("%s: out of memory for a parallel region", who);
    memset(r, 0, sizeof *r);
    r->fn = fn;
    r->data = data;
    r->icv = *v;
    r->saved = *v;
    if (pre) {
        memcpy(r->pre_copy, pre_arg, pre_size);
        r->pre = pre;
        r->pre_arg = r->pre_copy;
    }
    unsigned n = num_threads ? num_threads : v->nthreads;
    int rc = par_parallel_enter(gomp_pool(), n, run_region, leave_region, r, region_mode(v), who);
    if (rc != UP_OK)
        gomp_fatal("a parallel region of %u threads cannot run: %s", n, up_last_error());
    r->prev = open_regions;
    open_regions = r;
    /* The master's part, as run_region's, but outside the call. */
    member_enter(r, &r->outer);
}

/* GCC before 4.9: the master calls fn(data) itself between the two. */
GOMP_API void GOMP_parallel_start(void (*fn)(void *), void *data, unsigned num_threads)
{
    gomp_parallel_open(fn, data, num_threads, NULL, NULL, 0, "GOMP_parallel_start");
}

GOMP_API void GOMP_parallel_end(void)
{
    region *r = open_regions;
    if (!r)
        gomp_fatal("GOMP_parallel_end without a region opened by GOMP_parallel_start on this "
                   "thread");
    if (par_parallel_leave("GOMP_parallel_end") != UP_OK)
        gomp_fatal("%s", up_last_error());
    /* After the closing barrier, as leave_region: a task run there with
     * its team's ICVs finds them. */
    member_leave(&r->saved, &r->outer);
    open_regions = r->prev;
    free(r);
}

/* GCC passes num_threads 1 for a false if clause, 0 for no clause; the
 * low bits of flags are the proc_bind clause (the workers' binding is the
 * pool's). */
GOMP_API void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags)
{
    gomp_parallel_run(fn, data, num_threads, flags, NULL, NULL);
}

GOMP_API void GOMP_barrier(void)
{
    par_thread *th = par_tls;
    if (th && th->c.team)
        par_barrier(th);
}

/* single: the first member to arrive runs it. */
GOMP_API bool GOMP_single_start(void) { return up_single() != 0; }

/* Critical sections, on the simple lock's word (locks.c: a short spin,
 * then a futex; a pthread mutex sleeps at once, and two threads taking
 * turns at a short critical section paid a wake-up for most turns). The
 * unnamed one and atomic's fallback have a word of their own each; a
 * named one uses the pointer-sized variable GCC emits per name, zero
 * before first use as a free word is, as its word: two names never share
 * a lock (nesting critical sections of different names cannot deadlock),
 * and no name costs an allocation. */
static _Alignas(PAR_LINE) _Atomic int unnamed_lock;
static _Alignas(PAR_LINE) _Atomic int atomic_lock;

_Static_assert(sizeof(_Atomic int) <= sizeof(void *) && _Alignof(_Atomic int) <= _Alignof(void *),
               "a named critical section's word fits GCC's pointer-sized variable");

GOMP_API void GOMP_critical_start(void) { gomp_word_lock(&unnamed_lock); }
GOMP_API void GOMP_critical_end(void) { gomp_word_unlock(&unnamed_lock); }
GOMP_API void GOMP_atomic_start(void) { gomp_word_lock(&atomic_lock); }
GOMP_API void GOMP_atomic_end(void) { gomp_word_unlock(&atomic_lock); }

static _Atomic int *named_word(void **pptr) { return (_Atomic int *)(void *)pptr; }

GOMP_API void GOMP_critical_name_start(void **pptr) { gomp_word_lock(named_word(pptr)); }
GOMP_API void GOMP_critical_name_end(void **pptr) { gomp_word_unlock(named_word(pptr)); }
