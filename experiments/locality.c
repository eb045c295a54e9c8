/* Where submits go and where workers run: ns per task through ultrapool
 * with the submitter's local shard (the default) against a random shard per
 * submit (the Go pool's policy), and, on the local policy, workers bound to
 * their shard or to one CPU each, a single shard over every CPU, and, with
 * --shard-cores 4,8,16, plans cut at those shard sizes (for choosing
 * shard_max_cores on a machine with big caches). Every pool is created up
 * front and sits parked while another is measured; each round runs every
 * cell once in a random order, and the table gives medians over rounds and
 * each peer's ratio to "local" (the median of the per-round ratios).
 *
 * usage: locality [--rounds R] [--time SEC] [--submitters 2,100]
 *                 [--workloads crc32,empty]
 *                 [--peers local,random,bind-shard,bind-core,one-shard]
 *                 [--shard-cores 4,8,16] [--seed S] [--csv FILE] */
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

enum { P_LOCAL, P_RANDOM, P_BIND_SHARD, P_BIND_CORE, P_ONE_SHARD, NPEERS };
static const char *const peer_names[NPEERS] = {"local", "random", "bind-shard", "bind-core",
                                               "one-shard"};
#define MAX_PEERS (NPEERS + 8) /* the named ones, then one per --shard-cores value */
static char peer_label[MAX_PEERS][24];
static unsigned peer_max_cores[MAX_PEERS];
enum { W_CRC32, W_EMPTY, NWORKLOADS };
static const char *const workload_names[NWORKLOADS] = {"crc32-64B", "empty"};

static bench_done finished;
static uint32_t crc_good;
static _Atomic int crc_bad;

static void crc_task(void *arg)
{
    (void)arg;
    if (up_k_crc32_64() != crc_good)
        atomic_store(&crc_bad, 1);
    bench_done_add(&finished);
}

static void empty_task(void *arg)
{
    (void)arg;
    bench_done_add(&finished);
}

typedef struct cell {
    int peer, workload;
    unsigned submitters;
    uint64_t per_submitter; /* tasks each submitter sends */
} cell;

typedef struct shared_run {
    up_pool *pool;
    up_fn fn;
    uint64_t per_submitter;
    _Atomic unsigned waiting;
    _Atomic int start;
} shared_run;

typedef struct submitter {
    shared_run *run;
    unsigned id;
} submitter;

static void *submit_loop(void *arg)
{
    submitter *me = arg;
    shared_run *run = me->run;
    bench_done_claim(me->id);
    atomic_fetch_add(&run->waiting, 1);
    while (!atomic_load(&run->start))
        sched_yield();
    for (uint64_t i = 0; i < run->per_submitter; i++)
        if (up_submit_wait(run->pool, run->fn, NULL) != UP_OK)
            abort();
    return NULL;
}

static double cpu_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
            (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec)) *
           1e3;
}

/* One run of a cell: wall-clock ns per task, from the moment every
 * submitter is ready until the last task has finished, and the CPU time
 * the process used meanwhile per task (*cpu). On a machine shared with
 * other work the CPU time moves less than the wall clock: time the other
 * work takes from this process is not counted. */
static double run_cell(up_pool *pool, const cell *c, double *cpu)
{
    shared_run run = {.pool = pool,
                      .fn = c->workload == W_CRC32 ? crc_task : empty_task,
                      .per_submitter = c->per_submitter};
    pthread_t *threads = malloc(c->submitters * sizeof *threads);
    submitter *subs = malloc(c->submitters * sizeof *subs);
    if (!threads || !subs)
        abort();
    bench_done_reset(&finished);
    for (unsigned i = 0; i < c->submitters; i++) {
        subs[i] = (submitter){&run, i};
        if (pthread_create(&threads[i], NULL, submit_loop, &subs[i]) != 0)
            abort();
    }
    while (atomic_load(&run.waiting) < c->submitters)
        sched_yield();
    uint64_t total = c->per_submitter * c->submitters;
    double c0 = cpu_ns();
    uint64_t t0 = bench_now_ns();
    atomic_store(&run.start, 1);
    uint64_t t1 = bench_done_wait(&finished, total);
    *cpu = (cpu_ns() - c0) / (double)total;
    for (unsigned i = 0; i < c->submitters; i++)
        pthread_join(threads[i], NULL);
    free(threads);
    free(subs);
    return (double)(t1 - t0) / (double)total;
}

