#include "nqueens.h"

uint64_t up_k_nqueens_from(const up_k_nq_state *s)
{
    if (s->row == s->n)
        return 1;
    uint64_t count = 0;
    for (uint32_t free = up_k_nq_free(s); free; free &= free - 1) {
        up_k_nq_state t = up_k_nq_place(s, free & -free);
        count += up_k_nqueens_from(&t);
    }
    return count;
}

uint64_t up_k_nqueens(int n)
{
    if (n < 1 || n > UP_K_NQ_MAX)
        return 0;
    up_k_nq_state s = up_k_nq_start(n);
    return up_k_nqueens_from(&s);
}

uint64_t up_k_nqueens_known(int n)
{
    static const uint64_t known[] = {1,     0,      0,       2,        10,       4,
                                     40,    92,     352,     724,      2680,     14200,
                                     73712, 365596, 2279184, 14772512, 95815104, 666090624};
    return n >= 1 && n <= 18 ? known[n - 1] : 0;
}

int up_k_nqueens_verify(int n, uint64_t count)
{
    return n >= 1 && n <= 18 && up_k_nqueens_known(n) == count ? 0 : -1;
}
