/* Reductions across a team. Each member writes its partial value into its
 * own cache-line slot, a barrier follows, then every member combines all
 * slots in member order (the same order everywhere, so every member gets
 * the same bits). Slots alternate between two sets by reduction count: the
 * set written by reduction k is written again by reduction k + 2 only after
 * every member passed the barrier of reduction k + 1, that is after every
 * member finished reading it. */
#include <string.h>

#include "par_internal.h"
#include "up_layer.h" /* up__set_error */

/* Sums and products are taken in U, the unsigned type of T's width for
 * the integers (T itself for floating point), and stored back bit for
 * bit: integer results wrap around modulo 2^width, as two's complement
 * does, instead of overflowing, which for signed T would be undefined. */
#define COMBINE(T, U, a, b, op)                                                                    \
    do {                                                                                           \
        T x_, y_;                                                                                  \
        U u_;                                                                                      \
        memcpy(&x_, a, sizeof x_);                                                                 \
        memcpy(&y_, b, sizeof y_);                                                                 \
        switch (op) {                                                                              \
        case UP_RED_SUM:                                                                           \
            u_ = (U)((U)x_ + (U)y_);                                                               \
            memcpy(&x_, &u_, sizeof x_);                                                           \
            break;                                                                                 \
        case UP_RED_PROD:                                                                          \
            u_ = (U)((U)x_ * (U)y_);                                                               \
            memcpy(&x_, &u_, sizeof x_);                                                           \
            break;                                                                                 \
        case UP_RED_MIN:                                                                           \
            x_ = y_ < x_ ? y_ : x_;                                                                \
            break;                                                                                 \
        case UP_RED_MAX:                                                                           \
            x_ = y_ > x_ ? y_ : x_;                                                                \
            break;                                                                                 \
        }                                                                                          \
        memcpy(a, &x_, sizeof x_);                                                                 \
    } while (0)

static size_t type_size(up_red_type type)
{
    switch (type) {
    case UP_RED_INT64:
    case UP_RED_UINT64:
    case UP_RED_DOUBLE:
        return 8;
    case UP_RED_FLOAT:
    case UP_RED_INT32:
        return 4;
    }
    return 0;
}

static void combine_builtin(void *into, const void *from, up_red_op op, up_red_type type)
{
    switch (type) {
    case UP_RED_INT64:
        COMBINE(int64_t, uint64_t, into, from, op);
        break;
    case UP_RED_UINT64:
        COMBINE(uint64_t, uint64_t, into, from, op);
        break;
    case UP_RED_DOUBLE:
        COMBINE(double, double, into, from, op);
        break;
    case UP_RED_FLOAT:
        COMBINE(float, float, into, from, op);
        break;
    case UP_RED_INT32:
        COMBINE(int32_t, uint32_t, into, from, op);
        break;
    }
}

/* The combiner an OpenMP backend calls (it gets the operator through
 * cctx, so the built-in operators have one definition). */
typedef struct combiner {
    up_red_op op;
    up_red_type type;
    up_combine_fn user;
} combiner;

static void combine_for_backend(void *into, const void *from, void *cctx)
{
    const combiner *c = cctx;
    if (c->user)
        c->user(into, from);
    else
        combine_builtin(into, from, c->op, c->type);
}

/* Publishes this member's partial, waits, and combines; combine is NULL
 * for the built-in operators. */
static int reduce(void *value, size_t size, up_red_op op, up_red_type type, up_combine_fn combine,
                  const char *who)
{
    const up_omp_ops *omp = par_omp();
    if (omp) {
        int rc = par_backend_error(omp, who);
        if (rc == UP_OK) {
            combiner c = {op, type, combine};
            rc = omp->reduce(value, size, combine_for_backend, &c);
            if (rc != UP_OK)
                up__set_error("%s: in an OpenMP team that up_parallel did not open", who);
        }
        return rc;
    }
    par_thread *th = par_tls;
    unsigned n = th && th->c.team ? up__load_relaxed(&th->c.team->size) : 1;
    if (n < 2)
        return UP_OK;
    par_team *t = th->c.team;
    unsigned set = (unsigned)(th->c.reduce_count++ & 1);
    memcpy(t->members[th->c.member].reduce[set], value, size);
    par_barrier(th);
    _Alignas(16) char acc[256];
    memcpy(acc, t->members[0].reduce[set], size);
    for (unsigned m = 1; m < n; m++) {
        if (combine)
            combine(acc, t->members[m].reduce[set]);
        else
            combine_builtin(acc, t->members[m].reduce[set], op, type);
    }
    memcpy(value, acc, size);
    return UP_OK;
}

int up_reduce(void *value, up_red_op op, up_red_type type)
{
    size_t size = type_size(type);
    if (!value || size == 0 || (unsigned)op > UP_RED_MAX) {
        if (!value)
            up__set_error("up_reduce: value is NULL");
        else if (size == 0)
            up__set_error("up_reduce: type %d is not an up_red_type", (int)type);
        else
            up__set_error("up_reduce: op %d is not an up_red_op", (int)op);
        return UP_EINVAL;
    }
    return reduce(value, size, op, type, NULL, "up_reduce");
}

int up_reduce_user(void *value, size_t size, up_combine_fn combine)
{
    if (!value || !combine || size == 0 || size > 256) {
        if (!value || !combine)
            up__set_error("up_reduce_user: %s is NULL", !value ? "value" : "combine");
        else
            up__set_error("up_reduce_user: size %zu (1 to 256)", size);
        return UP_EINVAL;
    }
    return reduce(value, size, UP_RED_SUM, UP_RED_INT64, combine, "up_reduce_user");
}
