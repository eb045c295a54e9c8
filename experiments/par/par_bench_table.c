/* Experiment 1 and 2: time and speedup over sequential for every kernel
 * and runtime at each thread count, and fib's ns per task
 * (time x threads / tasks; every call of fib is a task).
 *
 * A cell is (kernel, runtime, threads); the sequential cell runs once per
 * round at one thread and is the baseline of every speedup. Every round
 * runs every cell once, in a new random order, each in a fresh child
 * process that warms up once and then times one run. Tables give the
 * median over rounds. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_stats.h"
#include "par_bench.h"

typedef struct kdef {
    const char *name;
    const char *args[8];  /* the sizes */
    const char *quick[8]; /* the sizes with --quick */
    const char *label;    /* the sizes, for the table */
    const char *quick_label;
} kdef;

static const kdef kernels[] = {
    {"fib", {"--n", "30"}, {"--n", "20"}, "n=30", "n=20"},
    {"nqueens",
     {"--n", "13", "--cutoff", "5"},
     {"--n", "10", "--cutoff", "4"},
     "n=13, tasks on rows 1-5",
     "n=10, tasks on rows 1-4"},
    {"msort",
     {"--n", "2000000", "--cutoff", "128"},
     {"--n", "200000", "--cutoff", "128"},
     "2M int32, runs of 128",
     "200k int32, runs of 128"},
    {"sparselu",
     {"--n", "80", "--block", "16"},
     {"--n", "10", "--block", "16"},
     "80x80 blocks of 16x16",
     "10x10 blocks of 16x16"},
    {"strassen",
     {"--n", "1024", "--cutoff", "128"},
     {"--n", "256", "--cutoff", "128"},
     "1024x1024, tasks down to 128",
     "256x256, tasks down to 128"},
    {"jacobi",
     {"--n", "2048", "--block", "128", "--steps", "40"},
     {"--n", "256", "--block", "32", "--steps", "10"},
     "2048^2, blocks 128^2, 40 sweeps",
     "256^2, blocks 32^2, 10 sweeps"},
};
#define NKERNELS (int)(sizeof kernels / sizeof *kernels)

typedef struct cell {
    int kernel;
    const char *runtime;
    unsigned threads;
    double ns[64];
    int n, failed, small_team;
    double tasks;
    double median;
    bench_summary spread;
} cell;

static double cell_ms(const cell *c) { return c->median / 1e6; }

static cell *find(cell *cells, int ncells, int k, const char *rt, unsigned threads)
{
    for (int i = 0; i < ncells; i++)
        if (cells[i].kernel == k && strcmp(cells[i].runtime, rt) == 0 &&
            (strcmp(rt, "seq") == 0 || cells[i].threads == threads))
            return &cells[i];
    return NULL;
}

static void run_cell(const pb_opts *o, cell *c, int round)
{
    const kdef *k = &kernels[c->kernel];
    char threads[16], seed[32];
    snprintf(threads, sizeof threads, "%u", c->threads);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)(o->seed + (uint64_t)round));
    const char *args[24] = {"--kernel", k->name,    "--threads", threads,  "--reps",
                            "1",        "--warmup", "1",         "--seed", seed};
    int n = 10;
    const char *const *sizes = o->quick ? k->quick : k->args;
    for (int i = 0; sizes[i]; i++)
        args[n++] = sizes[i];
    args[n] = NULL;
    pb_output out = pb_run_child(o, c->runtime, args);
    double ns = pb_field(&out, "run ", "ns");
    double verified = pb_field(&out, "run ", "verified");
    double team = pb_field(&out, "run ", "team");
    c->tasks = pb_field(&out, "run ", "tasks");
    if (!out.ok || isnan(ns) || verified != 1)
        c->failed++;
    else if (c->n < 64)
        c->ns[c->n++] = ns;
    if (team < c->threads)
        c->small_team++;
    pb_output_free(&out);
}

