/* Workers: the loop that finds and runs tasks, the idle protocol (spin,
 * then park), waking, spawning under caps, and retirement.
 *
 * The idle protocol. A worker that finds no task becomes a searcher
 * (counted in the high half of pool->idle) and polls for cfg.spin rounds.
 * Then it parks: under its shard's idle lock it pushes itself on the idle
 * list and moves its count from searching to parked with one sequentially
 * consistent RMW on pool->idle; after the lock it looks once more for work
 * (queue positions and deque bounds, loaded sequentially consistently) and
 * only then sleeps. A submitter publishes its task with a sequentially
 * consistent CAS (tail, or bottom for a deque push) and then loads
 * pool->idle. In the single total order of these operations either the
 * worker's last look sees the task or the submitter sees the worker counted
 * as parked and wakes one parked worker. A submitter that sees a searcher
 * wakes nobody: the searcher will either find the task, or park (and take
 * its last look after the submitter's CAS), or take some other task, in
 * which case, if it was the last searcher and work is still visible, it
 * wakes a parked worker or the monitor itself. So no wake-up is lost, and a
 * burst of submits wakes one worker at a time instead of all.
 *
 * Waking moves a worker off the idle list and its count from parked to
 * searching under the idle lock, then posts the worker's parker. Whoever
 * takes a worker off the list (a waker, or the worker itself when its last
 * look finds work or its park times out) adjusts the counts exactly once. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "pool_internal.h"

_Thread_local up__worker *up__tls_worker;
_Thread_local up_pool *up__tls_running;

static inline void count(_Atomic uint64_t *c) /* owner-only statistic */
{
    up__store_relaxed(c, up__load_relaxed(c) + 1);
}

/* executed is a release store: a stats reader that sees the count with an
 * acquire load then sees the task's submission counted (pool.c). */
static inline void count_executed(up__worker *w)
{
    up__store_release(&w->executed, up__load_relaxed(&w->executed) + 1);
}

static inline uint32_t next_random(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x ? x : 0x9e3779b9u;
}

int up__take_from_shard(up_pool *p, up__shard *s, up__task *out)
{
    (void)p;
    if (up__mpmc_pop(&s->q, out) != UP__MPMC_OK)
        return 0;
    /* Pairs with the sequentially consistent store of space_armed in
     * submit.c: a blocked submitter either sees the room or is notified. */
    if (up__load_seqcst(&s->space_armed) && up__exchange_acq_rel(&s->space_armed, 0))
        up__event_notify_all(&s->space);
    return 1;
}

static up__worker *slot_worker(up__shard *s, unsigned i)
{
    return (up__worker *)up__load_acquire((_Atomic(up__worker *) *)&s->slots[i]);
}

static int steal_from_deques(up__shard *s, up__worker *self, up__task *out)
{
    unsigned used = up__load_acquire(&s->slots_used);
    if (used == 0)
        return 0;
    unsigned start = self ? next_random(&self->rng) % used : 0;
    for (unsigned k = 0; k < used; k++) {
        up__worker *v = slot_worker(s, (start + k) % used);
        if (!v || v == self)
            continue;
        for (;;) {
            int rc = up__deque_steal(&v->dq, out);
            if (rc == UP__DEQUE_OK)
                return 1;
            if (rc == UP__DEQUE_EMPTY)
                break;
            up__cpu_relax(); /* lost a race: the deque is not empty, retry */
        }
    }
    return 0;
}

/* Own deque (newest first), then the shards nearest first: each shard's
 * queue, then its workers' deques (oldest first). */
static int find_work(up__worker *w, up__task *out)
{
    if (up__deque_pop(&w->dq, out) == UP__DEQUE_OK)
        return 1;
    up_pool *p = w->pool;
    const unsigned *order = &p->plan.order[w->shard * p->nshards];
    for (unsigned k = 0; k < p->nshards; k++) {
        up__shard *s = &p->shards[order[k]];
        if (up__take_from_shard(p, s, out)) {
            if (k)
                count(&w->steals);
            return 1;
        }
        if (steal_from_deques(s, w, out)) {
            count(&w->steals);
            return 1;
        }
    }
    return 0;
}

/* Runs one queued task of pool p on the calling thread, for a thread that
 * waits for tasks of p to finish (a group's waiter) and would otherwise
 * idle its CPU or, being a worker of p, wait for tasks only it could run.
 * A worker of p looks as when idle: its own deque (newest first), then the
 * shards nearest first. Any other thread takes from the shard queues from
 * its home shard on, then from the workers' deques. A thread that is not
 * one of p's workers runs nothing when p has a start hook: such tasks
 * expect their worker's state (up_worker_local()).
 * Returns 1 when it ran a task. The task counts as executed after it
 * returns, which is what a waiting stop compares against. */
