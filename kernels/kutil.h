/* Small helpers the kernels share: a seeded generator for inputs and the
 * relative error used by the verifiers of the floating-point kernels. */
#ifndef UP_KERNEL_KUTIL_H
#define UP_KERNEL_KUTIL_H

#include <stddef.h>
#include <stdint.h>

/* splitmix64: one 64-bit value per call, reproducible from the seed. */
uint64_t up_k_rand(uint64_t *state);
/* A uniform double in [-1, 1). */
double up_k_rand_unit(uint64_t *state);
/* ||x - ref||_F / ||ref||_F over count values (0 when both are zero,
 * infinity when ref is zero and x is not, or when x holds a NaN). */
double up_k_rel_error(const double *x, const double *ref, size_t count);

#endif
