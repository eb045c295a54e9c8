/* Docked teams (pragmas/src/crew.c, docs/openmp.md, threadprivate): the
 * members of a top-level region wait for their master's next one, parked
 * and using no CPU, and go back to the pool when their master's thread
 * ends or omp_pause_resource ends the pool's workers.
 *   1. A master thread that ends releases its docked threads: the regions
 *      main opens afterwards reuse them, the process gains no thread.
 *   2. Idle: after a region, the docked members burn at most a little CPU
 *      (their spin budget) while the master sleeps 300 ms.
 *   3. A pause with docked threads returns, and ends them.
 * With the argument "cap" (ctest runs it with UP_MAX_WORKERS=4): a pool
 * that may start no more workers gives docked threads back to a region
 * that needs them. main's region of 4 leaves 3 docked; another thread's
 * region of 3 must still get its 2 workers (alarm: a hang fails).
 * With the argument "starved" (Linux): case 1 with released threads that
 * cannot get a CPU. The docked threads are put at SCHED_IDLE and one busy
 * process per CPU runs when their master ends, so they are still on their
 * way back to the pool when main's region gathers its team; the pool must
 * wait for them (counted as starting, crew.c) rather than start two more
 * threads. What a busy machine does now and then, made certain. */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "omp_check.h"
#include "../common/threads.h"
#ifdef __linux__
#include <sched.h>
#include <stdatomic.h>

#include "../common/hogs.h"
#endif

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

/* Regions of n threads; each member checks it is member i of a team of n. */
static void regions(int n, int count)
{
    for (int r = 0; r < count; r++) {
        int wrong = 0;
#pragma omp parallel num_threads(n) reduction(+ : wrong)
        wrong += omp_get_num_threads() != n;
        EXPECT(wrong == 0, "a region of %d had another size", n);
    }
}

static void *master_thread(void *arg)
{
    (void)arg;
    regions(3, 20);
    return NULL;
}

static void *other_master(void *arg)
{
    (void)arg;
    regions(3, 5);
    return NULL;
}

static int capped(void)
{
    alarm(60); /* SIGALRM ends a hung region with a failure */
    regions(4, 3);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, other_master, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    regions(4, 3); /* main's crew, partly given back, refills */
    printf("figure: with UP_MAX_WORKERS=%s, regions of 4, then another thread's of 3, then 4 "
           "again all ran\n",
           getenv("UP_MAX_WORKERS") ? getenv("UP_MAX_WORKERS") : "(unset)");
    return omp_report("test_omp_dock cap");
}

#ifdef __linux__
/* The pool's worker threads (named "up-worker ..."): how many, and with
 * to_idle, each put at SCHED_IDLE (it runs only when no other thread
 * wants the CPU). */
typedef struct {
    int to_idle, n;
} worker_scan;

static void scan_worker(int tid, const char *name, void *arg)
{
    worker_scan *w = arg;
    if (strncmp(name, "up-worker", 9) != 0)
        return;
    struct sched_param sp = {0};
    if (w->to_idle)
        CHECK(sched_setscheduler((pid_t)tid, SCHED_IDLE, &sp) == 0);
    w->n++;
}

static int pool_workers(int to_idle)
{
    worker_scan w = {to_idle, 0};
    CHECK(test_threads_each(scan_worker, &w) >= 0);
    return w.n;
}

static atomic_int master_may_end, master_docked;

/* Opens regions of 3, waits for the pool's other workers to retire
 * (ctest sets a short UP_IDLE_TIMEOUT and no floor), so that only its two
 * docked members are left, and starves them before it ends. */
static void *starved_master(void *arg)
{
    (void)arg;
    regions(3, 5);
    WAIT_UNTIL(pool_workers(0) == 2, 5000);
    atomic_store(&master_docked, pool_workers(1));
    while (!atomic_load(&master_may_end))
        test_sleep_ms(1);
    return NULL; /* its end releases its two docked threads */
}

static int starved(void)
{
    alarm(120); /* SIGALRM ends a hung region with a failure */
    pthread_t t;
    CHECK(pthread_create(&t, NULL, starved_master, NULL) == 0);
    while (atomic_load(&master_docked) == 0)
        test_sleep_ms(1);
    test_hogs hogs;
    test_hogs_start(&hogs, (unsigned)sysconf(_SC_NPROCESSORS_ONLN));
    atomic_store(&master_may_end, 1);
    CHECK(pthread_join(t, NULL) == 0);
    int before = test_threads();
    regions(3, 1); /* gathered while its threads are still starved */
    int after = test_threads();
    if (after > before)
        test_threads_print(stderr, "threads after main's region");
    unsigned nhogs = hogs.n;
    test_hogs_stop(&hogs);
    regions(3, 5);
    printf("figure: %d pool workers at SCHED_IDLE; threads after their master ended %d, after "
           "main's region beside %u busy processes %d\n",
           atomic_load(&master_docked), before, nhogs, after);
    EXPECT(atomic_load(&master_docked) == 2, "%d pool workers left beside the master, 2 expected",
           atomic_load(&master_docked));
    EXPECT(after <= before, "main's region started %d more threads", after - before);
    return omp_report("test_omp_dock starved");
}
#endif

int main(int argc, char **argv)
{
    require_ultrapool();
    omp_set_dynamic(0);
    if (argc > 1 && !strcmp(argv[1], "cap"))
        return capped();
    if (argc > 1 && !strcmp(argv[1], "starved")) {
#ifdef __linux__
        return starved();
#else
        printf("SCHED_IDLE is Linux's: skipped\n");
        return 77;
#endif
    }

    /* 1. A master that ends, before main opened any region. Its two docked
     * threads are released; main's first regions of 3, which have no
     * crew of their own yet, then find them in the pool and need no new
     * thread (held in the ended thread's dock, they would be missing). */
    pthread_t t;
    CHECK(pthread_create(&t, NULL, master_thread, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    int before = test_threads_settled();
    test_threads_print(stderr, "threads before");
    regions(3, 20);
    regions(3, 20);
    int after = test_threads_settled();
    if (after > before)
        test_threads_print(stderr, "threads after");
    printf("figure: threads after the master thread ended %d, after main's regions %d\n", before,
           after);
    EXPECT(after <= before, "main's regions started %d more threads", after - before);

    /* 2. Idle docked members. The spin budget is at most 1 ms per member
     * (PAR_SPIN_MAX_NS); 60 ms of CPU in 300 ms would mean spinning. */
    regions(3, 5);
    double c0 = cpu_seconds();
    test_sleep_ms(300);
    double idle = cpu_seconds() - c0;
    printf("figure: CPU used by 2 docked members while the master slept 300 ms: %.1f ms\n",
           idle * 1e3);
    EXPECT(idle < 0.06, "docked members used %.1f ms of CPU in 300 ms", idle * 1e3);

    /* 3. A pause with docked members: returns, and ends the workers. */
    regions(3, 5);
    int docked = test_threads();
    EXPECT(omp_pause_resource_all(omp_pause_soft) == 0, "pause refused");
    int paused = test_threads_settled();
    printf("figure: threads with docked members %d, after the pause %d\n", docked, paused);
    EXPECT(paused < docked, "the pause left %d threads (of %d)", paused, docked);
    regions(3, 5); /* a new pool, new docks */
    return omp_report("test_omp_dock");
}