int up__help_once(up_pool *p)
{
    up__worker *w = up__tls_worker;
    up__task t;
    if (w && w->pool == p) {
        if (!find_work(w, &t))
            return 0;
        up__run_task(p, &t);
        count_executed(w);
        return 1;
    }
    if (p->cfg.on_worker_start)
        return 0;
    unsigned home = up__home_shard(p);
    const unsigned *order = &p->plan.order[home * p->nshards];
    for (unsigned k = 0; k < p->nshards; k++) {
        up__shard *s = &p->shards[order[k]];
        if (!up__take_from_shard(p, s, &t) && !steal_from_deques(s, NULL, &t))
            continue;
        up__run_task(p, &t);
        up__fetch_add_seqcst(&s->helped, 1);
        if (up__load_relaxed(&p->stopping)) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_broadcast(&p->cv);
            pthread_mutex_unlock(&p->mu);
        }
        return 1;
    }
    return 0;
}

/* Is any task queued or pushed anywhere in the pool? Sequentially
 * consistent loads: this is the "last look" of the idle protocol. */
static int work_visible(up_pool *p)
{
    for (unsigned i = 0; i < p->nshards; i++) {
        up__shard *s = &p->shards[i];
        if (up__mpmc_nonempty(&s->q))
            return 1;
        unsigned used = up__load_acquire(&s->slots_used);
        for (unsigned k = 0; k < used; k++) {
            up__worker *v = slot_worker(s, k);
            if (v && up__deque_nonempty(&v->dq))
                return 1;
        }
    }
    return 0;
}

/* No task queued in any shard queue (reserved slots count as queued).
 * After stop has closed the queues this can only go from false to true. */
static int queues_drained(up_pool *p)
{
    for (unsigned i = 0; i < p->nshards; i++)
        if (up__mpmc_nonempty(&p->shards[i].q))
            return 0;
    return 1;
}

/* Takes the most recently parked worker of one shard off its idle list. */
static up__worker *pop_idle(up_pool *p, up__shard *s)
{
    pthread_mutex_lock(&s->idle_lock);
    up__worker *w = s->idle_top;
    if (w) {
        s->idle_top = w->idle_next;
        w->listed = 0;
        up__store_relaxed(&s->nparked, up__load_relaxed(&s->nparked) - 1);
        up__fetch_add_seqcst(&p->idle, UP__IDLE_SPIN_ONE - UP__IDLE_PARK_ONE);
    }
    pthread_mutex_unlock(&s->idle_lock);
    return w;
}

void up__wake_one(up_pool *p, unsigned shard)
{
    const unsigned *order = &p->plan.order[shard * p->nshards];
    for (unsigned k = 0; k < p->nshards; k++) {
        up__shard *s = &p->shards[order[k]];
        if (up__load_relaxed(&s->nparked) == 0 && k + 1 < p->nshards)
            continue; /* a peek to skip empty lists; the lock decides */
        up__worker *w = pop_idle(p, s);
        if (w) {
            up__fetch_add_relaxed(&p->wakes, 1);
            up__parker_post(&w->parker);
            return;
        }
    }
}

void up__wake_all(up_pool *p)
{
    for (unsigned i = 0; i < p->nshards; i++) {
        up__worker *w;
        while ((w = pop_idle(p, &p->shards[i])) != NULL)
            up__parker_post(&w->parker);
    }
}

/* Removes w from its idle list if nobody else did; 1 when w did it. */
static int unlist(up_pool *p, up__shard *s, up__worker *w)
{
    int mine = 0;
    pthread_mutex_lock(&s->idle_lock);
    if (w->listed) {
        up__worker **pp = &s->idle_top;
        while (*pp != w)
            pp = &(*pp)->idle_next;
        *pp = w->idle_next;
        w->listed = 0;
        up__store_relaxed(&s->nparked, up__load_relaxed(&s->nparked) - 1);
        up__fetch_add_seqcst(&p->idle, UP__IDLE_SPIN_ONE - UP__IDLE_PARK_ONE);
        mine = 1;
    }
    pthread_mutex_unlock(&s->idle_lock);
    return mine;
}

enum { PARK_AWAKE, PARK_TIMEOUT };

