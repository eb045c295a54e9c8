/* Workers: the loop that finds and runs tasks. A worker takes from its
 * own deque (newest first), then from the shards nearest first; when it
 * finds nothing it searches, then parks (idle.c, which describes the idle
 * protocol), and it exits at stop once the queues are drained or when it
 * retires. Thread creation and the caps are in spawn.c. */
#include <sched.h>

#include "clock.h"
#include "help.h"
#include "os/os.h"
#include "pool_internal.h"
#include "rng.h"
#include "wait_internal.h"
#include "workmap.h"

_Thread_local up__worker *up__tls_worker UP__TLS_IE;
_Thread_local up_pool *up__tls_running UP__TLS_IE;
_Thread_local up__task_tls up__tls_task UP__TLS_IE;

/* Not inlined, and the asm hides both the call's effect and its result
 * from the optimizer, so no call is merged with another or hoisted above a
 * fiber switch (gcc treats a thread-local address as constant within a
 * function, park_task.c's tls_worker_now says the same for a value). */
__attribute__((noinline)) up__task_tls *up__task_tls_here(void)
{
    up__task_tls *t = &up__tls_task;
    __asm__ volatile("" : "+r"(t) : : "memory");
    return t;
}

int up__take_from_shard(up_pool *p, up__shard *s, up__task *out)
{
    (void)p;
    if (up__mpmc_pop(&s->q, out) != UP__MPMC_OK)
        return 0;
    /* Pairs with the sequentially consistent store of space.armed in
     * submit.c: a blocked submitter either sees the room or is notified.
     * One of them is woken once the queue has drained to half, and it
     * wakes the next while room remains (submit.c): woken at the first
     * free slot, or all at once, a hundred blocked submitters would all
     * run for the few slots and sleep again. (A sleeper's slice bounds its
     * wait where the consumers stop before that, wait_for_space.) */
    if (up__load_seqcst(&s->space.armed) &&
        up__mpmc_accepted(&s->q) - up__mpmc_taken(&s->q) <= (s->q.ring.mask + 1) / 2 &&
        up__exchange_acq_rel(&s->space.armed, 0))
        up__event_notify_one(&s->space.event);
    return 1;
}

