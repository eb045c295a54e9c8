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

/* The smallest of the limits every thread counts against, its name. */
static long long thread_limit(const char **name)
{
    long long pid_max = massive_read_number("/proc/sys/kernel/pid_max");
    long long tmax = massive_read_number("/proc/sys/kernel/threads-max"), best = -1;
    struct rlimit nproc;
    *name = "none known";
    if (pid_max > 0) {
        best = pid_max;
        *name = "kernel.pid_max";
    }
    if (tmax > 0 && (best < 0 || tmax < best)) {
        best = tmax;
        *name = "kernel.threads-max";
    }
    if (getrlimit(RLIMIT_NPROC, &nproc) == 0 && nproc.rlim_cur != RLIM_INFINITY &&
        (best < 0 || (long long)nproc.rlim_cur < best)) {
        best = (long long)nproc.rlim_cur;
        *name = "RLIMIT_NPROC";
    }
    return best;
}

/* Thread ids belong to the whole machine: kernel.pid_max and threads-max
 * bound all threads of all processes together, RLIMIT_NPROC those of one
 * user. A run that took them all would make every other process's fork
 * and pthread_create fail while it holds them, so launching stops a
 * reserve short of the smallest (the threads already running count,
 * whoever owns them). UINT64_MAX when the limits cannot be read. */
static uint64_t thread_budget(const massive_run *run, char *why, size_t why_size)
{
    const char *name;
    long long limit = thread_limit(&name);
    long now = system_threads();
    if (limit <= 0 || now < 0)
        return UINT64_MAX;
    uint64_t reserve = run->pid_reserve;
    if (reserve == UINT64_MAX)
        reserve = limit / 4 > 4096 ? (uint64_t)limit / 4 : 4096;
    uint64_t used = (uint64_t)now + reserve;
    uint64_t room = (uint64_t)limit > used ? (uint64_t)limit - used : 0;
    snprintf(why, why_size,
             "the safety cap: %" PRIu64 " threads, so that %" PRIu64
             " of the %lld thread ids of %s stay free for other processes (%ld threads on the "
             "machine before the launch; --pid-reserve sets the reserve)",
             room, reserve, limit, name, now);
    return room;
}

static void explain_failure(int rc, uint64_t made, char *why, size_t why_size)
{
    struct rlimit nproc;
    char cap[32] = "unlimited";
    if (getrlimit(RLIMIT_NPROC, &nproc) == 0 && nproc.rlim_cur != RLIM_INFINITY)
        snprintf(cap, sizeof cap, "%llu", (unsigned long long)nproc.rlim_cur);
    long long pid_max = massive_read_number("/proc/sys/kernel/pid_max");
    long long tmax = massive_read_number("/proc/sys/kernel/threads-max");
    long long maps_max = massive_read_number("/proc/sys/vm/max_map_count");
    long threads = system_threads(), maps = count_lines("/proc/self/maps");
    /* Which limit was met: the one the counts have reached. */
    const char *hit = "no limit in reach: memory or another cause";
    if (pid_max > 0 && threads >= pid_max - 64)
        hit = "kernel.pid_max";
    else if (tmax > 0 && threads >= tmax - 64)
        hit = "kernel.threads-max";
    else if (maps_max > 0 && maps >= maps_max - 4)
        hit = "vm.max_map_count";
    snprintf(why, why_size,
             "pthread_create failed with %s (%s) after %" PRIu64
             " threads, at %s; kernel.pid_max %lld and threads-max %lld (threads on the machine "
             "now %ld), vm.max_map_count %lld (maps of this process now %ld; a thread with a "
             "guard page takes two unless they merge), RLIMIT_NPROC %s per user",
             rc == EAGAIN   ? "EAGAIN"
             : rc == ENOMEM ? "ENOMEM"
                            : "an error",
             strerror(rc), made, hit, pid_max, tmax, threads, maps_max, maps, cap);
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
    uint64_t budget = thread_budget(run, why, why_size);
    for (i = 0; i < run->n; i++) {
        if (i == budget)
            break;
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
