/* Experiments 3 and 4: the EPCC-style overheads (task creation, taskwait,
 * dependencies, taskloop) and the Task Bench-style efficiency sweep with
 * METG(50%). Both size their delays and tasks in iterations of the Task
 * Bench body, converted from nanoseconds with the sequential child's
 * calibration, so every runtime gets the same work. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_stats.h"
#include "par_bench.h"
#include "taskbench.h"

static const char *const epcc_tests[] = {"parallel_task", "master_task", "taskwait",
                                         "depend",        "taskloop",    "parallel_for"};
#define NEPCC (int)(sizeof epcc_tests / sizeof *epcc_tests)

static double calibrate(const pb_opts *o)
{
    const char *args[] = {"--calibrate", NULL};
    pb_output out = pb_run_child(o, "seq", args);
    double v = pb_field(&out, "calibrate", "ns_per_iter");
    pb_output_free(&out);
    return v > 0 ? v : NAN;
}

typedef struct mcell {
    const char *runtime;
    unsigned threads;
    int test;    /* EPCC: index in epcc_tests */
    int pattern; /* Task Bench */
    int loop;    /* Task Bench: the loop form (par_taskbench_loop) */
    double gran; /* Task Bench: task duration (ns), from the sequential cell */
    uint64_t iters;
    long width, steps;
    double v[64]; /* per round: EPCC overhead ns; Task Bench efficiency */
    double wall[64];
    int n, failed, small_team;
} mcell;

static int run_rounds(const pb_opts *o, mcell *cells, int ncells, int rounds, const char *what,
                      void (*run)(const pb_opts *, mcell *, int))
{
    int *order = calloc((size_t)ncells, sizeof *order);
    uint64_t rng = o->seed ^ 0x5eed;
    for (int round = 0; round < rounds; round++) {
        for (int i = 0; i < ncells; i++)
            order[i] = i;
        pb_shuffle(order, ncells, &rng);
        pb_round(o, what, round, rounds, ncells);
        for (int i = 0; i < ncells; i++)
            run(o, &cells[order[i]], round);
    }
    free(order);
    int problems = 0;
    for (int i = 0; i < ncells; i++)
        problems += cells[i].failed + cells[i].small_team;
    return problems;
}

/* ---- EPCC ------------------------------------------------------------ */

static unsigned epcc_innerreps;
static uint64_t epcc_delay;

static void run_epcc_cell(const pb_opts *o, mcell *c, int round)
{
    (void)round;
    char threads[16], inner[32], delay[32];
    snprintf(threads, sizeof threads, "%u", c->threads);
    snprintf(inner, sizeof inner, "%u", epcc_innerreps);
    snprintf(delay, sizeof delay, "%llu", (unsigned long long)epcc_delay);
    const char *args[] = {
        "--epcc", epcc_tests[c->test], "--threads", threads,  "--innerreps",
        inner,    "--iters",           delay,       "--reps", o->quick ? "5" : "20",
        NULL};
    pb_output out = pb_run_child(o, c->runtime, args);
    double v = pb_field(&out, "epcc ", "overhead_ns");
    if (pb_field(&out, "epcc ", "team") < c->threads)
        c->small_team++;
    if (!out.ok || isnan(v))
        c->failed++;
    else if (c->n < 64)
        c->v[c->n++] = v;
    pb_output_free(&out);
}

