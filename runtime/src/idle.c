/* The idle protocol (spin, then park), waking, and retirement of the
 * workers whose loop is in worker.c.
 *
 * A worker that finds no task becomes a searcher
 * (counted in the high half of pool->idle) and polls for cfg.spin rounds.
 * Then it parks: under its shard's idle lock it pushes itself on the idle
 * list and moves its count from searching to parked with one sequentially
 * consistent RMW on pool->idle; after the lock it looks once more for work
 * (queue positions and deque bounds, loaded sequentially consistently) and
 * only then sleeps. A submitter publishes its task with a sequentially
 * consistent CAS on the queue's tail and then loads pool->idle. In the
 * single total order of these operations either the worker's last look
 * sees the task or the submitter sees the worker counted as parked and
 * wakes one parked worker. A submitter that sees a searcher
 * wakes nobody: the searcher will either find the task, or park (and take
 * its last look after the submitter's CAS), or take some other task, in
 * which case, if it was the last searcher and work is still visible, it
 * wakes a parked worker or the monitor itself. So no wake-up is lost, and a
 * burst of submits wakes one worker at a time instead of all.
 *
 * A nested task is published by the deque push's release store of bottom,
 * not a sequentially consistent one, so a parking thief's last look may
 * miss it (the store may still sit in the pusher's store buffer). Such a
 * task is never stranded: the worker that pushed it pops it once its
 * current task returns. It is only not stolen by that thief.
 *
 * In a pool with more shards than a worker probes directly, the last look
 * reads the work map (workmap.h) instead of every queue and deque, and a
 * submitter marks the map before it reads the idle word; the argument is
 * the same with the map in place of the queues (tests/model/workmap.pml).
 *
 * Waking moves a worker off the idle list and its count from parked to
 * searching under the idle lock, then posts the worker's parker. Whoever
 * takes a worker off the list (a waker, or the worker itself when its last
 * look finds work or its park times out) adjusts the counts exactly once. */
#include "pool_internal.h"
#include "wait_internal.h"
#include "workmap.h"
#include "../layer/up_layer.h"

/* Is any task queued or pushed anywhere in the pool? Sequentially
 * consistent loads: this is the "last look" of the idle protocol. With
 * many shards, the work map answers (one load; workmap.h). */
static int work_visible(up_pool *p)
{
    if (up__wait_released_any(p))
        return 1; /* released waiting tasks (wait.c) */
    if (p->use_map)
        return up__work_maybe(p);
    for (unsigned i = 0; i < p->nshards; i++)
        if (up__shard_has_work(&p->shards[i]))
            return 1;
    return 0;
}

/* For the layer's gatherer (up_layer.h): the tasks queued or pushed and
 * not yet taken, counted up to limit (a shard at a time). Reads without a
 * lock, an estimate: a task still being published may count, as may one taken a moment ago whose
 * take is not yet seen. What it must not do is count a task a worker has
 * already taken for long, and it cannot: a take moves head (or a deque's
 * top) before the taker runs anything. */
unsigned up__pool_queued(up_pool *p, unsigned limit)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < p->nshards && n < limit; i++) {
        up__shard *s = &p->shards[i];
        uint64_t tops;
        n += up__mpmc_accepted(&s->q) - up__mpmc_taken(&s->q) + up__deque_backlog(s, &tops);
    }
    return n < limit ? (unsigned)n : limit;
}

/* Under s->idle_lock: the idle list's length, to check nparked (an
 * expensive assertion). */
__attribute__((unused)) static unsigned list_length(up__shard *s)
{
    unsigned n = 0;
    for (up__worker *w = s->idle_top; w; w = w->idle_next)
        n++;
    return n;
}

/* Takes the most recently parked worker of one shard off its idle list,
 * or with oldest the longest parked one (the list's tail). */
static up__worker *pop_idle(up_pool *p, up__shard *s, int oldest)
{
    pthread_mutex_lock(&s->idle_lock);
    up__worker **pp = &s->idle_top;
    while (oldest && *pp && (*pp)->idle_next)
        pp = &(*pp)->idle_next;
    up__worker *w = *pp;
    if (w) {
        *pp = w->idle_next;
        up__assert_internal(w->listed && up__load_relaxed(&s->nparked) >= 1);
        w->listed = 0;
        up__store_relaxed(&s->nparked, up__load_relaxed(&s->nparked) - 1);
        uint64_t old = up__fetch_add_seqcst(&p->idle, UP__IDLE_SPIN_ONE - UP__IDLE_PARK_ONE);
        up__assert_internal(UP__IDLE_PARKED(old) >= 1 && up__idle_sane(p, old));
        (void)old;
    }
    pthread_mutex_unlock(&s->idle_lock);
    return w;
}

static int wake(up_pool *p, unsigned shard, int oldest)
{
    const unsigned *order = &p->plan.order[shard * p->nshards];
    for (unsigned k = 0; k < p->nshards; k++) {
        up__shard *s = &p->shards[order[k]];
        if (up__load_relaxed(&s->nparked) == 0 && k + 1 < p->nshards)
            continue; /* a peek to skip empty lists; the lock decides */
        up__worker *w = pop_idle(p, s, oldest);
        if (w) {
            up__fetch_add_relaxed(&p->wakes, 1);
            up__parker_post(&w->parker);
            return 1;
        }
    }
    return 0;
}

