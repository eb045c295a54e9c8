/* The submit paths. A task from inside one of the pool's workers goes to
 * that worker's deque; any other goes to the queue of the shard that owns
 * the CPU the caller runs on, then to the other shards nearest first. After
 * publishing, the submitter wakes a parked worker only when no worker is
 * searching (see the idle protocol in worker.c). None of this allocates.
 *
 * A full pool is handled by mode: up_submit returns UP_EOVERLOAD at once;
 * the waiting forms run queued tasks themselves when cfg.submit_help is 1
 * or 2 (the queue is full, so there are some to run, and running them makes
 * room; at 2 the submitter then runs its own task as well), and otherwise
 * sleep on the shard's space event until a consumer frees a slot. */
#include <sched.h>

#include "clock.h"
#include "help.h"
#include "os/os.h"
#include "pool_internal.h"
#include "rng.h"
#include "workmap.h"
#include "../layer/up_layer.h"

/* MODE_NOGROW: never start a worker beyond the first (see layer/up_layer.h). */
enum { MODE_NOWAIT = 0, MODE_WAIT = 1, MODE_NOGROW = 2 };

/* The caller's CPU, refreshed every few submits: asking costs a few
 * nanoseconds, and a thread rarely migrates between two submits. */
static _Thread_local int tls_cpu UP__TLS_IE = -1;
static _Thread_local unsigned tls_cpu_age UP__TLS_IE;
/* A number per submitting thread, 1, 2, ... in the order threads first
 * need one. A thread's inline slot in its shard (cede.c: its lease and
 * the line it counts its inline tasks on) is its number modulo
 * UP__LEASES, so the first UP__LEASES submitters never share that line,
 * which each writes twice per task. A hash of the number spreads threads
 * over shards (below), but modulo UP__LEASES it gives neighbours one
 * slot (the 2nd and 3rd thread, say). */
static _Atomic unsigned thread_seq;
static _Thread_local unsigned tls_thread_number UP__TLS_IE; /* 0: none yet */

static unsigned thread_number(void)
{
    if (tls_thread_number == 0)
        tls_thread_number = up__fetch_add_relaxed(&thread_seq, 1) + 1;
    return tls_thread_number;
}

static unsigned thread_hash(void) { return thread_number() * 0x9e3779b1u | 1u; }

static int current_cpu(void)
{
    if (tls_cpu_age-- == 0 || tls_cpu < 0) {
        tls_cpu_age = 63;
        tls_cpu = up__os_current_cpu();
    }
    return tls_cpu;
}

/* A random shard per submit: the Go pool's policy, kept for comparison
 * (cfg.shard_choice). A per-thread stream (rng.h), so choosing costs no
 * shared line. */
static _Thread_local uint32_t tls_random;

static unsigned random_shard(const up_pool *p)
{
    if (tls_random == 0)
        tls_random = up__rng_seed(thread_hash(), 0);
    return up__rng_below(&tls_random, p->nshards);
}

static unsigned home_shard(const up_pool *p)
{
    if (p->nshards == 1)
        return 0;
    if (p->cfg.shard_choice == UP_SHARD_RANDOM)
        return random_shard(p);
    if (!p->spread_by_thread) {
        int cpu = current_cpu();
        if (cpu >= 0 && cpu < p->plan.ncpu_slots) {
            int s = p->plan.cpu_to_shard[cpu];
            if (s >= 0)
                return (unsigned)s;
        }
    }
    return (thread_hash() >> 8) % p->nshards;
}

unsigned up__home_shard(const up_pool *p) { return home_shard(p); }

/* After a task became visible in shard s (or in a deque of a worker of s):
 * make sure somebody will look. */
static void after_publish(up_pool *p, up__shard *s, int mode)
{
    if (p->use_map)
        up__work_mark(p, s->index); /* before the idle word: see workmap.h */
    uint64_t idle = up__load_seqcst(&p->idle);
    if (UP__IDLE_SPINNING(idle) != 0)
        return;
    if (UP__IDLE_PARKED(idle) != 0) {
        up__wake_one(p, s->index);
        return;
    }
    if (mode & MODE_NOGROW)
        return; /* the caller grows the pool itself if nobody comes */
    /* Every worker is busy: grow toward one worker per CPU of the shard,
     * beyond that for workers inside blocking regions, and otherwise let
     * the monitor judge whether tasks are blocked. */
    if (up__spawn(p, s, 0) != UP_OK && !up__region_spawn(p, s))
        up__monitor_poke(p);
}

