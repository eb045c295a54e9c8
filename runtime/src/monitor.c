/* The monitor: one thread per pool that adds workers when tasks block.
 *
 * Submitters grow a shard to one worker per CPU on their own. Beyond that
 * a new thread only helps while some of the workers are blocked (asleep
 * in the kernel: a sleep, a read, a lock), never while they are merely
 * waiting for a CPU: CPU-bound work keeps one runnable worker per CPU,
 * whatever else runs on the machine. So while a backlog persists the
 * monitor looks at each shard every spawn_delay, and adds workers only
 * when three things hold:
 *   - the backlog persisted: tasks queued at the last look are not all
 *     taken, or the queue was never empty at two looks in a row, or
 *     tasks wait in the deques of workers that took none since;
 *   - the process left CPU time unused over the interval (a blocked
 *     worker leaves its CPU idle, and a new thread could not run
 *     otherwise), or the shard's head did not move at all (workers
 *     blocked on queued tasks while other threads of the program spin);
 *   - fewer of the shard's busy workers are runnable than it has CPUs.
 *     The OS says which are (os.h: the thread's state), for at most
 *     MAX_PROBES workers per look; a worker inside up_blocking_begin()
 *     counts as blocked without asking. Where the OS cannot say, the
 *     busy workers are taken to be blocked.
 * It adds as many workers as the shard lacks runnable ones, and when
 * every busy worker is blocked, as many again as it has (doubling, for a
 * burst of blocking tasks), never more than the backlog or
 * MAX_SPAWNS_PER_LOOK. When nothing is queued the monitor sleeps until a
 * submitter or the last searching worker pokes it, so an idle pool costs
 * no wake-ups. */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "os.h"
#include "pool_internal.h"

/* Most workers one shard gains in one look. */
#define MAX_SPAWNS_PER_LOOK 32
/* Most workers whose state one look asks the OS (a few us each). */
#define MAX_PROBES 16

static unsigned allowed_cpus(const up_pool *p)
{
    unsigned n = 0;
    for (unsigned i = 0; i < p->nshards; i++)
        n += p->plan.shards[i].ncpus;
    return n ? n : 1;
}

/* Tasks waiting in the deques of s's workers, and (in *taken) the sum of
 * the deques' tops, which grows by one for every task taken from one. A
 * worker blocked inside a task keeps the children that task pushed, and
 * only a thief can run them: if the task waits for them without helping
 * (a semaphore, a condition variable), no worker is searching and the
 * CPUs are idle, only a new worker will. */
static uint64_t deque_backlog(up__shard *s, uint64_t *taken)
{
    uint64_t n = 0, tops = 0;
    unsigned used = up__load_acquire(&s->slots_used);
    for (unsigned i = 0; i < used; i++) {
        up__worker *w = up__slot_worker(s, i);
        if (!w)
            continue;
        int64_t top = up__load_acquire(&w->dq.top);
        int64_t bottom = up__load_acquire(&w->dq.bottom);
        tops += (uint64_t)top;
        if (bottom > top)
            n += (uint64_t)(bottom - top);
    }
    *taken = tops;
    return n;
}

/* What a probe of one shard's busy workers found (monitor thread only). */
typedef struct busy_census {
    unsigned busy;    /* workers running a task */
    unsigned asked;   /* of those, measured */
    double run;       /* sum over the measured of the share of time on a CPU */
    double blocked;   /* sum of the share of time neither on a CPU nor waiting for one */
} busy_census;

/* What worker w did lately: the shares of time it ran (*run) and was
 * blocked (*blocked), the rest being time runnable but waiting for a CPU.
 * A worker runnable now (running, or preempted by other load) counts as
 * running: the OS updates a running thread's times only at its ticks, so
 * they say little about it over a millisecond. A worker blocked now has
 * up-to-date times, and its shares since the monitor's last reading of
 * it tell how much it blocks (a task that sleeps 1 us blocks for most of
 * its life, yet runs for some of it); without a reading that can be used
 * (the first one, one that spans a park of w, whose idle time would look
 * blocked, or a new thread) it counts as blocked throughout. Returns 0,
 * or -1 when the OS says nothing. */
