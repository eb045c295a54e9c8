#include "sparselu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kutil.h"

/* Every block, present or not, has a fixed place in one slab, a cache
 * line apart from the next: the matrix's layout, and so its cache and
 * store-to-load aliasing behaviour, is the same whatever the heap held
 * before, in every runtime's benchmark process. (With a malloc per block
 * the addresses depended on what the process had allocated first; an
 * interleaved check found no speed difference between the two layouts,
 * so this is for determinism, not speed.) A fill-in takes no malloc. */
static long block_stride(int bs) { return ((long)bs * bs + 7) / 8 * 8 + 8; }

static int make_slab(up_k_slu *m, int nb, int bs)
{
    m->nb = nb;
    m->bs = bs;
    m->stride = block_stride(bs);
    m->blk = calloc((size_t)nb * nb, sizeof *m->blk);
    size_t bytes = (size_t)nb * nb * (size_t)m->stride * sizeof(double);
    m->slab = aligned_alloc(64, bytes ? bytes : 64);
    if (!m->blk || !m->slab) {
        up_k_slu_free(m);
        return -1;
    }
    return 0;
}

/* Block e's place in the slab, zeroed. */
static double *new_block(up_k_slu *m, long e)
{
    double *b = m->slab + e * m->stride;
    memset(b, 0, (size_t)m->bs * m->bs * sizeof(double));
    return b;
}

/* A block is absent with probability 1/2 unless it is on or next to the
 * diagonal, so rows have a mixture of present blocks and fill-in. */
static int block_present(int i, int j, uint64_t seed)
{
    if (abs(i - j) <= 1)
        return 1;
    uint64_t s = seed ^ ((uint64_t)i << 32 | (uint32_t)j);
    return (up_k_rand(&s) & 1) != 0;
}

int up_k_slu_init(up_k_slu *m, int nb, int bs, uint64_t seed)
{
    if (make_slab(m, nb, bs))
        return -1;
    uint64_t vals = seed * 0x9e3779b97f4a7c15ull + 1;
    for (int i = 0; i < nb; i++) {
        for (int j = 0; j < nb; j++) {
            if (!block_present(i, j, seed))
                continue;
            double *b = new_block(m, (long)i * nb + j);
            for (int e = 0; e < bs * bs; e++)
                b[e] = up_k_rand_unit(&vals);
            /* Each row of the whole matrix sums to less than nb * bs in
             * absolute value off the diagonal: dominance keeps every pivot
             * away from zero. */
            if (i == j)
                for (int d = 0; d < bs; d++)
                    b[d * bs + d] += 2.0 * nb * bs;
            *up_k_slu_at(m, i, j) = b;
        }
    }
    return 0;
}

int up_k_slu_copy(up_k_slu *dst, const up_k_slu *src)
{
    if (make_slab(dst, src->nb, src->bs))
        return -1;
    for (long e = 0; e < (long)src->nb * src->nb; e++)
        if (src->blk[e]) {
            dst->blk[e] = dst->slab + e * dst->stride;
            memcpy(dst->blk[e], src->blk[e], (size_t)src->bs * src->bs * sizeof(double));
        }
    return 0;
}

void up_k_slu_free(up_k_slu *m)
{
    free(m->blk);
    free(m->slab);
    m->blk = NULL;
    m->slab = NULL;
}

double *up_k_slu_fill_in(up_k_slu *m, int i, int j)
{
    double **slot = up_k_slu_at(m, i, j);
    if (!*slot)
        *slot = new_block(m, (long)i * m->nb + j);
    return *slot;
}

void up_k_slu_lu0(double *a, int bs)
{
    for (int k = 0; k < bs; k++)
        for (int i = k + 1; i < bs; i++) {
            double l = a[i * bs + k] /= a[k * bs + k];
            for (int j = k + 1; j < bs; j++)
                a[i * bs + j] -= l * a[k * bs + j];
        }
}

void up_k_slu_fwd(const double *diag, double *row, int bs)
{
    /* Forward substitution with the unit lower triangle, row by row. */
    for (int k = 0; k < bs; k++)
        for (int i = k + 1; i < bs; i++) {
            double l = diag[i * bs + k];
            for (int j = 0; j < bs; j++)
                row[i * bs + j] -= l * row[k * bs + j];
        }
}

void up_k_slu_bdiv(const double *diag, double *col, int bs)
{
    /* Each row r of col solves x U = r, column by column. */
    for (int i = 0; i < bs; i++)
        for (int k = 0; k < bs; k++) {
            double x = col[i * bs + k] /= diag[k * bs + k];
            for (int j = k + 1; j < bs; j++)
                col[i * bs + j] -= x * diag[k * bs + j];
        }
}

void up_k_slu_bmod(const double *col, const double *row, double *inner, int bs)
{
    for (int i = 0; i < bs; i++)
        for (int k = 0; k < bs; k++) {
            double c = col[i * bs + k];
            for (int j = 0; j < bs; j++)
                inner[i * bs + j] -= c * row[k * bs + j];
        }
}

