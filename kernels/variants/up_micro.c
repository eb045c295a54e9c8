/* The ultrapool variant of the Task Bench graph and of the EPCC-style
 * overhead tests, with <ultrapool/parallel.h> calls. */
#include "par_up.h"

/* ---- Task Bench ------------------------------------------------------ */

/* A point's task carries its graph and coordinates (firstprivate). */
typedef struct tb_point {
    const up_k_tb *g;
    int step, x;
} tb_point;

static void tb_task(void *p)
{
    const tb_point *pt = p;
    up_k_tb_run_point(pt->g, pt->step, pt->x);
}

typedef struct tb_ctx {
    const up_k_tb *g;
    int failed;
} tb_ctx;

static void tb_single(tb_ctx *c)
{
    const up_k_tb *g = c->g;
    for (int t = 0; t < g->steps; t++)
        for (int x = 0; x < g->width; x++) {
            tb_point pt = {g, t, x};
            int rc;
            if (g->pattern == UP_K_TB_TRIVIAL) { /* no dependencies at all */
                rc = up_task_copy(tb_task, &pt, sizeof pt, NULL);
            } else {
                int d[UP_K_TB_MAX_DEPS];
                int nd = up_k_tb_deps(g, t, x, d);
                up_dep deps[UP_K_TB_MAX_DEPS + 1];
                deps[0] = (up_dep){up_k_tb_cell(g, t, x), UP_DEP_OUT};
                for (int i = 0; i < nd; i++)
                    deps[1 + i] = (up_dep){up_k_tb_cell(g, t - 1, d[i]), UP_DEP_IN};
                rc = up_task_deps_copy(tb_task, &pt, sizeof pt, deps, (size_t)nd + 1, NULL);
            }
            if (rc != UP_OK)
                c->failed = 1;
        }
}

static void tb_region(void *ctx)
{
    par_up_note_team();
    if (up_single())
        tb_single(ctx);
}

int par_taskbench(const up_k_tb *g)
{
    tb_ctx c = {g, 0};
    par_up_region(tb_region, &c);
    return c.failed ? -1 : 0;
}

/* The loop form: a step's points shared statically, the loop's barrier
 * between steps. Each member walks the steps with a context of its own. */
typedef struct tb_loop_step {
    const up_k_tb *g;
    int step;
} tb_loop_step;

static void tb_loop_points(int64_t lo, int64_t hi, void *p)
{
    const tb_loop_step *s = p;
    for (int64_t x = lo; x < hi; x++)
        up_k_tb_run_point(s->g, s->step, (int)x);
}

typedef struct tb_loop_ctx {
    const up_k_tb *g;
    _Atomic int failed;
} tb_loop_ctx;

static void tb_loop_region(void *p)
{
    tb_loop_ctx *c = p;
    par_up_note_team();
    tb_loop_step s = {c->g, 0};
    for (s.step = 0; s.step < c->g->steps; s.step++)
        if (up_for(0, c->g->width, NULL, tb_loop_points, &s) != UP_OK)
            atomic_store(&c->failed, 1);
}

int par_taskbench_loop(const up_k_tb *g)
{
    tb_loop_ctx c = {g, 0};
    par_up_region(tb_loop_region, &c);
    return atomic_load(&c.failed) ? -1 : 0;
}

/* ---- EPCC-style overheads -------------------------------------------- */

typedef struct epcc_ctx {
    par_epcc_test test;
    unsigned innerreps;
    uint64_t delay;
} epcc_ctx;

static void delay_task(void *p) { par_delay(((const epcc_ctx *)p)->delay); }

static void delay_range(int64_t lo, int64_t hi, void *p)
{
    for (int64_t i = lo; i < hi; i++)
        par_delay(((const epcc_ctx *)p)->delay);
}

static void epcc_region(void *p)
{
    epcc_ctx *c = p;
    unsigned threads = par_up_threads;
    par_up_note_team();
    switch (c->test) {
    case PAR_EPCC_REFERENCE:
        for (unsigned i = 0; i < c->innerreps; i++)
            par_delay(c->delay);
        break;
    case PAR_EPCC_PARALLEL_TASK:
        for (unsigned i = 0; i < c->innerreps; i++)
            up_task(delay_task, c, NULL);
        break;
    case PAR_EPCC_MASTER_TASK:
        if (up_master())
            for (unsigned i = 0; i < c->innerreps * threads; i++)
                up_task(delay_task, c, NULL);
        break;
    case PAR_EPCC_TASKWAIT:
        for (unsigned i = 0; i < c->innerreps; i++) {
            up_task(delay_task, c, NULL);
            up_taskwait();
        }
        break;
    case PAR_EPCC_DEPEND: {
        /* Each member's chain hangs on a variable of its own. */
        char chain = 0;
        up_dep d = {&chain, UP_DEP_INOUT};
        for (unsigned i = 0; i < c->innerreps; i++)
            up_task_deps(delay_task, c, &d, 1, NULL);
        up_taskwait();
        break;
    }
    case PAR_EPCC_TASKLOOP:
        if (up_single()) {
            up_taskloop_opts o = UP_TASKLOOP_OPTS(.grainsize = 1);
            up_taskloop(0, (int64_t)c->innerreps * threads, &o, delay_range, c);
        }
        break;
    default:
        break;
    }
}

/* parallel_for's body: one delay per iteration, member 0 noting the team. */
static void pfor_delay(int64_t lo, int64_t hi, void *p)
{
    par_up_note_team();
    delay_range(lo, hi, p);
}

int par_epcc(par_epcc_test test, unsigned innerreps, uint64_t delay_iters)
{
    if (test < 0 || test >= PAR_EPCC_NTESTS)
        return -1;
    epcc_ctx c = {test, innerreps, delay_iters};
    if (test == PAR_EPCC_PARALLEL_FOR) { /* a region per call, from outside any */
        for (unsigned i = 0; i < innerreps; i++)
            if (up_parallel_for(par_up_pool, 0, par_up_threads, NULL, pfor_delay, &c) != UP_OK)
                return -1;
        return 0;
    }
    par_up_region(epcc_region, &c);
    return 0;
}
