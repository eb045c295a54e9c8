/* Pool lifecycle: create, stop in its three forms, destroy, statistics.
 *
 * Shutdown without a lock on the submit path: stop sets the stopping flag
 * and closes every shard queue with one atomic OR on its tail. A submit is
 * accepted exactly when its tail CAS succeeded before the close, so every
 * accepted task sits below the final tail and the workers drain up to it
 * before they exit (worker.c). Nested submits check the flag and go to the
 * submitting worker's own deque, which that worker empties before it
 * exits. A waiting stop returns once no worker thread is left and the
 * executed count has caught up with the accepted count (a submitter that
 * helps counts its task after the task returns). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi_struct.h"
#include "clock.h"
#include "config.h"
#include "pool_internal.h"
#include "sde.h"
#include "wait_internal.h"

static void free_shards(up_pool *p, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        up__shard *s = &p->shards[i];
        if (s->slots) {
            for (unsigned k = 0; k < s->nslots; k++) {
                up__worker *w = up__load_relaxed(&s->slots[k]);
                if (w)
                    up__free_worker(w);
            }
            free(s->slots);
        }
        up__mpmc_free(&s->q);
        up__event_destroy(&s->space.event);
        pthread_mutex_destroy(&s->idle_lock);
        pthread_mutex_destroy(&s->slot_lock);
    }
    free(p->shards);
    p->shards = NULL;
}

static void free_pool(up_pool *p, unsigned shards_ready)
{
    if (p->shards)
        free_shards(p, shards_ready);
    free(p->work_bits);
    up__plan_free(&p->plan);
    up__parker_destroy(&p->mon.parker);
    up__omp_share_destroy(p);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->join_mu);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

static int init_shard(up_pool *p, unsigned i)
{
    up__shard *s = &p->shards[i];
    s->index = i;
    s->ncpus = p->plan.shards[i].ncpus;
    s->nslots = p->cfg.shard_max_workers;
    if (pthread_mutex_init(&s->slot_lock, NULL) != 0)
        return UP_ENOMEM;
    if (pthread_mutex_init(&s->idle_lock, NULL) != 0) {
        pthread_mutex_destroy(&s->slot_lock);
        return UP_ENOMEM;
    }
    if (up__event_init(&s->space.event) != 0) {
        pthread_mutex_destroy(&s->idle_lock);
        pthread_mutex_destroy(&s->slot_lock);
        return UP_ENOMEM;
    }
    s->slots = calloc(s->nslots, sizeof *s->slots);
    if (!s->slots || up__mpmc_init(&s->q, p->cfg.queue_capacity) != 0) {
        free(s->slots);
        s->slots = NULL;
        up__event_destroy(&s->space.event);
        pthread_mutex_destroy(&s->idle_lock);
        pthread_mutex_destroy(&s->slot_lock);
        return UP_ENOMEM;
    }
    return UP_OK;
}

static int print_config_requested(void)
{
    return up__print_config_wanted(); /* UP_PRINT_CONFIG, else OMP_DISPLAY_ENV (config.c) */
}

