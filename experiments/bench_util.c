#include "bench_util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sched.h>
#endif

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void bench_sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    nanosleep(&ts, NULL);
}

static _Atomic unsigned next_stripe = BENCH_OWNED;
static _Thread_local unsigned my_stripe = ~0u;

int bench_completion_parse(const char *text, bench_completion *mode)
{
    if (!strcmp(text, "striped"))
        *mode = BENCH_COMPLETION_STRIPED;
    else if (!strcmp(text, "shared"))
        *mode = BENCH_COMPLETION_SHARED;
    else
        return -1;
    return 0;
}

const char *bench_completion_name(bench_completion mode)
{
    return mode == BENCH_COMPLETION_SHARED ? "shared" : "striped";
}

void bench_done_set_mode(bench_done *d, bench_completion mode) { d->mode = mode; }

void bench_done_reset(bench_done *d)
{
    for (int i = 0; i < BENCH_STRIPES + BENCH_SHARED; i++)
        atomic_store(&d->stripe[i].n, 0);
    atomic_store(&d->latch.left, 0);
    d->armed = 0;
}

void bench_done_arm(bench_done *d, uint64_t tasks)
{
    bench_done_reset(d);
    d->armed = tasks;
    atomic_store(&d->latch.left, (int64_t)tasks);
}

void bench_done_claim(unsigned i) { my_stripe = i % BENCH_OWNED; }

void bench_done_add(bench_done *d)
{
    if (d->mode == BENCH_COMPLETION_SHARED) {
        /* Release: the task's effects before the count; acquire: the one
         * that takes it to zero sees every other task's. */
        atomic_fetch_sub_explicit(&d->latch.left, 1, memory_order_acq_rel);
        return;
    }
    if (my_stripe == ~0u) {
        unsigned k = atomic_fetch_add(&next_stripe, 1);
        my_stripe = k < BENCH_STRIPES ? k : BENCH_STRIPES + k % BENCH_SHARED;
    }
    _Atomic uint64_t *c = &d->stripe[my_stripe].n;
    if (my_stripe < BENCH_STRIPES)
        atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                              memory_order_release);
    else
        atomic_fetch_add_explicit(c, 1, memory_order_release);
}

uint64_t bench_done_sum(bench_done *d)
{
    uint64_t s = 0;
    for (int i = 0; i < BENCH_STRIPES + BENCH_SHARED; i++)
        s += atomic_load_explicit(&d->stripe[i].n, memory_order_acquire);
    /* The latch's decrements; zero when it was not armed, and in the
     * striped mode, which never touches it. */
    int64_t left = atomic_load_explicit(&d->latch.left, memory_order_acquire);
    return s + (uint64_t)((int64_t)d->armed - left);
}

uint64_t bench_done_wait(bench_done *d, uint64_t target)
{
    if (d->mode == BENCH_COMPLETION_SHARED) {
        (void)target; /* the latch counts down the armed size */
        while (atomic_load_explicit(&d->latch.left, memory_order_acquire) > 0)
            bench_sleep_ns(1000000);
        return bench_now_ns();
    }
    while (bench_done_sum(d) < target)
        bench_sleep_ns(1000000);
    return bench_now_ns();
}

uint64_t bench_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void bench_shuffle(unsigned *v, size_t n, uint64_t *state)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = bench_rand(state) % i;
        unsigned t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

unsigned bench_cpus(void)
{
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        return (unsigned)CPU_COUNT(&set);
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

int bench_parse_list(const char *s, unsigned *out, int max)
{
    int n = 0;
    while (*s) {
        char *end;
        unsigned long v = strtoul(s, &end, 10);
        if (end == s || v == 0 || n == max)
            return -1;
        out[n++] = (unsigned)v;
        s = end;
        if (*s == ',')
            s++;
        else if (*s)
            return -1;
    }
    return n;
}
