/* Submitters that run their own tasks, and the workers that give them the
 * CPUs.
 *
 * A shard whose queue already holds INLINE_BACKLOG_PER_CPU tasks per CPU
 * has workers that do not keep up. A waiting submit (up_submit_wait and
 * its forms, at submit_help 2) may then run its task on the calling
 * thread, as an OpenMP runtime does past its task throttle: the task costs
 * no queue traffic and its lines stay on the submitter's CPU. Only tasks
 * the shard's workers found short (under SHORT_NS each over their last
 * CEDE_EVERY) are run so, and none while the shard's tasks park: a
 * parking task leaves its worker at once, so it looks short, but on a
 * submitter, which cannot park, its wait would block. A wait call
 * (up_event_wait, up_sleep_ns, whether it parks or not) or the resume of
 * a parked task (up_yield's too) marks the shard; a worker clears the mark
 * once CEDE_EVERY tasks in a row returned that had not waited. So a task
 * that sleeps never holds a submitter.
 *
 * Whether it pays depends on the tasks: a contended lock, for one, is
 * taken faster by threads that run bursts of queued tasks than by every
 * submitter at once. So each shard measures it, by the tasks it finishes
 * per second: WINDOW_NS with its submitters running the backlog's submits
 * inline, then WINDOW_NS with them queuing, each after SETTLE_NS for the
 * threads to change ways; an inline window in which under 1 / INLINE_SHARE
 * of the tasks ran inline (the backlog had not formed, say) measured
 * queuing and is taken again. Queuing must win by QUEUE_MARGIN to be chosen
 * (the gain inline is the larger one where there is any, and a noisy
 * machine should not flip a shard to the slower way). The way chosen is
 * kept for a number of windows that doubles while the same way keeps
 * winning (HOLD_MIN up to HOLD_MAX), then measured again. The submitters
 * drive the measurement: every TICK_EVERY submits one reads the clock,
 * and the first to find a step due takes the shard's control lock (a
 * try-lock: the others go on) and takes it. A window with a pause of
 * submits in it (a program between two bursts) measured the program, not
 * the way, and starts again.
 *
 * A submitter running its tasks inline is one more thread that wants a
 * CPU, so it holds a lease in its shard: one of UP__LEASES slots (chosen
 * by thread), stamped with the time it lapses, LEASE_NS after the latest
 * of its clock readings at which it was running tasks inline. Every CEDE_EVERY tasks a worker
 * compares the shard's busy workers plus the live leases with the shard's CPUs. While they exceed
 * them, one worker at a time steps aside: it counts itself in shard->cede.ceded (a CAS, so that two
 * workers reading the same counts do not both go), sleeps until the newest lease lapses (at most
 * CEDE_SLICE_NS), then runs CEDE_EVERY more tasks before it asks again. So the backlog keeps
 * moving, oldest first, and once the submitters stop, block inside a task or go back to queuing,
 * their leases lapse and the workers take the CPUs back. Nothing here waits for a wake-up: a ceded
 * worker is a sleeping busy worker, which the monitor skips (it is `looking`) and the idle protocol
 * never counts on. */
#include <time.h>

#include "clock.h"
#include "help.h"
#include "pool_internal.h"

#define INLINE_BACKLOG_PER_CPU 8
#define SHORT_NS               20000u
#define LEASE_NS               1000000u
#define CEDE_SLICE_NS          1000000u
#define CEDE_EVERY             32u
#define TICK_EVERY             32u
#define WINDOW_NS              4000000u
#define SETTLE_NS              1000000u /* a lease, and a ceded worker's turn */
#define GAP_NS                 1000000u
#define QUEUE_MARGIN           1.15
#define INLINE_SHARE           4u /* an inline window counts when 1 / this of its tasks ran inline */
#define HOLD_MIN               8u /* windows */
#define HOLD_MAX               128u

enum { MEASURE_INLINE, MEASURE_QUEUE, HOLD };

/* A submitting thread's own part: its submit count (for the ticks) and
 * the lease it stamped last. */
typedef struct inline_state {
    unsigned calls;
    uint64_t tick_at;       /* the clock at its latest tick; 0: none yet */
    const up__shard *shard; /* where it stamped */
    uint64_t stamped;
} inline_state;

static _Thread_local inline_state tls_inline UP__TLS_IE;

static void refresh_lease(up__shard *s, unsigned slot, inline_state *st, uint64_t now)
{
    /* Stamped again only when half of the lease is gone: one store to a
     * shared line per half lease, not per submit. */
    if (st->shard == s && now + LEASE_NS / 2 < st->stamped)
        return;
    st->shard = s;
    st->stamped = now + LEASE_NS;
    up__store_relaxed(&s->cede.lease[slot], st->stamped);
}

/* Switches the shard's submitters to way; the next window starts after
 * the settling time. (cede.lock held, as for the two below) */
