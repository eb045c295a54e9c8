#include "msort.h"

#include <string.h>

#include "kutil.h"

/* Below this many elements, insertion sort beats further merging. */
#define INSERTION_MAX 24

void up_k_msort_fill(int32_t *a, size_t n, uint64_t seed)
{
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++)
        a[i] = (int32_t)(uint32_t)up_k_rand(&s);
}

static void insertion_sort(int32_t *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        int32_t v = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1] > v; j--)
            a[j] = a[j - 1];
        a[j] = v;
    }
}

void up_k_merge(const int32_t *x, size_t nx, const int32_t *y, size_t ny, int32_t *out)
{
    size_t i = 0, j = 0, k = 0;
    while (i < nx && j < ny)
        out[k++] = y[j] < x[i] ? y[j++] : x[i++];
    memcpy(out + k, x + i, (nx - i) * sizeof *x);
    memcpy(out + k + (nx - i), y + j, (ny - j) * sizeof *y);
}

size_t up_k_lower_bound(const int32_t *x, size_t n, int32_t v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void up_k_merge_split(const up_k_merge_job *job, up_k_merge_job *lo, up_k_merge_job *hi)
{
    up_k_merge_job j = *job;
    if (j.nx < j.ny) {
        j.x = job->y;
        j.y = job->x;
        j.nx = job->ny;
        j.ny = job->nx;
    }
    size_t mx = j.nx / 2, my = up_k_lower_bound(j.y, j.ny, j.x[mx]);
    *lo = (up_k_merge_job){j.x, j.y, mx, my, j.out};
    *hi = (up_k_merge_job){j.x + mx, j.y + my, j.nx - mx, j.ny - my, j.out + mx + my};
}

void up_k_msort_into(int32_t *a, int32_t *tmp, size_t n, int into_tmp)
{
    if (n <= INSERTION_MAX) {
        insertion_sort(a, n);
        if (into_tmp)
            memcpy(tmp, a, n * sizeof *a);
        return;
    }
    size_t h = n / 2;
    /* The halves land in the buffer this level merges from. */
    up_k_msort_into(a, tmp, h, !into_tmp);
    up_k_msort_into(a + h, tmp + h, n - h, !into_tmp);
    const int32_t *src = into_tmp ? a : tmp;
    up_k_merge(src, h, src + h, n - h, into_tmp ? tmp : a);
}

void up_k_msort(int32_t *a, int32_t *tmp, size_t n) { up_k_msort_into(a, tmp, n, 0); }

static uint64_t mix(uint64_t z, uint64_t k)
{
    z = (z ^ k) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 31)) * 0x94d049bb133111ebull;
    return z ^ (z >> 29);
}

up_k_msort_sig up_k_msort_signature(const int32_t *a, size_t n)
{
    up_k_msort_sig s = {n, 0, 0};
    for (size_t i = 0; i < n; i++) {
        uint64_t v = (uint32_t)a[i];
        s.sum1 += mix(v, 0x243f6a8885a308d3ull);
        s.sum2 += mix(v, 0x13198a2e03707344ull);
    }
    return s;
}

int up_k_msort_verify(const up_k_msort_sig *input, const int32_t *out, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (out[i - 1] > out[i])
            return -1;
    up_k_msort_sig s = up_k_msort_signature(out, n);
    return s.n == input->n && s.sum1 == input->sum1 && s.sum2 == input->sum2 ? 0 : -1;
}
