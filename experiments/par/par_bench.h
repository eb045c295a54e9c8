/* The driver of the OpenMP-style API's experiments: runs the benchmark
 * children (one process per runtime and cell), interleaving the cells in
 * random order within each round, and writes Markdown tables and CSV. */
#ifndef UP_PAR_BENCH_H
#define UP_PAR_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PB_MAX_RUNTIMES 8
#define PB_MAX_THREADS  8

typedef struct pb_opts {
    const char *bin; /* directory of the par_child_<runtime> programs */
    const char *out; /* results directory */
    int rounds, metg_rounds, grain_rounds;
    unsigned threads[PB_MAX_THREADS];
    int nthreads;
    const char *runtimes[PB_MAX_RUNTIMES]; /* the parallel ones, found in bin */
    int nruntimes;
    uint64_t seed;
    int quick;            /* small sizes: a smoke run of the whole pipeline */
    int width_factor;     /* Task Bench: width = threads x this */
    double metg_target_s; /* Task Bench: ideal time of one run */
    FILE *raw;            /* every line the children printed */
    FILE *summary;        /* summary.md: the targets, as measured */
} pb_opts;

/* A child's output: its lines, and whether it exited with status 0. */
typedef struct pb_output {
    char *text;
    int ok;
} pb_output;

/* Runs bin/par_child_<runtime> with args (NULL-terminated) and collects
 * its output; the lines also go to the raw log. */
pb_output pb_run_child(const pb_opts *o, const char *runtime, const char *const *args);
/* The number after "key=" in the first line starting with prefix; NAN
 * when absent. */
double pb_field(const pb_output *out, const char *prefix, const char *key);
void pb_output_free(pb_output *out);

FILE *pb_open(const pb_opts *o, const char *name); /* in the results directory */
uint64_t pb_rand(uint64_t *state);
void pb_shuffle(int *v, int n, uint64_t *state);
void pb_progress(const char *fmt, ...); /* to stderr */
/* Notes the start of a round on stderr and in the raw log, with the load
 * average where the system tells it (the machine is shared). */
void pb_round(const pb_opts *o, const char *what, int round, int rounds, int ncells);

/* A Markdown table's header: the given leading columns (head, and their
 * separator row sep), one column per runtime, then the best OpenMP /
 * ultrapool column. */
void pb_md_runtime_header(FILE *md, const pb_opts *o, const char *head, const char *sep);
/* The runtime columns of a Markdown table row: "ms (speedup over
 * sequential)" per runtime, " *" after a flagged one, then the better
 * OpenMP runtime's median / ultrapool's, and the row's end. median[r] and
 * flagged[r] belong to o->runtimes[r]. Returns the sum of flagged[]. */
int pb_md_runtime_cells(FILE *md, const pb_opts *o, const double *median, const int *flagged,
                        double seq_median);

int pb_table(const pb_opts *o); /* kernels x runtimes x threads; fib ns per task */
int pb_epcc(const pb_opts *o);  /* task, taskwait, dependency, taskloop overheads */
int pb_metg(const pb_opts *o);  /* Task Bench efficiency and METG(50%) */
int pb_grain(const pb_opts *o); /* the recursive kernels at every cutoff */

/* The thread count the targets are stated at: 2 if measured,
 * else the largest. */
unsigned pb_target_threads(const pb_opts *o);

#endif
