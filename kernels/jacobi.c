#include "jacobi.h"

#include <stdlib.h>

#include "kutil.h"

size_t up_k_jacobi_cells(const up_k_jacobi *j) { return (j->n + 2) * (j->n + 2); }

int up_k_jacobi_init(up_k_jacobi *j, size_t n, size_t bs, uint64_t seed)
{
    if (bs == 0 || n % bs)
        return -1;
    j->n = n;
    j->bs = bs;
    j->nb = n / bs;
    size_t w = n + 2;
    j->grid[0] = malloc(w * w * sizeof(double));
    j->grid[1] = malloc(w * w * sizeof(double));
    if (!j->grid[0] || !j->grid[1]) {
        up_k_jacobi_free(j);
        return -1;
    }
    uint64_t s = seed;
    for (size_t r = 0; r < w; r++)
        for (size_t c = 0; c < w; c++) {
            double v;
            if (r == 0)
                v = 1.0;
            else if (r == w - 1 || c == 0 || c == w - 1)
                v = 0.0;
            else
                v = 0.5 * (up_k_rand_unit(&s) + 1.0);
            /* Both grids carry the boundary; the interior of the second is
             * overwritten by the first sweep. */
            j->grid[0][r * w + c] = v;
            j->grid[1][r * w + c] = v;
        }
    return 0;
}

void up_k_jacobi_free(up_k_jacobi *j)
{
    free(j->grid[0]);
    free(j->grid[1]);
    j->grid[0] = j->grid[1] = NULL;
}

void up_k_jacobi_block(const up_k_jacobi *j, const double *src, double *dst, size_t bi, size_t bj)
{
    size_t w = j->n + 2;
    size_t r0 = 1 + bi * j->bs, c0 = 1 + bj * j->bs;
    for (size_t r = r0; r < r0 + j->bs; r++) {
        const double *up = src + (r - 1) * w, *mid = src + r * w, *down = src + (r + 1) * w;
        double *out = dst + r * w;
        for (size_t c = c0; c < c0 + j->bs; c++)
            out[c] = 0.25 * (up[c] + down[c] + mid[c - 1] + mid[c + 1]);
    }
}

const void *up_k_jacobi_block_addr(const up_k_jacobi *j, const double *g, size_t bi, size_t bj)
{
    return g + (1 + bi * j->bs) * (j->n + 2) + 1 + bj * j->bs;
}

void up_k_jacobi_run(up_k_jacobi *j, int sweeps)
{
    for (int s = 0; s < sweeps; s++) {
        const double *src = j->grid[s % 2];
        double *dst = j->grid[(s + 1) % 2];
        for (size_t bi = 0; bi < j->nb; bi++)
            for (size_t bj = 0; bj < j->nb; bj++)
                up_k_jacobi_block(j, src, dst, bi, bj);
    }
}

double *up_k_jacobi_result(const up_k_jacobi *j, int sweeps) { return j->grid[sweeps % 2]; }

void up_k_jacobi_unblocked(up_k_jacobi *j, int sweeps)
{
    size_t w = j->n + 2;
    for (int s = 0; s < sweeps; s++) {
        const double *src = j->grid[s % 2];
        double *dst = j->grid[(s + 1) % 2];
        for (size_t r = 1; r <= j->n; r++)
            for (size_t c = 1; c <= j->n; c++)
                dst[r * w + c] = 0.25 * (src[(r - 1) * w + c] + src[(r + 1) * w + c] +
                                         src[r * w + c - 1] + src[r * w + c + 1]);
    }
}