int pb_epcc(const pb_opts *o)
{
    double ns_per_iter = calibrate(o);
    if (isnan(ns_per_iter))
        return 1;
    /* EPCC's default delay: 0.1 us. */
    epcc_delay = (uint64_t)(100.0 / ns_per_iter + 0.5);
    if (epcc_delay < 1)
        epcc_delay = 1;
    epcc_innerreps = o->quick ? 256 : 4096;
    int ncells = 0;
    mcell *cells = calloc((size_t)(NEPCC * o->nruntimes * o->nthreads), sizeof *cells);
    for (int t = 0; t < NEPCC; t++)
        for (int r = 0; r < o->nruntimes; r++)
            for (int h = 0; h < o->nthreads; h++)
                cells[ncells++] =
                    (mcell){.runtime = o->runtimes[r], .threads = o->threads[h], .test = t};
    int problems = run_rounds(o, cells, ncells, o->rounds, "epcc", run_epcc_cell);

    FILE *csv = pb_open(o, "epcc.csv"), *md = pb_open(o, "epcc.md");
    if (!csv || !md)
        return 1;
    fprintf(csv, "test,runtime,threads,round,overhead_ns\n");
    for (int i = 0; i < ncells; i++)
        for (int r = 0; r < cells[i].n; r++)
            fprintf(csv, "%s,%s,%u,%d,%.2f\n", epcc_tests[cells[i].test], cells[i].runtime,
                    cells[i].threads, r, cells[i].v[r]);
    fclose(csv);
    fprintf(md,
            "EPCC-style overheads: overhead = (test time - reference time) / innerreps, in ns "
            "per repetition; innerreps %u, delay %.0f ns (%llu iterations), median of %d rounds "
            "(each the median of %s outer repetitions).\n\n",
            epcc_innerreps, (double)epcc_delay * ns_per_iter, (unsigned long long)epcc_delay,
            o->rounds, o->quick ? "5" : "20");
    fprintf(md, "| test | threads |");
    for (int r = 0; r < o->nruntimes; r++)
        fprintf(md, " %s |", o->runtimes[r]);
    fprintf(md, "\n|---|---:|");
    for (int r = 0; r < o->nruntimes; r++)
        fprintf(md, "---:|");
    fprintf(md, "\n");
    for (int t = 0; t < NEPCC; t++)
        for (int h = 0; h < o->nthreads; h++) {
            fprintf(md, "| %s | %u |", epcc_tests[t], o->threads[h]);
            for (int i = 0; i < ncells; i++)
                if (cells[i].test == t && cells[i].threads == o->threads[h])
                    fprintf(md, " %.1f%s |", bench_median(cells[i].v, (size_t)cells[i].n),
                            cells[i].failed || cells[i].small_team ? " *" : "");
            fprintf(md, "\n");
        }
    if (problems)
        fprintf(md, "\n\\* a run failed, or its team had fewer threads than asked (raw.log).\n");
    fclose(md);
    free(cells);
    return problems ? 1 : 0;
}

/* ---- Task Bench METG ------------------------------------------------- */

/* The series of the sweep: every pattern as tasks with dependencies, and
 * the stencil once more in its loop form (a worksharing loop per step),
 * the way Task Bench's loop-based implementations run it. */
typedef struct tb_series {
    int pattern, loop;
} tb_series;
static const tb_series tb_all[] = {{UP_K_TB_TRIVIAL, 0},
                                   {UP_K_TB_NO_COMM, 0},
                                   {UP_K_TB_STENCIL, 0},
                                   {UP_K_TB_NEAREST, 0},
                                   {UP_K_TB_STENCIL, 1}};
#define TB_NSERIES ((int)(sizeof tb_all / sizeof tb_all[0]))

static const char *series_name(int pattern, int loop)
{
    return loop ? "stencil-loop" : up_k_tb_pattern_name(pattern);
}

/* Every (pattern, granularity) also runs on the sequential child with the
 * same graph: the task duration is that run's time / tasks (the body, its
 * dependency reads and the loop around it: the physical limit), and
 * efficiency = (sequential time / threads) / parallel time
 *            = (tasks x task duration / threads) / wall time. */

static void run_tb_cell(const pb_opts *o, mcell *c, int round)
{
    char threads[16], width[32], steps[32], iters[32], seed[32];
    snprintf(threads, sizeof threads, "%u", c->threads);
    snprintf(width, sizeof width, "%ld", c->width);
    snprintf(steps, sizeof steps, "%ld", c->steps);
    snprintf(iters, sizeof iters, "%llu", (unsigned long long)c->iters);
    snprintf(seed, sizeof seed, "%d", round);
    const char *args[] = {"--kernel", "taskbench", "--pattern", up_k_tb_pattern_name(c->pattern),
                          "--n",      width,       "--steps",   steps,
                          "--iters",  iters,       "--threads", threads,
                          "--reps",   "1",         "--warmup",  "1",
                          "--seed",   seed,        "--loop",    c->loop ? "1" : "0",
                          NULL};
    pb_output out = pb_run_child(o, c->runtime, args);
    double ns = pb_field(&out, "run ", "ns");
    if (pb_field(&out, "run ", "team") < c->threads)
        c->small_team++;
    if (!out.ok || isnan(ns) || pb_field(&out, "run ", "verified") != 1)
        c->failed++;
    else if (c->n < 64)
        c->wall[c->n++] = ns;
    pb_output_free(&out);
}