/* Called while counted as searching; returns counted as searching. */
static int park(up__worker *w)
{
    up_pool *p = w->pool;
    up__shard *s = &p->shards[w->shard];
    pthread_mutex_lock(&s->idle_lock);
    w->idle_next = s->idle_top;
    s->idle_top = w;
    w->listed = 1;
    up__store_relaxed(&s->nparked, up__load_relaxed(&s->nparked) + 1);
    up__fetch_add_seqcst(&p->idle, UP__IDLE_PARK_ONE - UP__IDLE_SPIN_ONE);
    pthread_mutex_unlock(&s->idle_lock);
    count(&w->parks);

    if (work_visible(p) || up__load_seqcst(&p->stopping)) {
        if (!unlist(p, s, w))
            up__parker_wait(&w->parker, UINT64_MAX); /* a waker's token is coming */
        return PARK_AWAKE;
    }
    int above_floor = up__load_relaxed(&s->nworkers) > p->cfg.shard_min_workers;
    uint64_t timeout = above_floor ? p->cfg.idle_timeout_ns : UINT64_MAX;
    if (up__parker_wait(&w->parker, timeout))
        return PARK_AWAKE;
    if (unlist(p, s, w))
        return PARK_TIMEOUT;
    up__parker_wait(&w->parker, UINT64_MAX);
    return PARK_AWAKE;
}

/* Takes back a reservation given up a moment ago, if the caps allow. */
static int reserve_again(up_pool *p, up__shard *s)
{
    unsigned n = up__load_relaxed(&s->nworkers);
    do {
        if (n >= p->cfg.shard_max_workers)
            return 0;
    } while (!up__cas_weak_seqcst(&s->nworkers, &n, n + 1));
    unsigned g = up__load_relaxed(&p->workers);
    do {
        if (p->cfg.max_workers && g >= p->cfg.max_workers) {
            up__fetch_sub_seqcst(&s->nworkers, 1);
            return 0;
        }
    } while (!up__cas_weak_seqcst(&p->workers, &g, g + 1));
    return 1;
}

/* Retirement. The worker gives up its searcher count and its reservation
 * first, and only then takes its last look at the queues. A submitter
 * publishes, then reads the idle word and, finding nobody to wake, the
 * worker count to decide whether to spawn. So either the submitter sees
 * the reduced count and can start a worker, or this worker's last look
 * sees the task and it takes its reservation back (or, if the caps no
 * longer allow it, whoever holds the slot now will look). Looking before
 * giving up the reservation would let a submit slip between the look and
 * the give-up, find the shard "full" and strand its task. */
static int try_retire(up__worker *w)
{
    up_pool *p = w->pool;
    up__shard *s = &p->shards[w->shard];
    unsigned min = p->cfg.shard_min_workers;
    if (up__load_relaxed(&s->nworkers) <= min || work_visible(p))
        return 0;
    up__fetch_sub_seqcst(&p->idle, UP__IDLE_SPIN_ONE);
    unsigned n = up__load_relaxed(&s->nworkers);
    do {
        if (n <= min) {
            up__fetch_add_seqcst(&p->idle, UP__IDLE_SPIN_ONE);
            return 0;
        }
    } while (!up__cas_weak_seqcst(&s->nworkers, &n, n - 1));
    up__fetch_sub_seqcst(&p->workers, 1);
    if (work_visible(p) && reserve_again(p, s)) {
        up__fetch_add_seqcst(&p->idle, UP__IDLE_SPIN_ONE);
        return 0;
    }
    up__fetch_add_relaxed(&p->retired, 1);
    return 1;
}

/* A searcher that found a task stops searching. If it was the last one
 * and work is still visible, somebody else must look: a parked worker, or
 * the monitor when every worker is busy. */
static void stop_searching(up__worker *w)
{
    up_pool *p = w->pool;
    uint64_t old = up__fetch_sub_seqcst(&p->idle, UP__IDLE_SPIN_ONE);
    if (UP__IDLE_SPINNING(old) != 1 || !work_visible(p))
        return;
    if (UP__IDLE_PARKED(old) != 0)
        up__wake_one(p, w->shard);
    else
        up__monitor_poke(p);
}

static void worker_loop(up__worker *w)
{
    up_pool *p = w->pool;
    up__task t;
    int searching = 1;
    unsigned spins = 0;
    up__fetch_add_seqcst(&p->idle, UP__IDLE_SPIN_ONE);
    for (;;) {
        if (find_work(w, &t)) {
            if (searching) {
                searching = 0;
                stop_searching(w);
            }
            up__run_task(p, &t);
            count_executed(w);
            continue;
        }
        if (!searching) {
            searching = 1;
            spins = 0;
            up__fetch_add_seqcst(&p->idle, UP__IDLE_SPIN_ONE);
        }
        if (up__load_acquire(&p->stopping)) {
            /* The queues are closed and cannot refill, and this worker's
             * deque is empty (find_work failed): nothing left for it. Tasks
             * in other deques are their owners' to finish. */
            if (queues_drained(p)) {
                up__fetch_sub_seqcst(&p->idle, UP__IDLE_SPIN_ONE);
                up__fetch_sub_acq_rel(&p->shards[w->shard].nworkers, 1);
                up__fetch_sub_acq_rel(&p->workers, 1);
                return;
            }
            sched_yield(); /* a producer is mid-publish */
            continue;
        }
        if (spins < p->cfg.spin) {
            spins++;
            if ((spins & 31) == 0)
                sched_yield();
            else
                up__cpu_relax();
            continue;
        }
        int r = park(w);
        spins = 0;
        if (r == PARK_TIMEOUT && try_retire(w))
            return;
    }
}

