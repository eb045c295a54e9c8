/* Experiment 5: the recursive kernels at every cutoff. The table runs
 * nqueens, merge sort and Strassen at one cutoff each (par_cut); this
 * sweeps each cutoff from coarse (tens of microseconds of work per task,
 * where the runtime is invisible and every runtime ties) to fine (under a
 * microsecond, where task overhead decides), at the target thread count,
 * so that a reader sees where the table's cutoffs sit and what the
 * comparison looks like at the others.
 *
 * A cell is (kernel, cutoff, runtime); the sequential cell runs once per
 * kernel and round (the sequential kernels make no tasks, so the cutoff
 * does not change them). Rounds as in the table: every cell once, in a new
 * random order, each in a fresh child that warms up once and times one
 * run. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_stats.h"
#include "par_bench.h"

#define MAX_CUTS 6

typedef struct sweep {
    const char *kernel;
    const char *n, *quick_n;
    const char *cuts[MAX_CUTS + 1], *quick_cuts[MAX_CUTS + 1];
    const char *size, *quick_size; /* for the table */
    const char *cut_means;         /* what the cutoff counts */
} sweep;

static const sweep sweeps[] = {
    {"nqueens", "13", "10", {"3", "4", "5", "6"}, {"2", "4"}, "n=13", "n=10", "task rows"},
    {"msort",
     "2000000",
     "200000",
     {"4096", "1024", "256", "128", "64"},
     {"4096", "128"},
     "2M int32",
     "200k int32",
     "run length"},
    {"strassen",
     "1024",
     "256",
     {"512", "256", "128"},
     {"256", "128"},
     "1024x1024",
     "256x256",
     "smallest task level"},
};
#define NSWEEPS (int)(sizeof sweeps / sizeof *sweeps)

typedef struct gcell {
    int sweep;
    const char *cut; /* NULL for the sequential cell */
    const char *runtime;
    double ns[64];
    int n, failed, small_team;
    double tasks, median;
} gcell;

static const char *const *cuts_of(const pb_opts *o, const sweep *s)
{
    return o->quick ? s->quick_cuts : s->cuts;
}

static void run_gcell(const pb_opts *o, gcell *c, unsigned threads, int round)
{
    const sweep *s = &sweeps[c->sweep];
    char th[16], seed[32];
    snprintf(th, sizeof th, "%u", c->cut ? threads : 1u);
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)(o->seed + (uint64_t)round));
    const char *args[16] = {"--kernel", s->kernel, "--threads", th,
                            "--reps",   "1",       "--warmup",  "1",
                            "--seed",   seed,      "--n",       o->quick ? s->quick_n : s->n};
    int n = 12;
    if (c->cut) {
        args[n++] = "--cutoff";
        args[n++] = c->cut;
    }
    args[n] = NULL;
    pb_output out = pb_run_child(o, c->runtime, args);
    double ns = pb_field(&out, "run ", "ns");
    double verified = pb_field(&out, "run ", "verified");
    double team = pb_field(&out, "run ", "team");
    if (c->cut)
        c->tasks = pb_field(&out, "run ", "tasks");
    if (!out.ok || isnan(ns) || verified != 1)
        c->failed++;
    else if (c->n < 64)
        c->ns[c->n++] = ns;
    if (c->cut && team < threads)
        c->small_team++;
    pb_output_free(&out);
}

static gcell *find(gcell *cells, int ncells, int sw, const char *cut, const char *rt)
{
    for (int i = 0; i < ncells; i++)
        if (cells[i].sweep == sw && strcmp(cells[i].runtime, rt) == 0 &&
            (cut ? cells[i].cut && strcmp(cells[i].cut, cut) == 0 : !cells[i].cut))
            return &cells[i];
    return NULL;
}

