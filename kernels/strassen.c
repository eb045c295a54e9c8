#include "strassen.h"

#include <stdlib.h>

#include "kutil.h"

void up_k_matmul(up_k_mat a, up_k_mat b, up_k_mat c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double *ci = c.p + i * c.ld;
        for (size_t j = 0; j < n; j++)
            ci[j] = 0;
        for (size_t k = 0; k < n; k++) {
            double aik = a.p[i * a.ld + k];
            const double *bk = b.p + k * b.ld;
            for (size_t j = 0; j < n; j++)
                ci[j] += aik * bk[j];
        }
    }
}

static up_k_mat quad(up_k_mat m, size_t h, int qi, int qj)
{
    up_k_mat q = {m.p + (size_t)qi * h * m.ld + (size_t)qj * h, m.ld};
    return q;
}

/* out = x + sign * y, h x h. */
static void add(up_k_mat x, up_k_mat y, double sign, up_k_mat out, size_t h)
{
    for (size_t i = 0; i < h; i++)
        for (size_t j = 0; j < h; j++)
            out.p[i * out.ld + j] = x.p[i * x.ld + j] + sign * y.p[i * y.ld + j];
}

/* Which operand each product reads: a quadrant of A (or B), x, or the
 * sum x + sign * y when y >= 0. Quadrants: 0 = 11, 1 = 12, 2 = 21, 3 = 22.
 *   m0 = (a11 + a22)(b11 + b22)   m1 = (a21 + a22) b11
 *   m2 = a11 (b12 - b22)          m3 = a22 (b21 - b11)
 *   m4 = (a11 + a12) b22          m5 = (a21 - a11)(b11 + b12)
 *   m6 = (a12 - a22)(b21 + b22) */
typedef struct operand {
    signed char x, y, sign;
} operand;
static const operand left_of[7] = {{0, 3, 1}, {2, 3, 1},  {0, -1, 0}, {3, -1, 0},
                                   {0, 1, 1}, {2, 0, -1}, {1, 3, -1}};
static const operand right_of[7] = {{0, 3, 1},  {0, -1, 0}, {1, 3, -1}, {2, 0, -1},
                                    {3, -1, 0}, {0, 1, 1},  {2, 3, 1}};

static up_k_mat quadrant(up_k_mat m, size_t h, int q) { return quad(m, h, q / 2, q % 2); }

int up_k_strassen_alloc(up_k_strassen_level *lv, up_k_mat a, up_k_mat b, size_t n)
{
    size_t h = n / 2, hh = h * h;
    for (int i = 0; i < 17; i++)
        if (!(lv->mem[i] = malloc(hh * sizeof(double)))) {
            while (i--)
                free(lv->mem[i]);
            return -1;
        }
    lv->n = n;
    lv->a = a;
    lv->b = b;
    int next = 7; /* the sums' buffers follow the products' */
    for (int i = 0; i < 7; i++) {
        lv->m[i] = (up_k_mat){lv->mem[i], h};
        lv->left[i] =
            left_of[i].y < 0 ? quadrant(a, h, left_of[i].x) : (up_k_mat){lv->mem[next++], h};
        lv->right[i] =
            right_of[i].y < 0 ? quadrant(b, h, right_of[i].x) : (up_k_mat){lv->mem[next++], h};
    }
    return 0;
}

void up_k_strassen_operands(const up_k_strassen_level *lv, int i)
{
    size_t h = lv->n / 2;
    const operand *l = &left_of[i], *r = &right_of[i];
    if (l->y >= 0)
        add(quadrant(lv->a, h, l->x), quadrant(lv->a, h, l->y), l->sign, lv->left[i], h);
    if (r->y >= 0)
        add(quadrant(lv->b, h, r->x), quadrant(lv->b, h, r->y), r->sign, lv->right[i], h);
}

void up_k_strassen_join_rows(const up_k_strassen_level *lv, up_k_mat c, size_t lo, size_t hi)
{
    size_t h = lv->n / 2;
    const up_k_mat *m = lv->m;
    up_k_mat c11 = quad(c, h, 0, 0), c12 = quad(c, h, 0, 1), c21 = quad(c, h, 1, 0),
             c22 = quad(c, h, 1, 1);
    /* c11 = m0 + m3 - m4 + m6   c12 = m2 + m4
     * c21 = m1 + m3             c22 = m0 - m1 + m2 + m5 */
    for (size_t i = lo; i < hi; i++)
        for (size_t j = 0; j < h; j++) {
            size_t e = i * h + j;
            double m0 = m[0].p[e], m1 = m[1].p[e], m2 = m[2].p[e], m3 = m[3].p[e];
            double m4 = m[4].p[e], m5 = m[5].p[e], m6 = m[6].p[e];
            c11.p[i * c.ld + j] = m0 + m3 - m4 + m6;
            c12.p[i * c.ld + j] = m2 + m4;
            c21.p[i * c.ld + j] = m1 + m3;
            c22.p[i * c.ld + j] = m0 - m1 + m2 + m5;
        }
}

void up_k_strassen_free(up_k_strassen_level *lv)
{
    for (int i = 0; i < 17; i++) {
        free(lv->mem[i]);
        lv->mem[i] = NULL;
    }
}

int up_k_strassen_split(up_k_strassen_level *lv, up_k_mat a, up_k_mat b, size_t n)
{
    if (up_k_strassen_alloc(lv, a, b, n))
        return -1;
    for (int i = 0; i < 7; i++)
        up_k_strassen_operands(lv, i);
    return 0;
}

void up_k_strassen_join(up_k_strassen_level *lv, up_k_mat c)
{
    up_k_strassen_join_rows(lv, c, 0, lv->n / 2);
    up_k_strassen_free(lv);
}

int up_k_strassen(up_k_mat a, up_k_mat b, up_k_mat c, size_t n, size_t leaf)
{
    if (n <= leaf || n % 2) {
        up_k_matmul(a, b, c, n);
        return 0;
    }
    up_k_strassen_level lv;
    if (up_k_strassen_split(&lv, a, b, n))
        return -1;
    int rc = 0;
    for (int i = 0; i < 7; i++)
        rc |= up_k_strassen(lv.left[i], lv.right[i], lv.m[i], n / 2, leaf);
    up_k_strassen_join(&lv, c);
    return rc;
}

void up_k_matrix_fill(double *m, size_t n, uint64_t seed)
{
    uint64_t s = seed;
    for (size_t i = 0; i < n * n; i++)
        m[i] = up_k_rand_unit(&s);
}
