/* The monitor: one thread per pool that adds workers when tasks block.
 *
 * Submitters grow a shard to one worker per CPU on their own. Beyond that
 * a new thread only helps while some of the workers are blocked (asleep
 * in the kernel: a sleep, a read, a lock), never while they are merely
 * waiting for a CPU: CPU-bound work keeps one runnable worker per CPU,
 * whatever else runs on the machine. So while a backlog persists (tasks
 * queued at the last look not all taken, a queue never empty at two looks
 * in a row, or tasks waiting in the deques of workers that took none
 * since) the monitor looks at each shard every spawn_delay and measures
 * its busy workers: the OS says, for at most MAX_PROBES of them per look,
 * which are runnable and how much of their time the blocked ones spend
 * blocked (measure, below); a worker inside up_blocking_begin() is blocked
 * without asking. It then adds as many workers as fill the CPUs that the
 * busy ones leave unused by blocking, each new one taken to run as much
 * as the measured ones do, at most doubling the busy ones and never more
 * than the backlog or MAX_SPAWNS_PER_LOOK. Looks that find the workers
 * runnable come less and less often (up to one in MAX_BACKOFF), which
 * keeps the probes' cost negligible under a CPU-bound backlog.
 *
 * A worker blocked on something the process itself holds (a futex: a
 * lock, a condition variable; the address-space lock, which malloc's
 * trimming waits for) counts as blocked only once no task has been taken
 * from the shard's backlog (its queue, its workers' deques) for
 * OWN_LOCK_PATIENCE_NS, and none has finished either (submitters that
 * run their own tasks finish some without taking any) or the backlog has
 * stood still for STALL_NS. While work moves, the holder is most likely
 * running, if late (preempted by other load, say), another thread would
 * only queue behind the same lock, and whatever task the waiter waits
 * for is being reached; once it stops, the waiters may be waiting for a
 * task no one will take, and get workers as any blocked ones do. (Linux tells these waits
 * apart; elsewhere every blocked worker counts.)
 *
 * Such waits get one worker per look, and the next one only once a task
 * was taken since the last was added, none has finished, and none of the
 * busy workers is runnable (or nothing has finished for
 * OWN_LOCK_REARM_NS since the add, or the backlog was gone in between). A holder that
 * keeps the lock longer than the patience (a task that holds it for
 * 40 ms; on a busy machine, one preempted while holding it, or a waiter
 * woken but not yet run) leaves the work standing still at times while
 * it is runnable and tasks still finish: every worker added then takes
 * one more task that waits on the same lock, and adding more doubled the
 * pool at each pause (173 workers for one lock at a load of 25-117 on 2
 * CPUs). Waiters that wait for tasks still queued (each task for the
 * next through a condition variable, say) see nothing finish and no
 * worker run until those run, so they still get a worker per pause.
 *
 * Where the OS says nothing, the process's CPU time stands in: busy
 * workers count as blocked when the process left at least half a CPU
 * unused over the last CPU_WINDOW_NS (shorter windows are noise: the OS
 * updates other threads' CPU time only at their ticks).
 *
 * One rescue ignores all this: a shard whose backlog made no progress at
 * all (no task taken from its queue or its deques) for STALL_NS, while it
 * has at most one worker per CPU, gets one more: tasks that spin-wait for
 * a task still queued behind them are runnable, yet need it.
 *
 * When nothing is queued the monitor sleeps until a submitter or the last
 * searching worker pokes it, so an idle pool costs no wake-ups. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "os/os.h"
#include "pool_internal.h"

/* Most workers one shard gains in one look. */
#define MAX_SPAWNS_PER_LOOK 32
/* Most workers whose state one look asks the OS (a few us each). */
#define MAX_PROBES 16
/* Looks skipped at most after looks that found the workers runnable. */
#define MAX_BACKOFF 16
/* The windows over which the process's CPU time says anything. */
#define CPU_WINDOW_NS     16000000ull
#define CPU_WINDOW_MIN_NS 4000000ull
/* Waits on the process's own locks count as blocked once the shard's
 * work has not moved for this long (see above): a few of the scheduler's
 * time slices, so that a holder preempted by other load gets to run
 * again. */
#define OWN_LOCK_PATIENCE_NS 20000000ull
/* No progress at all for this long: one more worker (see above). */
#define STALL_NS 100000000ull
/* Nothing finished for this long: waits on the process's own locks may
 * get workers again although tasks finished since the last one added for
 * them (see above). */
#define OWN_LOCK_REARM_NS 1000000000ull