static int steal_from_deques(up__shard *s, up__worker *self, up__task *out)
{
    unsigned used = up__load_acquire(&s->slots_used);
    if (used == 0)
        return 0;
    unsigned start = self ? up__rng_below(&self->rng, used) : 0;
    for (unsigned k = 0; k < used; k++) {
        up__worker *v = up__slot_worker(s, (start + k) % used);
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

static int probe(up_pool *p, up__shard *s, up__worker *self, up__task *out)
{
    return up__take_from_shard(p, s, out) || steal_from_deques(s, self, out);
}

/* Shards an idle thread probes directly: all of a small pool's, the
 * nearest UP__NEAR_SHARDS of a pool with a work map. */
static unsigned near_shards(const up_pool *p) { return p->use_map ? UP__NEAR_SHARDS : p->nshards; }

/* The shards beyond the near ones, through the work map (workmap.h): the
 * words whose top bit is set, from the caller's own word on, and in each
 * the shards whose bit is set. A shard that turns out empty has its bit
 * cleared (and is looked at once more, which may find a task after all).
 * The cost is the number of shards marked, not the number of shards. */
static up__shard *probe_map(up_pool *p, unsigned home, up__worker *self, up__task *out)
{
    uint64_t top = up__load_seqcst(&p->work_top);
    unsigned first = home >> 6;
    for (unsigned k = 0; top && k < 64; k++) {
        unsigned wi = (first + k) & 63;
        if (!(top & (UINT64_C(1) << wi)))
            continue;
        uint64_t bits = up__load_seqcst(&p->work_bits[wi].bits);
        if (bits == 0)
            up__work_recheck_word(p, wi);
        /* From the caller's own position in the word on, so that thieves
         * of different shards start at different marked shards. */
        unsigned r = home & 63;
        if (r)
            bits = (bits >> r) | (bits << (64 - r));
        while (bits) {
            unsigned i = wi * 64 + (((unsigned)__builtin_ctzll(bits) + r) & 63);
            bits &= bits - 1;
            up__shard *s = &p->shards[i];
            if (probe(p, s, self, out))
                return s;
            if (up__work_recheck(p, s) && probe(p, s, self, out))
                return s;
        }
    }
    return NULL;
}

/* With no spare stack (up__park_room): released tasks, whose resumes end
 * parked tasks and so give stacks back, then the deques of the near
 * shards' workers, where a released batch may wait behind a blocked
 * owner (wait.c). */
static int find_work_short(up__worker *w, up__task *out)
{
    if (up__wait_take(w, out))
        return 1;
    up_pool *p = w->pool;
    const unsigned *order = &p->plan.order[w->shard * p->nshards];
    unsigned near = near_shards(p);
    for (unsigned k = 0; k < near; k++) {
        if (steal_from_deques(&p->shards[order[k]], w, out)) {
            up__count_owner(&w->steals);
            return 1;
        }
    }
    return 0;
}

/* Own deque (newest first), then the near shards nearest first: each
 * shard's queue, then its workers' deques (oldest first); then, in a pool
 * with many shards, those the work map marks. Returns 1 with *out filled,
 * 0 when nothing was found, FIND_SHORT when the worker may start no new
 * task for want of a stack (up__park_room) and found no released one, and
 * FIND_FIBER when a loop that runs on its thread's stack for want of a
 * stack (w->park.fiberless) has one now: it moves onto a fiber before it
 * runs anything more, since nothing it ran where it is could park (its
 * own deque included, which nested submits and released records fill).
 * helping: the worker waits inside a task (up__help_once), where nothing
 * it runs may park (park_task.c: may_park), so it needs no spare stack and
 * looks at released tasks last, as an idle search does. */
#define FIND_SHORT (-1)
#define FIND_FIBER (-2)
static int find_work(up__worker *w, up__task *out, int helping)
{
    if (__builtin_expect(w->park.fiberless, 0) && !helping && up__park_fiber_ready(w))
        return FIND_FIBER;
    if (up__deque_pop(&w->dq, out) == UP__DEQUE_OK)
        return 1;
    up_pool *p = w->pool;
    if (__builtin_expect(!helping && !up__park_room(w), 0))
        return find_work_short(w, out) ? 1 : FIND_SHORT;
    /* Released waiting tasks and queued ones take turns: a pool whose
     * queues never empty (submitters keep them full) would otherwise
     * resume no parked task, and those hold the stacks new tasks need.
     * A turn of released ones is a batch (wait.c), run from the deque. */
    if (__builtin_expect(up__load_relaxed(&p->wait) != NULL, 0) && !helping && (++w->turns & 1) &&
        up__wait_take_early(w, out))
        return 1;
    const unsigned *order = &p->plan.order[w->shard * p->nshards];
    unsigned near = near_shards(p);
    for (unsigned k = 0; k < near; k++) {
        up__shard *s = &p->shards[order[k]];
        if (up__take_from_shard(p, s, out)) {
            if (k)
                up__count_owner(&w->steals);
            return 1;
        }
        if (steal_from_deques(s, w, out)) {
            up__count_owner(&w->steals);
            return 1;
        }
    }
    if (p->use_map) {
        up__shard *s = probe_map(p, w->shard, w, out);
        if (s) {
            if (s->index != w->shard)
                up__count_owner(&w->steals);
            return 1;
        }
    }
    /* Last, waiting tasks that an event or a timer released (wait.c). */
    return up__wait_take(w, out);
}

/* Runs one queued task of pool p on the calling thread, for a thread that
 * waits for tasks of p to finish (a group's waiter) and would otherwise
 * idle its CPU or, being a worker of p, wait for tasks only it could run.
 * A worker of p looks as when idle: its own deque (newest first), then the
 * shards nearest first. Any other thread takes from the shard queues from
 * its home shard on, then from the workers' deques. A thread that is not
 * one of p's workers runs nothing when p has a start hook: such tasks
 * expect their worker's state (up_worker_local()).
 * Returns 1 when it ran a task, counted as up__run_counted says. */
int up__help_once(up_pool *p)
{
    up__worker *w = up__tls_worker;
    up__task t;
    if (up__load_relaxed(&p->lend.count) != 0)
        return 0; /* the CPUs are lent to OpenMP (up_omp_lend) */
    if (w && w->pool == p) {
        if (find_work(w, &t, 1) <= 0)
            return 0;
        up__run_counted(p, w, &p->shards[w->shard], &t);
        return 1;
    }
    if (p->cfg.on_worker_start)
        return 0;
    unsigned home = up__home_shard(p);
    const unsigned *order = &p->plan.order[home * p->nshards];
    unsigned near = near_shards(p);
    for (unsigned k = 0; k < near; k++) {
        up__shard *s = &p->shards[order[k]];
        if (!probe(p, s, NULL, &t))
            continue;
        up__run_counted(p, NULL, s, &t);
        return 1;
    }
    up__shard *s = p->use_map ? probe_map(p, home, NULL, &t) : NULL;
    if (!s)
        return 0;
    up__run_counted(p, NULL, s, &t);
    return 1;
}

/* The counts say every CPU has a busy worker; the OS says whether they
 * run: a worker blocked in a sleep, a read or a lock leaves its CPU idle,
 * and the waiter should take it. Asked at most once a millisecond per
 * thread (each probe reads /proc, a few microseconds), and where the OS
 * does not say, the answer is yes, as it was before the rule. */
static _Thread_local uint64_t room_asked_at;
static _Thread_local int room_answer;

static int busy_workers_idle_a_cpu(up__shard *s)
{
    uint64_t now = up__now_ns();
    if (now - room_asked_at < 1000000u)
        return room_answer;
    room_asked_at = now;
    unsigned used = up__load_acquire(&s->slots_used), running = 0;
    int answer = 0;
    for (unsigned i = 0; i < used && !answer; i++) {
        /* Searching workers count too: they spin, about to take a task. */
        up__worker *w = up__slot_worker(s, i);
        if (!w || up__load_acquire(&w->state) != UP__SLOT_RUNNING)
            continue;
        if (up__load_relaxed(&w->blocking))
            answer = 1; /* inside up_blocking_begin: blocked by its own word */
        else {
            int b = up__os_thread_blocked(&w->os_thread);
            if (b != 0)
                answer = 1; /* blocked, or the OS cannot say */
            else
                running++;
        }
    }
    room_answer = answer || running < up__shard_cpus(s);
    return room_answer;
}

int up__room_to_help(up_pool *p)
{
    up__worker *w = up__tls_worker;
    if (w && w->pool == p)
        return 1;
    up__shard *s = &p->shards[up__home_shard(p)];
    return up__shard_busy(s) < up__shard_cpus(s) || busy_workers_idle_a_cpu(s);
}

/* No task queued in any shard queue (reserved slots count as queued).
 * After stop has closed the queues this can only go from false to true.
 * With a work map, an empty map says so in one load; a set bit may stand
 * for a deque, or be stale until a searcher clears it (find_work), which
 * only delays the exit. The map misses a queued task only while the
 * thread that cleared its bit looks again, which sets the bit again and
 * takes the task (and a waiting stop drains what no worker is left for). */
static int queues_drained(up_pool *p)
{
    if (p->use_map)
        return !up__work_maybe(p);
    for (unsigned i = 0; i < p->nshards; i++)
        if (up__mpmc_nonempty(&p->shards[i].q))
            return 0;
    return 1;
}

/* me: the fiber the loop runs on (park_task.c), NULL on the thread's own
 * stack. After each task the loop checks that its fiber was not resumed
 * elsewhere meanwhile: if it was, the task parked and these frames are no
 * longer this worker's loop (see up__park_loop_stale). Returns 1 when a
 * fiberless loop should move onto a fiber (FIND_FIBER), counted as a
 * worker whose task parked, so that the fresh loop comes back to
 * searching; 0 when the worker leaves (stop, retirement). */
int up__worker_loop(up__worker *w, up__tfiber *me)
{
    up_pool *p = w->pool;
    up__task t;
    int searching = 1;
    unsigned spins = 0;
    /* A new thread moves from starting (counted at its spawn, spawn.c) to
     * searching in one step, which up_pool_reserve relies on. A loop that
     * starts on a fresh fiber after a task parked (park_task.c) is the
     * same thread, back to searching. */
    if (!w->in_loop) {
        w->in_loop = 1;
        up__fetch_add_seqcst(&p->idle, UP__IDLE_SPIN_ONE - UP__IDLE_START_ONE);
    } else {
        up__fetch_add_seqcst(&p->idle, UP__IDLE_SPIN_ONE);
    }
    up__assert_internal(up__idle_sane(p, up__load_relaxed(&p->idle)));
    up__store_relaxed(&w->looking, 1);
    for (;;) {
        if (__builtin_expect(up__load_relaxed(&p->lend.count) != 0, 0))
            up__lend_wait(w);
        int found = find_work(w, &t, 0);
        if (found > 0) {
            if (searching) {
                searching = 0;
                up__store_relaxed(&w->looking, 0);
                up__stop_searching(w);
            }
            up__shard *home = &p->shards[w->shard];
            up__run(p, w, home, &t, me);
            /* A task that returned inside a blocking region closes it: the
             * worker is not blocked any more (pool.h). */
            if (__builtin_expect(up__load_relaxed(&w->blocking) != 0, 0))
                up__region_close(w);
            up__count_executed(p, w, home, 1);
            up__cede_check(w);
            if (__builtin_expect(w->returning, 0)) {
                /* Counted starting since its release (up__return_mark):
                 * to searching in one step, as a new thread's loop. */
                w->returning = 0;
                searching = 1;
                spins = 0;
                up__cede_searching(w);
                up__store_relaxed(&w->looking, 1);
                up__fetch_add_seqcst(&p->idle, UP__IDLE_SPIN_ONE - UP__IDLE_START_ONE);
                up__assert_internal(up__idle_sane(p, up__load_relaxed(&p->idle)));
            }
            continue;
        }
        if (__builtin_expect(found == FIND_FIBER, 0)) {
            if (searching) {
                up__store_relaxed(&w->looking, 0);
                up__stop_searching(w);
            }
            return 1;
        }
        if (!searching) {
            searching = 1;
            spins = 0;
            up__cede_searching(w);
            up__store_relaxed(&w->looking, 1);
            up__fetch_add_seqcst(&p->idle, UP__IDLE_SPIN_ONE);
            up__assert_internal(up__idle_sane(p, up__load_relaxed(&p->idle)));
        }
        if (up__load_acquire(&p->stopping)) {
            /* The queues are closed and cannot refill, and this worker's
             * deque is empty (find_work failed): nothing left for it. Tasks
             * in other deques are their owners' to finish. */
            if (queues_drained(p) && !up__wait_released_any(p)) {
                up__shard *s = &p->shards[w->shard];
                /* This worker holds a reservation in both counts. */
                up__assert_internal(up__load_relaxed(&s->nworkers) >= 1 &&
                                    up__load_relaxed(&p->workers) >= 1);
                up__fetch_sub_seqcst(&p->idle, UP__IDLE_SPIN_ONE);
                up__fetch_sub_seqcst(&s->nworkers, 1);
                up__fetch_sub_seqcst(&p->workers, 1);
                /* Waiting tasks may still be released after the stop. A
                 * releaser publishes, then reads the idle word and the
                 * worker counts (up__publish_wake); this worker gave up
                 * its counts, then looks once more: one of the two sees
                 * the other, as in retirement (idle.c). */
                if (up__wait_released_any(p) &&
                    up__reserve_worker(p, s, p->cfg.shard_max_workers)) {
                    up__fetch_add_seqcst(&p->idle, UP__IDLE_SPIN_ONE);
                    continue;
                }
                return 0;
            }
            sched_yield(); /* a producer is mid-publish */
            continue;
        }
        if (found == FIND_SHORT) {
            /* Parked tasks hold every stack: the queued tasks wait until
             * one comes back (a resume ends, or a timer releases one). */
            up__park_room_wait();
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
        int r = up__park(w);
        spins = 0;
        if (r == UP__PARK_TIMEOUT && up__try_retire(w, 0))
            return 0;
        if (r == UP__PARK_TIMEOUT_EXTRA && up__try_retire(w, up__shard_cpus(&p->shards[w->shard])))
            return 0;
    }
}

void *up__worker_main(void *arg)
{
    up__worker *w = arg;
    up_pool *p = w->pool;
    up__tls_worker = w;
    w->in_loop = 0;
    w->returning = 0;
    up__store_relaxed(&w->blocking, 0);
    up__os_thread_self(&w->os_thread);
    char name[32];
    snprintf(name, sizeof name, "up-worker %u.%u", w->shard, w->slot);
    up__os_name_self(name);
    up__help_set_stack(p->cfg.stack_size ? p->cfg.stack_size : up__os_default_stack_size());
    if (p->cfg.bind != UP_BIND_NONE &&
        up__plan_bind_self(&p->plan, w->shard, p->cfg.bind, w->slot) != 0)
        up__fetch_add_relaxed(&p->bind_failed, 1);
    w->local = NULL;
    if (p->cfg.on_worker_start)
        w->local = p->cfg.on_worker_start(p->cfg.hook_ctx, w->shard, w->id);
    up__park_run_worker(w);
    if (p->cfg.on_worker_stop)
        p->cfg.on_worker_stop(p->cfg.hook_ctx, w->local);
    up__tls_worker = NULL;
    up__store_release(&w->os_thread.id, 0); /* the id may be reused by the OS */
    pthread_mutex_lock(&p->mu);
    up__store_release(&w->state, UP__SLOT_EXITED);
    if (--p->live == 0)
        pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}
