/* Right-sizing: a pool adds workers for blocked tasks, never for tasks
 * that merely wait for a CPU (docs/design.md, "Growing and shrinking").
 *
 *  1. CPU-bound tasks from two submitters, on a quiet machine and then with
 *     one busy process per CPU beside the pool: the pool never grows past
 *     CPUs + 1 workers. The same with every task holding one mutex, whose
 *     waiters sleep in the kernel while its holder runs. And tasks that
 *     each hold one mutex for 40 ms, longer than the monitor's patience
 *     with such waits (as a holder preempted on a busy machine does):
 *     one extra worker at most, not one more task stuck on the lock at
 *     every pause (25-26 workers for 30 tasks before).
 *  2. Tasks blocked in read() on a pipe: the pool grows until every one of
 *     them has started (nothing is written before), then all finish, and
 *     the workers beyond one per CPU retire after extra_idle_timeout_ns
 *     while the others stay for idle_timeout_ns.
 *  3. The same inside up_blocking_begin()/up_blocking_end(), with the
 *     monitor slowed to one look per 10 s: the hint alone grows the pool,
 *     also when each reader blocks before the next one is submitted.
 *     And the misuse answers: end without begin is UP_EINVAL on a worker,
 *     UP_OK on a plain thread.
 *  4. Tasks that spin-wait (runnable) for a task queued behind them, one
 *     per CPU: after the monitor's stall rescue one more worker runs it.
 *  5. Regions and parking: inside a region up_sleep_ns blocks the thread
 *     instead of parking the task; a task that returns with a region open
 *     leaves its worker able to park the next task's sleep.
 *  6. Tasks waiting on a condition variable for a task queued behind
 *     them, beside a task that runs on: the queued one starts while the
 *     running one still runs (it runs until told to stop).
 *
 * It needs to see thread states (/proc/self/task/TID/stat on Linux);
 * where it cannot, it exits 77. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ultrapool/pool.h>
#include <ultrapool/wait.h>

#include "check.h"
#include "hogs.h"
#include "pool_helpers.h"
#include "runnable.h"

static unsigned allowed_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 1;
    int n = CPU_COUNT(&set);
    return n > 0 ? (unsigned)n : 1;
}

/* Whether this machine shows a thread's state the way the pool reads it:
 * this thread, running, reads as R. */
static int thread_states_visible(void)
{
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks)
        return 0;
    char tid[32];
    snprintf(tid, sizeof tid, "%ld", (long)syscall(SYS_gettid));
    int r = runnable_state(dirfd(tasks), tid) == 'R';
    closedir(tasks);
    return r;
}

/* A pool of one shard with the defaults otherwise. */
static up_pool *one_shard_pool(void)
{
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = 1;
    return test_pool_create(&cfg);
}

/* ---- 1. CPU-bound work ------------------------------------------------ */

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static _Atomic uint64_t cpu_ran;

/* 100 us of this thread's CPU time, however long it waits for a CPU. */
static void cpu_task(void *arg)
{
    (void)arg;
    uint64_t end = thread_cpu_ns() + 100000;
    while (thread_cpu_ns() < end)
        test_spin(100);
    atomic_fetch_add(&cpu_ran, 1);
}

/* The same, all of it holding one mutex: beside other load the holder is
 * often preempted and the others sleep in the futex, which is no reason
 * for another worker (monitor.c: waits on the process's own locks). */
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;

static void locked_task(void *arg)
{
    pthread_mutex_lock(&shared_lock);
    cpu_task(arg);
    pthread_mutex_unlock(&shared_lock);
}

typedef struct submitter {
    up_pool *pool;
    uint64_t n;
    up_fn fn;
} submitter;

static void *submit_cpu(void *arg)
{
    submitter *s = arg;
    for (uint64_t i = 0; i < s->n; i++)
        CHECK_EQ(up_submit_wait(s->pool, s->fn, NULL), UP_OK);
    return NULL;
}