static unsigned allowed_cpus(const up_pool *p)
{
    unsigned n = 0;
    for (unsigned i = 0; i < p->nshards; i++)
        n += p->plan.shards[i].ncpus;
    return n ? n : 1;
}

/* What a probe of one shard's busy workers found (monitor thread only). */
typedef struct busy_census {
    unsigned busy;    /* workers running a task */
    unsigned asked;   /* of those, measured */
    unsigned pending; /* of those, read for the first time: measured at the next look */
    double run;       /* sum over the measured of the share of time on a CPU */
    double blocked;   /* sum of the share of time neither on a CPU nor waiting for one */
    double own;       /* that of the measured waiting on the process's own locks, not in blocked */
    unsigned running; /* of the measured, runnable now */
} busy_census;

/* measure()'s answers besides 0: the OS says nothing, or a first
 * reading, to be compared with at the next look. */
enum { MEASURE_UNKNOWN = -1, MEASURE_PENDING = -2 };

/* A worker blocked for less than this share of the time since the last
 * reading counts as runnable: brief waits (a contended lock, a random
 * number source) are not what another thread would cover, and adding
 * threads to a contended lock makes it worse. */
#define MOSTLY_BLOCKED 0.5
/* Busy workers blocked for this share of their time in all get workers
 * whether or not the process left CPU time unused (workers_wanted). */
#define ALL_BLOCKED 0.9

/* What worker w did lately: the shares of time it ran (*run) and was
 * blocked (*blocked), the rest being time runnable but waiting for a CPU.
 * A worker runnable now (running, or preempted by other load) counts as
 * running: the OS updates a running thread's times only at its ticks, so
 * they say little about it over a millisecond. A worker blocked now has
 * up-to-date times, and its shares since the monitor's last reading of
 * it tell how much it blocks (a task that sleeps 1 us blocks for most of
 * its life, yet runs for some of it); without a reading that can be used
 * (the first one, one that spans a park of w or a turn it stood aside for
 * a submitter (cede.c), whose idle time would look blocked, or a new
 * thread) the answer waits for the next look. Where the
 * OS keeps no times, the state alone answers. *now_doing says what w
 * does at this moment: NOW_RUNNABLE, NOW_BLOCKED, or NOW_OWN_LOCK, blocked
 * on the process's own locks (see the top of the file); that is asked of
 * the OS only where the answer counts, a worker found mostly blocked.
 * Returns 0 or MEASURE_*. */
enum { NOW_RUNNABLE, NOW_BLOCKED, NOW_OWN_LOCK };
static int measure(up__worker *w, uint64_t now, double *run, double *blocked, int *now_doing)
{
    int state = up__os_thread_blocked(&w->os_thread);
    if (state < 0)
        return MEASURE_UNKNOWN;
    *now_doing = state ? NOW_BLOCKED : NOW_RUNNABLE;
    *run = state ? 0 : 1;
    *blocked = state ? 1 : 0;
    uint64_t r, q;
    if (!state)
        return 0;
    int valid = 0;
    if (up__os_thread_times(&w->os_thread, &r, &q) == 0) {
        uint32_t id = up__load_acquire(&w->os_thread.id);
        uint64_t parks = up__load_relaxed(&w->parks), cedes = up__load_acquire(&w->cedes);
        valid = w->mon.id == id && w->mon.parks == parks && w->mon.cedes == cedes &&
                now > w->mon.at && r >= w->mon.run && q >= w->mon.wait;
        if (valid) {
            double dt = (double)(now - w->mon.at);
            double ran = (double)(r - w->mon.run) / dt, waited = (double)(q - w->mon.wait) / dt;
            *run = ran > 1 ? 1 : ran;
            *blocked = ran + waited < 1 ? 1 - ran - waited : 0;
            if (*blocked < MOSTLY_BLOCKED)
                *blocked = 0;
        }
        w->mon.id = id;
        w->mon.at = now;
        w->mon.run = r;
        w->mon.wait = q;
        w->mon.parks = parks;
        w->mon.cedes = cedes;
        if (!valid)
            return MEASURE_PENDING;
    }
    if (*blocked > 0) {
        /* Read after the state: a thread that woke in between is runnable. */
        int own = up__os_thread_contended(&w->os_thread);
        if (own < 0) {
            *now_doing = NOW_RUNNABLE;
            *run = 1;
            *blocked = 0;
        } else if (own) {
            *now_doing = NOW_OWN_LOCK;
        }
    }
    return 0;
}

/* Counts s's busy workers and measures up to MAX_PROBES of them, from a
 * slot that rotates between looks so that every worker gets measured in
 * turn; stops measuring once the measured ones want `enough` CPUs
 * (running or waiting for one). A worker inside a blocking region is
 * blocked, without asking. */