int pb_table(const pb_opts *o)
{
    int max = NKERNELS * (1 + o->nruntimes * o->nthreads);
    cell *cells = calloc((size_t)max, sizeof *cells);
    int *order = calloc((size_t)max, sizeof *order);
    int ncells = 0;
    for (int k = 0; k < NKERNELS; k++) {
        cells[ncells++] = (cell){.kernel = k, .runtime = "seq", .threads = 1};
        for (int r = 0; r < o->nruntimes; r++)
            for (int t = 0; t < o->nthreads; t++)
                cells[ncells++] =
                    (cell){.kernel = k, .runtime = o->runtimes[r], .threads = o->threads[t]};
    }
    uint64_t rng = o->seed;
    for (int round = 0; round < o->rounds; round++) {
        for (int i = 0; i < ncells; i++)
            order[i] = i;
        pb_shuffle(order, ncells, &rng);
        pb_round(o, "table", round, o->rounds, ncells);
        for (int i = 0; i < ncells; i++)
            run_cell(o, &cells[order[i]], round);
    }
    FILE *csv = pb_open(o, "table.csv"), *md = pb_open(o, "table.md");
    if (!csv || !md)
        return 1;
    fprintf(csv, "kernel,size,runtime,threads,round,ns\n");
    for (int i = 0; i < ncells; i++)
        for (int r = 0; r < cells[i].n; r++)
            fprintf(csv, "%s,\"%s\",%s,%u,%d,%.0f\n", kernels[cells[i].kernel].name,
                    o->quick ? kernels[cells[i].kernel].quick_label
                             : kernels[cells[i].kernel].label,
                    cells[i].runtime, cells[i].threads, r, cells[i].ns[r]);
    fclose(csv);
    /* After the CSV, which keeps the rounds' order: this sorts ns[]. */
    for (int i = 0; i < ncells; i++) {
        cells[i].spread = bench_summarize(cells[i].ns, (size_t)cells[i].n);
        cells[i].median = cells[i].spread.median;
    }

    fprintf(md,
            "Median of %d rounds; ms (speedup over sequential). Last column: the better "
            "OpenMP runtime's time / ultrapool's (> 1: ultrapool faster).\n\n",
            o->rounds);
    pb_md_runtime_header(md, o, "| kernel | size | threads | sequential |", "|---|---|---:|---:|");
    int problems = 0;
    for (int k = 0; k < NKERNELS; k++) {
        const cell *seq = find(cells, ncells, k, "seq", 1);
        for (int t = 0; t < o->nthreads; t++) {
            unsigned th = o->threads[t];
            fprintf(md, "| %s | %s | %u | %.1f |", kernels[k].name,
                    o->quick ? kernels[k].quick_label : kernels[k].label, th, cell_ms(seq));
            double median[PB_MAX_RUNTIMES];
            int flagged[PB_MAX_RUNTIMES];
            for (int r = 0; r < o->nruntimes; r++) {
                const cell *c = find(cells, ncells, k, o->runtimes[r], th);
                median[r] = c->median;
                flagged[r] = c->failed + c->small_team;
            }
            problems += pb_md_runtime_cells(md, o, median, flagged, seq->median);
        }
    }
    if (problems)
        fprintf(md, "\n\\* a run of this cell failed its check, or its team had fewer threads "
                    "than asked (see raw.log).\n");
    fclose(md);

    /* The spread of every cell over the rounds. */
    FILE *sp = pb_open(o, "table_spread.md");
    if (!sp)
        return 1;
    fprintf(sp, "| kernel | runtime | threads | min ms | median ms | max ms | rounds |\n"
                "|---|---|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < ncells; i++) {
        const cell *c = &cells[i];
        fprintf(sp, "| %s | %s | %u | %.1f | %.1f | %.1f | %d |\n", kernels[c->kernel].name,
                c->runtime, c->threads, c->spread.min / 1e6, cell_ms(c), c->spread.max / 1e6, c->n);
    }
    fclose(sp);

    /* Fib: ns per task = time x threads / tasks. */
    FILE *fib = pb_open(o, "fib.md");
    if (!fib)
        return 1;
    const cell *fseq = find(cells, ncells, 0, "seq", 1);
    fprintf(fib,
            "fib(%s) with every call a task (%.0f tasks); ns per task = time x threads / "
            "tasks, median of %d rounds. Sequential: ns per call.\n\n",
            o->quick ? "20" : "30", fseq->tasks, o->rounds);
    fprintf(fib, "| runtime | threads | ns per task |\n|---|---:|---:|\n");
    fprintf(fib, "| sequential (no tasks) | 1 | %.2f |\n", fseq->median / fseq->tasks);
    for (int r = 0; r < o->nruntimes; r++)
        for (int t = 0; t < o->nthreads; t++) {
            const cell *c = find(cells, ncells, 0, o->runtimes[r], o->threads[t]);
            fprintf(fib, "| %s | %u | %.1f |\n", c->runtime, c->threads,
                    c->median * c->threads / c->tasks);
        }
    fclose(fib);

    /* The targets at two threads. */
    unsigned tt = pb_target_threads(o);
    const cell *upfib = find(cells, ncells, 0, "ultrapool", tt);
    const cell *upnq = find(cells, ncells, 1, "ultrapool", tt);
    const cell *seqnq = find(cells, ncells, 1, "seq", 1);
    FILE *s = o->summary;
    if (upfib) {
        double ns = upfib->median * tt / upfib->tasks;
        fprintf(s,
                "- fib, every call a task, %u threads: **%.1f ns per task** (target <= 20: %s)\n",
                tt, ns, ns <= 20 ? "met" : "NOT met");
    }
    if (upnq) {
        double sp = seqnq->median / upnq->median;
        fprintf(s,
                "- nqueens(%s), %u threads: **%.2fx** faster than sequential (target >= 1.8: %s)\n",
                o->quick ? "10" : "13", tt, sp, sp >= 1.8 ? "met" : "NOT met");
    }
    for (int k = 0; k < NKERNELS; k++) {
        const cell *up = find(cells, ncells, k, "ultrapool", tt);
        double best = INFINITY;
        const char *who = "";
        for (int r = 0; r < o->nruntimes; r++) {
            const cell *c = find(cells, ncells, k, o->runtimes[r], tt);
            /* The hand-written OpenMP versions: not ultrapool, nor the
             * parallel.h variant on an OpenMP backend ("ultrapool@gomp"). */
            if (strncmp(o->runtimes[r], "ultrapool", 9) && c->median < best) {
                best = c->median;
                who = c->runtime;
            }
        }
        if (up && !isinf(best))
            fprintf(s,
                    "- %s, %u threads: best OpenMP (%s) / ultrapool = **%.2f** (target >= 1: %s)\n",
                    kernels[k].name, tt, who, best / up->median,
                    best / up->median >= 1 ? "met" : "NOT met");
    }
    fflush(s);
    free(cells);
    free(order);
    return problems ? 1 : 0;
}
