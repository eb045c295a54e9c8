/* The sequential kernels against independent references, so the
 * variants are compared with something known to be right: fib and
 * nqueens against published values (and nqueens against a plain
 * backtracking search), merge sort against qsort, the sparse LU
 * factorisation against its own product (L U = A), Strassen against the
 * classical product, blocked Jacobi against the point-by-point sweep,
 * and the Task Bench verifier must catch a corrupted point. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fib.h"
#include "jacobi.h"
#include "kutil.h"
#include "msort.h"
#include "nqueens.h"
#include "sparselu.h"
#include "strassen.h"
#include "taskbench.h"

/* Queens by the textbook search over a column array: shares nothing with
 * the bit-mask kernel. */
static int safe(const int *col, int row, int c)
{
    for (int r = 0; r < row; r++)
        if (col[r] == c || abs(col[r] - c) == row - r)
            return 0;
    return 1;
}

static uint64_t queens_plain(int *col, int row, int n)
{
    if (row == n)
        return 1;
    uint64_t count = 0;
    for (int c = 0; c < n; c++)
        if (safe(col, row, c)) {
            col[row] = c;
            count += queens_plain(col, row + 1, n);
        }
    return count;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

static void test_fib(void)
{
    static const uint64_t known[][2] = {{0, 0},
                                        {1, 1},
                                        {2, 1},
                                        {10, 55},
                                        {20, 6765},
                                        {30, 832040},
                                        {50, 12586269025ull},
                                        {90, 2880067194370816120ull}};
    for (unsigned i = 0; i < sizeof known / sizeof *known; i++) {
        CHECK_EQ(up_k_fib_iter((int)known[i][0]), known[i][1]);
        CHECK_EQ(up_k_fib_verify((int)known[i][0], known[i][1]), 0);
        CHECK_EQ(up_k_fib_verify((int)known[i][0], known[i][1] + 1), -1);
    }
    CHECK_EQ(up_k_fib(25), 75025);
    CHECK_EQ(up_k_fib_calls(0), 1);
    CHECK_EQ(up_k_fib_calls(1), 1);
    CHECK_EQ(up_k_fib_calls(2), 3);
    CHECK_EQ(up_k_fib_calls(5), 15);
}

static void test_nqueens(void)
{
    int col[UP_K_NQ_MAX];
    for (int n = 1; n <= 10; n++) {
        uint64_t c = up_k_nqueens(n);
        CHECK_EQ(c, queens_plain(col, 0, n));
        CHECK_EQ(up_k_nqueens_verify(n, c), 0);
        CHECK_EQ(up_k_nqueens_verify(n, c + 1), -1);
    }
    CHECK_EQ(up_k_nqueens(12), 14200);
    CHECK_EQ(up_k_nqueens_known(13), 73712);
}

static void test_msort(uint64_t seed)
{
    size_t sizes[] = {0, 1, 2, 23, 24, 25, 1000, (size_t)test_size("UP_TEST_SORT_N", 300007)};
    for (unsigned i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        size_t n = sizes[i];
        int32_t *a = malloc(n * 4 + 4), *t = malloc(n * 4 + 4), *q = malloc(n * 4 + 4);
        CHECK(a && t && q);
        up_k_msort_fill(a, n, seed + i);
        memcpy(q, a, n * 4);
        up_k_msort_sig sig = up_k_msort_signature(a, n);
        up_k_msort(a, t, n);
        qsort(q, n, 4, cmp_i32);
        CHECK(memcmp(a, q, n * 4) == 0);
        CHECK_EQ(up_k_msort_verify(&sig, a, n), 0);
        if (n >= 2 && a[0] != a[n - 1]) {
            /* Unsorted: caught. */
            int32_t x = a[0];
            a[0] = a[n - 1];
            a[n - 1] = x;
            CHECK_EQ(up_k_msort_verify(&sig, a, n), -1);
            a[n - 1] = a[0];
            a[0] = x;
            /* Sorted but not a permutation of the input: caught. */
            if (a[n - 2] != a[n - 1]) {
                a[n - 1] = a[n - 2];
                CHECK_EQ(up_k_msort_verify(&sig, a, n), -1);
            }
        }
        free(a);
        free(t);
        free(q);
    }
    int32_t x[] = {1, 3, 3, 7}, y[] = {0, 3, 8}, out[7];
    up_k_merge(x, 4, y, 3, out);
    int32_t want[] = {0, 1, 3, 3, 3, 7, 8};
    CHECK(memcmp(out, want, sizeof out) == 0);
    CHECK_EQ(up_k_lower_bound(x, 4, 3), 1);
    CHECK_EQ(up_k_lower_bound(x, 4, 9), 4);

    /* A split merge, both halves merged on their own, equals the whole
     * merge; both halves are smaller; either run may be the larger. */
    uint64_t s = seed;
    for (int trial = 0; trial < 200; trial++) {
        size_t nx = 2 + up_k_rand(&s) % 300, ny = up_k_rand(&s) % 300;
        if (trial % 2) {
            size_t t = nx;
            nx = ny + 2;
            ny = t;
        }
        int32_t *a = malloc((nx + ny) * 4), *whole = malloc((nx + ny) * 4),
                *parts = malloc((nx + ny) * 4);
        CHECK(a && whole && parts);
        for (size_t i = 0; i < nx + ny; i++)
            a[i] = (int32_t)(up_k_rand(&s) % 50); /* many equal keys */
        int32_t *tmp = malloc((nx + ny) * 4);
        up_k_msort(a, tmp, nx);
        up_k_msort(a + nx, tmp, ny);
        up_k_merge(a, nx, a + nx, ny, whole);
        up_k_merge_job job = {a, a + nx, nx, ny, parts}, lo, hi;
        up_k_merge_split(&job, &lo, &hi);
        CHECK(lo.nx + lo.ny < nx + ny && hi.nx + hi.ny < nx + ny);
        CHECK_EQ(lo.nx + lo.ny + hi.nx + hi.ny, nx + ny);
        up_k_merge(lo.x, lo.nx, lo.y, lo.ny, lo.out);
        up_k_merge(hi.x, hi.nx, hi.y, hi.ny, hi.out);
        CHECK(memcmp(whole, parts, (nx + ny) * 4) == 0);
        free(a);
        free(whole);
        free(parts);
        free(tmp);
    }
}

static void test_sparselu(uint64_t seed)
{
    up_k_slu a, lu;
    CHECK_EQ(up_k_slu_init(&a, 7, 5, seed), 0);
    int absent = 0;
    for (int e = 0; e < 49; e++)
        absent += a.blk[e] == NULL;
    CHECK_GT(absent, 0); /* sparse, so fill-in happens */
    CHECK_EQ(up_k_slu_copy(&lu, &a), 0);
    CHECK_EQ(up_k_slu_factor(&lu), 0);
    double res = up_k_slu_residual(&a, &lu);
    printf("sparselu 7x7 blocks of 5: ||LU - A|| / ||A|| = %.3g\n", res);
    CHECK_LT(res, 1e-12);
    CHECK_EQ(up_k_slu_rel_error(&lu, &lu), 0);
    CHECK_GT(up_k_slu_rel_error(&a, &lu), 1e-6);
    up_k_slu_free(&a);
    up_k_slu_free(&lu);
}

static void test_strassen(uint64_t seed)
{
    size_t sizes[] = {1, 2, 64, 128, 136, 256};
    for (unsigned i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        size_t n = sizes[i];
        double *a = malloc(n * n * 8), *b = malloc(n * n * 8), *c = malloc(n * n * 8),
               *r = malloc(n * n * 8);
        CHECK(a && b && c && r);
        up_k_matrix_fill(a, n, seed + i);
        up_k_matrix_fill(b, n, seed + 100 + i);
        CHECK_EQ(up_k_strassen((up_k_mat){a, n}, (up_k_mat){b, n}, (up_k_mat){c, n}, n, 16), 0);
        up_k_matmul((up_k_mat){a, n}, (up_k_mat){b, n}, (up_k_mat){r, n}, n);
        double err = up_k_rel_error(c, r, n * n);
        CHECK_LT(err, 1e-12);
        c[n * n / 2] += 1.0;
        CHECK_GT(up_k_rel_error(c, r, n * n), 1e-6);
        free(a);
        free(b);
        free(c);
        free(r);
    }
}

static void test_jacobi(uint64_t seed)
{
    up_k_jacobi blocked, plain;
    CHECK_EQ(up_k_jacobi_init(&blocked, 60, 7, seed), -1); /* 7 does not divide 60 */
    CHECK_EQ(up_k_jacobi_init(&blocked, 60, 12, seed), 0);
    CHECK_EQ(up_k_jacobi_init(&plain, 60, 12, seed), 0);
    up_k_jacobi_run(&blocked, 25);
    up_k_jacobi_unblocked(&plain, 25);
    /* The same arithmetic in the same order per point: equal bit for bit. */
    CHECK(memcmp(up_k_jacobi_result(&blocked, 25), up_k_jacobi_result(&plain, 25),
                 up_k_jacobi_cells(&blocked) * sizeof(double)) == 0);
    /* The maximum principle: interior values stay within the boundary's
     * and the start's range [0, 1]. */
    const double *g = up_k_jacobi_result(&blocked, 25);
    for (size_t i = 0; i < up_k_jacobi_cells(&blocked); i++)
        CHECK(g[i] >= 0.0 && g[i] <= 1.0);
    CHECK_NE(up_k_jacobi_block_addr(&blocked, g, 0, 1), up_k_jacobi_block_addr(&blocked, g, 1, 0));
    up_k_jacobi_free(&blocked);
    up_k_jacobi_free(&plain);
}

static void test_taskbench(void)
{
    for (int p = 0; p < UP_K_TB_NPATTERNS; p++) {
        CHECK_EQ(up_k_tb_pattern_parse(up_k_tb_pattern_name(p)), p);
        up_k_tb g;
        CHECK_EQ(up_k_tb_init(&g, p, 7, 6, 10), 0);
        int d[UP_K_TB_MAX_DEPS];
        static const int want_mid[] = {0, 1, 3, 5}, want_edge[] = {0, 1, 2, 3};
        CHECK_EQ(up_k_tb_deps(&g, 0, 3, d), 0);
        CHECK_EQ(up_k_tb_deps(&g, 1, 3, d), want_mid[p]);
        CHECK_EQ(up_k_tb_deps(&g, 1, 0, d), want_edge[p]);
        up_k_tb_run_seq(&g);
        CHECK_EQ(up_k_tb_verify(&g), 0);
        /* A point computed from a stale dependency is caught. */
        *up_k_tb_cell(&g, 2, 3) ^= 1;
        CHECK_EQ(up_k_tb_verify(&g), -1);
        up_k_tb_free(&g);
    }
    CHECK_EQ(up_k_tb_pattern_parse("nope"), -1);
}

int main(void)
{
    uint64_t seed = test_seed();
    test_fib();
    test_nqueens();
    test_msort(seed);
    test_sparselu(seed);
    test_strassen(seed);
    test_jacobi(seed);
    test_taskbench();
    printf("every kernel matches its independent reference\n");
    return 0;
}