static up_pool *make_pool(int peer)
{
    up_config cfg;
    if (up_config_init(&cfg) != UP_OK)
        exit(1);
    if (peer >= NPEERS)
        cfg.shard_max_cores = peer_max_cores[peer];
    cfg.shard_choice = peer == P_RANDOM ? UP_SHARD_RANDOM : UP_SHARD_LOCAL;
    cfg.bind = peer == P_BIND_SHARD  ? UP_BIND_SHARD
               : peer == P_BIND_CORE ? UP_BIND_CORE
                                     : UP_BIND_NONE;
    if (peer == P_ONE_SHARD)
        cfg.shards = 1;
    up_pool *pool;
    int rc = up_pool_create(&pool, &cfg);
    if (rc != UP_OK) {
        fprintf(stderr, "locality: %s: %s (%s)\n", peer_label[peer], up_strerror(rc),
                up_last_error());
        exit(1);
    }
    return pool;
}

/* "| median | min - max | ratio " for one peer's rounds v against the
 * local peer's rounds base: the ratio is the median of the per-round
 * ratios, so a slow stretch of the machine hits both sides of a pair. */
static void print_stats(const double *v, const double *base, unsigned rounds, int is_base,
                        int with_range)
{
    double sorted[1000], ratio[1000];
    for (unsigned r = 0; r < rounds; r++) {
        sorted[r] = v[r];
        ratio[r] = v[r] / base[r];
    }
    bench_summary st = bench_summarize(sorted, rounds);
    double rmed = bench_median(ratio, rounds);
    printf("| %.1f ", st.median);
    if (with_range)
        printf("| %.1f - %.1f ", st.min, st.max);
    if (is_base)
        printf("| ");
    else
        printf("| %.2fx %s ", rmed >= 1 ? rmed : 1 / rmed, rmed >= 1 ? "slower" : "faster");
}

static int name_mask(const char *list, const char *const *names, int n)
{
    char buf[256];
    int mask = 0;
    snprintf(buf, sizeof buf, "%s", list);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int found = -1;
        for (int i = 0; i < n && found < 0; i++)
            if (!strncmp(tok, names[i], strlen(tok)))
                found = i;
        if (found < 0) {
            fprintf(stderr, "locality: unknown name '%s'\n", tok);
            exit(2);
        }
        mask |= 1 << found;
    }
    return mask;
}