static int write_results(const pb_opts *o, gcell *cells, int ncells, unsigned threads)
{
    FILE *csv = pb_open(o, "grain.csv"), *med = pb_open(o, "grain_median.csv"),
         *md = pb_open(o, "grain.md");
    if (!csv || !med || !md)
        return 1;
    fprintf(csv, "kernel,cutoff,runtime,threads,round,ns\n");
    for (int i = 0; i < ncells; i++)
        for (int r = 0; r < cells[i].n; r++)
            fprintf(csv, "%s,%s,%s,%u,%d,%.0f\n", sweeps[cells[i].sweep].kernel,
                    cells[i].cut ? cells[i].cut : "-", cells[i].runtime,
                    cells[i].cut ? threads : 1u, r, cells[i].ns[r]);
    fclose(csv);
    /* After the CSV, which keeps the rounds' order: this sorts ns[]. */
    for (int i = 0; i < ncells; i++)
        cells[i].median = bench_median(cells[i].ns, (size_t)cells[i].n);

    fprintf(md,
            "%u threads, median of %d rounds; ms (speedup over sequential). Tasks: per run "
            "(merge sort: estimated). us per task: the sequential time / tasks. Last column: "
            "the better OpenMP runtime's time / ultrapool's (> 1: ultrapool faster).\n\n",
            threads, o->grain_rounds);
    pb_md_runtime_header(md, o, "| kernel | cutoff | tasks | us per task | sequential |",
                         "|---|---|---:|---:|---:|");
    /* The plot's data: one block per (kernel, runtime), blank-line
     * separated, x = us per task. */
    fprintf(med, "kernel,runtime,cutoff,us_per_task,speedup\n");
    int problems = 0;
    for (int sw = 0; sw < NSWEEPS; sw++) {
        const sweep *s = &sweeps[sw];
        const gcell *seq = find(cells, ncells, sw, NULL, "seq");
        for (const char *const *cut = cuts_of(o, s); *cut; cut++) {
            const gcell *any = find(cells, ncells, sw, *cut, o->runtimes[0]);
            double us = seq->median / 1e3 / any->tasks;
            fprintf(md, "| %s (%s) | %s %s | %.0f | %.2f | %.1f |", s->kernel,
                    o->quick ? s->quick_size : s->size, s->cut_means, *cut, any->tasks, us,
                    seq->median / 1e6);
            double median[PB_MAX_RUNTIMES];
            int flagged[PB_MAX_RUNTIMES];
            for (int r = 0; r < o->nruntimes; r++) {
                const gcell *c = find(cells, ncells, sw, *cut, o->runtimes[r]);
                median[r] = c->median;
                flagged[r] = c->failed + c->small_team;
            }
            problems += pb_md_runtime_cells(md, o, median, flagged, seq->median);
        }
        for (int r = 0; r < o->nruntimes; r++) {
            for (const char *const *cut = cuts_of(o, s); *cut; cut++) {
                const gcell *c = find(cells, ncells, sw, *cut, o->runtimes[r]);
                fprintf(med, "%s,%s,%s,%.4f,%.4f\n", s->kernel, c->runtime, *cut,
                        seq->median / 1e3 / c->tasks, seq->median / c->median);
            }
            fprintf(med, "\n\n");
        }
    }
    if (problems)
        fprintf(md, "\n\\* a run of this cell failed its check, or its team had fewer threads "
                    "than asked (see raw.log).\n");
    fclose(md);
    fclose(med);
    return problems ? 1 : 0;
}

int pb_grain(const pb_opts *o)
{
    unsigned threads = pb_target_threads(o);
    int max = NSWEEPS * (1 + MAX_CUTS * o->nruntimes);
    gcell *cells = calloc((size_t)max, sizeof *cells);
    int *order = calloc((size_t)max, sizeof *order);
    if (!cells || !order)
        return 1;
    int ncells = 0;
    for (int sw = 0; sw < NSWEEPS; sw++) {
        cells[ncells++] = (gcell){.sweep = sw, .runtime = "seq"};
        for (const char *const *cut = cuts_of(o, &sweeps[sw]); *cut; cut++)
            for (int r = 0; r < o->nruntimes; r++)
                cells[ncells++] = (gcell){.sweep = sw, .cut = *cut, .runtime = o->runtimes[r]};
    }
    uint64_t rng = o->seed ^ 0x6772616eu;
    for (int round = 0; round < o->grain_rounds; round++) {
        for (int i = 0; i < ncells; i++)
            order[i] = i;
        pb_shuffle(order, ncells, &rng);
        pb_round(o, "grain", round, o->grain_rounds, ncells);
        for (int i = 0; i < ncells; i++)
            run_gcell(o, &cells[order[i]], threads, round);
    }
    int rc = write_results(o, cells, ncells, threads);
    free(cells);
    free(order);
    return rc;
}