void up_k_slu_run_op(const up_k_slu_op *op)
{
    switch (op->kind) {
    case UP_K_SLU_FWD:
        up_k_slu_fwd(op->a, op->c, op->bs);
        break;
    case UP_K_SLU_BDIV:
        up_k_slu_bdiv(op->a, op->c, op->bs);
        break;
    case UP_K_SLU_BMOD:
        up_k_slu_bmod(op->a, op->b, op->c, op->bs);
        break;
    }
}

void up_k_slu_panel(up_k_slu *m, int k, up_k_slu_op_fn fn, void *ctx)
{
    int nb = m->nb, bs = m->bs;
    double *diag = *up_k_slu_at(m, k, k);
    up_k_slu_lu0(diag, bs);
    for (int j = k + 1; j < nb; j++)
        if (*up_k_slu_at(m, k, j)) {
            up_k_slu_op op = {UP_K_SLU_FWD, bs, diag, NULL, *up_k_slu_at(m, k, j)};
            fn(&op, ctx);
        }
    for (int i = k + 1; i < nb; i++)
        if (*up_k_slu_at(m, i, k)) {
            up_k_slu_op op = {UP_K_SLU_BDIV, bs, diag, NULL, *up_k_slu_at(m, i, k)};
            fn(&op, ctx);
        }
}

int up_k_slu_updates(up_k_slu *m, int k, up_k_slu_op_fn fn, void *ctx)
{
    int nb = m->nb, bs = m->bs;
    for (int i = k + 1; i < nb; i++) {
        const double *col = *up_k_slu_at(m, i, k);
        if (!col)
            continue;
        for (int j = k + 1; j < nb; j++) {
            const double *row = *up_k_slu_at(m, k, j);
            if (!row)
                continue;
            double *inner = up_k_slu_fill_in(m, i, j);
            if (!inner)
                return -1;
            up_k_slu_op op = {UP_K_SLU_BMOD, bs, col, row, inner};
            fn(&op, ctx);
        }
    }
    return 0;
}

static void run_now(const up_k_slu_op *op, void *ctx)
{
    (void)ctx;
    up_k_slu_run_op(op);
}

int up_k_slu_factor(up_k_slu *m)
{
    for (int k = 0; k < m->nb; k++) {
        up_k_slu_panel(m, k, run_now, NULL);
        if (up_k_slu_updates(m, k, run_now, NULL))
            return -1;
    }
    return 0;
}

double up_k_slu_rel_error(const up_k_slu *a, const up_k_slu *ref)
{
    if (a->nb != ref->nb || a->bs != ref->bs)
        return INFINITY;
    long cells = (long)a->bs * a->bs;
    double diff = 0, norm = 0;
    for (long e = 0; e < (long)a->nb * a->nb; e++) {
        const double *x = a->blk[e], *r = ref->blk[e];
        for (long c = 0; c < cells; c++) {
            double xv = x ? x[c] : 0, rv = r ? r[c] : 0;
            diff += (xv - rv) * (xv - rv);
            norm += rv * rv;
        }
    }
    if (isnan(diff))
        return INFINITY;
    return norm == 0 ? (diff == 0 ? 0 : INFINITY) : sqrt(diff / norm);
}

/* The block matrix as one dense row-major matrix of (nb * bs)^2. */
static double *densify(const up_k_slu *m)
{
    long n = (long)m->nb * m->bs;
    double *d = calloc((size_t)(n * n), sizeof *d);
    if (!d)
        return NULL;
    for (int bi = 0; bi < m->nb; bi++)
        for (int bj = 0; bj < m->nb; bj++) {
            const double *b = *up_k_slu_at(m, bi, bj);
            if (b)
                for (int r = 0; r < m->bs; r++)
                    memcpy(&d[((long)bi * m->bs + r) * n + (long)bj * m->bs], &b[r * m->bs],
                           (size_t)m->bs * sizeof *b);
        }
    return d;
}

double up_k_slu_residual(const up_k_slu *orig, const up_k_slu *lu)
{
    long n = (long)orig->nb * orig->bs;
    double *a = densify(orig), *f = densify(lu), *p = calloc((size_t)(n * n), sizeof(double));
    double err = INFINITY;
    if (a && f && p) {
        /* p = L U with L unit lower and U upper, both read from f. */
        for (long i = 0; i < n; i++)
            for (long k = 0; k < n; k++) {
                double l = k < i ? f[i * n + k] : (k == i ? 1.0 : 0.0);
                if (l != 0)
                    for (long j = k; j < n; j++)
                        p[i * n + j] += l * f[k * n + j];
            }
        err = up_k_rel_error(p, a, (size_t)(n * n));
    }
    free(a);
    free(f);
    free(p);
    return err;
}
