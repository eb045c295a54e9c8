/* The ultrapool variant of the kernels: the same decompositions as the
 * #pragma omp variant, written with <ultrapool/parallel.h> calls. Task
 * arguments live on the creating task's stack (children finish before
 * their parent does), except where a producer loop creates the tasks
 * (Jacobi): there they are copied into the task, like firstprivate. */
#include <stdio.h>

#include <ultrapool/parallel.h>

#include "par_up.h"

const char par_runtime[] = "ultrapool";

up_pool *par_up_pool;
unsigned par_up_threads = 1;
static unsigned par_up_team;

int par_setup(unsigned threads)
{
    par_up_threads = threads ? threads : 1;
    /* up_parallel_for's team: the default size, read at the first region
     * (EPCC's parallel_for); an UP_NUM_THREADS already set wins. */
    char n[16];
    snprintf(n, sizeof n, "%u", par_up_threads);
    setenv("UP_NUM_THREADS", n, 0);
    int rc = up_pool_create(&par_up_pool, NULL);
    if (rc != UP_OK) {
        fprintf(stderr, "ultrapool: up_pool_create: %s\n", up_strerror(rc));
        return -1;
    }
    return 0;
}

void par_teardown(void)
{
    if (par_up_pool) {
        up_pool_stop_and_wait(par_up_pool);
        up_pool_destroy(par_up_pool);
        par_up_pool = NULL;
    }
}

void par_up_region(up_fn fn, void *ctx)
{
    int rc = up_parallel(par_up_pool, par_up_threads, fn, ctx);
    if (rc != UP_OK) {
        fprintf(stderr, "ultrapool: up_parallel: %s\n", up_strerror(rc));
        abort();
    }
}

unsigned par_team_size(void) { return par_up_team; }

void par_up_note_team(void)
{
    if (up_master())
        par_up_team = up_num_threads();
}

/* ---- fib: every call a task ----------------------------------------- */

typedef struct fib_arg {
    int n;
    uint64_t r;
} fib_arg;

static void fib_task(void *p)
{
    fib_arg *f = p;
    if (f->n < 2) {
        f->r = (uint64_t)f->n;
        return;
    }
    fib_arg x = {f->n - 1, 0}, y = {f->n - 2, 0};
    up_task(fib_task, &x, NULL);
    up_task(fib_task, &y, NULL);
    up_taskwait();
    f->r = x.r + y.r;
}

/* As the pragma variant: the root is a task, and the region's end (which
 * waits for every task of the team, parallel.h) is where the other
 * members join in. A taskwait here would, on libgomp, keep the single
 * member out of the work: an OpenMP taskwait runs only the waiting
 * task's own children, and the root runs elsewhere. */
static void fib_region(void *ctx)
{
    par_up_note_team();
    if (up_single())
        up_task(fib_task, ctx, NULL);
}

uint64_t par_fib(int n)
{
    fib_arg root = {n, 0};
    par_up_region(fib_region, &root);
    return root.r;
}

/* ---- nqueens --------------------------------------------------------- */

typedef struct nq_arg {
    up_k_nq_state s;
    uint64_t count;
} nq_arg;

static void nq_task(void *p)
{
    nq_arg *a = p;
    if (!par_nq_spawns(&a->s)) {
        a->count = up_k_nqueens_from(&a->s);
        return;
    }
    nq_arg child[UP_K_NQ_MAX];
    int k = 0;
    for (uint32_t free = up_k_nq_free(&a->s); free; free &= free - 1, k++) {
        child[k].s = up_k_nq_place(&a->s, free & -free);
        up_task(nq_task, &child[k], NULL);
    }
    up_taskwait();
    uint64_t sum = 0;
    for (int i = 0; i < k; i++)
        sum += child[i].count;
    a->count = sum;
}

static void nq_region(void *ctx)
{
    par_up_note_team();
    if (up_single())
        nq_task(ctx);
}