void up__publish_wake(up_pool *p, unsigned shard)
{
    after_publish(p, &p->shards[shard], MODE_NOWAIT);
}

/* Tries the shards in the home shard's order, from position first on. */
static int push_from(up_pool *p, unsigned home, unsigned first, const up__task *t, int mode)
{
    const unsigned *order = &p->plan.order[home * p->nshards];
    for (unsigned k = first; k < p->nshards; k++) {
        up__shard *s = &p->shards[order[k]];
        int rc = up__mpmc_push(&s->q, t);
        if (rc == UP__MPMC_OK) {
            after_publish(p, s, mode);
            return UP_OK;
        }
        if (rc == UP__MPMC_CLOSED_ERR)
            return UP_ESTOPPED;
    }
    return UP_EOVERLOAD;
}

/* Runs queued tasks on the calling thread: a batch from the home shard
 * (one CAS for the batch), or, when any is set and home has none, one task
 * from the nearest shard that has one. Returns 1 if it ran any.
 *
 * The batch amortizes the CAS for short tasks, but a batch of long tasks
 * (tasks that block, say) would hold work back from idle workers while
 * this thread runs them one after another. So each thread learns: it
 * starts with one task, doubles its batch (up to HELP_BATCH, and never
 * more than an eighth of what is queued) while its tasks average under
 * HELP_SHORT_NS, and falls back to one as soon as they do not. Tasks count
 * as executed only after they return (up__count_executed). */
#define HELP_BATCH    32
#define HELP_SHORT_NS 20000
static _Thread_local unsigned tls_help_batch = 1;

static int help_one(up_pool *p, unsigned home, int any)
{
    up__task batch[HELP_BATCH];
    up__shard *s = &p->shards[home];
    uint64_t queued = up__mpmc_accepted(&s->q) - up__mpmc_taken(&s->q);
    unsigned want = tls_help_batch;
    if (want > queued / 8)
        want = queued / 8 ? (unsigned)(queued / 8) : 1;
    unsigned n = up__mpmc_pop_batch(&s->q, batch, want);
    if (n == 0 && any) {
        const unsigned *order = &p->plan.order[home * p->nshards];
        for (unsigned k = 1; k < p->nshards && n == 0; k++) {
            s = &p->shards[order[k]];
            n = up__mpmc_pop_batch(&s->q, batch, 1);
        }
    }
    if (n == 0)
        return 0;
    if (up__load_seqcst(&s->space.armed) && up__exchange_acq_rel(&s->space.armed, 0))
        up__event_notify_one(&s->space.event);
    uint64_t t0 = up__now_ns();
    for (unsigned i = 0; i < n; i++)
        up__run(p, NULL, s, &batch[i], NULL);
    uint64_t per = (up__now_ns() - t0) / n;
    if (per < HELP_SHORT_NS)
        tls_help_batch = tls_help_batch * 2 > HELP_BATCH ? HELP_BATCH : tls_help_batch * 2;
    else
        tls_help_batch = 1;
    /* One count for the batch: each task has returned (up__count_executed). */
    up__count_executed(p, NULL, s, n);
    return 1;
}

/* Accepts a task by running it on the calling thread; 0 when the pool is
 * stopping (see up__accept_own). */
static int run_inline(up_pool *p, up__shard *s, const up__task *t)
{
    if (!up__accept_own(p, &s->direct))
        return 0;
    up__run_counted(p, NULL, s, t);
    return 1;
}

static int queue_full(up__mpmc *q)
{
    uint64_t tail = up__load_seqcst(&q->ring.tail) & ~UP__MPMC_CLOSED;
    return tail - up__load_seqcst(&q->ring.head) > q->ring.mask;
}

/* Sleeps until the home shard's queue may have room, the deadline, or a
 * bounded slice (so the monitor keeps being poked). Arming and then
 * re-reading the positions pairs with the consumer's CAS on head followed
 * by its load of space.armed (worker.c): either this thread sees the room
 * or that consumer sees the flag and wakes a sleeper. Each sleeper woken
 * so, once its task is queued, wakes the next (space_chain), so a wake-up
 * reaches every sleeper there is room for, one at a time; the others
 * sleep on to their slice, or to the next arming. */