static int measure(up__worker *w, uint64_t now, double *run, double *blocked)
{
    int state = up__os_thread_blocked(&w->os_thread);
    if (state < 0)
        return -1;
    *run = state ? 0 : 1;
    *blocked = state ? 1 : 0;
    uint64_t r, q;
    if (!state || up__os_thread_times(&w->os_thread, &r, &q) != 0)
        return 0;
    uint32_t id = up__load_acquire(&w->os_thread.id);
    uint64_t parks = up__load_relaxed(&w->parks);
    if (w->mon_id == id && w->mon_parks == parks && now > w->mon_at && r >= w->mon_run &&
        q >= w->mon_wait) {
        double dt = (double)(now - w->mon_at);
        double ran = (double)(r - w->mon_run) / dt, waited = (double)(q - w->mon_wait) / dt;
        *run = ran > 1 ? 1 : ran;
        *blocked = ran + waited < 1 ? 1 - ran - waited : 0;
    }
    w->mon_id = id;
    w->mon_at = now;
    w->mon_run = r;
    w->mon_wait = q;
    w->mon_parks = parks;
    return 0;
}

/* Counts s's busy workers and measures up to MAX_PROBES of them, from a
 * slot that rotates between looks so that every worker gets measured in
 * turn. A worker inside a blocking region is blocked, without asking. */
static void count_busy(up__shard *s, busy_census *c)
{
    memset(c, 0, sizeof *c);
    unsigned used = up__load_acquire(&s->slots_used), probes = 0;
    if (used == 0)
        return;
    uint64_t now = up__now_ns();
    unsigned start = s->mon_probe_next % used;
    for (unsigned k = 0; k < used; k++) {
        up__worker *w = up__slot_worker(s, (start + k) % used);
        if (!w || up__load_acquire(&w->state) != UP__SLOT_RUNNING ||
            up__load_relaxed(&w->looking))
            continue;
        c->busy++;
        if (up__load_relaxed(&w->blocking)) {
            c->asked++;
            c->blocked += 1;
            continue;
        }
        if (probes == MAX_PROBES)
            continue;
        probes++;
        s->mon_probe_next = (start + k + 1) % used;
        double run, blocked;
        if (measure(w, now, &run, &blocked) == 0) {
            c->asked++;
            c->run += run;
            c->blocked += blocked;
        }
    }
}

/* How many workers to add to shard s, whose backlog of `queued` tasks
 * persisted while `unused` CPUs went unused, per the rule above the file:
 * as many as fill the unused CPU time that blocked workers leave, each
 * new one taken to run as much as the measured ones do; at most doubling
 * the busy ones in one look. */
static uint64_t workers_wanted(up__shard *s, uint64_t queued, double unused)
{
    unsigned ncpus = s->ncpus ? s->ncpus : 1;
    busy_census c;
    count_busy(s, &c);
    uint64_t want;
    if (c.asked == 0) {
        want = queued; /* the OS says nothing: unused CPU time means blocked workers */
    } else {
        double blocked = c.blocked * c.busy / c.asked; /* of all the busy ones */
        double fill = unused < blocked ? unused : blocked;
        if (fill > ncpus)
            fill = ncpus;
        if (fill < 0.5)
            return 0; /* runnable, waiting for CPUs: another thread would only wait too */
        double run = c.run / c.asked;
        if (run < 1.0 / 64)
            run = 1.0 / 64;
        unsigned cap = c.busy > ncpus ? c.busy : ncpus;
        double n = fill / run;
        want = n >= cap ? cap : n < 1 ? 1 : (uint64_t)n;
    }
    if (want > queued)
        want = queued;
    return want > MAX_SPAWNS_PER_LOOK ? MAX_SPAWNS_PER_LOOK : want;
}

/* One look at one shard; returns 1 while it has a backlog. unused: the
 * CPUs the process left unused since the last look, on average (negative:
 * the interval was too short to tell). */