static void cpu_bound(const char *what, up_fn fn, unsigned ncpus)
{
    up_pool *p = one_shard_pool();
    uint64_t n = test_size("UP_TEST_CPU_TASKS", 3000);
    atomic_store(&cpu_ran, 0);
    submitter s = {p, n / 2, fn};
    pthread_t th[2];
    uint64_t t0 = test_now_ns();
    for (int i = 0; i < 2; i++)
        CHECK_EQ(pthread_create(&th[i], NULL, submit_cpu, &s), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    up_stats st;
    up_pool_stats(p, &st);
    printf("%s: %llu CPU-bound tasks of 100 us in %.2f s, peak %u workers (limit %u), %llu "
           "spawned\n",
           what, (unsigned long long)atomic_load(&cpu_ran), (double)(test_now_ns() - t0) / 1e9,
           st.workers_peak, ncpus + 1, (unsigned long long)st.spawned);
    CHECK_EQ(atomic_load(&cpu_ran), 2 * s.n);
    CHECK_EQ(st.executed, st.submitted);
    CHECK_LE(st.workers_peak, ncpus + 1);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
}

/* Tasks that each hold one mutex for HOLD_MS, running (a holder that
 * a busy machine keeps off its CPU looks the same to the monitor: the
 * lock changes hands less often than the monitor's patience with waits
 * on the process's own locks). Tasks still finish, one per HOLD_MS, and
 * every worker added takes one more task that waits on the same lock:
 * one extra worker for the waiters is all the contract allows. */
#define HOLD_MS 40

static void slow_holder(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&shared_lock);
    uint64_t end = test_now_ns() + HOLD_MS * 1000000ull;
    while (test_now_ns() < end)
        test_spin(1000);
    pthread_mutex_unlock(&shared_lock);
    atomic_fetch_add(&cpu_ran, 1);
}

static void slow_holders(unsigned ncpus)
{
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = 1;
    cfg.submit_help = 0; /* the workers, not the submitter, take the lock */
    up_pool *p;
    CHECK_EQ(up_pool_create(&p, &cfg), UP_OK);
    uint64_t n = test_size("UP_TEST_HOLDERS", 30);
    atomic_store(&cpu_ran, 0);
    uint64_t t0 = test_now_ns();
    for (uint64_t i = 0; i < n; i++)
        CHECK_EQ(up_submit_wait(p, slow_holder, NULL), UP_OK);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    up_stats st;
    up_pool_stats(p, &st);
    printf("one lock held %d ms by each of %llu tasks: done in %.2f s, peak %u workers (limit "
           "%u), %llu spawned\n",
           HOLD_MS, (unsigned long long)atomic_load(&cpu_ran), (double)(test_now_ns() - t0) / 1e9,
           st.workers_peak, ncpus + 1, (unsigned long long)st.spawned);
    CHECK_EQ(atomic_load(&cpu_ran), n);
    CHECK_LE(st.workers_peak, ncpus + 1);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
}

/* ---- 2 and 3. Tasks blocked in read() ---------------------------------- */

static int pipe_fd[2];
static _Atomic unsigned readers_started, readers_done;
static _Atomic int hinted_bad_end;

static void read_one(void)
{
    char c;
    ssize_t r;
    do
        r = read(pipe_fd[0], &c, 1);
    while (r < 0 && errno == EINTR);
    CHECK_EQ(r, 1);
}

static void reader(void *arg)
{
    (void)arg;
    atomic_fetch_add(&readers_started, 1);
    read_one();
    atomic_fetch_add(&readers_done, 1);
}

static void hinted_reader(void *arg)
{
    (void)arg;
    /* A worker with no region open: end is a misuse. */
    if (up_blocking_end() != UP_EINVAL)
        atomic_store(&hinted_bad_end, 1);
    CHECK_EQ(up_blocking_begin(), UP_OK);
    CHECK_EQ(up_blocking_begin(), UP_OK); /* regions nest */
    atomic_fetch_add(&readers_started, 1);
    read_one();
    CHECK_EQ(up_blocking_end(), UP_OK);
    CHECK_EQ(up_blocking_end(), UP_OK);
    atomic_fetch_add(&readers_done, 1);
}

