/* Task groups (group.h): a bounded set of pool tasks with a first error,
 * cancellation and a wait.
 *
 * One word, state, holds the count of active tasks (submitted, not yet
 * finished or skipped) in its low 32 bits and two flags: WAITERS (some
 * thread sleeps on the group's condition variable) and CANCELLED. The fast
 * paths are one CAS each: up_group_go raises the count when it is below the
 * limit, a finishing task lowers it when WAITERS is clear.
 *
 * Invariant (lifetime). A task's last access to the group is the update
 * that removes it from the count, so once the count is zero no task will
 * touch the group again, and the waiter may free it. A task that finds
 * WAITERS set must wake somebody after its update, which would touch the
 * group after it; so it takes the group's mutex first and updates the count
 * while holding it. up_group_wait, after seeing the count at zero, takes
 * and releases that mutex once, which waits out such a task (whose update
 * it has seen) before returning.
 *
 * No lost wake-up: a sleeper sets WAITERS with an RMW under the mutex and
 * then re-reads the count; a finisher's CAS expects WAITERS clear. Both
 * modify the same word, so either the finisher's CAS comes first (and the
 * sleeper's re-read sees the lower count) or it fails, re-reads WAITERS set
 * and takes the slow path, which broadcasts under the mutex after the
 * sleeper has started waiting.
 *
 * Waiting threads help: before sleeping they run queued tasks of the pool
 * (up__help_once), so a waiter never idles a CPU while work is queued, and
 * a pool worker that waits inside a task runs the tasks it waits for. A
 * thread that is not one of the pool's workers helps only while its shard
 * has a CPU no running worker holds (up__room_to_help: fewer busy workers
 * than CPUs, or busy ones the OS shows blocked): with every CPU taken
 * it would run beside the workers, one runnable thread more than CPUs for
 * each waiter (the threads of an OpenMP region waiting on one pool, say).
 * It then sleeps in slices of spawn_delay_ns and looks again, and helps
 * anyway once the queue has not moved for STALL_NS (below). */
#include <ultrapool/group.h>

#include <errno.h>
#include <stdlib.h>

#include "clock.h"
#include "help.h"
#include "pool_internal.h"
#include "spin.h"

#define COUNT_MASK        UINT64_C(0xffffffff)
#define WAITERS           (UINT64_C(1) << 32)
#define CANCELLED         (UINT64_C(1) << 33)
#define CANCELLED_BY_USER (UINT64_C(1) << 34)
#define LIMIT_MAX         0x7fffffffu

struct up_group {
    up_pool *pool; /* (ro) */
    uint64_t cap;  /* (ro) most active tasks: the limit, or all a count can hold */
    UP_ALIGNED_LINE _Atomic uint64_t state; /* (atomic) count | WAITERS | CANCELLED... */
    _Atomic int first_error;                /* (atomic) first non-zero task result */
    _Atomic uint64_t skipped;               /* (atomic) tasks skipped after cancel */
    UP_ALIGNED_LINE pthread_mutex_t mu;     /* sleepers and slow-path finishers */
    pthread_cond_t cv;
    unsigned sleepers; /* (lock mu) threads waiting on cv */
};

/* What travels in the queue slot: no allocation per task. */
typedef struct record {
    up_group *g;
    up_group_fn fn;
    void *arg;
} record;
_Static_assert(sizeof(record) <= UP_PAYLOAD_MAX, "a group task must fit a queue slot");

/* The group tasks running on this thread, innermost first: each frame
 * lives on the stack of the task that pushed it. The chain is the running
 * task's (up__tls_task.group_frames): a task that parks takes it along
 * and the thread runs its next task with an empty one (park_task.c). */
typedef struct up__group_frame {
    up_group *g;
    struct up__group_frame *prev;
} frame;

enum { FOR_ROOM, FOR_ALL };

static int ready(const up_group *g, uint64_t s, int kind)
{
    if (kind == FOR_ROOM)
        return (s & CANCELLED) || (s & COUNT_MASK) < g->cap;
    return (s & COUNT_MASK) == 0;
}

/* Tasks of g on this thread's stack, which cannot finish while it waits. */
static uint64_t frames_of(const up_group *g)
{
    uint64_t n = 0;
    for (frame *f = up__tls_task.group_frames; f; f = f->prev)
        n += f->g == g;
    return n;
}

