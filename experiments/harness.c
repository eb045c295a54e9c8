#include "harness.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <zlib.h>
#include <dirent.h>
#if defined(__linux__)
#include <fcntl.h>
#include <sys/syscall.h>
#endif

#include "bench_util.h"
#include "counters.h"
#include "markers.h"
#include "workloads.h"

static bench_done done;
static const workload *current;

/* The function every peer runs per task: the workload, then the count of
 * its completion (bench_util.h: this thread's stripe, or the one shared
 * latch under --completion shared). */
static void task(void *arg)
{
    (void)arg;
    current->task();
    bench_done_add(&done);
}

unsigned harness_cores(void) { return bench_cpus(); }

/* ---- sampling the process's threads ---------------------------------- */

/* A thread that reads the number of threads of the process (Linux:
 * /proc/self/stat) every millisecond and keeps the maximum, and, less
 * often, counts the threads that are running or waiting for a CPU (state
 * R in /proc/self/task/<tid>/stat) and keeps that maximum too; -1 where
 * the system does not say. The sampler leaves itself out of the runnable
 * count: it is always running when it looks. */
typedef struct sampler {
    pthread_t th;
    atomic_int stop;
    int peak;
    int fd;
    /* The runnable sweeps: the open /proc/self/task (NULL: not available),
     * the highest count seen (-1: no sweep yet) and the number of sweeps. */
    DIR *tasks;
    int peak_runnable;
    unsigned sweeps;
} sampler;

/* The first runnable sweep follows the start by this much, the later ones
 * come at least SWEEP_PERIOD_NS apart, and at least SWEEP_STRETCH times the
 * CPU time of the last sweep apart, so that with many threads (a few
 * microseconds each) the sweeps take at most about 2% of one CPU. The CPU
 * time, not the wall time: with hundreds of runnable threads on two CPUs a
 * sweep waits for a CPU far longer than it works, and would otherwise be
 * pushed out past the end of most runs. */
enum { SWEEP_FIRST_NS = 1000000, SWEEP_PERIOD_NS = 10000000, SWEEP_STRETCH = 50 };

static int thread_count(int fd)
{
#if defined(__linux__)
    char buf[1024];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    if (!p)
        return -1;
    /* After ") " come the state (field 3) ... num_threads is field 20. */
    for (int field = 2; field < 20 && p; field++)
        p = strchr(p + 1, ' ');
    return p ? atoi(p + 1) : -1;
#else
    (void)fd;
    return -1;
#endif
}

/* The number of threads of the process in state R, except the one with id
 * self; -1 on systems without /proc/self/task. Threads that exit during the
 * sweep are skipped. Each thread's state is read at a slightly different
 * moment, so the count is a sample, not a snapshot. A sweep that sees stop
 * set ends there with the threads counted so far: the run is over, and
 * what the rest of the threads do now belongs to the teardown. */
static int runnable_count(DIR *tasks, long self, atomic_int *stop)
{
#if defined(__linux__)
    rewinddir(tasks); /* procfs lists the threads afresh from the start */
    int dfd = dirfd(tasks), count = 0;
    struct dirent *e;
    while (!atomic_load_explicit(stop, memory_order_relaxed) && (e = readdir(tasks)) != NULL) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end || tid == self)
            continue; /* ".", ".." and the sampler */
        char path[64], buf[512];
        snprintf(path, sizeof path, "%ld/stat", tid);
        int fd = openat(dfd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = 0;
        /* The state letter follows the last ')' (the name may hold one). */
        char *p = strrchr(buf, ')');
        if (p && p[1] == ' ' && p[2] == 'R')
            count++;
    }
    return count;
#else
    (void)tasks;
    (void)self;
    (void)stop;
    return -1;
#endif
}

/* This thread's CPU time, or its wall clock where the system has no
 * thread CPU clock. */