static int look_at_shard(up_pool *p, up__shard *s, double unused)
{
    uint64_t head = up__mpmc_taken(&s->q);
    uint64_t tail = up__mpmc_accepted(&s->q);
    uint64_t dq_taken;
    uint64_t dq_waiting = deque_backlog(s, &dq_taken);
    /* Deque tasks that were there at the last look and none taken since:
     * their owners are busy with something else. */
    int dq_stalled = dq_waiting && dq_taken == s->mon_deque_taken;
    s->mon_deque_taken = dq_taken;
    int backlog = tail != head || dq_waiting;
    int persisted = backlog && head < s->mon_tail;
    int stalled = backlog && head == s->mon_head;
    /* A queue that is never empty when we look also means busy workers,
     * even when each queued task is taken before the next look (1 ms
     * sleeps under a group's limit). */
    int standing = backlog && s->mon_tail != s->mon_head;
    s->mon_head = head;
    s->mon_tail = tail;
    if (!backlog)
        return 0;
    if (up__load_relaxed(&s->nworkers) < s->ncpus) {
        up__spawn(p, s, 0);
        return 1;
    }
    uint64_t idle = up__load_seqcst(&p->idle);
    if (UP__IDLE_SPINNING(idle) != 0)
        return 1; /* somebody is looking already */
    if (UP__IDLE_PARKED(idle) != 0) {
        up__wake_one(p, s->index);
        return 1;
    }
    if (!(persisted || standing || dq_stalled) || unused < 0)
        return 1;
    /* With every CPU in use, only a head that did not move at all is worth
     * a probe: workers blocked on queued tasks while other threads of the
     * program spin. */
    if (unused < 0.5) {
        if (!(persisted && stalled))
            return 1;
        unused = s->ncpus;
    }
    uint64_t want = workers_wanted(s, tail - head + dq_waiting, unused);
    for (uint64_t i = 0; i < want; i++)
        if (up__spawn(p, s, 1) != UP_OK)
            break;
    return 1;
}

static int any_backlog(up_pool *p)
{
    uint64_t taken;
    for (unsigned i = 0; i < p->nshards; i++)
        if (up__mpmc_nonempty(&p->shards[i].q) || deque_backlog(&p->shards[i], &taken))
            return 1;
    return 0;
}

static void *monitor_main(void *arg)
{
    up_pool *p = arg;
    unsigned ncpus = allowed_cpus(p);
    uint64_t last_wall = up__now_ns(), last_cpu = up__os_process_cpu_ns();
    for (;;) {
        if (up__load_acquire(&p->stopping) && up__load_acquire(&p->workers) == 0)
            break;
        uint64_t wall = up__now_ns(), cpu = up__os_process_cpu_ns();
        uint64_t dwall = wall - last_wall, dcpu = cpu - last_cpu;
        /* CPUs left unused over the interval, which must be long enough
         * to say (the first look after a wake-up comes at once). */
        double unused = -1;
        if (dwall >= p->cfg.spawn_delay_ns / 2) {
            unused = ncpus - (double)dcpu / (double)dwall;
            last_wall = wall;
            last_cpu = cpu;
        }
        int busy = 0;
        for (unsigned i = 0; i < p->nshards; i++)
            busy |= look_at_shard(p, &p->shards[i], unused);
        if (busy || up__load_acquire(&p->stopping)) {
            up__parker_wait(&p->monitor_parker, p->cfg.spawn_delay_ns);
            continue;
        }
        /* Nothing queued: sleep until poked. Announce first, then look
         * once more; a submitter publishes, then reads monitor_parked. */
        up__store_sb(&p->monitor_parked, 1);
        up__fence_sb(); /* store then load: see atomic.h */
        if (!any_backlog(p) && !up__load_seqcst(&p->stopping))
            up__parker_wait(&p->monitor_parker, UINT64_MAX);
        up__store_seqcst(&p->monitor_parked, 0);
        last_wall = up__now_ns();
        last_cpu = up__os_process_cpu_ns();
    }
    return NULL;
}

void up__monitor_poke(up_pool *p)
{
    if (up__load_seqcst(&p->monitor_parked) && up__exchange_acq_rel(&p->monitor_parked, 0) == 1)
        up__parker_post(&p->monitor_parker);
}

int up__monitor_start(up_pool *p)
{
    sigset_t old;
    up__os_block_signals(&old, 0); /* the monitor takes no signal at all */
    int rc = pthread_create(&p->monitor, NULL, monitor_main, p);
    up__os_restore_signals(&old);
    if (rc != 0)
        return UP_EAGAIN;
    p->monitor_started = 1;
    return UP_OK;
}

void up__monitor_join(up_pool *p)
{
    if (!p->monitor_started)
        return;
    up__parker_post(&p->monitor_parker);
    pthread_join(p->monitor, NULL);
    p->monitor_started = 0;
}
