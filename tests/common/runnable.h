/* A sampler of the threads the kernel runs: about every millisecond it counts
 * the process's threads in state R (running, or ready for a CPU) in
 * /proc/self/task/<tid>/stat, leaving itself out, and keeps each sample
 * with its time, so a test can look at any window afterwards. The period
 * varies between 0.5 and 1.5 ms: threads that sleep a whole millisecond
 * (a monitor, a polling loop) wake at the same timer tick as a sampler of
 * exactly 1 ms and would be caught runnable at every sample. With
 * UP_TEST_RUNNABLE_SHOW=N, every sample of N or more runnable threads is
 * printed on stderr with their ids, to see who they are. Linux only:
 * runnable_start() returns 0 where the states cannot be read, and the test
 * then exits 77. Test code, header-only. */
#ifndef UP_TEST_RUNNABLE_H
#define UP_TEST_RUNNABLE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif
#include <time.h>
#include <unistd.h>

#define RUNNABLE_MAX_SAMPLES 100000

typedef struct runnable_sample {
    uint64_t at_ns; /* CLOCK_MONOTONIC */
    int count;
} runnable_sample;

typedef struct runnable_sampler {
    pthread_t th;
    atomic_int stop;
    DIR *tasks;
    runnable_sample *samples;
    _Atomic unsigned n;
    _Atomic long tid; /* the sampling thread's, once it runs */
} runnable_sampler;

static inline uint64_t runnable_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The state letter of thread tid, or 0 when it is gone. */
static inline char runnable_state(int dfd, const char *tid)
{
    char path[300], buf[512];
    snprintf(path, sizeof path, "%.280s/stat", tid);
    int fd = openat(dfd, path, O_RDONLY);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* the name may hold spaces */
    return p && p[1] == ' ' ? p[2] : 0;
}