static uint64_t sweep_clock_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return bench_now_ns();
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *sample(void *arg)
{
    sampler *s = arg;
#if defined(__linux__)
    long self = (long)syscall(SYS_gettid);
#else
    long self = -1;
#endif
    uint64_t next_sweep = bench_now_ns() + SWEEP_FIRST_NS;
    while (!atomic_load(&s->stop)) {
        int n = thread_count(s->fd);
        if (n > s->peak)
            s->peak = n;
        if (s->tasks && bench_now_ns() >= next_sweep) {
            uint64_t c0 = sweep_clock_ns();
            int r = runnable_count(s->tasks, self, &s->stop);
            if (r > s->peak_runnable)
                s->peak_runnable = r;
            s->sweeps++;
            uint64_t gap = SWEEP_STRETCH * (sweep_clock_ns() - c0);
            next_sweep = bench_now_ns() + (gap > SWEEP_PERIOD_NS ? gap : SWEEP_PERIOD_NS);
        }
        bench_sleep_ns(1000000);
    }
    return NULL;
}

static void sampler_start(sampler *s)
{
    s->peak = -1;
    s->peak_runnable = -1;
    s->sweeps = 0;
    s->tasks = NULL;
    atomic_store(&s->stop, 0);
#if defined(__linux__)
    s->fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (s->fd >= 0)
        s->tasks = opendir("/proc/self/task");
#else
    s->fd = -1;
#endif
    if (s->fd < 0 || pthread_create(&s->th, NULL, sample, s) != 0) {
        if (s->fd >= 0)
            close(s->fd);
        if (s->tasks)
            closedir(s->tasks);
        s->fd = -1;
        s->tasks = NULL;
    }
}

/* Stops the sampler; returns the peak thread count, sets *runnable to the
 * peak runnable count (both -1 where unknown) and *sweeps to the number of
 * runnable sweeps taken. */
static int sampler_stop(sampler *s, int *runnable, unsigned *sweeps)
{
    *runnable = -1;
    *sweeps = 0;
    if (s->fd < 0)
        return -1;
    atomic_store(&s->stop, 1);
    pthread_join(s->th, NULL);
    int last = thread_count(s->fd);
    close(s->fd);
    if (s->tasks)
        closedir(s->tasks);
    *runnable = s->peak_runnable;
    *sweeps = s->sweeps;
    return last > s->peak ? last : s->peak;
}

/* ---- one run --------------------------------------------------------- */

/* The start gate: submitters announce themselves and sleep until the
 * main thread opens it, so waiting threads take no CPU from the one that
 * starts the clock. */
typedef struct run {
    const peer *p;
    unsigned submitters;
    uint64_t tasks;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned ready; /* (mu) */
    int go;         /* (mu) */
} run;

typedef struct submitter_arg {
    run *r;
    unsigned index;
} submitter_arg;

static void *submitter(void *arg)
{
    submitter_arg *sa = arg;
    run *r = sa->r;
    bench_done_claim(sa->index);
    uint64_t share = r->tasks / r->submitters + (sa->index < r->tasks % r->submitters);
    pthread_mutex_lock(&r->mu);
    r->ready++;
    pthread_cond_broadcast(&r->cv);
    while (!r->go)
        pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);
    for (uint64_t i = 0; i < share; i++)
        r->p->submit(task, NULL);
    return NULL;
}

typedef struct measurement {
    double ns_per_op, wall_s, cpu_use;
    int peak_threads, peak_runnable;
    unsigned runnable_sweeps;
    long nvcsw, nivcsw, maxrss_kb;
} measurement;

static double cpu_seconds(const struct rusage *ru)
{
    return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) +
           (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) * 1e-6;
}

/* Runs tasks tasks through the peer; fills m when not NULL. Returns 0, or
 * -1 when a submitter thread could not be created. */
