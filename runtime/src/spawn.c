/* Spawning: worker structures, the reservation of a worker under the
 * per-shard and global caps, thread creation, and joining threads that
 * have exited. Workers are created by submitters (up to one per CPU of a
 * shard), by the monitor (beyond that, for blocked tasks), at create (the
 * floor) and by up_pool_reserve. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "os/os.h"
#include "pool_internal.h"
#include "rng.h"

static up__worker *new_worker(up_pool *p, unsigned shard, unsigned slot)
{
    up__worker *w = aligned_alloc(UP_CACHE_LINE, sizeof *w);
    if (!w)
        return NULL;
    memset(w, 0, sizeof *w);
    if (up__deque_init(&w->dq, p->cfg.deque_capacity) != 0) {
        free(w);
        return NULL;
    }
    if (up__parker_init(&w->parker) != 0) {
        up__deque_free(&w->dq);
        free(w);
        return NULL;
    }
    w->pool = p;
    w->shard = shard;
    w->slot = slot;
    w->rng = up__rng_seed(shard, slot);
    atomic_init(&w->state, UP__SLOT_FREE);
    atomic_init(&w->looking, 1); /* not busy until its loop finds a task */
    return w;
}

void up__free_worker(up__worker *w)
{
    up__parker_destroy(&w->parker);
    up__deque_free(&w->dq);
    free(w);
}

/* Creates the thread for one already-reserved worker, reusing a free slot
 * or the slot of a thread that has exited (joined here). */
static int start_thread(up_pool *p, up__shard *s)
{
    static _Atomic unsigned next_id;
    pthread_mutex_lock(&s->slot_lock);
    unsigned i;
    up__worker *w = NULL;
    for (i = 0; i < s->nslots; i++) {
        w = up__slot_worker(s, i);
        if (!w || up__load_acquire(&w->state) != UP__SLOT_RUNNING)
            break;
    }
    if (i == s->nslots) {
        /* Every slot runs a thread, so one of them gave back its
         * reservation and is on its way out: wait for it. */
        for (;;) {
            for (i = 0; i < s->nslots; i++)
                if (up__load_acquire(&up__slot_worker(s, i)->state) != UP__SLOT_RUNNING)
                    break;
            if (i < s->nslots)
                break;
            sched_yield();
        }
        w = up__slot_worker(s, i);
    }
    if (!w) {
        w = new_worker(p, s->index, i);
        if (!w) {
            pthread_mutex_unlock(&s->slot_lock);
            up__set_error("out of memory for a worker");
            return UP_ENOMEM;
        }
        up__store_release(&s->slots[i], w);
    }
    if (w->joinable) {
        pthread_join(w->thread, NULL);
        w->joinable = 0;
    }
    w->id = up__fetch_add_relaxed(&next_id, 1);
    up__store_release(&w->state, UP__SLOT_RUNNING);
    pthread_mutex_lock(&p->mu);
    p->live++;
    pthread_mutex_unlock(&p->mu);

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (p->cfg.stack_size)
        pthread_attr_setstacksize(&attr, p->cfg.stack_size);
    /* Workers block asynchronous signals so the application's handlers run
     * on its own threads; faults (SEGV, BUS, FPE, ILL) stay deliverable. */
    sigset_t old;
    up__os_block_signals(&old, 1);
    int rc = pthread_create(&w->thread, &attr, up__worker_main, w);
    up__os_restore_signals(&old);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        up__store_release(&w->state, UP__SLOT_FREE);
        pthread_mutex_lock(&p->mu);
        if (--p->live == 0)
            pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        pthread_mutex_unlock(&s->slot_lock);
        up__set_error("pthread_create failed: %s", strerror(rc));
        return UP_EAGAIN;
    }
    w->joinable = 1;
    if (i + 1 > up__load_relaxed(&s->slots_used))
        up__store_release(&s->slots_used, i + 1);
    pthread_mutex_unlock(&s->slot_lock);
    return UP_OK;
}

static unsigned shard_parallelism(const up_pool *p, const up__shard *s)
{
    unsigned n = up__shard_cpus(s);
    return n < p->cfg.shard_max_workers ? n : p->cfg.shard_max_workers;
}

/* The pool's cap on workers over all shards: max_workers, and never past
 * what the idle word's fields count (pool_internal.h). */
