/* The pool's micro benchmark: ns per task for an empty task and for CRC32
 * over 64 bytes, with 1, 2 and 100 submitter threads, for ultrapool, the
 * textbook mutex+condvar pool (one worker per core) and the single-thread
 * loop (the limit). Every round runs every cell once in a random order;
 * the table gives medians over rounds and
 *   efficiency = (loop ns per task / cores) / ns per task.
 *
 * Each cell first runs once, uncounted, to warm up and to size its runs:
 * the task count is chosen so one run lasts about --time seconds (fixed
 * with --tasks), long enough that the completion poll (1 ms) and thread
 * start-up are noise.
 *
 * usage: micro [--rounds R] [--time SEC | --tasks N] [--submitters 1,2,100]
 *              [--workloads empty,crc32] [--peers ultrapool,textbook]
 *              [--seed S] [--csv FILE] */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <ultrapool/pool.h>

#include "bench_stats.h"
#include "bench_util.h"
#include "crc32.h"
#include "textbook_pool.h"

enum { W_EMPTY, W_CRC32, NWORKLOADS };
static const char *workload_names[] = {"empty", "crc32-64B"};
/* ultrapool runs with its default configuration (submit_help 2: a blocked
 * submitter runs a batch of queued tasks, then its own); the two variants
 * measure that choice against running queued tasks only (1) and against
 * sleeping (0). */
enum { P_ULTRAPOOL, P_UP_QUEUED, P_UP_SLEEP, P_TEXTBOOK, P_LOOP, NPEERS };
static const char *peer_names[] = {"ultrapool", "up-help-queued", "up-help-none", "textbook",
                                   "loop"};
static const int peer_help[] = {2, 1, 0, -1, -1};

static bench_done done;
static uint32_t crc_expected;
static _Atomic int crc_wrong;

static void task_empty(void *arg)
{
    (void)arg;
    bench_done_add(&done);
}

static void task_crc(void *arg)
{
    (void)arg;
    if (up_k_crc32_64() != crc_expected)
        atomic_store(&crc_wrong, 1);
    bench_done_add(&done);
}

static void (*const task_fns[])(void *) = {task_empty, task_crc};

typedef struct submitter_arg {
    struct run *run;
    unsigned index;
} submitter_arg;

typedef struct run {
    int peer, workload;
    unsigned submitters;
    uint64_t tasks;
    up_pool *up[3];
    tb_pool *tb;
    _Atomic unsigned ready; /* submitters waiting for go */
    _Atomic int go;
} run;

static double measure_ns(run *r);

static void *submitter(void *arg)
{
    submitter_arg *sa = arg;
    run *r = sa->run;
    bench_done_claim(sa->index);
    uint64_t share = r->tasks / r->submitters;
    void (*fn)(void *) = task_fns[r->workload];
    atomic_fetch_add(&r->ready, 1);
    while (!atomic_load(&r->go))
        sched_yield();
    if (r->peer <= P_UP_SLEEP) {
        up_pool *up = r->up[r->peer];
        for (uint64_t i = 0; i < share; i++)
            if (up_submit_wait(up, fn, NULL) != UP_OK)
                abort();
    } else {
        for (uint64_t i = 0; i < share; i++)
            tb_submit(r->tb, fn, NULL);
    }
    return NULL;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static double last_cpu_use; /* CPU seconds / (wall seconds x cores) of the last run */

/* One measurement: ns per task. */
static double measure(run *r)
{
    double c0 = cpu_seconds(), w0 = (double)bench_now_ns() * 1e-9;
    double ns = measure_ns(r);
    double c1 = cpu_seconds(), w1 = (double)bench_now_ns() * 1e-9;
    last_cpu_use = (c1 - c0) / ((w1 - w0) * bench_cpus());
    return ns;
}

static double measure_ns(run *r)
{
    bench_done_reset(&done);
    if (r->peer == P_LOOP) {
        void (*fn)(void *) = task_fns[r->workload];
        uint64_t t0 = bench_now_ns();
        for (uint64_t i = 0; i < r->tasks; i++)
            fn(NULL);
        return (double)(bench_now_ns() - t0) / (double)r->tasks;
    }
    uint64_t total = r->tasks / r->submitters * r->submitters;
    pthread_t *th = malloc(r->submitters * sizeof *th);
    submitter_arg *sa = malloc(r->submitters * sizeof *sa);
    atomic_store(&r->ready, 0);
    atomic_store(&r->go, 0);
    for (unsigned i = 0; i < r->submitters; i++) {
        sa[i] = (submitter_arg){r, i};
        if (pthread_create(&th[i], NULL, submitter, &sa[i]) != 0) {
            fprintf(stderr, "micro: cannot create submitter thread %u\n", i);
            exit(1);
        }
    }
    /* The clock starts when every submitter is ready and before any may
     * submit, so a descheduled main thread cannot start it late. */
    while (atomic_load(&r->ready) < r->submitters)
        sched_yield();
    uint64_t t0 = bench_now_ns();
    atomic_store(&r->go, 1);
    uint64_t t1 = bench_done_wait(&done, total);
    for (unsigned i = 0; i < r->submitters; i++)
        pthread_join(th[i], NULL);
    free(th);
    free(sa);
    return (double)(t1 - t0) / (double)total;
}

static int lookup(const char *name, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(name, names[i]) || !strncmp(name, names[i], strlen(name)))
            return i;
    return -1;
}