static int measure(const peer *p, unsigned submitters, uint64_t tasks, measurement *m)
{
    bench_done_arm(&done, tasks);
    struct rusage ru0, ru1;
    sampler smp;
    if (m) {
        sampler_start(&smp);
        markers_start();
        getrusage(RUSAGE_SELF, &ru0);
    }
    uint64_t t0 = 0, t1;
    if (p->run_all) {
        p->run_all(tasks, submitters, task, &t0);
        t1 = bench_done_wait(&done, tasks);
    } else {
        run r = {.p = p, .submitters = submitters, .tasks = tasks};
        pthread_mutex_init(&r.mu, NULL);
        pthread_cond_init(&r.cv, NULL);
        pthread_t *th = calloc(submitters, sizeof *th);
        submitter_arg *sa = calloc(submitters, sizeof *sa);
        if (!th || !sa)
            return -1;
        for (unsigned i = 0; i < submitters; i++) {
            sa[i] = (submitter_arg){&r, i};
            if (pthread_create(&th[i], NULL, submitter, &sa[i]) != 0) {
                fprintf(stderr, "cannot create submitter thread %u\n", i);
                exit(1);
            }
        }
        /* The clock starts when every submitter is ready and before any may
         * submit, so a descheduled main thread cannot start it late. */
        pthread_mutex_lock(&r.mu);
        while (r.ready < submitters)
            pthread_cond_wait(&r.cv, &r.mu);
        t0 = bench_now_ns();
        r.go = 1;
        pthread_cond_broadcast(&r.cv);
        pthread_mutex_unlock(&r.mu);
        t1 = bench_done_wait(&done, tasks);
        for (unsigned i = 0; i < submitters; i++)
            pthread_join(th[i], NULL);
        pthread_cond_destroy(&r.cv);
        pthread_mutex_destroy(&r.mu);
        free(th);
        free(sa);
    }
    if (m) {
        getrusage(RUSAGE_SELF, &ru1);
        markers_stop();
        m->peak_threads = sampler_stop(&smp, &m->peak_runnable, &m->runnable_sweeps);
        m->wall_s = (double)(t1 - t0) * 1e-9;
        m->ns_per_op = (double)(t1 - t0) / (double)tasks;
        m->cpu_use = (cpu_seconds(&ru1) - cpu_seconds(&ru0)) / (m->wall_s * harness_cores());
        m->nvcsw = ru1.ru_nvcsw - ru0.ru_nvcsw;
        m->nivcsw = ru1.ru_nivcsw - ru0.ru_nivcsw;
        m->maxrss_kb = ru1.ru_maxrss;
    }
    return 0;
}

/* ---- output ---------------------------------------------------------- */

static void json_str(const char *key, const char *v, int comma)
{
    printf("\"%s\":\"", key);
    for (; *v; v++)
        if (*v == '"' || *v == '\\')
            printf("\\%c", *v);
        else if ((unsigned char)*v >= 0x20)
            putchar(*v);
    printf("\"%s", comma ? "," : "");
}

static void json_counters(const char *key, const char *const *names, int n, const counter_values *c)
{
    printf("\"%s\":{", key);
    for (int i = 0; i < n; i++) {
        if (c->have[i])
            printf("\"%s\":%lld", names[i], c->v[i]);
        else
            printf("\"%s\":null", names[i]);
        printf("%s", i + 1 < n ? "," : "");
    }
    printf("},");
}

static const peer *find_peer(const peer *const *peers, unsigned n, const char *name)
{
    for (unsigned i = 0; i < n; i++)
        if (!strcmp(peers[i]->name, name))
            return peers[i];
    return NULL;
}

static void usage(const char *runner)
{
    fprintf(stderr,
            "usage: %s --list\n"
            "       %s --peer P --workload W --submitters S (--tasks N | --calibrate SEC)\n"
            "          [--completion striped|shared]\n"
            "  --completion  how finished tasks are counted: striped, a counter per thread\n"
            "                (the default), or shared, one latch every task decrements\n",
            runner, runner);
    exit(2);
}

