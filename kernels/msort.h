/* Merge sort of 32-bit integers with a scratch buffer of the same size.
 *
 * The recursion alternates between the two buffers (each level merges
 * from one into the other), so no level copies. Parallel versions run the
 * two halves as tasks down to a cutoff, sort below it with
 * up_k_msort_into(), and merge in parallel by splitting the larger run at
 * its middle and the other one at the matching up_k_lower_bound(). */
#ifndef UP_KERNEL_MSORT_H
#define UP_KERNEL_MSORT_H

#include <stddef.h>
#include <stdint.h>

/* Fills a with n values from the seed. */
void up_k_msort_fill(int32_t *a, size_t n, uint64_t seed);

/* Sorts a[0, n); the result ends in tmp when into_tmp is 1, in a when 0.
 * The other buffer is scratch. */
void up_k_msort_into(int32_t *a, int32_t *tmp, size_t n, int into_tmp);
/* Sorts a[0, n) in place, using tmp[0, n) as scratch. */
void up_k_msort(int32_t *a, int32_t *tmp, size_t n);

/* Merges the sorted runs x[0, nx) and y[0, ny) into out. */
void up_k_merge(const int32_t *x, size_t nx, const int32_t *y, size_t ny, int32_t *out);
/* The first index i in sorted x[0, n) with x[i] >= v (n if none). */
size_t up_k_lower_bound(const int32_t *x, size_t n, int32_t v);

/* A merge of the sorted runs x[0, nx) and y[0, ny) into out. */
typedef struct up_k_merge_job {
    const int32_t *x, *y;
    size_t nx, ny;
    int32_t *out;
} up_k_merge_job;
/* Splits a merge into two independent ones: the larger run is cut at its
 * middle element v, the other where v would go (up_k_lower_bound), and
 * hi writes right after lo. Both are smaller than job when its larger run
 * has at least two elements. */
void up_k_merge_split(const up_k_merge_job *job, up_k_merge_job *lo, up_k_merge_job *hi);

/* What a permutation keeps: the count and two order-independent sums of
 * mixed values. Two arrays with different multisets give equal
 * signatures with probability about 2^-128 (for inputs not built to
 * collide). */
typedef struct up_k_msort_sig {
    uint64_t n, sum1, sum2;
} up_k_msort_sig;
up_k_msort_sig up_k_msort_signature(const int32_t *a, size_t n);
/* 0 when out[0, n) is sorted and has the signature of the input. */
int up_k_msort_verify(const up_k_msort_sig *input, const int32_t *out, size_t n);

#endif