static unsigned pool_cap(const up_pool *p)
{
    unsigned m = p->cfg.max_workers;
    return m && m < UP__IDLE_FIELD_MAX ? m : UP__IDLE_FIELD_MAX;
}

/* Reserves one worker of shard s under two caps: the shard's count below
 * limit, then the pool's below max_workers. Each is a CAS loop on its
 * counter, so concurrent reservers never push a count past its cap; a
 * shard reservation that finds the global cap reached is given back. Both
 * are sequentially consistent: retirement (idle.c) gives a reservation
 * back and then takes its last look, and a submitter publishes and then
 * reads these counts, so they must fall in one total order with the queue
 * positions. Returns the pool's new worker count, 0 when a cap is reached. */
unsigned up__reserve_worker(up_pool *p, up__shard *s, unsigned limit)
{
    unsigned n = up__load_relaxed(&s->nworkers);
    do {
        if (n >= limit)
            return 0;
    } while (!up__cas_weak_seqcst(&s->nworkers, &n, n + 1));
    unsigned g = up__load_relaxed(&p->workers);
    do {
        if (g >= pool_cap(p)) {
            up__fetch_sub_seqcst(&s->nworkers, 1);
            return 0;
        }
    } while (!up__cas_weak_seqcst(&p->workers, &g, g + 1));
    up__assert_internal(g + 1 <= pool_cap(p) && n + 1 <= limit);
    return g + 1;
}

/* Reserves a worker under the shard cap (the shard's CPU count unless
 * beyond_cpus) and the global cap, then starts its thread. UP_OK,
 * UP__CAPPED when a cap leaves no room, else why the start failed. */
int up__spawn(up_pool *p, up__shard *s, int beyond_cpus)
{
    unsigned limit = beyond_cpus ? p->cfg.shard_max_workers : shard_parallelism(p, s);
    unsigned g = up__reserve_worker(p, s, limit);
    if (g == 0)
        return UP__CAPPED;

    unsigned peak = up__load_relaxed(&p->workers_peak);
    while (g > peak && !up__cas_weak_relaxed(&p->workers_peak, &peak, g))
        ;

    up__fetch_add_seqcst(&p->idle, UP__IDLE_START_ONE); /* before the thread can leave it */
    up__assert_internal(up__idle_sane(p, up__load_relaxed(&p->idle)));
    int rc = start_thread(p, s);
    if (rc != UP_OK) {
        up__fetch_sub_seqcst(&p->idle, UP__IDLE_START_ONE);
        up__fetch_sub_acq_rel(&p->workers, 1);
        up__fetch_sub_acq_rel(&s->nworkers, 1);
        up__fetch_add_relaxed(&p->spawn_failed, 1);
        return rc;
    }
    up__fetch_add_relaxed(&p->spawned, 1);
    return UP_OK;
}

/* A pool with no worker at all gets one before a submit may queue. The
 * pool's count alone cannot say none is coming: a reservation counts the
 * shard before the pool (up__reserve_worker), so while another submitter
 * or a retiring worker taking its slot back is between the two, the shard
 * reads full and the pool reads zero. A cap refusal here only ever means
 * such a thread: it ends with a worker or gives both counts back, so this
 * waits it out and tries again. Only our own start refused by the OS is a
 * failure; a stopping pool is left to the stop (up_pool_stop). UP_OK means
 * a worker is counted: its start may still fail, which the publish path's
 * spawn and the monitor cover as for any submit (after_publish). */
int up__spawn_first(up_pool *p, up__shard *s)
{
    for (;;) {
        if (up__load_acquire(&p->workers) != 0 || up__load_relaxed(&p->stopping))
            return UP_OK;
        int rc = up__spawn(p, s, 1);
        if (rc != UP__CAPPED)
            return rc;
        sched_yield();
    }
}

static unsigned reserve_workers(up_pool *p, unsigned n);

/* Holding retirement. The workers a reserve counts are for its caller,
 * who submits to them after it returns; a worker that retired meanwhile
 * (a reserve starting many threads outlasts extra_idle_timeout, 50 ms)
 * made the count a number of threads started, not of threads there, and
 * up_pool_stats disagreed with it (pool.h). So no worker retires while a
 * reserve runs, nor for the shorter idle timeout after one returned.
 * Ordering: a retiring worker gives up its searcher count in the idle word
 * and then loads reserve.calls; a reserve adds to it and then loads
 * the idle word; all four sequentially consistent, so either the reserve
 * does not count the worker or the worker sees the reserve and stays.
 * reserve.end_ns is stored before reserve.calls drops, so a worker that sees
 * no reserve running sees when the last one ended. */
