/* Matrix product C = A B of n x n doubles by Strassen's method: seven
 * half-size products instead of eight, combined with additions, down to
 * a leaf size where the classical product takes over.
 *
 * One level is split into parts so parallel versions can run the seven
 * products as tasks, each forming its own operand sums first, and combine
 * them into C in row ranges at once (at n = 1024, with the benchmark's
 * allocator settings, the top level's sums took 4.0 ms and its combination
 * 1.1 ms on one thread, of a product of about 195 ms). Matrices are
 * row-major with a leading dimension, so quadrants are views, not copies. */
#ifndef UP_KERNEL_STRASSEN_H
#define UP_KERNEL_STRASSEN_H

#include <stddef.h>
#include <stdint.h>

/* A view of a square matrix: element (i, j) at p[i * ld + j]. */
typedef struct up_k_mat {
    double *p;
    size_t ld;
} up_k_mat;

/* C = A B by the classical triple loop. */
void up_k_matmul(up_k_mat a, up_k_mat b, up_k_mat c, size_t n);

/* One level of Strassen on n x n (n even): product i is
 * m[i] = left[i] * right[i], each n/2 x n/2. */
typedef struct up_k_strassen_level {
    size_t n;
    up_k_mat a, b;
    up_k_mat left[7], right[7], m[7];
    /* The 7 products and 10 operand sums, one block each: a single block
     * of 17 would pass glibc's 32 MB mmap threshold at n = 1024 and be
     * mapped and faulted in anew on every call from a thread whose heap
     * lacks the room. */
    double *mem[17];
} up_k_strassen_level;

/* The level in parts that parallel code can spread over tasks:
 *   alloc     the buffers, and the views of A and B each product reads;
 *             no arithmetic. 0, or -1 when out of memory.
 *   operands  product i's operand sums, into buffers only product i
 *             uses: the seven calls may run at the same time;
 *   join_rows rows [lo, hi) of every quadrant of C from the products,
 *             0 <= lo <= hi <= n/2: disjoint ranges may run at the same
 *             time;
 *   free      the buffers. */
int up_k_strassen_alloc(up_k_strassen_level *lv, up_k_mat a, up_k_mat b, size_t n);
void up_k_strassen_operands(const up_k_strassen_level *lv, int i);
void up_k_strassen_join_rows(const up_k_strassen_level *lv, up_k_mat c, size_t lo, size_t hi);
void up_k_strassen_free(up_k_strassen_level *lv);

/* alloc, then every product's operands. 0, or -1 when out of memory. */
int up_k_strassen_split(up_k_strassen_level *lv, up_k_mat a, up_k_mat b, size_t n);
/* C from the seven products, then free. */
void up_k_strassen_join(up_k_strassen_level *lv, up_k_mat c);

/* C = A B, recursing while n > leaf and n is even. 0, or -1 when out of
 * memory. */
int up_k_strassen(up_k_mat a, up_k_mat b, up_k_mat c, size_t n, size_t leaf);

/* n x n values in [-1, 1) from the seed, into a contiguous buffer. */
void up_k_matrix_fill(double *m, size_t n, uint64_t seed);

#endif