int up_pool_create(up_pool **out, const up_config *cfg_in)
{
    if (!out) {
        up__set_error("up_pool_create: out is NULL");
        return UP_EINVAL;
    }
    *out = NULL;
    up_config cfg;
    int rc = cfg_in ? up__config_read("up_pool_create", cfg_in, &cfg) : up_config_init(&cfg);
    if (rc != UP_OK)
        return rc;
    rc = up__config_check(&cfg);
    if (rc != UP_OK)
        return rc;

    up_pool *p = aligned_alloc(UP_CACHE_LINE, sizeof *p);
    if (!p) {
        up__set_error("out of memory for the pool");
        return UP_ENOMEM;
    }
    memset(p, 0, sizeof *p);
    p->cfg = cfg;
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p);
        return UP_ENOMEM;
    }
    pthread_mutex_init(&p->join_mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    up__parker_init(&p->mon.parker);
    up__omp_share_init(p);

    rc = up__plan_build(&p->plan, &cfg);
    if (rc != UP_OK) {
        free_pool(p, 0);
        return rc;
    }
    p->nshards = p->plan.nshards;
    if (cfg.max_workers && cfg.max_workers < (uint64_t)p->nshards * cfg.shard_min_workers) {
        up__config_error("up_config.max_workers (UP_MAX_WORKERS) = %u: below the %u shards x "
                         "up_config.shard_min_workers (UP_SHARD_MIN_WORKERS) = %u",
                         cfg.max_workers, p->nshards, cfg.shard_min_workers);
        free_pool(p, 0);
        return UP_EINVAL;
    }
    p->shards = aligned_alloc(UP_CACHE_LINE, p->nshards * sizeof(up__shard));
    if (!p->shards) {
        up__set_error("out of memory for %u shards", p->nshards);
        free_pool(p, 0);
        return UP_ENOMEM;
    }
    memset(p->shards, 0, p->nshards * sizeof(up__shard));
    /* The work map (workmap.h), for pools with more shards than a worker
     * probes directly; 64 x 64 bits cover the largest pool. */
    p->use_map = p->nshards > UP__NEAR_SHARDS;
    if (p->use_map) {
        size_t words = (p->nshards + 63) / 64;
        if (words > 64) {
            up__set_error("%u shards: the work map covers at most 4096", p->nshards);
            free_pool(p, 0);
            return UP_EINVAL;
        }
        p->work_bits = aligned_alloc(UP_CACHE_LINE, words * sizeof(up__work_word));
        if (!p->work_bits) {
            up__set_error("out of memory for the work map of %u shards", p->nshards);
            free_pool(p, 0);
            return UP_ENOMEM;
        }
        memset(p->work_bits, 0, words * sizeof(up__work_word));
    }
    for (unsigned i = 0; i < p->nshards; i++) {
        if (init_shard(p, i) != UP_OK) {
            free_pool(p, i);
            up__set_error("out of memory for shard %u", i);
            return UP_ENOMEM;
        }
        if (p->shards[i].ncpus == 0)
            p->spread_by_thread = 1;
    }

    up__monitor_start(
        p); /* without it the pool still works; it just cannot grow for blocked tasks */
    unsigned started = 0;
    int last = UP_OK;
    for (unsigned i = 0; i < p->nshards; i++)
        for (unsigned k = 0; k < cfg.shard_min_workers; k++) {
            last = up__spawn(p, &p->shards[i], 1);
            if (last == UP_OK)
                started++;
        }
    if (cfg.shard_min_workers > 0 && started == 0) {
        up__set_error("no worker thread could be started");
        up_pool_destroy(p);
        return last == UP_ENOMEM ? UP_ENOMEM : UP_EAGAIN;
    }
    if (print_config_requested())
        up__print_config(&p->cfg, &p->plan, stderr);
    up__sde_register(p);
    *out = p;
    return UP_OK;
}

void up_pool_stop(up_pool *p)
{
    if (!p)
        return;
    int expected = 0;
    if (!up__cas_strong_seqcst(&p->stop_requested, &expected, 1))
        return;
    /* Close first, then say stopping: a worker that sees stopping and
     * empty queues knows they stay empty, so it may exit. The other order
     * lets workers exit while a submit slips in before the close (the
     * model in tests/model/pool_stop.pml finds that interleaving). */
    for (unsigned i = 0; i < p->nshards; i++)
        up__mpmc_close(&p->shards[i].q);
    up__store_seqcst(&p->stopping, 1);
    up__wake_all(p);
    for (unsigned i = 0; i < p->nshards; i++)
        up__event_notify_all(&p->shards[i].space.event);
    /* Make sure somebody drains what is queued: with a floor of zero the
     * pool may have no worker left. If none can start, a waiting stop or
     * destroy drains on its caller's thread. */
    if (up__load_acquire(&p->workers) == 0)
        for (unsigned i = 0; i < p->nshards; i++)
            if (up__mpmc_nonempty(&p->shards[i].q)) {
                up__spawn(p, &p->shards[i], 1);
                break;
            }
    up__parker_post(&p->mon.parker);
}

