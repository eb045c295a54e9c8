/* A C program that knows ultrapool only through its installed headers and
 * libraries: every public header, a pool, the OpenMP-style API (a region, a
 * shared loop, a taskwait-based fib) and the version, each result checked.
 * Exit status 0 only when every check held. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <ultrapool/chan.h>
#include <ultrapool/export.h>
#include <ultrapool/group.h>
#include <ultrapool/parallel.h>
#include <ultrapool/pool.h>
#include <ultrapool/sem.h>
#include <ultrapool/version.h>
#ifdef UP_CONSUMER_ALL_HEADERS
#include UP_CONSUMER_ALL_HEADERS /* every header the install holds, listed at configure time */
#endif

#define FIB_N    20
#define FIB_WANT 6765 /* fib(20) */
#define LOOP_N   100000

static atomic_int ran;
static void count_task(void *arg)
{
    (void)arg;
    atomic_fetch_add(&ran, 1);
}

typedef struct fib_arg {
    int n;
    long result;
} fib_arg;

/* Each task waits for its two children; their arguments live in its frame,
 * which stays valid until up_taskwait returns. */
static void fib_task(void *p)
{
    fib_arg *a = p;
    if (a->n < 2) {
        a->result = a->n;
        return;
    }
    fib_arg x = {a->n - 1, 0}, y = {a->n - 2, 0};
    if (up_task(fib_task, &x, NULL) != UP_OK)
        fib_task(&x);
    if (up_task(fib_task, &y, NULL) != UP_OK)
        fib_task(&y);
    up_taskwait();
    a->result = x.result + y.result;
}

typedef struct region_ctx {
    fib_arg fib;
    atomic_llong sum;
    atomic_int members;
    atomic_int errors;
} region_ctx;

static void sum_range(int64_t lo, int64_t hi, void *p)
{
    region_ctx *c = p;
    long long s = 0;
    for (int64_t i = lo; i < hi; i++)
        s += i;
    atomic_fetch_add(&c->sum, s);
}

static void region(void *p)
{
    region_ctx *c = p;
    atomic_fetch_add(&c->members, 1);
    if (up_for(0, LOOP_N, NULL, sum_range, c) != UP_OK)
        atomic_fetch_add(&c->errors, 1);
    if (up_single()) {
        if (up_task(fib_task, &c->fib, NULL) != UP_OK)
            fib_task(&c->fib);
        up_taskwait();
    }
    up_barrier();
}

int main(void)
{
    int bad = 0;
    if (strcmp(up_version(), UP_VERSION_STRING) != 0) {
        fprintf(stderr, "consumer: library %s, headers %s\n", up_version(), UP_VERSION_STRING);
        bad = 1;
    }
    up_pool *p;
    if (up_pool_create(&p, NULL) != UP_OK) {
        fprintf(stderr, "consumer: up_pool_create: %s\n", up_last_error());
        return 1;
    }
    for (int i = 0; i < 1000; i++)
        if (up_submit_wait(p, count_task, NULL) != UP_OK)
            bad = 1;

    region_ctx c = {.fib = {FIB_N, -1}};
    if (up_parallel(p, 2, region, &c) != UP_OK) {
        fprintf(stderr, "consumer: up_parallel: %s\n", up_last_error());
        bad = 1;
    }
    long long want_sum = (long long)LOOP_N * (LOOP_N - 1) / 2;
    if (up_pool_destroy(p) != UP_OK)
        bad = 1;
    if (atomic_load(&ran) != 1000 || c.fib.result != FIB_WANT || atomic_load(&c.sum) != want_sum ||
        atomic_load(&c.errors) || atomic_load(&c.members) < 1)
        bad = 1;
    printf("consumer (C, ultrapool %s): 1000 tasks ran %d; fib(%d) = %ld (want %d); "
           "up_for sum %lld (want %lld) over %d members\n",
           up_version(), atomic_load(&ran), FIB_N, c.fib.result, FIB_WANT, atomic_load(&c.sum),
           want_sum, atomic_load(&c.members));
    return bad;
}
