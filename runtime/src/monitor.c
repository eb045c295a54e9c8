/* The monitor: one thread per pool that adds workers when tasks block.
 *
 * Submitters grow a shard to one worker per CPU on their own. Beyond that a
 * new thread only helps when the workers are blocked (sleeping, waiting on
 * I/O or on each other), so the monitor watches while there is a backlog:
 * every spawn_delay it looks at each shard, and when the tasks that were
 * queued at the last look are still not all taken and either the process
 * left CPU time unused over that interval (workers are blocked, not busy)
 * or the shard's head has not moved at all (possibly a deadlock of tasks
 * waiting on queued tasks), it adds workers; so it does when the queue
 * was not empty at either look and CPU time went unused. Tasks in the
 * workers' deques count too: when some wait there, none was taken since
 * the last look and CPU time went unused, their owners are blocked, and
 * a new worker steals them. When nothing is queued the
 * monitor sleeps until a submitter or the last searching worker pokes it,
 * so an idle pool costs no wake-ups. */
#include <stdlib.h>

#include "clock.h"
#include "os.h"
#include "pool_internal.h"

/* Most workers one shard gains in one look. */
#define MAX_SPAWNS_PER_LOOK 32

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

/* One look at one shard; returns 1 while it has a backlog. */
static int look_at_shard(up_pool *p, up__shard *s, int cpu_idle)
{
    uint64_t head = up__mpmc_taken(&s->q);
    uint64_t tail = up__mpmc_accepted(&s->q);
    uint64_t dq_taken;
    uint64_t dq_waiting = deque_backlog(s, &dq_taken);
    /* Deque tasks that were there at the last look and none taken since,
     * while CPU time goes unused: their owners are blocked. */
    int dq_stalled = dq_waiting && dq_taken == s->mon_deque_taken && cpu_idle;
    s->mon_deque_taken = dq_taken;
    int backlog = tail != head || dq_waiting;
    int persisted = backlog && head < s->mon_tail;
    int stalled = backlog && head == s->mon_head;
    /* A queue that is never empty when we look, while CPU time goes
     * unused, also means blocked workers, even when each queued task is
     * taken before the next look (1 ms sleeps under a group's limit). */
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
    if ((persisted && (cpu_idle || stalled)) || (standing && cpu_idle) || dq_stalled) {
        uint64_t want = tail - head + (dq_stalled ? 1 : 0);
        if (!cpu_idle || want < 1)
            want = 1;
        if (want > MAX_SPAWNS_PER_LOOK)
            want = MAX_SPAWNS_PER_LOOK;
        for (uint64_t i = 0; i < want; i++)
            if (up__spawn(p, s, 1) != UP_OK)
                break;
    }
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
        last_wall = wall;
        last_cpu = cpu;
        /* Unused CPU: at least half a CPU's worth over the interval. */
        int cpu_idle = dcpu + dwall / 2 < dwall * ncpus;
        int busy = 0;
        for (unsigned i = 0; i < p->nshards; i++)
            busy |= look_at_shard(p, &p->shards[i], cpu_idle);
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
