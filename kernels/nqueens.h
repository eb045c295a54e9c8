/* N-queens: the number of ways to place n queens on an n x n board with no
 * two attacking each other, by depth-first search over rows with the
 * occupied columns and diagonals as bit masks.
 *
 * A partial placement is the state below; parallel versions expand the
 * first rows into tasks with up_k_nq_place() and count the rest of each
 * branch with up_k_nqueens_from(). */
#ifndef UP_KERNEL_NQUEENS_H
#define UP_KERNEL_NQUEENS_H

#include <stdint.h>

#define UP_K_NQ_MAX 20

typedef struct up_k_nq_state {
    uint32_t cols;  /* columns holding a queen */
    uint32_t left;  /* squares of this row attacked along down-left diagonals */
    uint32_t right; /* ... along down-right diagonals */
    int row;        /* rows placed so far */
    int n;
} up_k_nq_state;

static inline up_k_nq_state up_k_nq_start(int n)
{
    up_k_nq_state s = {0, 0, 0, 0, n};
    return s;
}

/* The free columns of the next row, as a mask. */
static inline uint32_t up_k_nq_free(const up_k_nq_state *s)
{
    uint32_t all = (s->n >= 32) ? 0xffffffffu : ((1u << s->n) - 1);
    return ~(s->cols | s->left | s->right) & all;
}

/* The state after placing a queen on column bit (a single set bit of
 * up_k_nq_free()) of the next row. */
static inline up_k_nq_state up_k_nq_place(const up_k_nq_state *s, uint32_t bit)
{
    up_k_nq_state t = {s->cols | bit, (s->left | bit) << 1, (s->right | bit) >> 1, s->row + 1,
                       s->n};
    return t;
}

/* Solutions that complete the partial placement s. */
uint64_t up_k_nqueens_from(const up_k_nq_state *s);
/* Solutions for an n x n board (1 <= n <= UP_K_NQ_MAX). */
uint64_t up_k_nqueens(int n);
/* Published counts (OEIS A000170) for n <= 18, 0 beyond. */
uint64_t up_k_nqueens_known(int n);
/* 0 when count is the published count for n (n <= 18). */
int up_k_nqueens_verify(int n, uint64_t count);

#endif