static void set_way(up__shard *s, int way, uint64_t now)
{
    up__store_relaxed(&s->cede.inline_way, way);
    s->cede.counting = 0;
    up__store_relaxed(&s->cede.next, now + SETTLE_NS);
}

/* A window ended with rate tasks finished per ns: the next step. */
static void window_done(up__shard *s, double rate, uint64_t now)
{
    switch (s->cede.phase) {
    case MEASURE_INLINE:
        s->cede.inline_rate = rate;
        s->cede.phase = MEASURE_QUEUE;
        set_way(s, UP__WAY_QUEUE, now);
        return;
    case MEASURE_QUEUE: {
        int winner = rate > s->cede.inline_rate * QUEUE_MARGIN ? UP__WAY_QUEUE : UP__WAY_INLINE;
        if (winner == s->cede.last && s->cede.hold)
            s->cede.hold = s->cede.hold * 2 > HOLD_MAX ? HOLD_MAX : s->cede.hold * 2;
        else
            s->cede.hold = HOLD_MIN;
        s->cede.last = winner;
        s->cede.left = s->cede.hold;
        s->cede.phase = HOLD;
        set_way(s, winner, now);
        return;
    }
    default:
        if (--s->cede.left == 0) {
            s->cede.phase = MEASURE_INLINE;
            set_way(s, UP__WAY_INLINE, now);
        } else {
            s->cede.counting = 0; /* the next window counts the hold */
            up__store_relaxed(&s->cede.next, now);
        }
    }
}

/* Tasks of s its submitters ran inline so far. */
static uint64_t inlined(up__shard *s)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < UP__LEASES; i++)
        n += up__load_relaxed(&s->cede.inline_counts[i].executed);
    return n;
}

/* The step due at now (now >= cede.next): start measuring, start a window,
 * or end one. */
static void step(up__shard *s, uint64_t now)
{
    uint64_t next = up__load_relaxed(&s->cede.next);
    if (next == 0 || now - next > WINDOW_NS) {
        /* First use, or nobody submitted for a window: measure afresh. */
        s->cede.phase = MEASURE_INLINE;
        set_way(s, UP__WAY_INLINE, now);
        return;
    }
    uint64_t executed = up__shard_executed(s);
    if (up__load_relaxed(&s->cede.gap)) {
        up__store_relaxed(&s->cede.gap, 0);
        s->cede.counting = 0; /* the window starts again, in the same way */
    }
    if (!s->cede.counting) {
        s->cede.counting = 1;
        s->cede.start = now;
        s->cede.executed = executed;
        s->cede.inlined = inlined(s);
        up__store_relaxed(&s->cede.next, now + WINDOW_NS);
        return;
    }
    uint64_t done = executed - s->cede.executed;
    if (s->cede.phase == MEASURE_INLINE && (inlined(s) - s->cede.inlined) * INLINE_SHARE < done) {
        /* Few tasks ran inline (no backlog yet, or tasks not known to be
         * short): the window measured queuing. It starts again. */
        s->cede.counting = 0;
        up__store_relaxed(&s->cede.next, now);
        return;
    }
    window_done(s, (double)done / (double)(now - s->cede.start), now);
}

/* Every TICK_EVERY submits of a thread: the clock, and the shard's
 * measurement when a step is due. */
static void tick(up__shard *s, inline_state *st)
{
    uint64_t now = up__now_ns();
    st->tick_at = now;
    /* When submits were last seen, kept to within GAP_NS (one store per
     * GAP_NS, not per tick): a window with a longer pause in it, such as a
     * program between two bursts, measured the program, not the way. */
    uint64_t seen = up__load_relaxed(&s->cede.seen);
    if (now - seen > GAP_NS) {
        up__store_relaxed(&s->cede.seen, now);
        if (now - seen > 2 * (uint64_t)GAP_NS)
            up__store_relaxed(&s->cede.gap, 1);
    }
    if (now < up__load_relaxed(&s->cede.next))
        return;
    if (up__load_relaxed(&s->cede.lock) || up__exchange_acq_rel(&s->cede.lock, 1))
        return; /* another submitter is at it */
    if (now >= up__load_relaxed(&s->cede.next))
        step(s, now);
    up__store_release(&s->cede.lock, 0);
}