static void wait_for_space(up_pool *p, up__shard *s, uint64_t deadline)
{
    uint32_t key = up__event_key(&s->space.event);
    up__store_sb(&s->space.armed, 1);
    up__fence_sb(); /* store then load: see atomic.h */
    if (!queue_full(&s->q) || up__load_seqcst(&p->stopping)) {
        sched_yield(); /* room is being made right now */
        return;
    }
    uint64_t slice = up__remaining_ns(deadline);
    if (slice > p->cfg.spawn_delay_ns)
        slice = p->cfg.spawn_delay_ns;
    up__fetch_add_relaxed(&s->space.sleepers, 1);
    up__event_wait(&s->space.event, key, slice);
    up__fetch_sub_relaxed(&s->space.sleepers, 1);
    up__monitor_poke(p);
}

/* A submitter that slept for room has queued its task: the next sleeper
 * goes while at least a quarter of the queue is still free. */
static void space_chain(up__shard *s)
{
    if (up__load_relaxed(&s->space.sleepers) == 0)
        return;
    uint64_t queued = up__mpmc_accepted(&s->q) - up__mpmc_taken(&s->q);
    if (queued <= (s->q.ring.mask + 1) / 4 * 3)
        up__event_notify_one(&s->space.event);
}

/* The home shard's tasks park (cede.c's mark). A helping submitter then
 * runs none of them: a waiting call parks its task only on a worker, so a
 * task run here that sleeps or waits would hold this thread, the one that
 * keeps submitting, for its whole wait. The submit waits for room
 * instead, which the workers make as fast as tasks park. (Before a
 * worker has run the first of them the mark is not there yet: wait.h.) */
static int tasks_park(up_pool *p, unsigned home)
{
    return up__load_relaxed(&p->shards[home].cede.parking);
}

static int submit_task(up_pool *p, const up__task *t, int mode, uint64_t deadline)
{
    if (!p || !t->fn) {
        up__set_error(!p ? "submit: pool is NULL" : "submit: task function is NULL");
        return UP_EINVAL;
    }
    up__worker *w = up__tls_worker;
    if (w && w->pool == p) {
        if (up__load_acquire(&p->stopping)) {
            up__set_error("submit: the pool is stopped");
            return UP_ESTOPPED;
        }
        /* Counted before it is visible: a thief may run it at once, and
         * the pool's stats must never show more executed than submitted. */
        uint64_t pushed = up__load_relaxed(&w->pushed);
        up__store_relaxed(&w->pushed, pushed + 1);
        if (up__deque_push_sb(&w->dq, t) == UP__DEQUE_OK) {
            after_publish(p, &p->shards[w->shard], mode);
            return UP_OK;
        }
        up__store_relaxed(&w->pushed, pushed);
    }
    unsigned home = w && w->pool == p ? w->shard : home_shard(p);
    /* No worker at all (a floor of zero, all retired, or none could ever
     * start): start one first, and refuse the task if that fails, rather
     * than accept work nobody will run. */
    if (up__load_relaxed(&p->workers) == 0 && up__spawn_first(p, &p->shards[home]) != UP_OK) {
        up__set_error("submit: no worker thread could be started");
        return UP_EAGAIN;
    }
    /* Tasks of a pool with a start hook run only on its workers: they
     * expect their worker's state (up_worker_local()). */
    int may_help =
        (mode & MODE_WAIT) && p->cfg.submit_help && !(w && w->pool == p) && !p->cfg.on_worker_start;

    /* A backlog at home: the workers do not keep up, so a submitter at
     * the default level runs its own task (cede.c). */
    if (may_help && p->cfg.submit_help == 2 &&
        up__inline_try(p, &p->shards[home], thread_number(), t))
        return UP_OK;
    int slept = 0;
    for (;;) {
        /* Home first. A helping submitter that finds it full runs a batch
         * of its queued tasks (oldest first), everything on this CPU's
         * lines. At level 1 it then queues its own task; at level 2 it runs
         * its own task too, which costs no queue traffic at all. Level 2
         * also covers a full queue with nothing takeable at its head (a
         * thread preempted between reserving a slot and filling it): the
         * shard is stuck until that thread runs again, and this CPU stays
         * busy meanwhile. */
        int rc = push_from(p, home, 0, t, mode);
        if (rc == UP_EOVERLOAD && may_help && !tasks_park(p, home) && up__help_enter()) {
            int ran = help_one(p, home, 0);
            if (p->cfg.submit_help == 1) {
                up__help_leave();
                if (ran)
                    continue;
            } else {
                int ran_own = run_inline(p, &p->shards[home], t);
                up__help_leave();
                if (!ran_own) {
                    up__set_error("submit: the pool is stopped");
                    return UP_ESTOPPED;
                }
                return UP_OK;
            }
        }
        if (rc == UP_EOVERLOAD && p->nshards > 1)
            rc = push_from(p, home, 1, t, mode);
        if (rc == UP_OK) {
            if (slept)
                space_chain(&p->shards[home]);
            return UP_OK;
        }
        if (rc == UP_ESTOPPED) {
            up__set_error("submit: the pool is stopped");
            return UP_ESTOPPED;
        }
        if (!(mode & MODE_WAIT)) {
            up__monitor_poke(p);
            up__fetch_add_relaxed(&p->overloads, 1);
            up__set_error("submit: every queue is full");
            return UP_EOVERLOAD;
        }
        if (up__remaining_ns(deadline) == 0) {
            up__set_error("submit: no room before the deadline");
            return UP_ETIMEDOUT;
        }
        if (w && w->pool == p) {
            /* A worker facing full queues and its own full deque runs the
             * task itself: waiting could wait for this very worker, and
             * the stack grows no deeper than the program's own recursion. */
            up__count_owner(&w->pushed); /* submitted, before it runs */
            up__run_counted(p, w, &p->shards[w->shard], t);
            return UP_OK;
        }
        if (may_help && !tasks_park(p, home) && up__help_enter()) {
            int ran = help_one(p, home, 1);
            up__help_leave();
            if (ran)
                continue;
        }
        wait_for_space(p, &p->shards[home], deadline);
        slept = 1;
    }
}