static void list(const char *runner, const peer *const *peers, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        printf("PEER {");
        json_str("runner", runner, 1);
        json_str("peer", peers[i]->name, 1);
        json_str("about", peers[i]->about, 1);
        json_str("version", peers[i]->version ? peers[i]->version() : "", 1);
        printf("\"s_independent\":%d}\n", peers[i]->s_independent);
    }
    printf("RUNNER {");
    json_str("runner", runner, 1);
    json_str("papi", counters_papi_version(), 1);
    json_str("openssl", OpenSSL_version(OPENSSL_VERSION), 1);
    json_str("zlib", zlibVersion(), 1);
    printf("\"likwid\":%d,\"cores\":%u}\n", markers_built(), harness_cores());
}

/* Finds a task count for runs of about seconds. Probes grow fourfold
 * until one lasts a third of the target and took at least 2.5 times as
 * long as the probe before it: the time then grows with the tasks, and the
 * fixed cost of a run (starting 100 submitters on a busy machine can take
 * tens of milliseconds) no longer dominates the estimate. */
static uint64_t calibrate(const peer *p, unsigned submitters, double seconds, double *probe_ns)
{
    uint64_t n = 1;
    double prev = 0;
    measurement m;
    for (;;) {
        if (measure(p, submitters, n, &m) != 0)
            return 0;
        if ((m.wall_s >= seconds / 3 && prev > 0 && m.wall_s >= 2.5 * prev) ||
            n >= (UINT64_C(1) << 32))
            break;
        prev = m.wall_s;
        n *= 4;
    }
    *probe_ns = m.ns_per_op;
    double want = seconds * 1e9 / m.ns_per_op;
    return want < 1 ? 1 : (uint64_t)want;
}

