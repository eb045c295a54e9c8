/* massive --mode pthread: one detached thread per waiting task, on a
 * small stack, blocked on a condition variable until the release
 * broadcasts. Launching stops at the first pthread_create failure; the
 * reason names the kernel limits that apply, since that failure is the
 * answer to "how many fit". The ticker is a thread of its own. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "massive.h"

static massive_run *the_run;

/* The event every waiting thread blocks on: released is guarded by lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int released;

static void *waiter(void *arg)
{
    uintptr_t i = (uintptr_t)arg;
    bench_done_add(&the_run->started);
    pthread_mutex_lock(&lock);
    while (!released)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    atomic_fetch_add_explicit(&the_run->hits[i], 1, memory_order_relaxed);
    bench_done_add(&the_run->exited);
    return NULL;
}

/* The ticker sleeps on a monotonic condition variable so that teardown
 * can stop it without waiting out a period. stop is guarded by tick_lock. */
static pthread_t ticker;
static pthread_mutex_t tick_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tick_cond;
static int stop;

static void *ticker_main(void *arg)
{
    massive_run *run = arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    pthread_mutex_lock(&tick_lock);
    while (!stop) {
        next.tv_sec += (time_t)(run->ticker_ns / 1000000000u);
        next.tv_nsec += (long)(run->ticker_ns % 1000000000u);
        if (next.tv_nsec >= 1000000000L) {
            next.tv_sec++;
            next.tv_nsec -= 1000000000L;
        }
        while (!stop && pthread_cond_timedwait(&tick_cond, &tick_lock, &next) != ETIMEDOUT) {
        }
        if (stop)
            break;
        pthread_mutex_unlock(&tick_lock);
        massive_tick(run);
        /* The next tick is a period after this one ran, as a sleeping
         * loop would do, so one late tick is counted once. */
        clock_gettime(CLOCK_MONOTONIC, &next);
        pthread_mutex_lock(&tick_lock);
    }
    pthread_mutex_unlock(&tick_lock);
    return NULL;
}

static int setup(massive_run *run, char *why, size_t why_size)
{
    pthread_condattr_t ca;
    the_run = run;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&tick_cond, &ca);
    pthread_condattr_destroy(&ca);
    massive_ticker_start(run);
    int rc = pthread_create(&ticker, NULL, ticker_main, run);
    if (rc) {
        snprintf(why, why_size, "cannot start the ticker thread: %s", strerror(rc));
        return -1;
    }
    return 0;
}

static long long read_number(const char *path)
{
    FILE *f = fopen(path, "r");
    long long v = -1;
    if (f) {
        if (fscanf(f, "%lld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

static long count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    long n = 0;
    int ch;
    if (!f)
        return -1;
    while ((ch = getc(f)) != EOF)
        n += ch == '\n';
    fclose(f);
    return n;
}

/* Threads on the whole system now: the 4th field of /proc/loadavg,
 * "running/total". */
static long system_threads(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    double l1, l5, l15;
    long running = 0, total = -1;
    if (f) {
        if (fscanf(f, "%lf %lf %lf %ld/%ld", &l1, &l5, &l15, &running, &total) != 5)
            total = -1;
        fclose(f);
    }
    return total;
}

static void explain_failure(int rc, uint64_t made, char *why, size_t why_size)
{
    struct rlimit nproc;
    char cap[32] = "unlimited";
    if (getrlimit(RLIMIT_NPROC, &nproc) == 0 && nproc.rlim_cur != RLIM_INFINITY)
        snprintf(cap, sizeof cap, "%llu", (unsigned long long)nproc.rlim_cur);
    long long pids = read_number("/sys/fs/cgroup/pids.max");
    snprintf(why, why_size,
             "pthread_create failed with %s (%s) after %" PRIu64
             " threads; kernel limits: threads-max %lld (threads on the system now %ld), "
             "vm.max_map_count %lld (maps of this process now %ld; a thread with a guard page "
             "takes two), RLIMIT_NPROC %s per user, cgroup pids.max %s",
             rc == EAGAIN   ? "EAGAIN"
             : rc == ENOMEM ? "ENOMEM"
                            : "an error",
             strerror(rc), made, read_number("/proc/sys/kernel/threads-max"), system_threads(),
             read_number("/proc/sys/vm/max_map_count"), count_lines("/proc/self/maps"), cap,
             pids >= 0 ? "set" : "max or absent");
}

static uint64_t launch(massive_run *run, char *why, size_t why_size)
{
    pthread_attr_t attr;
    pthread_t t;
    uint64_t i;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_attr_setstacksize(&attr, run->stack_bytes);
    if (rc == 0)
        rc = pthread_attr_setguardsize(&attr, run->guard_bytes);
    if (rc) {
        snprintf(why, why_size, "the stack or guard size was refused: %s", strerror(rc));
        pthread_attr_destroy(&attr);
        return 0;
    }
    for (i = 0; i < run->n; i++) {
        if ((i & 1023) == 0 && massive_memory_low(run, why, why_size))
            break;
        rc = pthread_create(&t, &attr, waiter, (void *)(uintptr_t)i);
        if (rc) {
            explain_failure(rc, i, why, why_size);
            break;
        }
        atomic_store_explicit(&run->launched, i + 1, memory_order_relaxed);
    }
    pthread_attr_destroy(&attr);
    return i;
}

static void release(massive_run *run)
{
    (void)run;
    pthread_mutex_lock(&lock);
    released = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

static void teardown(massive_run *run)
{
    (void)run;
    pthread_mutex_lock(&tick_lock);
    stop = 1;
    pthread_cond_signal(&tick_cond);
    pthread_mutex_unlock(&tick_lock);
    pthread_join(ticker, NULL);
}

/* A waiting thread costs its stack's touched pages (a few KiB), its
 * kernel stack (16 KiB on x86-64) and its task structures; the stack size
 * itself is added by the driver. */
const massive_mode massive_pthread = {"pthread", 1, 24 * 1024, setup, launch, release, teardown};