int main(int argc, char **argv)
{
    unsigned rounds = 7, subs[8] = {2, 100}, cores[8];
    int nsubs = 2, ncores = 0, wmask = 1 << W_CRC32, pmask = (1 << NPEERS) - 1;
    double seconds = 0.25;
    uint64_t seed = bench_now_ns();
    const char *csv_path = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "--rounds"))
            rounds = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--time"))
            seconds = atof(v);
        else if (!strcmp(a, "--submitters"))
            nsubs = bench_parse_list(v, subs, 8);
        else if (!strcmp(a, "--workloads"))
            wmask = name_mask(v, workload_names, NWORKLOADS);
        else if (!strcmp(a, "--peers"))
            pmask = name_mask(v, peer_names, NPEERS) | 1 << P_LOCAL;
        else if (!strcmp(a, "--shard-cores"))
            ncores = bench_parse_list(v, cores, 8);
        else if (!strcmp(a, "--seed"))
            seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--csv"))
            csv_path = v;
        else
            argc = -1;
    }
    if (argc < 0 || argc % 2 == 0 || rounds == 0 || rounds > 1000 || nsubs <= 0 || ncores < 0 ||
        seconds <= 0) {
        fprintf(stderr, "usage: locality [--rounds R] [--time SEC] [--submitters 2,100]\n"
                        "                [--workloads crc32,empty]\n"
                        "                [--peers local,random,bind-shard,bind-core,one-shard]\n"
                        "                [--shard-cores 4,8,16] [--seed S] [--csv FILE]\n");
        return 2;
    }
    if (up_k_crc32_verify() != 0) {
        fprintf(stderr, "locality: the CRC32 kernel does not verify\n");
        return 1;
    }
    crc_good = up_k_crc32_64();
    const uint64_t seed0 = seed;

    int npeers = NPEERS + ncores;
    for (int p = 0; p < npeers; p++) {
        if (p < NPEERS) {
            snprintf(peer_label[p], sizeof peer_label[p], "%s", peer_names[p]);
        } else {
            peer_max_cores[p] = cores[p - NPEERS];
            snprintf(peer_label[p], sizeof peer_label[p], "max-cores-%u", peer_max_cores[p]);
            pmask |= 1 << p;
        }
    }
    up_pool *pools[MAX_PEERS] = {0};
    for (int p = 0; p < npeers; p++)
        if (pmask >> p & 1)
            pools[p] = make_pool(p);

    cell cells[MAX_PEERS * NWORKLOADS * 8];
    unsigned ncells = 0;
    for (int w = 0; w < NWORKLOADS; w++)
        for (int s = 0; s < nsubs; s++)
            for (int p = 0; p < npeers; p++)
                if ((wmask >> w & 1) && (pmask >> p & 1))
                    cells[ncells++] = (cell){p, w, subs[s], 0};
    /* Size each cell's runs from an uncounted warm-up run. */
    for (unsigned c = 0; c < ncells; c++) {
        cells[c].per_submitter = 20000 / cells[c].submitters + 1;
        double cpu, ns = run_cell(pools[cells[c].peer], &cells[c], &cpu);
        uint64_t want = (uint64_t)(seconds * 1e9 / ns) / cells[c].submitters;
        cells[c].per_submitter = want > 200 ? want : 200;
    }
    double *ns = calloc((size_t)ncells * rounds, sizeof *ns);
    double *cpu = calloc((size_t)ncells * rounds, sizeof *cpu);
    unsigned *order = malloc(ncells * sizeof *order);
    for (unsigned r = 0; r < rounds; r++) {
        for (unsigned c = 0; c < ncells; c++)
            order[c] = c;
        bench_shuffle(order, ncells, &seed);
        for (unsigned k = 0; k < ncells; k++) {
            const cell *c = &cells[order[k]];
            fprintf(stderr, "\rround %u/%u %-10s %-10s S=%-3u ", r + 1, rounds,
                    workload_names[c->workload], peer_label[c->peer], c->submitters);
            unsigned at = order[k] * rounds + r;
            ns[at] = run_cell(pools[c->peer], c, &cpu[at]);
        }
    }
    fprintf(stderr, "\r%50s\r", "");
    if (atomic_load(&crc_bad)) {
        fprintf(stderr, "locality: a CRC32 task computed a wrong value\n");
        return 1;
    }

    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    if (csv)
        fprintf(csv, "workload,peer,submitters,round,ns_per_task,cpu_ns_per_task\n");
    printf("locality: %u CPUs, %u shards (local), %u rounds, runs of about %.2f s, seed %llu\n\n",
           bench_cpus(), up_pool_shards(pools[P_LOCAL]), rounds, seconds,
           (unsigned long long)seed0);
    printf("| workload | submitters | peer | ns/task (median) | min - max | vs local "
           "| CPU ns/task (median) | vs local (CPU) |\n");
    printf("|---|---:|---|---:|---:|---:|---:|---:|\n");
    for (unsigned c = 0; c < ncells; c++) {
        unsigned base = c; /* the local cell of the same workload and submitters */
        for (unsigned d = 0; d < ncells; d++)
            if (cells[d].peer == P_LOCAL && cells[d].workload == cells[c].workload &&
                cells[d].submitters == cells[c].submitters)
                base = d;
        if (csv)
            for (unsigned r = 0; r < rounds; r++)
                fprintf(csv, "%s,%s,%u,%u,%.2f,%.2f\n", workload_names[cells[c].workload],
                        peer_label[cells[c].peer], cells[c].submitters, r, ns[c * rounds + r],
                        cpu[c * rounds + r]);
        printf("| %s | %u | %s ", workload_names[cells[c].workload], cells[c].submitters,
               peer_label[cells[c].peer]);
        print_stats(&ns[c * rounds], &ns[base * rounds], rounds, c == base, 1);
        print_stats(&cpu[c * rounds], &cpu[base * rounds], rounds, c == base, 0);
        printf("|\n");
    }
    if (csv)
        fclose(csv);
    printf("\n");
    int bad = 0;
    for (int p = 0; p < npeers; p++) {
        if (!pools[p])
            continue;
        up_stats st;
        up_pool_stop_and_wait(pools[p]);
        up_pool_stats(pools[p], &st);
        printf("%-10s shards %u submitted %llu executed %llu helped %llu steals %llu "
               "bind_failed %llu peak workers %u\n",
               peer_label[p], st.shards, (unsigned long long)st.submitted,
               (unsigned long long)st.executed, (unsigned long long)st.helped,
               (unsigned long long)st.steals, (unsigned long long)st.bind_failed, st.workers_peak);
        bad |= st.executed != st.submitted;
        up_pool_destroy(pools[p]);
    }
    free(ns);
    free(cpu);
    free(order);
    if (bad)
        fprintf(stderr, "locality: a pool did not run every task it accepted\n");
    return bad;
}
