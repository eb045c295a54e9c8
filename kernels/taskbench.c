#include "taskbench.h"

#include <stdlib.h>
#include <string.h>

static const char *const names[] = {"trivial", "no_comm", "stencil", "nearest"};

const char *up_k_tb_pattern_name(up_k_tb_pattern p)
{
    return p >= 0 && p < UP_K_TB_NPATTERNS ? names[p] : "?";
}

int up_k_tb_pattern_parse(const char *name)
{
    for (int p = 0; p < UP_K_TB_NPATTERNS; p++)
        if (strcmp(name, names[p]) == 0)
            return p;
    return -1;
}

int up_k_tb_init(up_k_tb *g, up_k_tb_pattern pattern, int width, int steps, uint64_t iters)
{
    g->grid = NULL;
    if (pattern < 0 || pattern >= UP_K_TB_NPATTERNS || width < 1 || steps < 1)
        return -1;
    g->pattern = pattern;
    g->width = width;
    g->steps = steps;
    g->iters = iters;
    g->grid = calloc((size_t)width * (size_t)steps, sizeof *g->grid);
    return g->grid ? 0 : -1;
}

void up_k_tb_free(up_k_tb *g)
{
    free(g->grid);
    g->grid = NULL;
}

int up_k_tb_deps(const up_k_tb *g, int step, int x, int *out)
{
    if (step == 0)
        return 0;
    int reach;
    switch (g->pattern) {
    case UP_K_TB_NO_COMM:
        reach = 0;
        break;
    case UP_K_TB_STENCIL:
        reach = 1;
        break;
    case UP_K_TB_NEAREST:
        reach = 2;
        break;
    default:
        return 0;
    }
    int n = 0;
    for (int d = x - reach; d <= x + reach; d++)
        if (d >= 0 && d < g->width)
            out[n++] = d;
    return n;
}

uint64_t up_k_tb_compute(uint64_t iters)
{
    /* Each round needs the previous one (a multiply and a shift-xor), so
     * the chain cannot be vectorised or folded away. */
    uint64_t v = 0x2545f4914f6cdd1dull;
    for (uint64_t i = 0; i < iters; i++) {
        v ^= v >> 29;
        v *= 0xbf58476d1ce4e5b9ull;
    }
    return v;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

static uint64_t point_value(const up_k_tb *g, int step, int x, uint64_t work)
{
    int deps[UP_K_TB_MAX_DEPS];
    int n = up_k_tb_deps(g, step, x, deps);
    uint64_t h = mix((uint64_t)step << 32 | (uint32_t)x, work);
    for (int i = 0; i < n; i++)
        h = mix(h, *up_k_tb_cell(g, step - 1, deps[i]));
    return h;
}

void up_k_tb_run_point(const up_k_tb *g, int step, int x)
{
    *up_k_tb_cell(g, step, x) = point_value(g, step, x, up_k_tb_compute(g->iters));
}

void up_k_tb_run_seq(const up_k_tb *g)
{
    for (int t = 0; t < g->steps; t++)
        for (int x = 0; x < g->width; x++)
            up_k_tb_run_point(g, t, x);
}

int up_k_tb_verify(const up_k_tb *g)
{
    /* Recompute row by row from the stored previous row: the body's
     * result is the same for every point, so it is computed once. */
    uint64_t work = up_k_tb_compute(g->iters);
    for (int t = 0; t < g->steps; t++)
        for (int x = 0; x < g->width; x++)
            if (*up_k_tb_cell(g, t, x) != point_value(g, t, x, work))
                return -1;
    return 0;
}
