/* The #pragma omp variant of the kernels. Built twice from this file: with
 * GCC (libgomp) and with clang (libomp). Each kernel opens a parallel
 * region whose single thread creates the root tasks; the others take
 * tasks from the region's end barrier. */
#include <omp.h>
#include <string.h>

#include "par_variant.h"

#if defined(__clang__)
const char par_runtime[] = "libomp";
#else
const char par_runtime[] = "gomp";
#endif

unsigned par_omp_threads = 1;

int par_setup(unsigned threads)
{
    par_omp_threads = threads ? threads : 1;
    omp_set_dynamic(0);
    omp_set_num_threads((int)par_omp_threads);
    return 0;
}

void par_teardown(void) {}

static unsigned omp_team;
unsigned par_team_size(void) { return omp_team; }
/* Called by one thread of every region. */
void par_omp_note_team(void) { omp_team = (unsigned)omp_get_num_threads(); }

/* ---- fib: every call a task ----------------------------------------- */

static uint64_t fib_task(int n)
{
    if (n < 2)
        return (uint64_t)n;
    uint64_t x, y;
#pragma omp task shared(x) firstprivate(n)
    x = fib_task(n - 1);
#pragma omp task shared(y) firstprivate(n)
    y = fib_task(n - 2);
#pragma omp taskwait
    return x + y;
}

uint64_t par_fib(int n)
{
    uint64_t r = 0;
#pragma omp parallel num_threads(par_omp_threads)
#pragma omp single
    {
        par_omp_note_team();
#pragma omp task shared(r)
        r = fib_task(n);
    }
    return r;
}

/* ---- nqueens --------------------------------------------------------- */

static void nq_task(up_k_nq_state s, uint64_t *out)
{
    if (!par_nq_spawns(&s)) {
        *out = up_k_nqueens_from(&s);
        return;
    }
    uint64_t counts[UP_K_NQ_MAX];
    int k = 0;
    for (uint32_t free = up_k_nq_free(&s); free; free &= free - 1, k++) {
        up_k_nq_state t = up_k_nq_place(&s, free & -free);
        uint64_t *slot = &counts[k];
#pragma omp task firstprivate(t, slot)
        nq_task(t, slot);
    }
#pragma omp taskwait
    uint64_t sum = 0;
    for (int i = 0; i < k; i++)
        sum += counts[i];
    *out = sum;
}

uint64_t par_nqueens(int n)
{
    uint64_t r = 0;
    if (n < 1 || n > UP_K_NQ_MAX)
        return 0;
#pragma omp parallel num_threads(par_omp_threads)
#pragma omp single
    {
        par_omp_note_team();
        nq_task(up_k_nq_start(n), &r);
    }
    return r;
}

/* ---- merge sort ------------------------------------------------------ */

static void merge_task(up_k_merge_job job)
{
    if (job.nx + job.ny <= par_cut.merge) {
        up_k_merge(job.x, job.nx, job.y, job.ny, job.out);
        return;
    }
    up_k_merge_job lo, hi;
    up_k_merge_split(&job, &lo, &hi);
#pragma omp task firstprivate(lo)
    merge_task(lo);
#pragma omp task firstprivate(hi)
    merge_task(hi);
#pragma omp taskwait
}

static void sort_task(int32_t *a, int32_t *tmp, size_t n, int into_tmp)
{
    if (n <= par_cut.msort) {
        up_k_msort_into(a, tmp, n, into_tmp);
        return;
    }
    size_t h = n / 2;
#pragma omp task firstprivate(a, tmp, h, into_tmp)
    sort_task(a, tmp, h, !into_tmp);
#pragma omp task firstprivate(a, tmp, h, n, into_tmp)
    sort_task(a + h, tmp + h, n - h, !into_tmp);
#pragma omp taskwait
    const int32_t *src = into_tmp ? a : tmp;
    merge_task((up_k_merge_job){src, src + h, h, n - h, into_tmp ? tmp : a});
}

void par_msort(int32_t *a, int32_t *tmp, size_t n)
{
#pragma omp parallel num_threads(par_omp_threads)
#pragma omp single
    {
        par_omp_note_team();
        sort_task(a, tmp, n, 0);
    }
}