static void count_each(up__shard *s, double enough, busy_census *c)
{
    memset(c, 0, sizeof *c);
    unsigned used = up__load_acquire(&s->slots_used), probes = 0;
    if (used == 0)
        return;
    uint64_t now = up__now_ns();
    unsigned start = s->mon.probe_next % used;
    for (unsigned k = 0; k < used; k++) {
        up__worker *w = up__slot_worker(s, (start + k) % used);
        if (!w || up__load_acquire(&w->state) != UP__SLOT_RUNNING || up__load_relaxed(&w->looking))
            continue;
        c->busy++;
        if (up__load_relaxed(&w->blocking)) {
            c->asked++;
            c->blocked += 1;
            continue;
        }
        if (probes == MAX_PROBES || c->asked - c->blocked >= enough)
            continue;
        probes++;
        s->mon.probe_next = (start + k + 1) % used;
        double run, blocked;
        int doing = NOW_BLOCKED;
        int rc = measure(w, now, &run, &blocked, &doing);
        if (rc == 0) {
            c->asked++;
            c->run += run;
            c->running += doing == NOW_RUNNABLE;
            if (doing == NOW_OWN_LOCK)
                c->own += blocked;
            else
                c->blocked += blocked;
        } else if (rc == MEASURE_PENDING) {
            c->pending++;
        }
    }
}

/* The workers to add to shard s, whose busy workers are c and whose
 * backlog is `queued`, per the rule above the file; sets *runnable when
 * the workers were found wanting every CPU. */
static uint64_t wanted_for(up__shard *s, const busy_census *c, uint64_t queued, double unused,
                           int *runnable)
{
    unsigned ncpus = up__shard_cpus(s);
    *runnable = 0;
    if (c->busy == 0)
        return 0; /* workers between a task and the search: look again */
    unsigned cap = c->busy > ncpus ? c->busy : ncpus; /* at most doubling */
    uint64_t want;
    if (c->asked == 0) {
        if (c->pending || unused < 0.5)
            return 0;
        want = cap;
    } else {
        /* The blocked share of all the busy ones, at the shares of those
         * measured; the CPUs free for new workers: those the process left
         * unused (a runnable worker may be waiting for a CPU that is only
         * waking up, which costs tens of us on a VM), or without a window,
         * those the runnable workers do not want. */
        double blocked = c->blocked * c->busy / c->asked;
        double fill = unused >= 0 ? unused : ncpus - (c->asked - c->blocked) * c->busy / c->asked;
        if (fill > blocked)
            fill = blocked;
        /* Workers blocked nearly all the time need threads more than CPU
         * time: whatever uses the CPUs meanwhile (other threads of the
         * program, other processes, a sanitizer), their tasks wait for
         * something, perhaps for the queued ones. Not so while submitters
         * run tasks inline (cede.c): they are what uses the CPUs, the
         * queued tasks are moving, and what the workers wait for is most
         * likely a lock those submitters hold. */
        if (blocked >= ALL_BLOCKED * c->busy && fill < blocked && up__cede_leases(s) == 0)
            fill = blocked;
        if (fill > ncpus)
            fill = ncpus;
        if (fill < 0.5) {
            *runnable = 1;
            return 0; /* waiting for CPUs, not blocked: another thread would only wait too */
        }
        double run = c->run / c->asked;
        if (run < 1.0 / 64)
            run = 1.0 / 64;
        double n = fill / run;
        want = n >= cap ? cap : n < 1 ? 1 : (uint64_t)n;
    }
    if (want > queued)
        want = queued;
    return want > MAX_SPAWNS_PER_LOOK ? MAX_SPAWNS_PER_LOOK : want;
}

/* Whether waits on the process's own locks count as blocked at a look
 * (the rules above the file): no, yes, or only when none of the busy
 * workers measured is runnable. */
enum { OWN_RUNNING, OWN_BLOCKED, OWN_BLOCKED_IF_NONE_RUNS };

/* How many workers to add to shard s, whose backlog of `queued` tasks
 * persisted, per the rule above the file. unused: the CPUs the process
 * left unused over the last window (negative: not known yet). own: an
 * OWN_* saying whether waits on the process's own locks count as blocked;
 * they then add one worker at most, and *own_added says they did.
 * Otherwise they are taken to be for a thread that runs, and count as
 * running. Sets *runnable when the workers were found wanting every CPU. */