/* slow: the submitter sleeps 1 ms between submits, so the readers it
 * started block before the next task is queued (the submit itself must
 * then start the worker for it). */
static void blocked_readers(const char *what, up_fn fn, uint64_t spawn_delay_ns, int slow,
                            unsigned ncpus)
{
    unsigned n = 64;
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = 1;
    cfg.idle_timeout_ns = 30ull * 1000000000u; /* the first workers stay */
    cfg.extra_idle_timeout_ns = 50000000ull;   /* the extra ones go after 50 ms */
    cfg.spawn_delay_ns = spawn_delay_ns;
    up_pool *p;
    CHECK_EQ(up_pool_create(&p, &cfg), UP_OK);
    CHECK_EQ(pipe(pipe_fd), 0);
    atomic_store(&readers_started, 0);
    atomic_store(&readers_done, 0);
    uint64_t t0 = test_now_ns();
    for (unsigned i = 0; i < n; i++) {
        CHECK_EQ(up_submit_wait(p, fn, NULL), UP_OK);
        if (slow)
            test_sleep_ms(1);
    }
    /* Nothing is written before every reader has started: each start needs
     * a worker of its own. */
    WAIT_UNTIL(atomic_load(&readers_started) == n, 10000);
    double grow_s = (double)(test_now_ns() - t0) / 1e9;
    up_stats st;
    up_pool_stats(p, &st);
    printf("%s: %u of %u readers started in %.3f s, %u workers\n", what,
           atomic_load(&readers_started), n, grow_s, st.workers);
    CHECK_EQ(atomic_load(&readers_started), n);
    char bytes[64];
    memset(bytes, 'x', sizeof bytes);
    CHECK_EQ(write(pipe_fd[1], bytes, n), (ssize_t)n);
    WAIT_UNTIL(atomic_load(&readers_done) == n, 10000);
    CHECK_EQ(atomic_load(&readers_done), n);

    /* The workers beyond one per CPU retire soon; the others stay. */
    WAIT_UNTIL((up_pool_stats(p, &st), st.workers <= ncpus), 10000);
    up_pool_stats(p, &st);
    printf("%s: back to %u workers (peak %u, %llu retired) %.2f s after the start\n", what,
           st.workers, st.workers_peak, (unsigned long long)st.retired,
           (double)(test_now_ns() - t0) / 1e9);
    CHECK_GE(st.workers_peak, n);
    CHECK_LE(st.workers_peak, n + ncpus); /* no overshoot past one per blocked task */
    CHECK_EQ(st.workers, ncpus);
    test_sleep_ms(200); /* well past the short timeout: the rest stay */
    up_pool_stats(p, &st);
    CHECK_EQ(st.workers, ncpus);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    close(pipe_fd[0]);
    close(pipe_fd[1]);
}

/* ---- 4. Spin-waiting tasks ------------------------------------------- */

static _Atomic int spin_flag;
static _Atomic unsigned spinners_done, spinners_gave_up;

/* Gives up after 20 s (scaled), only so that a pool that never runs the
 * setter fails the test instead of hanging it. */
static void spinner(void *arg)
{
    (void)arg;
    uint64_t give_up = test_now_ns() + 20ull * test_time_factor() * 1000000000u;
    while (!atomic_load(&spin_flag) && test_now_ns() < give_up)
        sched_yield();
    if (!atomic_load(&spin_flag))
        atomic_fetch_add(&spinners_gave_up, 1);
    atomic_fetch_add(&spinners_done, 1);
}

static void setter(void *arg)
{
    (void)arg;
    atomic_store(&spin_flag, 1);
}