void up__notify_stopper(up_pool *p)
{
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static int inside_own_task(const up_pool *p)
{
    return up__tls_running == p || (up__tls_worker && up__tls_worker->pool == p);
}

/* Every accepted task has returned: accepted counts are queue tails and
 * deque pushes, executed counts are added after each task returns. */
static int all_executed(up_pool *p)
{
    /* Orders the caller's earlier store of stopping before these loads,
     * as up__accept_own expects (atomic.h: the store-buffering step). */
    up__fence_sb();
    up_stats st;
    up_pool_stats(p, &st);
    return st.executed == st.submitted;
}

static int queues_empty(up_pool *p)
{
    for (unsigned i = 0; i < p->nshards; i++)
        if (up__mpmc_nonempty(&p->shards[i].q))
            return 0;
    return 1;
}

/* No worker could be started to drain the queues: run what is left here. */
static void drain_here(up_pool *p)
{
    up__task t;
    while (!queues_empty(p)) {
        int ran = 0;
        for (unsigned i = 0; i < p->nshards; i++)
            while (up__take_from_shard(p, &p->shards[i], &t)) {
                up__run_counted(p, NULL, &p->shards[i], &t);
                ran = 1;
            }
        if (!ran)
            sched_yield(); /* a producer is mid-publish */
    }
}

/* Waits until every accepted task has run; UP_ETIMEDOUT at the deadline. */
static int wait_done(up_pool *p, uint64_t deadline)
{
    pthread_mutex_lock(&p->mu);
    for (;;) {
        int no_workers = p->live == 0;
        if (no_workers && (!queues_empty(p) || up__wait_released_any(p))) {
            pthread_mutex_unlock(&p->mu);
            drain_here(p);
            up__wait_drain_here(p); /* released waiting tasks (wait.c) */
            pthread_mutex_lock(&p->mu);
            continue;
        }
        /* Waiting tasks first: settled is read before the counts. */
        if (no_workers && up__wait_settled(p) && all_executed(p))
            break;
        uint64_t left = up__remaining_ns(deadline);
        if (left == 0) {
            pthread_mutex_unlock(&p->mu);
            up__set_error("stop: tasks still running at the deadline");
            return UP_ETIMEDOUT;
        }
        /* Bounded so a helper finishing between our check and the wait is
         * seen soon even without its broadcast. */
        uint64_t slice = left < 10000000u ? left : 10000000u;
        struct timespec abs = up__realtime_after(slice);
        pthread_cond_timedwait(&p->cv, &p->mu, &abs);
    }
    pthread_mutex_unlock(&p->mu);
    return UP_OK;
}

static int stop_wait(up_pool *p, uint64_t timeout_ns)
{
    if (!p) {
        up__set_error("stop: pool is NULL");
        return UP_EINVAL;
    }
    if (inside_own_task(p)) {
        up__set_error(
            "stop: a waiting stop from one of the pool's own tasks would wait for itself");
        return UP_EDEADLK;
    }
    up_pool_stop(p);
    uint64_t deadline = up__deadline_after(timeout_ns);
    int rc = wait_done(p, deadline);
    if (rc != UP_OK)
        return rc;
    /* Everything ran. The monitor may have started a worker on a stale
     * look; it exits once no worker is left, then the last threads are
     * joined. */
    pthread_mutex_lock(&p->join_mu);
    up__monitor_join(p);
    rc = wait_done(p, UINT64_MAX);
    up__join_exited(p);
    pthread_mutex_unlock(&p->join_mu);
    return rc;
}

int up_pool_stop_and_wait(up_pool *p) { return stop_wait(p, UINT64_MAX); }

int up_pool_stop_timeout(up_pool *p, uint64_t timeout_ns) { return stop_wait(p, timeout_ns); }

int up_pool_destroy(up_pool *p)
{
    if (!p) {
        up__set_error("destroy: pool is NULL");
        return UP_EINVAL;
    }
    /* Tasks still waiting on events and timers are released cancelled
     * (wait.h), then waited for like any other. */
    if (!inside_own_task(p)) {
        up_pool_stop(p);
        up__wait_cancel_all(p);
    }
    int rc = stop_wait(p, UINT64_MAX);
    if (rc != UP_OK)
        return rc;
    up__sde_unregister(p);
    up__wait_free(p);
    free_pool(p, p->nshards);
    return UP_OK;
}

/* A shard's counters into out, in two parts. Executed counts are read
 * before submitted ones, each with acquire: a task is counted submitted
 * before it can run and counted executed (with a release) after, so a
 * snapshot never shows more executed than submitted, even while tasks
 * come and go. */
static void add_shard_executed(up__shard *s, up_stats *out)
{
    uint64_t helped = up__load_acquire(&s->helped);
    for (unsigned i = 0; i < UP__LEASES; i++)
        helped += up__load_acquire(&s->cede.inline_counts[i].executed);
    out->helped += helped;
    out->executed += helped;
    unsigned used = up__load_acquire(&s->slots_used);
    for (unsigned k = 0; k < used; k++) {
        up__worker *w = up__load_acquire(&s->slots[k]);
        if (!w)
            continue;
        out->executed += up__load_acquire(&w->executed);
        out->steals += up__load_relaxed(&w->steals);
        out->parks += up__load_relaxed(&w->parks);
    }
}

uint64_t up__shard_executed(up__shard *s)
{
    up_stats st = {0};
    add_shard_executed(s, &st);
    return st.executed;
}

static void add_shard_submitted(up__shard *s, up_stats *out)
{
    uint64_t direct = up__load_acquire(&s->direct);
    for (unsigned i = 0; i < UP__LEASES; i++)
        direct += up__load_acquire(&s->cede.inline_counts[i].submitted);
    out->inlined += direct;
    out->submitted += up__mpmc_accepted(&s->q) + direct;
    unsigned used = up__load_acquire(&s->slots_used);
    for (unsigned k = 0; k < used; k++) {
        up__worker *w = up__load_acquire(&s->slots[k]);
        if (w)
            out->submitted += up__load_acquire(&w->pushed);
    }
    out->workers += up__load_relaxed(&s->nworkers);
}

static void add_pool(up_pool *p, up_stats *out)
{
    out->overloads = up__load_relaxed(&p->overloads);
    out->spawned = up__load_relaxed(&p->spawned);
    out->retired = up__load_relaxed(&p->retired);
    out->wakes = up__load_relaxed(&p->wakes);
    out->spawn_failed = up__load_relaxed(&p->spawn_failed);
    out->bind_failed = up__load_relaxed(&p->bind_failed);
    out->workers_peak = up__load_relaxed(&p->workers_peak);
    out->shards = p->nshards;
    uint64_t idle = up__load_relaxed(&p->idle);
    out->parked = UP__IDLE_PARKED(idle);
    out->searching = UP__IDLE_SPINNING(idle);
    /* Region members parked in the layer's waits (waiter.c) are parked
     * threads of the pool too, though not ones a submit can wake. */
    out->parked += up__load_relaxed(&p->layer_parked);
    out->parks += up__load_relaxed(&p->layer_parks);
}

/* The counters are gathered in the library's up_stats, then written in
 * the program's size (abi_struct.h). */
void up_pool_stats_sized(const up_pool *cp, up_stats *out, size_t size)
{
    if (!out)
        return;
    up_stats st;
    memset(&st, 0, sizeof st);
    if (cp) {
        up_pool *p = (up_pool *)cp; /* counters are atomics; reading them is const in spirit */
        for (unsigned i = 0; i < p->nshards; i++)
            add_shard_executed(&p->shards[i], &st);
        for (unsigned i = 0; i < p->nshards; i++)
            add_shard_submitted(&p->shards[i], &st);
        add_pool(p, &st);
        st.workers = up__load_relaxed(&p->workers);
        up__wait_stats(p, &st); /* after the executed counts: it adds to submitted */
        /* Executed is read first and counts only tasks counted submitted. */
        up__assert_internal(st.executed <= st.submitted);
    }
    up__struct_out(out, size, &st, sizeof st);
}

int up_pool_shard_stats_sized(const up_pool *cp, unsigned shard, up_stats *out, size_t size)
{
    if (!out || !cp || shard >= cp->nshards) {
        up__set_error("shard_stats: %s", !out  ? "out is NULL"
                                         : !cp ? "pool is NULL"
                                               : "no such shard");
        return UP_EINVAL;
    }
    up_stats st;
    memset(&st, 0, sizeof st);
    up_pool *p = (up_pool *)cp;
    add_shard_executed(&p->shards[shard], &st);
    add_shard_submitted(&p->shards[shard], &st);
    add_pool(p, &st);
    up__struct_out(out, size, &st, sizeof st);
    return UP_OK;
}

unsigned up_pool_shards(const up_pool *p) { return p ? p->nshards : 0; }

unsigned up_pool_cpus(const up_pool *p)
{
    /* A shard given no CPU (more shards than CPUs) adds none. */
    unsigned n = 0;
    for (unsigned i = 0; p && i < p->nshards; i++)
        n += p->shards[i].ncpus;
    return p && n == 0 ? 1 : n;
}

void up_pool_print_config(const up_pool *p, FILE *file)
{
    if (p)
        up__print_config(&p->cfg, &p->plan, file ? file : stderr);
}

/* Only a task of the worker's own pool sees the worker's state: a worker of
 * one pool may run another pool's task while it waits on that pool. */
void *up_worker_local(void)
{
    up__worker *w = up__tls_worker;
    return w && w->pool == up__tls_running ? w->local : NULL;
}

up_pool *up_current_pool(void) { return up__tls_running; }