#if defined(__linux__)
static inline void *runnable_main(void *arg)
{
    runnable_sampler *s = arg;
    char self[32];
    atomic_store(&s->tid, (long)syscall(SYS_gettid));
    snprintf(self, sizeof self, "%ld", atomic_load(&s->tid));
    int dfd = dirfd(s->tasks);
    uint64_t seed = runnable_now_ns();
    const char *show_env = getenv("UP_TEST_RUNNABLE_SHOW");
    int show = show_env ? atoi(show_env) : 0;
    char who[1024];
    while (!atomic_load(&s->stop)) {
        rewinddir(s->tasks);
        int count = 0;
        size_t wlen = 0;
        struct dirent *e;
        while ((e = readdir(s->tasks)) != NULL) {
            if (e->d_name[0] < '0' || e->d_name[0] > '9' || !strcmp(e->d_name, self))
                continue;
            if (runnable_state(dfd, e->d_name) != 'R')
                continue;
            count++;
            if (show && wlen < sizeof who - 64) {
                char path[300], name[32] = "";
                snprintf(path, sizeof path, "%.280s/comm", e->d_name);
                int fd = openat(dfd, path, O_RDONLY);
                ssize_t n = fd >= 0 ? read(fd, name, sizeof name - 1) : 0;
                if (fd >= 0)
                    close(fd);
                name[n > 0 ? n - 1 : 0] = '\0'; /* without the newline */
                wlen += (size_t)snprintf(who + wlen, sizeof who - wlen, " %s/%s", e->d_name, name);
            }
        }
        if (show && count >= show)
            fprintf(stderr, "runnable %d:%.*s\n", count, (int)wlen, who);
        unsigned i = atomic_load(&s->n);
        if (i < RUNNABLE_MAX_SAMPLES) {
            s->samples[i] = (runnable_sample){runnable_now_ns(), count};
            atomic_store(&s->n, i + 1);
        }
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        struct timespec ts = {0, 500000 + (long)((seed >> 33) % 1000000)};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

#endif

/* 1 when sampling started; 0 where thread states are not visible (every
 * system but Linux). */
static inline int runnable_start(runnable_sampler *s)
{
#if !defined(__linux__)
    memset(s, 0, sizeof *s);
    return 0;
#else
    memset(s, 0, sizeof *s);
    char self[64];
    snprintf(self, sizeof self, "/proc/self/task/%ld", (long)syscall(SYS_gettid));
    s->tasks = opendir("/proc/self/task");
    if (!s->tasks || access(self, R_OK) != 0)
        return 0;
    s->samples = malloc(RUNNABLE_MAX_SAMPLES * sizeof *s->samples);
    if (s->samples && pthread_create(&s->th, NULL, runnable_main, s) == 0)
        return 1;
    free(s->samples);
    s->samples = NULL;
    return 0;
#endif
}

static inline void runnable_stop(runnable_sampler *s)
{
    atomic_store(&s->stop, 1);
    pthread_join(s->th, NULL);
    closedir(s->tasks);
    free(s->samples);
    s->samples = NULL;
}

/* The CPU time the sampler itself has used, in ns (0 where the system
 * cannot say): a program that measures its own CPU time takes it out. */
static inline uint64_t runnable_self_cpu_ns(const runnable_sampler *s)
{
#if defined(__linux__)
    clockid_t cid;
    struct timespec ts;
    if (!s->samples || pthread_getcpuclockid(s->th, &cid) != 0 || clock_gettime(cid, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#else
    (void)s;
    return 0;
#endif
}

/* Each thread's time on a CPU, for a window's question "which threads
 * used a CPU", which on a loaded machine the state letters cannot answer:
 * a thread woken for a few microseconds then waits in the run queue for
 * milliseconds, in state R all along, using nothing. Linux's
 * /proc/self/task/TID/schedstat gives it in ns (first field). */
#define RUNNABLE_MAX_THREADS 512

typedef struct runnable_cpu {
    unsigned n;
    long tid[RUNNABLE_MAX_THREADS];
    uint64_t ns[RUNNABLE_MAX_THREADS];
} runnable_cpu;

/* 1 when every thread's time was read; 0 where it cannot be (no
 * schedstat, or too many threads). */
static inline int runnable_cpu_snapshot(runnable_cpu *c)
{
    c->n = 0;
#if defined(__linux__)
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 0;
    struct dirent *e;
    int ok = 1;
    while ((e = readdir(d)) != NULL && ok) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300], buf[128];
        snprintf(path, sizeof path, "%.280s/schedstat", e->d_name);
        int fd = openat(dirfd(d), path, O_RDONLY);
        ssize_t len = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0)
            close(fd);
        if (len <= 0) {
            ok = access("/proc/self/schedstat", R_OK) == 0; /* else: a thread that just ended */
            continue;
        }
        buf[len] = 0;
        if (c->n == RUNNABLE_MAX_THREADS)
            ok = 0;
        else {
            c->tid[c->n] = atol(e->d_name);
            c->ns[c->n++] = strtoull(buf, NULL, 10);
        }
    }
    closedir(d);
    return ok && c->n > 0;
#else
    return 0;
#endif
}

/* How many threads but the sampler s used more than min_ns of CPU between
 * snapshots a and b (a thread absent from a counts from 0: it started in
 * between). */
static inline unsigned runnable_cpu_users(const runnable_sampler *s, const runnable_cpu *a,
                                          const runnable_cpu *b, uint64_t min_ns)
{
    unsigned users = 0;
    long sampler = atomic_load(&s->tid);
    for (unsigned i = 0; i < b->n; i++) {
        if (b->tid[i] == sampler)
            continue;
        uint64_t before = 0;
        for (unsigned j = 0; j < a->n; j++)
            if (a->tid[j] == b->tid[i])
                before = a->ns[j];
        if (b->ns[i] - before > min_ns)
            users++;
    }
    return users;
}

/* The highest count in [from, to), and how many samples fell there.
 * sustained: the highest count held by two samples in a row (about a
 * millisecond or more), which leaves out threads caught in a wake-up of a
 * few microseconds (a monitor's look, a waiter checking its condition);
 * 0: the highest single sample. */
static inline int runnable_peak(const runnable_sampler *s, uint64_t from, uint64_t to,
                                int sustained, unsigned *nsamples)
{
    int peak = 0, prev = -1;
    unsigned k = 0, n = atomic_load(&s->n);
    for (unsigned i = 0; i < n; i++) {
        if (s->samples[i].at_ns < from || s->samples[i].at_ns >= to)
            continue;
        k++;
        int c = s->samples[i].count;
        int v = !sustained ? c : prev < 0 ? 0 : c < prev ? c : prev;
        if (v > peak)
            peak = v;
        prev = c;
    }
    if (nsamples)
        *nsamples = k;
    return peak;
}

#endif
