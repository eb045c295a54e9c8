/* An idle region member burns no CPU after the pool's spin budget. In a
 * team of two (the calling thread and the pool's one worker), one member
 * waits about 300 ms while the other sleeps: at a barrier, with the worker
 * waiting and then with the calling thread waiting (a worker's parker and
 * a thread's own), and in a taskwait for a child that the other member,
 * parked at its barrier and woken by the push, stole and sleeps in (the
 * waiter woken by the child's completion). The waiter's own
 * CPU time over the wait must stay far below the wall time, and the
 * pool's statistics must show it parked while it waits and count its
 * parks. Exit 77 when this machine cannot measure a thread's CPU time. */
#include <inttypes.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include <ultrapool/parallel.h>
#include <ultrapool/pool.h>

#include "check.h"
#include "pool_helpers.h"

enum { WAIT_MS = 300, NAP_MS = 10 };
/* The waiter may use this share of the wall time: its spin budget is a
 * few microseconds of polling, so a parked waiter stays far below it,
 * while one that polls and naps (50 us sleeps between looks) costs more. */
#define MAX_CPU_SHARE 0.05

static up_pool *pool;

enum { AT_BARRIER, AT_TASKWAIT };

typedef struct trial {
    unsigned waiter; /* the member that waits */
    int where;
    uint64_t cpu_ns, wall_ns;
    unsigned parked_seen; /* naps after which the sleeper saw someone parked */
    unsigned team;
    _Atomic int child_started;
} trial;

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return UINT64_MAX;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The other member's part: WAIT_MS in naps, looking at the pool's
 * statistics after each. The pool has one worker and it is in the team,
 * so a parked thread is the waiting member. */
static void sleep_watching(trial *tr)
{
    for (unsigned i = 0; i < WAIT_MS / NAP_MS; i++) {
        test_sleep_ms(NAP_MS);
        up_stats st;
        up_pool_stats(pool, &st);
        if (st.parked >= 1)
            tr->parked_seen++;
    }
}

static void child(void *arg)
{
    trial *tr = arg;
    atomic_store(&tr->child_started, 1);
    sleep_watching(tr);
}

static void region(void *arg)
{
    trial *tr = arg;
    if (up_thread_num() != tr->waiter) {
        up_barrier(); /* at a taskwait trial, it steals the child here */
        return;
    }
    tr->team = up_num_threads();
    if (tr->where == AT_TASKWAIT) {
        /* Long enough for the other member to park at its barrier: the
         * push must wake it to steal the child. */
        test_sleep_ms(20);
        CHECK_EQ(up_task(child, tr, NULL), UP_OK);
        /* Until the other member has taken it: the wait measured is for a
         * child running elsewhere. A lost wake-up leaves it queued. */
        WAIT_UNTIL(atomic_load(&tr->child_started), 10000);
        CHECK(atomic_load(&tr->child_started));
    }
    uint64_t c0 = thread_cpu_ns(), w0 = test_now_ns();
    if (tr->where == AT_TASKWAIT) {
        up_taskwait();
    } else {
        up_barrier();
    }
    tr->wall_ns = test_now_ns() - w0;
    tr->cpu_ns = thread_cpu_ns() - c0;
    if (tr->where == AT_TASKWAIT)
        up_barrier();
}

static void other_sleeps(void *arg)
{
    trial *tr = arg;
    if (up_thread_num() != tr->waiter && tr->where == AT_BARRIER)
        sleep_watching(tr);
    region(arg);
}

static void run_trial(unsigned waiter, int where, const char *what)
{
    trial tr = {.waiter = waiter, .where = where};
    up_stats before, after;
    up_pool_stats(pool, &before);
    int rc = UP_EAGAIN;
    for (int attempt = 0; attempt < 20 && rc == UP_EAGAIN; attempt++)
        rc = up_parallel_exact(pool, 2, other_sleeps, &tr);
    if (rc == UP_EAGAIN) {
        printf("the pool's worker never joined a team of two: skipped\n");
        exit(TEST_SKIP);
    }
    CHECK_EQ(rc, UP_OK);
    CHECK_EQ(tr.team, 2);
    up_pool_stats(pool, &after);
    double share = (double)tr.cpu_ns / (double)tr.wall_ns;
    printf("%s: waited %.1f ms, used %.2f ms of CPU (%.1f%%), seen parked after %u of %u naps, "
           "parks %" PRIu64 " -> %" PRIu64 "\n",
           what, tr.wall_ns / 1e6, tr.cpu_ns / 1e6, 100 * share, tr.parked_seen, WAIT_MS / NAP_MS,
           before.parks, after.parks);
    fflush(stdout);
    CHECK_GE(tr.wall_ns, (WAIT_MS / 2) * 1000000ull); /* it really waited */
    CHECK_LT(share, MAX_CPU_SHARE);
    CHECK_GE(tr.parked_seen, 1);
    CHECK_GT(after.parks, before.parks);
}

int main(void)
{
    /* A member that sleeps through the publish that concerns it (a lost
     * wake-up) hangs its region: fail in bounded time instead. */
    alarm(60);
    /* Can this machine measure a thread's CPU time? A thread that spins
     * for 20 ms of wall time must be seen to use some. */
    uint64_t c0 = thread_cpu_ns(), w0 = test_now_ns();
    if (c0 == UINT64_MAX) {
        printf("no per-thread CPU clock: skipped\n");
        return TEST_SKIP;
    }
    while (test_now_ns() - w0 < 20000000u)
        ;
    if (thread_cpu_ns() - c0 == 0) {
        printf("the per-thread CPU clock does not advance: skipped\n");
        return TEST_SKIP;
    }
    pool = test_fixed_pool(1);
    run_trial(1, AT_BARRIER, "worker at a barrier");
    run_trial(0, AT_BARRIER, "calling thread at a barrier");
    run_trial(0, AT_TASKWAIT, "calling thread in a taskwait");
    CHECK_EQ(up_pool_destroy(pool), UP_OK);
    return 0;
}