int up__inline_try(up_pool *p, up__shard *s, unsigned slot, const up__task *t)
{
    inline_state *st = &tls_inline;
    slot %= UP__LEASES;
    if (++st->calls % TICK_EVERY == 0)
        tick(s, st);
    if (up__load_relaxed(&s->cede.inline_way) != UP__WAY_INLINE ||
        up__load_relaxed(&p->lend.count) != 0)
        return 0;
    uint64_t queued = up__mpmc_accepted(&s->q) - up__mpmc_taken(&s->q);
    if (queued < (uint64_t)INLINE_BACKLOG_PER_CPU * up__shard_cpus(s))
        return 0;
    uint64_t task_ns = up__load_relaxed(&s->cede.task_ns);
    if (task_ns == 0 || task_ns > SHORT_NS)
        return 0;
    /* Tasks that park look short to the workers (a task leaves its worker
     * when it parks), but one run here would block this thread for its
     * whole wait: none is run inline while the shard's tasks park. */
    if (up__load_relaxed(&s->cede.parking))
        return 0;
    if (!up__help_enter())
        return 0;
    up__inline_count *c = &s->cede.inline_counts[slot];
    if (!up__accept_own(p, &c->submitted)) {
        up__help_leave();
        return 0; /* the caller's push finds the queues closed */
    }
    up__run(p, NULL, s, t, NULL);
    up__count_executed_to(p, &c->executed, 1); /* on the slot's own line */
    up__help_leave();
    /* Only a thread that runs tasks inline holds a lease: one that merely
     * submits leaves the CPUs to the workers. The clock is the latest
     * tick's, at most TICK_EVERY submits old. */
    if (st->tick_at)
        refresh_lease(s, slot, st, st->tick_at);
    return 1;
}

/* The leases of s that are live at now: how many, and when the last one
 * lapses. */
static unsigned live_leases(up__shard *s, uint64_t now, uint64_t *last)
{
    unsigned n = 0;
    *last = 0;
    for (unsigned i = 0; i < UP__LEASES; i++) {
        uint64_t until = up__load_relaxed(&s->cede.lease[i]);
        if (until > now) {
            n++;
            if (until > *last)
                *last = until;
        }
    }
    return n;
}

/* The worker's window of CEDE_EVERY tasks starts again (time spent
 * looking for work, or in a wait, is no task's). */
void up__cede_searching(up__worker *w)
{
    w->cede_tasks = 0;
    w->cede_at = 0;
}

void up__cede_note_wait(up__worker *w)
{
    up__shard *s = &w->pool->shards[w->shard];
    if (!up__load_relaxed(&s->cede.parking))
        up__store_relaxed(&s->cede.parking, 1);
    /* The worker's window of tasks starts again: the next time it clears
     * the mark takes CEDE_EVERY tasks in a row that did not wait. */
    up__cede_searching(w);
}

unsigned up__cede_leases(up__shard *s)
{
    uint64_t last;
    return live_leases(s, up__now_ns(), &last);
}

/* The shard's time per task, as this worker saw it over its last
 * CEDE_EVERY tasks; stored only when it moved by a quarter, so that the
 * line submitters read is seldom written. */
static void note_task_time(up__shard *s, up__worker *w, uint64_t now)
{
    if (w->cede_at != 0) {
        if (up__load_relaxed(&s->cede.parking))
            up__store_relaxed(&s->cede.parking, 0); /* CEDE_EVERY tasks in a row returned */
        uint64_t per = (now - w->cede_at) / CEDE_EVERY;
        uint64_t old = up__load_relaxed(&s->cede.task_ns);
        if (per > old + old / 4 || per < old - old / 4 || old == 0)
            up__store_relaxed(&s->cede.task_ns, per ? per : 1);
    }
    w->cede_at = now;
}

void up__cede_check(up__worker *w)
{
    if (++w->cede_tasks < CEDE_EVERY)
        return;
    w->cede_tasks = 0;
    up_pool *p = w->pool;
    up__shard *s = &p->shards[w->shard];
    uint64_t now = up__now_ns(), last;
    note_task_time(s, w, now);
    unsigned leases = live_leases(s, now, &last);
    /* A worker with tasks of its own in its deque (a parallel region's)
     * keeps going: those are what its current work waits for. */
    if (leases == 0 || up__load_relaxed(&p->stopping) || up__deque_nonempty(&w->dq))
        return;
    unsigned ceded = up__load_relaxed(&s->cede.ceded);
    for (;;) {
        /* Busy: reserved, not parked, not already standing aside. A
         * searching worker counts too, which only makes this one readier
         * to go; it returns to the count at its next look. */
        unsigned n = up__load_relaxed(&s->nworkers);
        unsigned parked = up__load_relaxed(&s->nparked);
        unsigned busy = n > parked + ceded ? n - parked - ceded : 0;
        if (busy + leases <= up__shard_cpus(s) || busy == 0)
            return;
        if (up__cas_weak_seqcst(&s->cede.ceded, &ceded, ceded + 1))
            break;
    }
    /* Counted first, so that a monitor that finds the thread asleep does
     * not take this turn for time blocked in a task (monitor.c). */
    up__store_release(&w->cedes, up__load_relaxed(&w->cedes) + 1);
    up__store_relaxed(&w->looking, 1); /* not a busy worker to the monitor */
    uint64_t ns = last - now < CEDE_SLICE_NS ? last - now : CEDE_SLICE_NS;
    struct timespec ts = up__timespec_from_ns(ns);
    nanosleep(&ts, NULL); /* an early return (a signal) only shortens the turn */
    up__store_relaxed(&w->looking, 0);
    up__fetch_sub_seqcst(&s->cede.ceded, 1);
    w->cede_at = up__now_ns(); /* the turn aside is no task's time either */
}