static void spin_waiters(unsigned ncpus)
{
    up_pool *p = one_shard_pool();
    atomic_store(&spin_flag, 0);
    atomic_store(&spinners_done, 0);
    uint64_t t0 = test_now_ns();
    for (unsigned i = 0; i < ncpus; i++)
        CHECK_EQ(up_submit_wait(p, spinner, NULL), UP_OK);
    /* One submit wakes or starts one worker per CPU; wait until every
     * spinner holds one, so the setter queues behind them. */
    up_stats st;
    WAIT_UNTIL((up_pool_stats(p, &st), st.workers >= ncpus && st.searching == 0), 10000);
    CHECK_EQ(up_submit_wait(p, setter, NULL), UP_OK);
    WAIT_UNTIL(atomic_load(&spinners_done) == ncpus, 25000);
    double secs = (double)(test_now_ns() - t0) / 1e9;
    up_pool_stats(p, &st);
    printf("%u spin-waiting tasks released by a queued one after %.3f s (%u gave up), peak %u "
           "workers\n",
           ncpus, secs, atomic_load(&spinners_gave_up), st.workers_peak);
    CHECK_EQ(atomic_load(&spin_flag), 1);
    CHECK_EQ(atomic_load(&spinners_gave_up), 0); /* the setter ran while they still spun */
    CHECK_LE(st.workers_peak, ncpus + 1);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
}

/* ---- 5. Regions and parking ------------------------------------------- */

static void sleep_1ms(void *arg)
{
    (void)arg;
    CHECK_EQ(up_sleep_ns(1000000), UP_OK);
}

static void sleep_in_region(void *arg)
{
    (void)arg;
    CHECK_EQ(up_blocking_begin(), UP_OK);
    CHECK_EQ(up_sleep_ns(1000000), UP_OK);
    CHECK_EQ(up_blocking_end(), UP_OK);
}

static void leave_region_open(void *arg)
{
    (void)arg;
    CHECK_EQ(up_blocking_begin(), UP_OK);
}

/* Runs fn as the only task of p's only worker; returns the resumptions. */
static uint64_t resumed_after(up_pool *p, up_fn fn)
{
    up_stats st;
    up_pool_stats(p, &st);
    uint64_t before = st.tasks_resumed, done = st.executed + 1;
    CHECK_EQ(up_submit_wait(p, fn, NULL), UP_OK);
    WAIT_UNTIL((up_pool_stats(p, &st), st.executed >= done + st.tasks_resumed - before), 10000);
    up_pool_stats(p, &st);
    return st.tasks_resumed - before;
}

/* ---- 6. Waiters on a condition variable beside a running task -------- */

/* One task runs on (runnable, taking nothing from the queue), the others
 * wait on a condition variable for a task queued behind them all. The
 * waiters sleep in a futex, a wait the monitor takes to be for the
 * process's own threads only while the backlog moves; here it stands
 * still, so the queued task gets a worker within the monitor's patience,
 * not when the running task ends. */
static pthread_mutex_t cv_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int cv_released;
static _Atomic int long_stop, long_gave_up;
static _Atomic unsigned cv_started;
static _Atomic uint64_t released_at;

/* Runs until told to stop: the release must come while it runs. It gives
 * up after 30 s (scaled) only so that a pool that never runs the releaser
 * fails the test instead of hanging it. */
static void long_runner(void *arg)
{
    (void)arg;
    atomic_fetch_add(&cv_started, 1);
    uint64_t end = test_now_ns() + 30ull * test_time_factor() * 1000000000u;
    while (!atomic_load(&long_stop) && test_now_ns() < end)
        test_spin(1000);
    if (!atomic_load(&long_stop))
        atomic_store(&long_gave_up, 1);
}

static void cv_waiter(void *arg)
{
    (void)arg;
    atomic_fetch_add(&cv_started, 1);
    pthread_mutex_lock(&cv_lock);
    while (!cv_released)
        pthread_cond_wait(&cv, &cv_lock);
    pthread_mutex_unlock(&cv_lock);
}