int harness_main(int argc, char **argv, const char *runner, const peer *const *peers,
                 unsigned npeers)
{
    const char *peer_name = NULL, *workload_name = NULL;
    unsigned submitters = 0;
    uint64_t tasks = 0;
    double calibrate_s = 0;
    int do_list = 0;
    bench_completion completion = BENCH_COMPLETION_STRIPED;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--list")) {
            do_list = 1;
            continue;
        }
        if (!v)
            usage(runner);
        if (!strcmp(a, "--peer"))
            peer_name = v;
        else if (!strcmp(a, "--workload"))
            workload_name = v;
        else if (!strcmp(a, "--submitters"))
            submitters = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--tasks"))
            tasks = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--calibrate"))
            calibrate_s = atof(v);
        else if (!strcmp(a, "--completion")) {
            if (bench_completion_parse(v, &completion) != 0) {
                fprintf(stderr, "%s: --completion must be striped or shared, not '%s'\n", runner,
                        v);
                exit(2);
            }
        } else
            usage(runner);
        i++;
    }
    counters_init();
    if (do_list) {
        list(runner, peers, npeers);
        return 0;
    }
    const peer *p = peer_name ? find_peer(peers, npeers, peer_name) : NULL;
    current = workload_name ? workload_find(workload_name) : NULL;
    if (!p || !current || submitters == 0 || (tasks == 0 && calibrate_s <= 0)) {
        if (peer_name && !p)
            fprintf(stderr, "%s: unknown peer '%s'\n", runner, peer_name);
        if (workload_name && !current)
            fprintf(stderr, "%s: unknown workload '%s'\n", runner, workload_name);
        usage(runner);
    }
    if (workloads_verify() != 0)
        return 1;
    bench_done_set_mode(&done, completion); /* before the peer runs a task */
    markers_init();
    counters_hw_start(); /* before the peer's threads exist, so they inherit it */
    unsigned cores = harness_cores();
    if (p->init(submitters, cores) != 0) {
        fprintf(stderr, "%s: peer %s could not start\n", runner, p->name);
        return 1;
    }
    if (calibrate_s > 0) {
        double probe_ns = 0;
        uint64_t n = calibrate(p, submitters, calibrate_s, &probe_ns);
        p->fini();
        printf("CALIBRATE {\"tasks\":%llu,\"probe_ns_per_op\":%.2f}\n", (unsigned long long)n,
               probe_ns);
        return n ? 0 : 1;
    }

    uint64_t warmup = tasks / 10 ? tasks / 10 : 1;
    measurement m = {0};
    counter_values hw, sde;
    int rc = measure(p, submitters, warmup, NULL);
    workload_reset();
    if (p->settle)
        p->settle();
    if (p->exports_sde)
        counters_sde_start();
    rc = rc ? rc : measure(p, submitters, tasks, &m);
    const char *why = "ok";
    if (rc == 0 && workload_check(current, tasks, &why) != 0)
        rc = 1;
    /* Every task counted exactly once: in the shared mode the latch is down
     * to zero, not below (a task counted twice) and not above (the wait
     * would not have ended). */
    uint64_t counted = bench_done_sum(&done);
    if (rc == 0 && counted != tasks) {
        why = completion == BENCH_COMPLETION_SHARED
                  ? "the shared completion latch did not end at exactly zero"
                  : "the completion count does not equal the number of tasks";
        rc = 1;
    }
    int workers = -1;
    const char *workers_source = "sampled";
    if (p->workers_peak) {
        workers = (int)p->workers_peak();
        workers_source = "peer";
    } else if (m.peak_threads > 0) {
        /* Threads beyond the main thread, the sampler and the submitters. */
        workers = m.peak_threads - 2 - (p->run_all ? 0 : (int)submitters);
        if (p->run_all)
            workers++; /* the main thread is one of the team */
    }
    p->fini();
    counters_sde_stop(&sde); /* after fini: every accepted task has run and been counted */
    counters_hw_stop(&hw);
    markers_close();
    /* The pool's own books must balance: what it accepted during the run is
     * what the run submitted, and all of it ran. A parked task's resumption
     * is queued and run like a task, so each resumption counts once more in
     * both (tasks_resumed, the last SDE counter, says how many). */
    long long resumed = sde.have[COUNTERS_SDE - 1] ? sde.v[COUNTERS_SDE - 1] : 0;
    if (rc == 0 && sde.have[0] && sde.have[1] &&
        (sde.v[0] != (long long)tasks + resumed || sde.v[1] != (long long)tasks + resumed)) {
        why = "the SDE counters do not match the tasks of the run";
        rc = 1;
    }

    printf("RESULT {");
    json_str("runner", runner, 1);
    json_str("peer", p->name, 1);
    json_str("workload", current->name, 1);
    json_str("completion", bench_completion_name(completion), 1);
    printf("\"submitters\":%u,\"cores\":%u,\"tasks\":%llu,\"warmup_tasks\":%llu,", submitters,
           cores, (unsigned long long)tasks, (unsigned long long)warmup);
    printf("\"ns_per_op\":%.3f,\"wall_s\":%.6f,\"cpu_use\":%.4f,", m.ns_per_op, m.wall_s,
           m.cpu_use);
    printf("\"peak_threads\":%d,\"peak_runnable\":%d,\"runnable_sweeps\":%u,"
           "\"peak_workers\":%d,",
           m.peak_threads, m.peak_runnable, m.runnable_sweeps, workers);
    json_str("workers_source", workers_source, 1);
    printf("\"nvcsw\":%ld,\"nivcsw\":%ld,\"maxrss_kb\":%ld,", m.nvcsw, m.nivcsw, m.maxrss_kb);
    json_counters("papi", counters_hw_names, COUNTERS_HW, &hw);
    json_str("papi_note", counters_hw_note(), 1);
    json_str("papi_scope", "whole process: peer start, warm-up, run, teardown", 1);
    json_counters("sde", counters_sde_names, COUNTERS_SDE, &sde);
    json_str("check", why, 0);
    printf("}\n");
    fflush(stdout);
    return rc;
}
