/* A Task Bench-style task graph: width points per time step, steps time
 * steps; point x of step t depends on some points of step t - 1 (the
 * pattern) and runs a compute-bound body of a given number of iterations.
 *
 * Patterns: trivial (no dependencies at all), no_comm (each point on
 * itself only), stencil (x - 1, x, x + 1) and nearest (the five points
 * x - 2 .. x + 2); edges are clipped.
 *
 * Every point stores a value mixed from its coordinates, the values of
 * its dependencies and the result of its body, so a point that ran before
 * one of its dependencies shows in up_k_tb_verify(). */
#ifndef UP_KERNEL_TASKBENCH_H
#define UP_KERNEL_TASKBENCH_H

#include <stdint.h>

typedef enum up_k_tb_pattern {
    UP_K_TB_TRIVIAL,
    UP_K_TB_NO_COMM,
    UP_K_TB_STENCIL,
    UP_K_TB_NEAREST,
    UP_K_TB_NPATTERNS
} up_k_tb_pattern;

#define UP_K_TB_MAX_DEPS 5

const char *up_k_tb_pattern_name(up_k_tb_pattern p);
/* The pattern with that name, or -1. */
int up_k_tb_pattern_parse(const char *name);

typedef struct up_k_tb {
    up_k_tb_pattern pattern;
    int width, steps;
    uint64_t iters; /* iterations of each task's body */
    uint64_t *grid; /* steps * width values, step-major */
} up_k_tb;

/* 0, or -1 for bad sizes or no memory. */
int up_k_tb_init(up_k_tb *g, up_k_tb_pattern pattern, int width, int steps, uint64_t iters);
void up_k_tb_free(up_k_tb *g);

/* The points of step - 1 that point x of step depends on, in increasing
 * order, into out (room for UP_K_TB_MAX_DEPS); returns their count. */
int up_k_tb_deps(const up_k_tb *g, int step, int x, int *out);
/* The address of point x of step, for dependencies. */
static inline uint64_t *up_k_tb_cell(const up_k_tb *g, int step, int x)
{
    return &g->grid[(long)step * g->width + x];
}
/* Runs point x of step: reads its dependencies, runs the body, stores. */
void up_k_tb_run_point(const up_k_tb *g, int step, int x);
/* The body alone: iters rounds of a dependent integer chain. */
uint64_t up_k_tb_compute(uint64_t iters);

/* Every point, step by step, on the calling thread. */
void up_k_tb_run_seq(const up_k_tb *g);
/* 0 when every value matches a sequential recomputation. */
int up_k_tb_verify(const up_k_tb *g);

#endif