int up__reserve_holds(up_pool *p)
{
    if (up__load_seqcst(&p->reserve.calls) != 0)
        return 1;
    uint64_t end = up__load_seqcst(&p->reserve.end_ns);
    if (end == 0)
        return 0;
    uint64_t hold = p->cfg.idle_timeout_ns < p->cfg.extra_idle_timeout_ns
                        ? p->cfg.idle_timeout_ns
                        : p->cfg.extra_idle_timeout_ns;
    return up__now_ns() - end < hold;
}

/* Wakes parked workers first (they cost no thread creation), then starts
 * new ones, one shard after another so they spread, until n are available
 * or no shard can take one more. Every start goes through
 * up__reserve_worker, so the caps bound the work: the loop ends after one
 * round of nshards refusals in a row, at the first thread the OS refuses,
 * or once it started as many as the caps had room for when it began,
 * whatever n is (no worker retires meanwhile, but another caller may take
 * the room). Available means searching, just woken, or starting (on the
 * way to the loop: created, or released by a layer; pool_internal.h):
 * workers that run a task are not counted. */
unsigned up_pool_reserve(up_pool *p, unsigned n)
{
    if (!p || n == 0 || up__load_acquire(&p->stopping))
        return 0;
    up__fetch_add_seqcst(&p->reserve.calls, 1);
    unsigned got = reserve_workers(p, n);
    /* The latest end wins: a reserve ending earlier must not shorten the
     * hold of one that ended later. */
    uint64_t now = up__now_ns(), end = up__load_relaxed(&p->reserve.end_ns);
    while (end < now && !up__cas_weak_seqcst(&p->reserve.end_ns, &end, now))
        ;
    up__fetch_sub_seqcst(&p->reserve.calls, 1);
    return got;
}

/* up_pool_reserve's work, with retirement held. */
static unsigned reserve_workers(up_pool *p, unsigned n)
{
    /* One load, so no worker moving from starting to searching is
     * counted twice or missed (pool_internal.h). The wakes take the
     * longest parked workers, those counted parked here: a searcher
     * counted here that parks meanwhile is woken (and counted again) only
     * when others parked at the load left the lists, uncounted, to search. */
    uint64_t idle = up__load_seqcst(&p->idle);
    unsigned have = UP__IDLE_STARTING(idle) + UP__IDLE_SPINNING(idle);
    unsigned parked = UP__IDLE_PARKED(idle);
    for (unsigned i = 0; i < parked && have < n; i++) {
        if (!up__wake_oldest(p, i % p->nshards))
            break; /* the rest woke or left meanwhile */
        have++;
    }
    uint64_t cap = (uint64_t)p->nshards * p->cfg.shard_max_workers;
    if (cap > pool_cap(p))
        cap = pool_cap(p);
    unsigned workers = up__load_relaxed(&p->workers);
    uint64_t room = cap > workers ? cap - workers : 0;
    unsigned refusals = 0;
    for (unsigned k = 0; have < n && room > 0 && refusals < p->nshards; k = (k + 1) % p->nshards) {
        int rc = up__spawn(p, &p->shards[k], 1);
        if (rc == UP_OK) {
            have++;
            room--;
            refusals = 0;
        } else if (rc != UP__CAPPED) {
            break; /* the OS refuses threads: more tries would fail too */
        } else {
            refusals++; /* this shard, or the pool, is at its cap */
        }
    }
    return have < n ? have : n;
}

void up__join_exited(up_pool *p)
{
    for (unsigned i = 0; i < p->nshards; i++) {
        up__shard *s = &p->shards[i];
        pthread_mutex_lock(&s->slot_lock);
        for (unsigned k = 0; k < s->nslots; k++) {
            up__worker *w = up__slot_worker(s, k);
            if (w && w->joinable) {
                pthread_join(w->thread, NULL);
                w->joinable = 0;
            }
        }
        pthread_mutex_unlock(&s->slot_lock);
    }
}
