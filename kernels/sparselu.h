/* LU factorisation (no pivoting) of a sparse matrix stored as nb x nb
 * blocks of bs x bs doubles, where absent blocks are zero. Elimination
 * step k factors the diagonal block, updates the blocks right of it in row
 * k (fwd) and below it in column k (bdiv), then every block (i, j) with
 * both (i, k) and (k, j) present (bmod), creating it if it was absent
 * (fill-in). Within a step, the fwd and bdiv calls are independent of
 * each other, and so are the bmod calls: that is where parallel versions
 * make tasks.
 *
 * The generated matrices are diagonally dominant, so the factorisation is
 * stable without pivoting. */
#ifndef UP_KERNEL_SPARSELU_H
#define UP_KERNEL_SPARSELU_H

#include <stdint.h>

typedef struct up_k_slu {
    int nb, bs;
    double **blk; /* nb * nb pointers, row-major; NULL for an absent block */
    double *slab; /* every block's place, present or not (stride apart) */
    long stride;  /* doubles from one block's place to the next */
} up_k_slu;

/* Builds an nb x nb block matrix with a seeded sparsity pattern (the
 * diagonal and its neighbours always present). 0, or -1 when out of
 * memory. */
int up_k_slu_init(up_k_slu *m, int nb, int bs, uint64_t seed);
int up_k_slu_copy(up_k_slu *dst, const up_k_slu *src);
void up_k_slu_free(up_k_slu *m);

static inline double **up_k_slu_at(const up_k_slu *m, int i, int j)
{
    return &m->blk[(long)i * m->nb + j];
}
/* Makes block (i, j) present (zeros, in its place in the slab) if absent;
 * never NULL. Parallel versions call it before creating the bmod task for
 * (i, j). */
double *up_k_slu_fill_in(up_k_slu *m, int i, int j);

/* The four block operations (bs x bs, row-major). */
void up_k_slu_lu0(double *diag, int bs);                     /* diag = L U in place */
void up_k_slu_fwd(const double *diag, double *row, int bs);  /* row = L^-1 row */
void up_k_slu_bdiv(const double *diag, double *col, int bs); /* col = col U^-1 */
/* inner -= col * row */
void up_k_slu_bmod(const double *col, const double *row, double *inner, int bs);

/* One block operation of an elimination step: fwd (a: the diagonal
 * block, c: a block of row k), bdiv (a: the diagonal block, c: a block of
 * column k) or bmod (c -= a b). Small enough to copy into a task. */
typedef enum up_k_slu_kind { UP_K_SLU_FWD, UP_K_SLU_BDIV, UP_K_SLU_BMOD } up_k_slu_kind;
typedef struct up_k_slu_op {
    up_k_slu_kind kind;
    int bs;
    const double *a, *b;
    double *c;
} up_k_slu_op;
void up_k_slu_run_op(const up_k_slu_op *op);
typedef void (*up_k_slu_op_fn)(const up_k_slu_op *op, void *ctx);

/* Step k, for a caller that decides how each operation runs (at once, or
 * as a task): up_k_slu_panel() factors the diagonal block, then hands fn
 * every fwd and bdiv of the step; up_k_slu_updates(), called once those
 * are done, hands fn every bmod, after making its fill-in block (so block
 * pointers change only on the calling thread). The operations handed
 * over by one call are independent of each other. up_k_slu_updates()
 * returns 0, or -1 when a fill-in block could not be allocated. */
void up_k_slu_panel(up_k_slu *m, int k, up_k_slu_op_fn fn, void *ctx);
int up_k_slu_updates(up_k_slu *m, int k, up_k_slu_op_fn fn, void *ctx);

/* The sequential factorisation: every step's operations run at once.
 * 0, or -1 when a fill-in block could not be allocated. */
int up_k_slu_factor(up_k_slu *m);

/* ||a - ref||_F / ||ref||_F, absent blocks counting as zeros. */
double up_k_slu_rel_error(const up_k_slu *a, const up_k_slu *ref);
/* ||L U - A||_F / ||A||_F of a factorisation lu of orig, by dense
 * multiplication (for small test sizes): checks the factorisation itself. */
double up_k_slu_residual(const up_k_slu *orig, const up_k_slu *lu);

#endif