static int is_seq(const mcell *c) { return strcmp(c->runtime, "seq") == 0; }

/* The sequential cell of the same graph. */
static mcell *baseline(mcell *cells, int ncells, const mcell *c)
{
    for (int i = 0; i < ncells; i++)
        if (is_seq(&cells[i]) && !cells[i].loop && cells[i].pattern == c->pattern &&
            cells[i].iters == c->iters)
            return &cells[i];
    return NULL;
}

int pb_metg(const pb_opts *o)
{
    double ns_per_iter = calibrate(o);
    if (isnan(ns_per_iter))
        return 1;
    /* Body durations from 1 ms down by sqrt(2) to below 250 ns (every
     * other one with --quick). */
    double grans[40];
    int ngrans = 0;
    for (int k = 0; k < 40; k += o->quick ? 2 : 1) {
        double g = 1e6 / pow(2.0, k / 2.0);
        grans[ngrans++] = g;
        if (g < 250)
            break;
    }
    unsigned threads = o->threads[o->nthreads - 1];
    for (int i = 0; i < o->nthreads; i++)
        if (o->threads[i] == 2)
            threads = 2;
    const long max_tasks = o->quick ? 20000 : 200000;
    const long width = (long)threads * o->width_factor;
    int ncells = 0, nrt = o->nruntimes + 1;
    mcell *cells = calloc((size_t)(nrt * TB_NSERIES * ngrans), sizeof *cells);
    for (int r = 0; r < nrt; r++)
        for (int sr = 0; sr < TB_NSERIES; sr++) {
            if (r == o->nruntimes && tb_all[sr].loop)
                continue; /* the sequential run is the same for both forms */
            for (int g = 0; g < ngrans; g++) {
                mcell *c = &cells[ncells++];
                *c = (mcell){.runtime = r < o->nruntimes ? o->runtimes[r] : "seq",
                             .threads = r < o->nruntimes ? threads : 1,
                             .pattern = tb_all[sr].pattern,
                             .loop = tb_all[sr].loop,
                             .width = width};
                c->iters = (uint64_t)(grans[g] / ns_per_iter + 0.5);
                if (c->iters < 1)
                    c->iters = 1;
                /* Enough steps for a perfectly efficient run on the
                 * threads to last about metg_target_s, within bounds. */
                double ideal_tasks = o->metg_target_s * 1e9 * threads / grans[g];
                long steps = (long)ceil(ideal_tasks / (double)width);
                if (steps * width > max_tasks)
                    steps = max_tasks / width;
                c->steps = steps < 4 ? 4 : steps;
            }
        }
    int problems = run_rounds(o, cells, ncells, o->metg_rounds, "metg", run_tb_cell);

    /* Task durations from the sequential cells, then efficiencies. */
    for (int i = 0; i < ncells; i++) {
        mcell *c = &cells[i];
        if (is_seq(c))
            continue;
        mcell *b = baseline(cells, ncells, c);
        double seq_ns = NAN;
        if (b && b->n) {
            double tmp[64];
            memcpy(tmp, b->wall, sizeof tmp);
            seq_ns = bench_median(tmp, (size_t)b->n);
        }
        c->gran = seq_ns / ((double)c->width * (double)c->steps);
        for (int r = 0; r < c->n; r++)
            c->v[r] = (seq_ns / c->threads) / c->wall[r];
    }

    FILE *csv = pb_open(o, "metg.csv"), *med = pb_open(o, "metg_median.csv"),
         *md = pb_open(o, "metg.md");
    if (!csv || !med || !md)
        return 1;
    fprintf(csv, "runtime,pattern,threads,width,steps,iters,task_ns,round,wall_ns,efficiency\n");
    fprintf(med, "runtime,pattern,threads,granularity_us,efficiency\n");
    for (int i = 0; i < ncells; i++) {
        mcell *c = &cells[i];
        for (int r = 0; r < c->n; r++)
            fprintf(csv, "%s,%s,%u,%ld,%ld,%llu,%.1f,%d,%.0f,%.4f\n", c->runtime,
                    series_name(c->pattern, c->loop), c->threads, c->width, c->steps,
                    (unsigned long long)c->iters, is_seq(c) ? NAN : c->gran, r, c->wall[r],
                    is_seq(c) ? NAN : c->v[r]);
    }
    fprintf(md,
            "Task Bench-style sweep, %u threads, width %ld (threads x %d); task duration = the "
            "sequential run of the same graph / tasks; efficiency = (tasks x task duration / "
            "threads) / wall time, median of %d rounds. METG(50%%) = the smallest task duration "
            "of the sweep (steps of sqrt(2)) reached before the efficiency first falls below 50%%. "
            "The patterns run as tasks with "
            "dependencies; stencil-loop is the stencil as a worksharing loop per time step "
            "(static schedule, the loop's barrier between steps), no tasks.\n\n",
            threads, width, o->width_factor, o->metg_rounds);
    fprintf(md, "| pattern |");
    for (int r = 0; r < o->nruntimes; r++)
        fprintf(md, " %s METG(50%%) |", o->runtimes[r]);
    fprintf(md, "\n|---|");
    for (int r = 0; r < o->nruntimes; r++)
        fprintf(md, "---:|");
    fprintf(md, "\n");
    double up_stencil = NAN, up_stencil_loop = NAN;
    for (int sr = 0; sr < TB_NSERIES; sr++) {
        int p = tb_all[sr].pattern, loop = tb_all[sr].loop;
        fprintf(md, "| %s |", series_name(p, loop));
        for (int r = 0; r < o->nruntimes; r++) {
            /* The cells come from the largest duration down; METG is the
             * last one before the efficiency first falls below 50% (a
             * lucky cell further down does not count). */
            double metg = NAN;
            int fell = 0;
            for (int i = 0; i < ncells; i++) {
                mcell *c = &cells[i];
                if (c->pattern != p || c->loop != loop || strcmp(c->runtime, o->runtimes[r]))
                    continue;
                double eff = bench_median(c->v, (size_t)c->n);
                fprintf(med, "%s,%s,%u,%.4f,%.4f\n", c->runtime, series_name(p, loop), c->threads,
                        c->gran / 1000, eff);
                if (eff < 0.5 || isnan(eff))
                    fell = 1;
                else if (!fell)
                    metg = c->gran;
            }
            fprintf(med, "\n\n"); /* a gnuplot data block per runtime and pattern */
            if (isnan(metg))
                fprintf(md, " > %.0f us |", grans[0] / 1000);
            else
                fprintf(md, " %.2f us |", metg / 1000);
            if (p == UP_K_TB_STENCIL && strcmp(o->runtimes[r], "ultrapool") == 0)
                *(loop ? &up_stencil_loop : &up_stencil) = metg;
        }
        fprintf(md, "\n");
    }
    if (problems)
        fprintf(md,
                "\n%d run(s) failed their check or had a smaller team than asked "
                "(raw.log).\n",
                problems);
    fclose(csv);
    fclose(med);
    fclose(md);
    const char *forms[] = {"tasks with dependencies", "a worksharing loop per step"};
    double metgs[] = {up_stencil, up_stencil_loop};
    for (int f = 0; f < 2; f++)
        if (!isnan(metgs[f]))
            fprintf(o->summary,
                    "- METG(50%%), stencil as %s, %u threads: **%.2f us** (target <= 1 us: %s)\n",
                    forms[f], threads, metgs[f] / 1000, metgs[f] <= 1000 ? "met" : "NOT met");
        else
            fprintf(o->summary,
                    "- METG(50%%), stencil as %s, %u threads: efficiency below 50%% at every "
                    "granularity (target <= 1 us: NOT met)\n",
                    forms[f], threads);
    fflush(o->summary);
    free(cells);
    return problems ? 1 : 0;
}