uint64_t par_nqueens(int n)
{
    if (n < 1 || n > UP_K_NQ_MAX)
        return 0;
    nq_arg root = {up_k_nq_start(n), 0};
    par_up_region(nq_region, &root);
    return root.count;
}

/* ---- merge sort ------------------------------------------------------ */

static void merge_task(void *p)
{
    const up_k_merge_job *job = p;
    if (job->nx + job->ny <= par_cut.merge) {
        up_k_merge(job->x, job->nx, job->y, job->ny, job->out);
        return;
    }
    up_k_merge_job lo, hi;
    up_k_merge_split(job, &lo, &hi);
    up_task(merge_task, &lo, NULL);
    up_task(merge_task, &hi, NULL);
    up_taskwait();
}

typedef struct sort_arg {
    int32_t *a, *tmp;
    size_t n;
    int into_tmp;
} sort_arg;

static void sort_task(void *p)
{
    sort_arg *s = p;
    if (s->n <= par_cut.msort) {
        up_k_msort_into(s->a, s->tmp, s->n, s->into_tmp);
        return;
    }
    size_t h = s->n / 2;
    sort_arg lo = {s->a, s->tmp, h, !s->into_tmp};
    sort_arg hi = {s->a + h, s->tmp + h, s->n - h, !s->into_tmp};
    up_task(sort_task, &lo, NULL);
    up_task(sort_task, &hi, NULL);
    up_taskwait();
    const int32_t *src = s->into_tmp ? s->a : s->tmp;
    up_k_merge_job m = {src, src + h, h, s->n - h, s->into_tmp ? s->tmp : s->a};
    merge_task(&m);
}

static void sort_region(void *ctx)
{
    par_up_note_team();
    if (up_single())
        sort_task(ctx);
}

void par_msort(int32_t *a, int32_t *tmp, size_t n)
{
    sort_arg root = {a, tmp, n, 0};
    par_up_region(sort_region, &root);
}

/* ---- sparse LU ------------------------------------------------------- */

static void slu_task(void *p) { up_k_slu_run_op(p); }

static void slu_spawn(const up_k_slu_op *op, void *ctx)
{
    if (up_task_copy(slu_task, op, sizeof *op, NULL) != UP_OK)
        *(int *)ctx = 1;
}

typedef struct slu_ctx {
    up_k_slu *m;
    int failed;
} slu_ctx;

static void slu_region(void *ctx)
{
    slu_ctx *c = ctx;
    par_up_note_team();
    if (!up_single())
        return;
    for (int k = 0; k < c->m->nb && !c->failed; k++) {
        up_k_slu_panel(c->m, k, slu_spawn, &c->failed);
        up_taskwait();
        if (up_k_slu_updates(c->m, k, slu_spawn, &c->failed))
            c->failed = 1;
        up_taskwait();
    }
}

int par_sparselu(up_k_slu *m)
{
    slu_ctx c = {m, 0};
    par_up_region(slu_region, &c);
    return c.failed ? -1 : 0;
}

/* ---- Strassen -------------------------------------------------------- */

/* A product task: product i of the parent's level, which it forms the
 * operands of first; or, with no parent, the whole product C = A B. */
typedef struct str_arg {
    const up_k_strassen_level *parent;
    int i;
    up_k_mat a, b, c;
    size_t n;
    int rc;
} str_arg;

typedef struct str_join {
    const up_k_strassen_level *lv;
    up_k_mat c;
    size_t lo, hi;
} str_join;

static void strassen_join_task(void *p)
{
    str_join *j = p;
    up_k_strassen_join_rows(j->lv, j->c, j->lo, j->hi);
}

