/* Nesting depth: regions nested 20 deep (each asking for two threads and
 * getting what it finds, often a team of one; its master opens the next) report up_level()
 * 1 .. 20, get it back after each nested region returns, and still run
 * tasks: fib with taskwait at the deepest level and at the first. */
#include <stdatomic.h>

#include <ultrapool/parallel.h>

#include "check.h"

#define DEPTH 20
#define FIB_N 18

static up_pool *pool;
static _Atomic int deepest, fib_done;

typedef struct fib_arg {
    int n;
    long r;
} fib_arg;

static void fib_task(void *p)
{
    fib_arg *a = p;
    if (a->n < 2) {
        a->r = a->n;
        return;
    }
    fib_arg x = {a->n - 1, 0}, y = {a->n - 2, 0};
    CHECK_EQ(up_task(fib_task, &x, NULL), UP_OK);
    CHECK_EQ(up_task(fib_task, &y, NULL), UP_OK);
    up_taskwait();
    a->r = x.r + y.r;
}

static long fib_seq(int n) { return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2); }

static void fib_check(void)
{
    if (up_single()) {
        fib_arg a = {FIB_N, 0};
        CHECK_EQ(up_task(fib_task, &a, NULL), UP_OK);
        up_taskwait();
        CHECK_EQ(a.r, fib_seq(FIB_N));
        atomic_fetch_add(&fib_done, 1);
    }
    up_barrier();
}

static void level_region(void *p)
{
    unsigned want = *(unsigned *)p;
    unsigned got = up_level();
    if (got != want) {
        fprintf(stderr, "up_level() is %u in a region nested %u deep\n", got, want);
        abort();
    }
    unsigned me = up_thread_num(), n = up_num_threads();
    CHECK_LT(me, n);
    if (want == 1 || want == DEPTH)
        fib_check();
    if (want < DEPTH && up_master()) {
        /* The master opens the next level (every member would make a
         * tree of up to 2^20 regions); the others wait at the barrier. */
        unsigned next = want + 1;
        CHECK_EQ(up_parallel(pool, 2, level_region, &next), UP_OK);
        CHECK_EQ(up_level(), want);
        CHECK_EQ(up_thread_num(), me);
        CHECK_EQ(up_num_threads(), n);
    } else if (want == DEPTH) {
        int d = atomic_load(&deepest);
        while ((unsigned)d < want && !atomic_compare_exchange_weak(&deepest, &d, (int)want))
            ;
    }
    up_barrier();
}

int main(void)
{
    CHECK_EQ(up_pool_create(&pool, NULL), UP_OK);
    CHECK_EQ(up_level(), 0);
    unsigned first = 1;
    CHECK_EQ(up_parallel(pool, 2, level_region, &first), UP_OK);
    CHECK_EQ(up_level(), 0);
    CHECK_EQ(atomic_load(&deepest), DEPTH);
    printf("deepest level %d, fib checks %d\n", atomic_load(&deepest), atomic_load(&fib_done));
    CHECK_GE(atomic_load(&fib_done), 2);
    up_pool_stop_and_wait(pool);
    up_pool_destroy(pool);
    return 0;
}