/* ---- sparse LU ------------------------------------------------------- */

static void slu_spawn(const up_k_slu_op *op, void *ctx)
{
    (void)ctx;
    up_k_slu_op o = *op;
#pragma omp task firstprivate(o)
    up_k_slu_run_op(&o);
}

int par_sparselu(up_k_slu *m)
{
    int failed = 0;
#pragma omp parallel num_threads(par_omp_threads)
#pragma omp single
    {
        par_omp_note_team();
        for (int k = 0; k < m->nb && !failed; k++) {
            up_k_slu_panel(m, k, slu_spawn, NULL);
#pragma omp taskwait
            failed = up_k_slu_updates(m, k, slu_spawn, NULL);
#pragma omp taskwait
        }
    }
    return failed ? -1 : 0;
}

/* ---- Strassen -------------------------------------------------------- */

static int strassen_task(up_k_mat a, up_k_mat b, up_k_mat c, size_t n)
{
    if (!par_strassen_spawns(n))
        return up_k_strassen(a, b, c, n, PAR_STRASSEN_LEAF);
    up_k_strassen_level lv;
    if (up_k_strassen_alloc(&lv, a, b, n))
        return -1;
    const up_k_strassen_level *level = &lv;
    int rc[7];
    for (int i = 0; i < 7; i++) {
        int *slot = &rc[i];
#pragma omp task firstprivate(level, i, n, slot)
        {
            up_k_strassen_operands(level, i);
            *slot = strassen_task(level->left[i], level->right[i], level->m[i], n / 2);
        }
    }
#pragma omp taskwait
    if (par_strassen_join_spawns(n)) {
        for (int k = 0; k < PAR_STRASSEN_JOIN_TASKS; k++) {
            size_t lo, hi;
            par_strassen_join_range(n, k, &lo, &hi);
#pragma omp task firstprivate(level, c, lo, hi)
            up_k_strassen_join_rows(level, c, lo, hi);
        }
#pragma omp taskwait
    } else {
        up_k_strassen_join_rows(&lv, c, 0, n / 2);
    }
    up_k_strassen_free(&lv);
    int any = 0;
    for (int i = 0; i < 7; i++)
        any |= rc[i];
    return any;
}

int par_strassen(up_k_mat a, up_k_mat b, up_k_mat c, size_t n)
{
    int rc = 0;
#pragma omp parallel num_threads(par_omp_threads)
#pragma omp single
    {
        par_omp_note_team();
        rc = strassen_task(a, b, c, n);
    }
    return rc;
}

/* ---- Jacobi with dependencies ---------------------------------------- */

int par_jacobi(up_k_jacobi *j, int sweeps)
{
    size_t nb = j->nb;
#pragma omp parallel num_threads(par_omp_threads)
#pragma omp single
    {
        par_omp_note_team();
        for (int s = 0; s < sweeps; s++) {
            const double *src = j->grid[s % 2];
            double *dst = j->grid[(s + 1) % 2];
            for (size_t bi = 0; bi < nb; bi++)
                for (size_t bj = 0; bj < nb; bj++) {
                    /* Neighbours off the edge repeat the block itself: a
                     * repeated "in" on the same address orders nothing new. */
                    const double *c = up_k_jacobi_block_addr(j, src, bi, bj);
                    const double *n = up_k_jacobi_block_addr(j, src, bi ? bi - 1 : bi, bj);
                    const double *so =
                        up_k_jacobi_block_addr(j, src, bi + 1 < nb ? bi + 1 : bi, bj);
                    const double *w = up_k_jacobi_block_addr(j, src, bi, bj ? bj - 1 : bj);
                    const double *e = up_k_jacobi_block_addr(j, src, bi, bj + 1 < nb ? bj + 1 : bj);
                    const double *out = up_k_jacobi_block_addr(j, dst, bi, bj);
                    // clang-format off
#pragma omp task firstprivate(src, dst, bi, bj) depend(in : *c, *n, *so, *w, *e) depend(out : *out)
                    // clang-format on
                    up_k_jacobi_block(j, src, dst, bi, bj);
                }
        }
    }
    return 0;
}