/* "a,b" -> a mask over names; -1 on an unknown name. */
static int parse_names(const char *s, const char *const *names, int n)
{
    int mask = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int i = lookup(tok, names, n);
        if (i < 0) {
            fprintf(stderr, "micro: unknown name '%s'\n", tok);
            return -1;
        }
        mask |= 1 << i;
    }
    return mask;
}

static void usage(void)
{
    fprintf(stderr, "usage: micro [--rounds R] [--tasks N] [--submitters 1,2,100]\n"
                    "             [--workloads empty,crc32]\n"
                    "             [--peers ultrapool,up-help-queued,up-help-none,textbook]\n"
                    "             [--seed S] [--csv FILE]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    unsigned rounds = 5, subs[8] = {1, 2, 100};
    int nsubs = 3;
    uint64_t tasks = 0, seed = (uint64_t)bench_now_ns();
    double run_time = 0.25;
    int wmask = (1 << NWORKLOADS) - 1, pmask = (1 << NPEERS) - 1;
    const char *csv_path = NULL;
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            usage();
        if (!strcmp(a, "--rounds"))
            rounds = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--tasks"))
            tasks = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--time"))
            run_time = atof(v);
        else if (!strcmp(a, "--submitters"))
            nsubs = bench_parse_list(v, subs, 8);
        else if (!strcmp(a, "--workloads"))
            wmask = parse_names(v, workload_names, NWORKLOADS);
        else if (!strcmp(a, "--peers"))
            pmask = parse_names(v, peer_names, NPEERS);
        else if (!strcmp(a, "--seed"))
            seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--csv"))
            csv_path = v;
        else
            usage();
    }
    if (rounds == 0 || run_time <= 0 || nsubs <= 0 || wmask <= 0 || pmask < 0)
        usage();
    pmask |= 1 << P_LOOP; /* the limit is always measured */
    if (up_k_crc32_verify() != 0) {
        fprintf(stderr, "micro: the CRC32 kernel does not verify\n");
        return 1;
    }
    crc_expected = up_k_crc32_64();
    unsigned cores = bench_cpus();

    up_pool *up[3] = {NULL, NULL, NULL};
    for (int k = P_ULTRAPOOL; k <= P_UP_SLEEP; k++) {
        if (!(pmask >> k & 1))
            continue;
        up_config cfg;
        if (up_config_init(&cfg) != UP_OK)
            return 1;
        if (k != P_ULTRAPOOL)
            cfg.submit_help = peer_help[k];
        int rc = up_pool_create(&up[k], &cfg);
        if (rc != UP_OK) {
            fprintf(stderr, "micro: up_pool_create: %s (%s)\n", up_strerror(rc), up_last_error());
            return 1;
        }
    }
    tb_pool *tb = tb_pool_create(cores, 1024);

    /* The cells: (workload, peer, submitters); the loop has no submitters. */
    unsigned ncells = 0, cells[64][3];
    for (int w = 0; w < NWORKLOADS; w++)
        for (int p = 0; p < NPEERS; p++) {
            if (!(wmask >> w & 1) || !(pmask >> p & 1))
                continue;
            for (int s = 0; s < (p == P_LOOP ? 1 : nsubs); s++) {
                cells[ncells][0] = (unsigned)w;
                cells[ncells][1] = (unsigned)p;
                cells[ncells][2] = p == P_LOOP ? 1 : subs[s];
                ncells++;
            }
        }
    double *ns = calloc((size_t)ncells * rounds, sizeof *ns);
    double *use = calloc((size_t)ncells * rounds, sizeof *use);
    unsigned *order = malloc(ncells * sizeof *order);
    uint64_t cell_tasks[64];
    for (unsigned c = 0; c < ncells; c++) {
        run rr = {.peer = (int)cells[c][1],
                  .workload = (int)cells[c][0],
                  .submitters = cells[c][2],
                  .up = {up[0], up[1], up[2]},
                  .tb = tb};
        uint64_t probe = 20000;
        rr.tasks = tasks ? tasks : probe;
        fprintf(stderr, "\rwarm-up %u/%u   ", c + 1, ncells);
        double per = measure(&rr);
        cell_tasks[c] = tasks ? tasks : (uint64_t)(run_time * 1e9 / per);
        if (cell_tasks[c] < probe)
            cell_tasks[c] = probe;
    }
    if (tasks)
        printf("micro: %u cores, %u rounds, %llu tasks per run, seed %llu\n", cores, rounds,
               (unsigned long long)tasks, (unsigned long long)seed);
    else
        printf("micro: %u cores, %u rounds, runs of about %.2f s, seed %llu\n", cores, rounds,
               run_time, (unsigned long long)seed);
    for (unsigned r = 0; r < rounds; r++) {
        for (unsigned c = 0; c < ncells; c++)
            order[c] = c;
        bench_shuffle(order, ncells, &seed);
        for (unsigned k = 0; k < ncells; k++) {
            unsigned c = order[k];
            run rr = {.peer = (int)cells[c][1],
                      .workload = (int)cells[c][0],
                      .submitters = cells[c][2],
                      .tasks = cell_tasks[c],
                      .up = {up[0], up[1], up[2]},
                      .tb = tb};
            fprintf(stderr, "\rround %u/%u  %-10s %-10s S=%-3u   ", r + 1, rounds,
                    workload_names[rr.workload], peer_names[rr.peer], rr.submitters);
            ns[c * rounds + r] = measure(&rr);
            use[c * rounds + r] = last_cpu_use;
        }
    }
    fprintf(stderr, "\r%60s\r", "");
    if (atomic_load(&crc_wrong)) {
        fprintf(stderr, "micro: a CRC32 task computed a wrong value\n");
        return 1;
    }

    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    if (csv)
        fprintf(csv, "workload,peer,submitters,round,ns_per_task\n");
    double med[64], med_use[64];
    for (unsigned c = 0; c < ncells; c++) {
        double tmp[256], tmpu[256];
        unsigned n = rounds < 256 ? rounds : 256;
        for (unsigned r = 0; r < rounds; r++) {
            if (r < n) {
                tmp[r] = ns[c * rounds + r];
                tmpu[r] = use[c * rounds + r];
            }
            if (csv)
                fprintf(csv, "%s,%s,%u,%u,%.2f\n", workload_names[cells[c][0]],
                        peer_names[cells[c][1]], cells[c][2], r, ns[c * rounds + r]);
        }
        med[c] = bench_median(tmp, n);
        med_use[c] = bench_median(tmpu, n);
    }
    if (csv)
        fclose(csv);

    printf("\n| workload | submitters | peer | ns/task (median) | efficiency | CPU use | vs "
           "textbook |\n");
    printf("|---|---:|---|---:|---:|---:|---:|\n");
    for (int w = 0; w < NWORKLOADS; w++) {
        double loop = 0;
        for (unsigned c = 0; c < ncells; c++)
            if ((int)cells[c][0] == w && cells[c][1] == P_LOOP)
                loop = med[c];
        for (unsigned c = 0; c < ncells; c++) {
            if ((int)cells[c][0] != w)
                continue;
            double tbm = 0;
            for (unsigned d = 0; d < ncells; d++)
                if (cells[d][0] == cells[c][0] && cells[d][1] == P_TEXTBOOK &&
                    cells[d][2] == cells[c][2])
                    tbm = med[d];
            double eff = (loop / cores) / med[c];
            if (cells[c][1] == P_LOOP)
                printf("| %s | - | loop (1 thread) | %.1f | %.2f | %.0f%% | |\n", workload_names[w],
                       med[c], (double)1 / cores, 100 * med_use[c]);
            else if (tbm > 0 && cells[c][1] <= P_UP_SLEEP)
                printf("| %s | %u | %s | %.1f | %.2f | %.0f%% | %.2fx faster |\n",
                       workload_names[w], cells[c][2], peer_names[cells[c][1]], med[c], eff,
                       100 * med_use[c], tbm / med[c]);
            else
                printf("| %s | %u | %s | %.1f | %.2f | %.0f%% | |\n", workload_names[w],
                       cells[c][2], peer_names[cells[c][1]], med[c], eff, 100 * med_use[c]);
        }
    }
    printf("\n");
    for (int k = P_ULTRAPOOL; k <= P_UP_SLEEP; k++) {
        if (!up[k])
            continue;
        up_stats st;
        up_pool_stop_and_wait(up[k]);
        up_pool_stats(up[k], &st);
        printf("%s counters: submitted %llu executed %llu helped %llu inlined %llu steals %llu "
               "spawned %llu retired %llu parks %llu wakes %llu peak workers %u\n",
               peer_names[k], (unsigned long long)st.submitted, (unsigned long long)st.executed,
               (unsigned long long)st.helped, (unsigned long long)st.inlined,
               (unsigned long long)st.steals, (unsigned long long)st.spawned,
               (unsigned long long)st.retired, (unsigned long long)st.parks,
               (unsigned long long)st.wakes, st.workers_peak);
        if (st.executed != st.submitted) {
            fprintf(stderr, "micro: %s executed %llu of %llu tasks\n", peer_names[k],
                    (unsigned long long)st.executed, (unsigned long long)st.submitted);
            return 1;
        }
        up_pool_destroy(up[k]);
    }
    tb_pool_destroy(tb);
    free(ns);
    free(use);
    free(order);
    return 0;
}