static uint64_t workers_wanted(up__shard *s, uint64_t queued, double unused, int own, int *runnable,
                               int *own_added)
{
    unsigned ncpus = up__shard_cpus(s);
    busy_census c;
    /* Without a window, a worker runnable now counts as wanting a CPU,
     * and once they want them all there is nothing more to learn. */
    count_each(s, unused < 0 ? ncpus - 0.5 : (double)UINT_MAX, &c);
    *own_added = 0;
    busy_census plain = c;
    plain.run += c.own;
    uint64_t want = wanted_for(s, &plain, queued, unused, runnable);
    if (own == OWN_RUNNING || c.own <= 0 || (own == OWN_BLOCKED_IF_NONE_RUNS && c.running > 0))
        return want;
    busy_census all = c;
    all.blocked += c.own;
    int all_runnable;
    if (wanted_for(s, &all, queued, unused, &all_runnable) <= want)
        return want;
    *runnable = 0;
    *own_added = 1;
    return want + 1;
}

/* One look at one shard at time now; returns 1 while it has a backlog.
 * unused: as for workers_wanted. */
static int look_at_shard(up_pool *p, up__shard *s, uint64_t now, double unused)
{
    uint64_t head = up__mpmc_taken(&s->q);
    uint64_t tail = up__mpmc_accepted(&s->q);
    uint64_t dq_taken;
    uint64_t dq_waiting = up__deque_backlog(s, &dq_taken);
    int backlog = tail != head || dq_waiting;
    int progress = head != s->mon.head || dq_taken != s->mon.deque_taken;
    /* Deque tasks that were there at the last look and none taken since:
     * their owners are busy with something else. */
    int dq_stalled = dq_waiting && dq_taken == s->mon.deque_taken;
    int persisted = backlog && head < s->mon.tail;
    /* A queue that is never empty when we look also means busy workers,
     * even when each queued task is taken before the next look (1 ms
     * sleeps under a group's limit). */
    int standing = backlog && s->mon.tail != s->mon.head;
    s->mon.deque_taken = dq_taken;
    s->mon.head = head;
    s->mon.tail = tail;
    if (!backlog || progress)
        s->mon.moved_at = now;
    /* Tasks finished by anyone, submitters running their own included. */
    uint64_t executed = up__shard_executed(s);
    if (executed != s->mon.executed)
        s->mon.finished_at = now;
    s->mon.executed = executed;
    /* The holder of what an own-lock waiter waits for runs (the rule
     * above the file): tasks were taken from the backlog lately, or tasks
     * finished lately and the backlog moved within STALL_NS. */
    int moving =
        now - s->mon.moved_at < OWN_LOCK_PATIENCE_NS ||
        (now - s->mon.finished_at < OWN_LOCK_PATIENCE_NS && now - s->mon.moved_at < STALL_NS);
    /* Whether waits on the process's own locks may get a worker now (the
     * rules above the file): the work stands still, and none was added for
     * them yet, or nothing finished for long, or one was added and took a
     * task while none finished since (they may wait for something still
     * queued; workers_wanted checks that none runs). */
    int own = OWN_RUNNING;
    uint64_t last_news = s->mon.finished_at > s->mon.own_at ? s->mon.finished_at : s->mon.own_at;
    if (!moving && (s->mon.own_at == 0 || now - last_news >= OWN_LOCK_REARM_NS))
        own = OWN_BLOCKED;
    else if (!moving && s->mon.moved_at > s->mon.own_at && executed == s->mon.own_executed)
        own = OWN_BLOCKED_IF_NONE_RUNS;
    if (!backlog) {
        s->mon.backoff = s->mon.skip = 0;
        s->mon.own_at = 0;
        return 0;
    }
    unsigned ncpus = up__shard_cpus(s);
    if (up__load_relaxed(&s->nworkers) < ncpus) {
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
    if (UP__IDLE_STARTING(idle) != 0)
        return 1; /* the workers of the last look are not looking yet */
    if (now - s->mon.moved_at >= STALL_NS && up__load_relaxed(&s->nworkers) <= ncpus) {
        s->mon.moved_at = now;
        up__spawn(p, s, 1);
        return 1;
    }
    if (!(persisted || standing || dq_stalled))
        return 1;
    if (s->mon.skip) {
        s->mon.skip--;
        return 1;
    }
    int runnable, own_added;
    uint64_t want = workers_wanted(s, tail - head + dq_waiting, unused, own, &runnable, &own_added);
    if (runnable) {
        s->mon.backoff = s->mon.backoff ? s->mon.backoff * 2 : 1;
        if (s->mon.backoff > MAX_BACKOFF)
            s->mon.backoff = MAX_BACKOFF;
        s->mon.skip = s->mon.backoff;
    } else {
        s->mon.backoff = 0;
    }
    uint64_t added = 0;
    while (added < want && up__spawn(p, s, 1) == UP_OK)
        added++;
    if (own_added && added == want) {
        s->mon.own_at = now;
        s->mon.own_executed = executed;
    }
    return 1;
}

/* The process's CPU time at the monitor's recent looks, for the CPUs it
 * left unused over a sliding window of at least CPU_WINDOW_MIN_NS and
 * about CPU_WINDOW_NS (the OS brings other threads' CPU time up to date
 * only at their ticks, so shorter windows are noise). */
#define CPU_SAMPLES 64
typedef struct cpu_window {
    uint64_t wall[CPU_SAMPLES], cpu[CPU_SAMPLES];
    unsigned n, next; /* samples held; where the next one goes */
} cpu_window;

static void window_reset(cpu_window *w) { w->n = w->next = 0; }

/* Adds the sample (wall, cpu) and returns the CPUs unused since the
 * newest sample at least CPU_WINDOW_NS old (or the oldest held, when it
 * is at least CPU_WINDOW_MIN_NS old); -1 when no sample is that old. */
static double window_unused(cpu_window *w, uint64_t wall, uint64_t cpu, unsigned ncpus)
{
    double unused = -1;
    for (unsigned k = 0; k < w->n; k++) {
        unsigned i = (w->next + CPU_SAMPLES - 1 - k) % CPU_SAMPLES; /* newest first */
        uint64_t dt = wall - w->wall[i];
        if (dt >= CPU_WINDOW_NS || (k + 1 == w->n && dt >= CPU_WINDOW_MIN_NS)) {
            unused = ncpus - (double)(cpu - w->cpu[i]) / (double)dt;
            break;
        }
    }
    w->wall[w->next] = wall;
    w->cpu[w->next] = cpu;
    w->next = (w->next + 1) % CPU_SAMPLES;
    if (w->n < CPU_SAMPLES)
        w->n++;
    return unused;
}

static int any_backlog(up_pool *p)
{
    uint64_t taken;
    for (unsigned i = 0; i < p->nshards; i++)
        if (up__mpmc_nonempty(&p->shards[i].q) || up__deque_backlog(&p->shards[i], &taken))
            return 1;
    return 0;
}

static void *monitor_main(void *arg)
{
    up_pool *p = arg;
    up__os_name_self("up-monitor");
    unsigned ncpus = allowed_cpus(p);
    cpu_window win;
    window_reset(&win);
    for (;;) {
        if (up__load_acquire(&p->stopping) && up__load_acquire(&p->workers) == 0)
            break;
        if (up__load_acquire(&p->lend.count) != 0) {
            /* The CPUs are lent to OpenMP (up_omp_lend): the backlog waits
             * on purpose; no worker is blocked, none is added. */
            up__parker_wait(&p->mon.parker, p->cfg.spawn_delay_ns);
            window_reset(&win);
            continue;
        }
        uint64_t wall = up__now_ns();
        double unused = window_unused(&win, wall, up__os_process_cpu_ns(), ncpus);
        int busy = 0;
        for (unsigned i = 0; i < p->nshards; i++)
            busy |= look_at_shard(p, &p->shards[i], wall, unused);
        if (busy || up__load_acquire(&p->stopping)) {
            up__parker_wait(&p->mon.parker, p->cfg.spawn_delay_ns);
            continue;
        }
        /* Nothing queued: sleep until poked. Announce first, then look
         * once more; a submitter publishes, then reads monitor_parked. */
        up__store_sb(&p->monitor_parked, 1);
        up__fence_sb(); /* store then load: see atomic.h */
        if (!any_backlog(p) && !up__load_seqcst(&p->stopping))
            up__parker_wait(&p->mon.parker, UINT64_MAX);
        up__store_seqcst(&p->monitor_parked, 0);
        window_reset(&win);
    }
    return NULL;
}

void up__monitor_poke(up_pool *p)
{
    if (up__load_seqcst(&p->monitor_parked) && up__exchange_acq_rel(&p->monitor_parked, 0) == 1)
        up__parker_post(&p->mon.parker);
}

int up__monitor_start(up_pool *p)
{
    sigset_t old;
    up__os_block_signals(&old, 0); /* the monitor takes no signal at all */
    int rc = pthread_create(&p->mon.thread, NULL, monitor_main, p);
    up__os_restore_signals(&old);
    if (rc != 0)
        return UP_EAGAIN;
    p->mon.started = 1;
    return UP_OK;
}

void up__monitor_join(up_pool *p)
{
    if (!p->mon.started)
        return;
    up__parker_post(&p->mon.parker);
    pthread_join(p->mon.thread, NULL);
    p->mon.started = 0;
}