int up__wake_one(up_pool *p, unsigned shard) { return wake(p, shard, 0); }

int up__wake_oldest(up_pool *p, unsigned shard) { return wake(p, shard, 1); }

void up__wake_all(up_pool *p)
{
    for (unsigned i = 0; i < p->nshards; i++) {
        up__worker *w;
        while ((w = pop_idle(p, &p->shards[i], 0)) != NULL)
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
        up__assert_internal(up__load_relaxed(&s->nparked) >= 1);
        w->listed = 0;
        up__store_relaxed(&s->nparked, up__load_relaxed(&s->nparked) - 1);
        uint64_t old = up__fetch_add_seqcst(&p->idle, UP__IDLE_SPIN_ONE - UP__IDLE_PARK_ONE);
        up__assert_internal(UP__IDLE_PARKED(old) >= 1 && up__idle_sane(p, old));
        (void)old;
        mine = 1;
    }
    pthread_mutex_unlock(&s->idle_lock);
    return mine;
}

/* Called while counted as searching; returns counted as searching. */
int up__park(up__worker *w)
{
    up_pool *p = w->pool;
    up__shard *s = &p->shards[w->shard];
    pthread_mutex_lock(&s->idle_lock);
    up__assert_internal(!w->listed);
    w->idle_next = s->idle_top;
    s->idle_top = w;
    w->listed = 1;
    up__store_relaxed(&s->nparked, up__load_relaxed(&s->nparked) + 1);
    uint64_t old = up__fetch_add_seqcst(&p->idle, UP__IDLE_PARK_ONE - UP__IDLE_SPIN_ONE);
    /* A parker was counted searching; the list and nparked agree. */
    up__assert_internal(UP__IDLE_SPINNING(old) >= 1 && up__idle_sane(p, old));
    up__assert_expensive(list_length(s) == up__load_relaxed(&s->nparked));
    (void)old;
    pthread_mutex_unlock(&s->idle_lock);
    up__count_owner(&w->parks);

    if (work_visible(p) || up__load_seqcst(&p->stopping)) {
        if (!unlist(p, s, w))
            up__parker_wait(&w->parker, UINT64_MAX); /* a waker's token is coming */
        return UP__PARK_AWAKE;
    }
    /* Workers beyond one per CPU were started for blocked tasks: once idle
     * they are not needed, and they go sooner. */
    unsigned n = up__load_relaxed(&s->nworkers);
    uint64_t timeout = n > p->cfg.shard_min_workers ? p->cfg.idle_timeout_ns : UINT64_MAX;
    int extra = n > p->cfg.shard_min_workers && n > up__shard_cpus(s) &&
                timeout > p->cfg.extra_idle_timeout_ns;
    if (extra)
        timeout = p->cfg.extra_idle_timeout_ns;
    if (up__parker_wait(&w->parker, timeout))
        return UP__PARK_AWAKE;
    if (unlist(p, s, w))
        return extra ? UP__PARK_TIMEOUT_EXTRA : UP__PARK_TIMEOUT;
    up__parker_wait(&w->parker, UINT64_MAX);
    return UP__PARK_AWAKE;
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
int up__try_retire(up__worker *w, unsigned keep)
{
    up_pool *p = w->pool;
    up__shard *s = &p->shards[w->shard];
    unsigned min = p->cfg.shard_min_workers > keep ? p->cfg.shard_min_workers : keep;
    if (up__load_relaxed(&s->nworkers) <= min || work_visible(p))
        return 0;
    uint64_t old = up__fetch_sub_seqcst(&p->idle, UP__IDLE_SPIN_ONE);
    up__assert_internal(UP__IDLE_SPINNING(old) >= 1 && up__idle_sane(p, old));
    (void)old;
    if (up__reserve_holds(p)) {
        up__fetch_add_seqcst(&p->idle, UP__IDLE_SPIN_ONE);
        return 0;
    }
    unsigned n = up__load_relaxed(&s->nworkers);
    do {
        if (n <= min) {
            up__fetch_add_seqcst(&p->idle, UP__IDLE_SPIN_ONE);
            return 0;
        }
    } while (!up__cas_weak_seqcst(&s->nworkers, &n, n - 1));
    up__fetch_sub_seqcst(&p->workers, 1);
    if (work_visible(p) && up__reserve_worker(p, s, p->cfg.shard_max_workers)) {
        up__fetch_add_seqcst(&p->idle, UP__IDLE_SPIN_ONE);
        return 0;
    }
    up__fetch_add_relaxed(&p->retired, 1);
    return 1;
}

/* A searcher that found a task stops searching. If it was the last one
 * and work is still visible, somebody else must look: a parked worker, or
 * the monitor when every worker is busy. */
void up__stop_searching(up__worker *w)
{
    up_pool *p = w->pool;
    uint64_t old = up__fetch_sub_seqcst(&p->idle, UP__IDLE_SPIN_ONE);
    up__assert_internal(UP__IDLE_SPINNING(old) >= 1 && up__idle_sane(p, old));
    if (UP__IDLE_SPINNING(old) != 1 || !work_visible(p))
        return;
    if (UP__IDLE_PARKED(old) != 0)
        up__wake_one(p, w->shard);
    else
        up__monitor_poke(p);
}
