/* Jacobi iteration for Laplace's equation on an n x n grid with a fixed
 * boundary (the top edge held at 1, the others at 0): every sweep sets
 * each interior point to the mean of its four neighbours from the
 * previous sweep. Two grids alternate; sweep s reads grid s % 2 and
 * writes grid (s + 1) % 2.
 *
 * The interior is cut into bs x bs blocks. Block (bi, bj) of sweep s
 * reads block (bi, bj) and its four neighbours of sweep s - 1 and writes
 * its own block: parallel versions express exactly that with task
 * dependencies, on the addresses up_k_jacobi_block_addr() gives. */
#ifndef UP_KERNEL_JACOBI_H
#define UP_KERNEL_JACOBI_H

#include <stddef.h>
#include <stdint.h>

typedef struct up_k_jacobi {
    size_t n;        /* interior points per side */
    size_t bs;       /* block side; divides n */
    size_t nb;       /* blocks per side */
    double *grid[2]; /* (n + 2)^2 each, the boundary included */
} up_k_jacobi;

/* 0, or -1 when bs does not divide n or memory runs out. The interior
 * starts with seeded values in [0, 1). */
int up_k_jacobi_init(up_k_jacobi *j, size_t n, size_t bs, uint64_t seed);
void up_k_jacobi_free(up_k_jacobi *j);

/* One block of one sweep: reads src, writes dst. */
void up_k_jacobi_block(const up_k_jacobi *j, const double *src, double *dst, size_t bi, size_t bj);
/* The address standing for block (bi, bj) of grid g in dependencies. */
const void *up_k_jacobi_block_addr(const up_k_jacobi *j, const double *g, size_t bi, size_t bj);

/* The sequential blocked iteration: sweeps sweeps, block by block. */
void up_k_jacobi_run(up_k_jacobi *j, int sweeps);
/* The grid holding the result after sweeps sweeps. */
double *up_k_jacobi_result(const up_k_jacobi *j, int sweeps);
/* The same iteration point by point, without blocks (for tests). */
void up_k_jacobi_unblocked(up_k_jacobi *j, int sweeps);
/* Values per grid, the boundary included: (n + 2)^2. */
size_t up_k_jacobi_cells(const up_k_jacobi *j);

#endif
