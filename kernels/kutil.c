#include "kutil.h"

#include <math.h>

uint64_t up_k_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double up_k_rand_unit(uint64_t *state)
{
    /* The top 53 bits make an exact double in [0, 1). */
    return (double)(up_k_rand(state) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

double up_k_rel_error(const double *x, const double *ref, size_t count)
{
    double diff = 0, norm = 0;
    for (size_t i = 0; i < count; i++) {
        double d = x[i] - ref[i];
        diff += d * d;
        norm += ref[i] * ref[i];
    }
    if (isnan(diff))
        return INFINITY;
    if (norm == 0)
        return diff == 0 ? 0 : INFINITY;
    return sqrt(diff / norm);
}