static void *worker_main(void *arg)
{
    up__worker *w = arg;
    up_pool *p = w->pool;
    up__tls_worker = w;
    if (p->cfg.bind != UP_BIND_NONE &&
        up__plan_bind_self(&p->plan, w->shard, p->cfg.bind, w->slot) != 0)
        up__fetch_add_relaxed(&p->bind_failed, 1);
    w->local = NULL;
    if (p->cfg.on_worker_start)
        w->local = p->cfg.on_worker_start(p->cfg.hook_ctx, w->shard, w->id);
    worker_loop(w);
    if (p->cfg.on_worker_stop)
        p->cfg.on_worker_stop(p->cfg.hook_ctx, w->local);
    up__tls_worker = NULL;
    pthread_mutex_lock(&p->mu);
    up__store_release(&w->state, UP__SLOT_EXITED);
    if (--p->live == 0)
        pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

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
    w->rng = 0x9e3779b9u ^ (shard * 0x85ebca6bu) ^ (slot * 0xc2b2ae35u);
    atomic_init(&w->state, UP__SLOT_FREE);
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
        w = slot_worker(s, i);
        if (!w || up__load_acquire(&w->state) != UP__SLOT_RUNNING)
            break;
    }
    if (i == s->nslots) {
        /* Every slot runs a thread, so one of them gave back its
         * reservation and is on its way out: wait for it. */
        for (;;) {
            for (i = 0; i < s->nslots; i++)
                if (up__load_acquire(&slot_worker(s, i)->state) != UP__SLOT_RUNNING)
                    break;
            if (i < s->nslots)
                break;
            sched_yield();
        }
        w = slot_worker(s, i);
    }
    if (!w) {
        w = new_worker(p, s->index, i);
        if (!w) {
            pthread_mutex_unlock(&s->slot_lock);
            up__set_error("out of memory for a worker");
            return UP_ENOMEM;
        }
        up__store_release((_Atomic(up__worker *) *)&s->slots[i], w);
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
    sigset_t all, old;
    sigfillset(&all);
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGBUS);
    sigdelset(&all, SIGFPE);
    sigdelset(&all, SIGILL);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&w->thread, &attr, worker_main, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
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
    unsigned n = s->ncpus ? s->ncpus : 1;
    return n < p->cfg.shard_max_workers ? n : p->cfg.shard_max_workers;
}

/* Reserves a worker under the shard cap (the shard's CPU count unless
 * beyond_cpus) and the global cap, both by CAS so concurrent spawners never
 * overshoot, then starts its thread. */
int up__spawn(up_pool *p, up__shard *s, int beyond_cpus)
{
    unsigned limit = beyond_cpus ? p->cfg.shard_max_workers : shard_parallelism(p, s);
    unsigned n = up__load_relaxed(&s->nworkers);
    do {
        if (n >= limit)
            return UP_EAGAIN;
    } while (!up__cas_weak_acq_rel(&s->nworkers, &n, n + 1));

    unsigned g = up__load_relaxed(&p->workers);
    do {
        if (p->cfg.max_workers && g >= p->cfg.max_workers) {
            up__fetch_sub_acq_rel(&s->nworkers, 1);
            return UP_EAGAIN;
        }
    } while (!up__cas_weak_acq_rel(&p->workers, &g, g + 1));

    unsigned peak = up__load_relaxed(&p->workers_peak);
    while (g + 1 > peak && !up__cas_weak_relaxed(&p->workers_peak, &peak, g + 1))
        ;

    int rc = start_thread(p, s);
    if (rc != UP_OK) {
        up__fetch_sub_acq_rel(&p->workers, 1);
        up__fetch_sub_acq_rel(&s->nworkers, 1);
        up__fetch_add_relaxed(&p->spawn_failed, 1);
        return rc;
    }
    up__fetch_add_relaxed(&p->spawned, 1);
    return UP_OK;
}

void up__join_exited(up_pool *p)
{
    for (unsigned i = 0; i < p->nshards; i++) {
        up__shard *s = &p->shards[i];
        pthread_mutex_lock(&s->slot_lock);
        for (unsigned k = 0; k < s->nslots; k++) {
            up__worker *w = slot_worker(s, k);
            if (w && w->joinable) {
                pthread_join(w->thread, NULL);
                w->joinable = 0;
            }
        }
        pthread_mutex_unlock(&s->slot_lock);
    }
}