static void wake_sleepers(up_group *g)
{
    pthread_mutex_lock(&g->mu);
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

/* Removes one task from the count: the task's last access to g. */
static void finish(up_group *g)
{
    uint64_t s = up__load_relaxed(&g->state);
    while (!(s & WAITERS))
        if (up__cas_weak_acq_rel(&g->state, &s, s - 1))
            return;
    pthread_mutex_lock(&g->mu);
    up__fetch_sub_acq_rel(&g->state, 1);
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

static void cancel_with(up_group *g, uint64_t flags)
{
    uint64_t old = up__fetch_or_acq_rel(&g->state, CANCELLED | flags);
    if ((old & WAITERS) && !(old & CANCELLED))
        wake_sleepers(g); /* threads blocked in up_group_go return */
}

static void run_record(void *payload)
{
    const record *r = payload;
    up_group *g = r->g;
    if (up__load_acquire(&g->state) & CANCELLED) {
        up__fetch_add_relaxed(&g->skipped, 1);
    } else {
        frame f = {g, up__tls_task.group_frames};
        up__tls_task.group_frames = &f;
        int rc = r->fn(r->arg);
        /* fn may have parked and come back on another thread, whose state
         * is this task's again (park_task.c): look the thread up anew. */
        up__task_tls *here = up__task_tls_here();
        up__assert_internal(here->group_frames == &f);
        here->group_frames = f.prev;
        if (rc != 0) {
            int none = 0;
            up__cas_strong_acq_rel(&g->first_error, &none, rc);
            cancel_with(g, 0);
        }
    }
    finish(g);
}

/* Sleeps until ready. Threads that are workers of the group's pool and
 * may still help (can_help: below the helping bound) wake every
 * spawn_delay to help again: a task may have been queued that only they
 * can run (every worker of a capped pool waiting in a group). A waiter at
 * the bound could not run it, and sleeps until woken, so that it shows
 * blocked and the pool adds a worker in its place. A thread outside the
 * pool that found no CPU free to help on (room 0) wakes every spawn_delay
 * too, to look again. */
static void sleep_until(up_group *g, int kind, int can_help, int room)
{
    up__worker *w = up__tls_worker;
    uint64_t slice =
        (can_help && w && w->pool == g->pool) || !room ? g->pool->cfg.spawn_delay_ns : UINT64_MAX;
    pthread_mutex_lock(&g->mu);
    g->sleepers++;
    uint64_t s = up__fetch_or_acq_rel(&g->state, WAITERS) | WAITERS;
    while (!ready(g, s, kind)) {
        if (slice == UINT64_MAX) {
            pthread_cond_wait(&g->cv, &g->mu);
        } else {
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            uint64_t at = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec + slice;
            struct timespec abs = up__timespec_from_ns(at);
            if (pthread_cond_timedwait(&g->cv, &g->mu, &abs) == ETIMEDOUT)
                break;
        }
        s = up__load_acquire(&g->state);
    }
    if (--g->sleepers == 0)
        up__fetch_and_acq_rel(&g->state, ~WAITERS);
    pthread_mutex_unlock(&g->mu);
}

/* A waiter outside the pool that found no CPU free to help on still helps
 * once its home shard's queue has not moved for STALL_NS with tasks in it:
 * its busy workers may all be blocked where nothing can see it (a read, a
 * lock) in a pool that may not grow, and the task that would unblock them
 * is queued. The same 100 ms after which the monitor adds a worker to a
 * stalled backlog (monitor.c). */
#define STALL_NS 100000000u

typedef struct stall_watch {
    uint64_t taken, since;
} stall_watch;

static int queue_stalled(up_pool *p, stall_watch *sw)
{
    up__shard *s = &p->shards[up__home_shard(p)];
    if (!up__mpmc_nonempty(&s->q))
        return 0;
    uint64_t taken = up__mpmc_taken(&s->q), now = up__now_ns();
    if (taken != sw->taken || sw->since == 0) {
        sw->taken = taken;
        sw->since = now;
        return 0;
    }
    return now - sw->since >= STALL_NS;
}

/* Waits until ready: runs queued tasks of the pool while there are any,
 * polls cfg.spin times, then sleeps. Returns the state it saw ready. */
static uint64_t await(up_group *g, int kind)
{
    unsigned spins = 0, spin_max = g->pool->cfg.spin;
    int can_help = 1;
    stall_watch sw = {0, 0};
    for (;;) {
        uint64_t s = up__load_acquire(&g->state);
        if (ready(g, s, kind))
            return s;
        /* Helping nests on this stack: help.h bounds how deep, for every
         * kind of helping together; beyond that this waiter sleeps. */
        int room = up__room_to_help(g->pool) || queue_stalled(g->pool, &sw);
        can_help = room && up__help_enter();
        if (can_help) {
            /* A task run from here belongs to no group until it says so:
             * the empty frame hides the enclosing ones from
             * up_group_current(), while frames_of() still sees them. */
            frame barrier = {NULL, up__tls_task.group_frames};
            up__tls_task.group_frames = &barrier;
            /* Nothing run while helping parks (park_task.c: may_park), so
             * this stays on one thread. */
            int ran = up__help_once(g->pool);
            up__help_leave();
            up__tls_task.group_frames = barrier.prev;
            if (ran) {
                spins = 0;
                continue;
            }
        }
        if (spins < spin_max) {
            up__spin_step(++spins, 32);
            continue;
        }
        sleep_until(g, kind, can_help, room);
        spins = 0;
    }
}

int up_group_create(up_group **out, up_pool *pool, unsigned limit)
{
    if (out)
        *out = NULL;
    if (!out || !pool) {
        up__set_error("up_group_create: %s is NULL", !out ? "out" : "pool");
        return UP_EINVAL;
    }
    if (limit > LIMIT_MAX) {
        up__set_error("up_group_create: limit %u is above %u", limit, LIMIT_MAX);
        return UP_EINVAL;
    }
    up_group *g = aligned_alloc(UP_CACHE_LINE, sizeof *g);
    if (!g) {
        up__set_error("up_group_create: out of memory");
        return UP_ENOMEM;
    }
    if (pthread_mutex_init(&g->mu, NULL) != 0) {
        free(g);
        return UP_ENOMEM;
    }
    if (pthread_cond_init(&g->cv, NULL) != 0) {
        pthread_mutex_destroy(&g->mu);
        free(g);
        return UP_ENOMEM;
    }
    g->pool = pool;
    g->cap = limit ? limit : COUNT_MASK;
    atomic_init(&g->state, 0);
    atomic_init(&g->first_error, 0);
    atomic_init(&g->skipped, 0);
    g->sleepers = 0;
    *out = g;
    return UP_OK;
}

int up_group_go(up_group *g, up_group_fn fn, void *arg)
{
    if (!g || !fn) {
        up__set_error("up_group_go: %s is NULL", !g ? "group" : "function");
        return UP_EINVAL;
    }
    uint64_t s = up__load_relaxed(&g->state);
    for (;;) {
        if (s & CANCELLED) {
            up__set_error("up_group_go: the group is cancelled");
            return UP_ECANCELED;
        }
        if ((s & COUNT_MASK) < g->cap) {
            if (up__cas_weak_acq_rel(&g->state, &s, s + 1))
                break;
            continue;
        }
        if (frames_of(g) >= g->cap) {
            up__set_error("up_group_go: every slot of the group is held by a task this call "
                          "runs inside");
            return UP_EDEADLK;
        }
        s = await(g, FOR_ROOM);
    }
    record r = {g, fn, arg};
    int rc = up_submit_copy_wait(g->pool, run_record, &r, sizeof r);
    if (rc != UP_OK)
        finish(g); /* not accepted: give the slot back */
    return rc;
}

static void wait_all(up_group *g)
{
    await(g, FOR_ALL);
    /* A finisher that saw WAITERS updated the count under the mutex: taking
     * it once waits until that finisher has let go of the group. */
    pthread_mutex_lock(&g->mu);
    pthread_mutex_unlock(&g->mu);
}

int up_group_wait(up_group *g)
{
    if (!g) {
        up__set_error("up_group_wait: group is NULL");
        return UP_EINVAL;
    }
    if (frames_of(g)) {
        up__set_error("up_group_wait: called from inside a task of the group, which would "
                      "wait for itself");
        return UP_EDEADLK;
    }
    wait_all(g);
    int err = up__load_acquire(&g->first_error);
    if (err)
        return err;
    return up__load_acquire(&g->state) & CANCELLED_BY_USER ? UP_ECANCELED : UP_OK;
}

void up_group_cancel(up_group *g)
{
    if (g)
        cancel_with(g, CANCELLED_BY_USER);
}

int up_group_cancelled(const up_group *g)
{
    return g && (up__load_acquire(&((up_group *)g)->state) & CANCELLED) != 0;
}

uint64_t up_group_skipped(const up_group *g)
{
    return g ? up__load_acquire(&((up_group *)g)->skipped) : 0;
}

up_group *up_group_current(void)
{
    frame *f = up__tls_task.group_frames;
    return f ? f->g : NULL;
}

int up_group_destroy(up_group *g)
{
    if (!g) {
        up__set_error("up_group_destroy: group is NULL");
        return UP_EINVAL;
    }
    if (frames_of(g)) {
        up__set_error("up_group_destroy: called from inside a task of the group");
        return UP_EDEADLK;
    }
    wait_all(g);
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    free(g);
    return UP_OK;
}