static void strassen_task(void *p)
{
    str_arg *s = p;
    if (s->parent) {
        up_k_strassen_operands(s->parent, s->i);
        s->a = s->parent->left[s->i];
        s->b = s->parent->right[s->i];
        s->c = s->parent->m[s->i];
    }
    size_t n = s->n;
    if (!par_strassen_spawns(n)) {
        s->rc = up_k_strassen(s->a, s->b, s->c, n, PAR_STRASSEN_LEAF);
        return;
    }
    up_k_strassen_level lv;
    if (up_k_strassen_alloc(&lv, s->a, s->b, n)) {
        s->rc = -1;
        return;
    }
    str_arg sub[7];
    for (int i = 0; i < 7; i++) {
        sub[i] = (str_arg){.parent = &lv, .i = i, .n = n / 2};
        up_task(strassen_task, &sub[i], NULL);
    }
    up_taskwait();
    if (par_strassen_join_spawns(n)) {
        str_join join[PAR_STRASSEN_JOIN_TASKS];
        for (int k = 0; k < PAR_STRASSEN_JOIN_TASKS; k++) {
            join[k] = (str_join){.lv = &lv, .c = s->c};
            par_strassen_join_range(n, k, &join[k].lo, &join[k].hi);
            up_task(strassen_join_task, &join[k], NULL);
        }
        up_taskwait();
    } else {
        up_k_strassen_join_rows(&lv, s->c, 0, n / 2);
    }
    up_k_strassen_free(&lv);
    s->rc = 0;
    for (int i = 0; i < 7; i++)
        s->rc |= sub[i].rc;
}

static void strassen_region(void *ctx)
{
    par_up_note_team();
    if (up_single())
        strassen_task(ctx);
}

int par_strassen(up_k_mat a, up_k_mat b, up_k_mat c, size_t n)
{
    str_arg root = {.a = a, .b = b, .c = c, .n = n};
    par_up_region(strassen_region, &root);
    return root.rc;
}

/* ---- Jacobi with dependencies ---------------------------------------- */

/* A block's task carries its arguments in the task (firstprivate). */
typedef struct jac_arg {
    const up_k_jacobi *j;
    const double *src;
    double *dst;
    size_t bi, bj;
} jac_arg;

typedef struct jac_ctx {
    up_k_jacobi *j;
    int sweeps;
    int failed;
} jac_ctx;

static void jac_task(void *p)
{
    jac_arg *a = p;
    up_k_jacobi_block(a->j, a->src, a->dst, a->bi, a->bj);
}

static void jac_single(jac_ctx *c)
{
    const up_k_jacobi *j = c->j;
    size_t nb = j->nb;
    for (int s = 0; s < c->sweeps; s++) {
        const double *src = j->grid[s % 2];
        double *dst = j->grid[(s + 1) % 2];
        for (size_t bi = 0; bi < nb; bi++)
            for (size_t bj = 0; bj < nb; bj++) {
                up_dep d[6];
                size_t n = 0;
                d[n++] = (up_dep){up_k_jacobi_block_addr(j, dst, bi, bj), UP_DEP_OUT};
                d[n++] = (up_dep){up_k_jacobi_block_addr(j, src, bi, bj), UP_DEP_IN};
                if (bi > 0)
                    d[n++] = (up_dep){up_k_jacobi_block_addr(j, src, bi - 1, bj), UP_DEP_IN};
                if (bi + 1 < nb)
                    d[n++] = (up_dep){up_k_jacobi_block_addr(j, src, bi + 1, bj), UP_DEP_IN};
                if (bj > 0)
                    d[n++] = (up_dep){up_k_jacobi_block_addr(j, src, bi, bj - 1), UP_DEP_IN};
                if (bj + 1 < nb)
                    d[n++] = (up_dep){up_k_jacobi_block_addr(j, src, bi, bj + 1), UP_DEP_IN};
                jac_arg a = {j, src, dst, bi, bj};
                if (up_task_deps_copy(jac_task, &a, sizeof a, d, n, NULL) != UP_OK)
                    c->failed = 1;
            }
    }
}

static void jac_region(void *ctx)
{
    par_up_note_team();
    if (up_single())
        jac_single(ctx);
}

int par_jacobi(up_k_jacobi *j, int sweeps)
{
    jac_ctx c = {j, sweeps, 0};
    par_up_region(jac_region, &c);
    return c.failed ? -1 : 0;
}