static void cv_releaser(void *arg)
{
    (void)arg;
    atomic_store(&released_at, test_now_ns());
    pthread_mutex_lock(&cv_lock);
    cv_released = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&cv_lock);
}

static void cv_waiters(unsigned ncpus)
{
    up_pool *p = one_shard_pool();
    CHECK_EQ(up_submit_wait(p, long_runner, NULL), UP_OK);
    WAIT_UNTIL(atomic_load(&cv_started) == 1, 10000);
    for (unsigned i = 0; i < ncpus + 1; i++) {
        CHECK_EQ(up_submit_wait(p, cv_waiter, NULL), UP_OK);
        WAIT_UNTIL(atomic_load(&cv_started) == i + 2, 10000);
    }
    uint64_t t0 = test_now_ns();
    CHECK_EQ(up_submit_wait(p, cv_releaser, NULL), UP_OK);
    WAIT_UNTIL(atomic_load(&released_at) != 0, 35000);
    double secs = (double)(atomic_load(&released_at) - t0) / 1e9;
    atomic_store(&long_stop, 1);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    printf("%u tasks waiting on a condition variable beside a running one: the queued task "
           "that releases them started after %.3f s, %s\n",
           ncpus + 1, secs,
           atomic_load(&long_gave_up) ? "after the running one gave up" : "while that one ran");
    CHECK_NE(atomic_load(&released_at), 0);
    CHECK_EQ(atomic_load(&long_gave_up), 0); /* not when the running task ended */
    CHECK_EQ(up_pool_destroy(p), UP_OK);
}

static int regions_and_parking(void)
{
    /* One task at a time in a queue far from full: every task runs on the
     * one worker, none on the submitter. */
    up_pool *p = test_one_worker_pool(0, NULL, NULL);
    if (resumed_after(p, sleep_1ms) == 0) {
        CHECK_EQ(up_pool_destroy(p), UP_OK);
        return 0; /* tasks cannot park here (no task stacks) */
    }
    CHECK_EQ(resumed_after(p, sleep_in_region), 0);
    CHECK_EQ(resumed_after(p, leave_region_open), 0);
    CHECK_EQ(resumed_after(p, sleep_1ms), 1);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    printf("inside a region a sleep blocks its thread; a region left open is closed at the "
           "task's end\n");
    return 1;
}

int main(void)
{
    if (!thread_states_visible()) {
        printf("thread states are not visible (/proc/self/task/TID/stat): skipped\n");
        return TEST_SKIP;
    }
    unsigned ncpus = allowed_cpus();
    cpu_bound("quiet", cpu_task, ncpus);
    cpu_bound("quiet, one lock", locked_task, ncpus);
    slow_holders(ncpus);
    test_hogs hogs;
    test_hogs_start(&hogs, ncpus);
    cpu_bound("beside one busy process per CPU", cpu_task, ncpus);
    cpu_bound("beside one busy process per CPU, one lock", locked_task, ncpus);
    test_hogs_stop(&hogs);

    blocked_readers("read() on a pipe", reader, 1000000ull, 0, ncpus);
    blocked_readers("read() in a blocking region, monitor every 10 s", hinted_reader,
                    10ull * 1000000000u, 0, ncpus);
    blocked_readers("the same, submitted 1 ms apart", hinted_reader, 10ull * 1000000000u, 1, ncpus);
    CHECK_EQ(atomic_load(&hinted_bad_end), 0);
    spin_waiters(ncpus);
    cv_waiters(ncpus);
    if (!regions_and_parking())
        printf("tasks cannot park on this machine: the region and parking checks were skipped\n");

    /* Outside a worker both calls do nothing. */
    CHECK_EQ(up_blocking_end(), UP_OK);
    CHECK_EQ(up_blocking_begin(), UP_OK);
    CHECK_EQ(up_blocking_end(), UP_OK);
    return 0;
}