int up_submit(up_pool *p, up_fn fn, void *arg)
{
    up__task t;
    up__task_set_arg(&t, fn, arg);
    return submit_task(p, &t, MODE_NOWAIT, 0);
}

int up_submit_wait(up_pool *p, up_fn fn, void *arg)
{
    up__task t;
    up__task_set_arg(&t, fn, arg);
    return submit_task(p, &t, MODE_WAIT, UINT64_MAX);
}

int up_submit_timeout(up_pool *p, up_fn fn, void *arg, uint64_t timeout_ns)
{
    up__task t;
    up__task_set_arg(&t, fn, arg);
    return submit_task(p, &t, MODE_WAIT, up__deadline_after(timeout_ns));
}

/* The copying forms: the payload checked, then copied into the slot. */
static int submit_copy(up_pool *p, up_fn fn, const void *payload, size_t size, int mode,
                       uint64_t deadline)
{
    if (size == 0 || size > UP_PAYLOAD_MAX) {
        up__set_error("submit_copy: payload of %zu bytes (must be 1 to %d)", size, UP_PAYLOAD_MAX);
        return UP_EINVAL;
    }
    if (!payload) {
        up__set_error("submit_copy: payload is NULL");
        return UP_EINVAL;
    }
    up__task t;
    up__task_set_copy(&t, fn, payload, size);
    return submit_task(p, &t, mode, deadline);
}

int up_submit_copy(up_pool *p, up_fn fn, const void *payload, size_t size)
{
    return submit_copy(p, fn, payload, size, MODE_NOWAIT, 0);
}

int up_submit_copy_wait(up_pool *p, up_fn fn, const void *payload, size_t size)
{
    return submit_copy(p, fn, payload, size, MODE_WAIT, UINT64_MAX);
}

int up__submit_copy_nogrow(up_pool *p, up_fn fn, const void *payload, size_t size)
{
    return submit_copy(p, fn, payload, size, MODE_NOWAIT | MODE_NOGROW, 0);
}

unsigned up__pool_workers(const up_pool *p) { return p ? up__load_relaxed(&p->workers) : 0; }

int up__pool_stopped(const up_pool *p) { return up__load_acquire(&p->stopping) != 0; }
