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
 * was not empty at either look and CPU time went unused. When nothing is queued the
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

/* One look at one shard; returns 1 while it has a backlog. */
static int look_at_shard(up_pool *p, up__shard *s, int cpu_idle)
{
    uint64_t head = up__mpmc_taken(&s->q);
    uint64_t tail = up__mpmc_accepted(&s->q);
    int backlog = tail != head;
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
    if ((persisted && (cpu_idle || stalled)) || (standing && cpu_idle)) {
        uint64_t want = tail - head;
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
    for (unsigned i = 0; i < p->nshards; i++)
        if (up__mpmc_nonempty(&p->shards[i].q))
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
