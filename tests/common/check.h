/* A minimal test vocabulary: CHECK aborts the test with the failing
 * expression and location; tests read their size and seed from the
 * environment and print both, so a failure can be replayed. */
#ifndef UP_TEST_CHECK_H
#define UP_TEST_CHECK_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
            fflush(stdout);                                                                        \
            fflush(stderr);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_) {                                                                            \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", __FILE__, __LINE__,  \
                    #a, #b, a_, b_);                                                               \
            fflush(stdout);                                                                        \
            fflush(stderr);                                                                        \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Exit code ctest treats as "skipped" (SKIP_RETURN_CODE). */
#define TEST_SKIP 77

/* Size: the default, scaled by UP_TEST_SCALE (a float, default 1; the
 * sanitizer runs set it lower) and overridable by the named variable. */
static inline uint64_t test_size(const char *var, uint64_t dflt)
{
    const char *v = getenv(var);
    if (v && *v)
        return strtoull(v, NULL, 10);
    const char *sc = getenv("UP_TEST_SCALE");
    double scale = sc && *sc ? atof(sc) : 1.0;
    uint64_t n = (uint64_t)((double)dflt * scale);
    return n ? n : 1;
}

/* A shape parameter (a recursion depth, an exponent): overridable by the
 * named variable but never scaled, since scaling a depth changes what the
 * test checks (fib(25) scaled by 0.05 is fib(1)). Scale a repetition
 * count with test_size instead. */
static inline uint64_t test_param(const char *var, uint64_t dflt)
{
    const char *v = getenv(var);
    return v && *v ? strtoull(v, NULL, 10) : dflt;
}

static inline uint64_t test_seed(void)
{
    const char *v = getenv("UP_TEST_SEED");
    uint64_t seed = v && *v ? strtoull(v, NULL, 10) : (uint64_t)time(NULL);
    printf("seed %" PRIu64 " (UP_TEST_SEED to replay)\n", seed);
    return seed;
}

static inline uint64_t test_rand(uint64_t *s)
{
    /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline void test_sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static inline uint64_t test_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A run of rounds bounded by time as well as by count: a test whose every
 * round waits for threads to be started, woken or joined takes as long
 * per round as the scheduler makes it, many times longer on a busy
 * machine. test_budget_left() is 1 while the run may go on: always for
 * the first min rounds, then while ms milliseconds (the variable var, or
 * dflt_ms) have not passed since test_budget_start(). The test checks
 * its property on the rounds that ran and prints how many. */
typedef struct test_budget {
    uint64_t t0, ns, min;
} test_budget;

static inline test_budget test_budget_start(const char *var, uint64_t dflt_ms, uint64_t min)
{
    return (test_budget){test_now_ns(), test_param(var, dflt_ms) * 1000000u, min};
}

static inline int test_budget_left(const test_budget *b, uint64_t rounds_done)
{
    return rounds_done < b->min || test_now_ns() - b->t0 < b->ns;
}

static inline double test_budget_seconds(const test_budget *b)
{
    return (double)(test_now_ns() - b->t0) / 1e9;
}

/* Burns about n loop iterations of CPU (a compiler barrier per iteration
 * keeps the loop from being optimized away). */
static inline void test_spin(unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        __asm__ __volatile__("" ::: "memory");
}

/* How much longer a wait may take in this build: the sanitizers slow
 * every thread, and TSan most (it serialises much of the synchronisation
 * the pool does). A bound on how long a condition takes to come true is
 * multiplied by this; a test never asserts a speed with it. */
static inline unsigned test_time_factor(void)
{
#if defined(UP_TSAN_BUILD)
    return 5;
#elif defined(UP_SANITIZER_BUILD)
    return 2;
#else
    return 1;
#endif
}

/* Polls cond about every millisecond until it holds, for up to ms
 * milliseconds of wall-clock time times test_time_factor(), and fails the
 * test when the bound passes first, naming the condition and the time it
 * waited. The clock bounds the wait, not a count of polls: on a busy
 * machine each 1 ms sleep lasts longer. cond is evaluated once more after
 * the bound has passed, so a thread the machine delayed until then is
 * still seen. */
#define WAIT_UNTIL(cond, ms)                                                                       \
    do {                                                                                           \
        uint64_t w_t0_ = test_now_ns();                                                            \
        uint64_t w_bound_ = (uint64_t)(ms)*test_time_factor() * 1000000u;                          \
        for (;;) {                                                                                 \
            uint64_t w_elapsed_ = test_now_ns() - w_t0_;                                           \
            if (cond)                                                                              \
                break;                                                                             \
            if (w_elapsed_ > w_bound_) {                                                           \
                fprintf(stderr,                                                                    \
                        "%s:%d: WAIT_UNTIL timed out after %.0f ms (bound %u ms x %u): %s\n",      \
                        __FILE__, __LINE__, (double)w_elapsed_ / 1e6, (unsigned)(ms),              \
                        test_time_factor(), #cond);                                                \
                fflush(stdout);                                                                    \
                fflush(stderr);                                                                    \
                abort();                                                                           \
            }                                                                                      \
            test_sleep_ms(1);                                                                      \
        }                                                                                          \
    } while (0)

/* Waits until the count read by count_expr reaches target, polling about
 * every millisecond, and fails the test only when the count stops moving:
 * stall_ms milliseconds (times test_time_factor()) without a change. Many
 * tasks on a busy machine take as long as the machine gives them; what
 * tells a hang is no progress, so the bound restarts at each change. A
 * failure names the expression, the count reached and the time waited. */
#define WAIT_PROGRESS(count_expr, target, stall_ms)                                                \
    do {                                                                                           \
        uint64_t p_t0_ = test_now_ns(), p_moved_ = p_t0_;                                          \
        uint64_t p_bound_ = (uint64_t)(stall_ms)*test_time_factor() * 1000000u;                    \
        unsigned long long p_want_ = (unsigned long long)(target);                                 \
        unsigned long long p_seen_ = (unsigned long long)(count_expr);                             \
        while (p_seen_ < p_want_) {                                                                \
            uint64_t p_now_ = test_now_ns();                                                       \
            if (p_now_ - p_moved_ > p_bound_) {                                                    \
                fprintf(stderr,                                                                    \
                        "%s:%d: WAIT_PROGRESS stalled: %s at %llu of %llu, unchanged for %.0f "    \
                        "ms (bound %u ms x %u), %.0f ms in all\n",                                 \
                        __FILE__, __LINE__, #count_expr, p_seen_, p_want_,                         \
                        (double)(p_now_ - p_moved_) / 1e6, (unsigned)(stall_ms),                   \
                        test_time_factor(), (double)(p_now_ - p_t0_) / 1e6);                       \
                fflush(stdout);                                                                    \
                fflush(stderr);                                                                    \
                abort();                                                                           \
            }                                                                                      \
            test_sleep_ms(1);                                                                      \
            unsigned long long p_next_ = (unsigned long long)(count_expr);                         \
            if (p_next_ != p_seen_)                                                                \
                p_moved_ = test_now_ns();                                                          \
            p_seen_ = p_next_;                                                                     \
        }                                                                                          \
    } while (0)

#endif
