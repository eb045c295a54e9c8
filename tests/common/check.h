/* A minimal test vocabulary: CHECK aborts the test with the failing
 * expression and location, CHECK_EQ and the orderings also with both
 * values; WAIT_UNTIL fails a wait that does not end in time; tests read
 * their size and seed from the environment and print both, so a failure
 * can be replayed. */
#ifndef UP_TEST_CHECK_H
#define UP_TEST_CHECK_H

#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
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

/* A value as the comparisons below see it: its kind (signed, unsigned,
 * floating or pointer, from the operand's own type) and its value, so
 * that -1 and UINT64_MAX stay different and each prints as itself. A
 * cast of both operands to one integer type would make those two equal,
 * print a size or a uint64_t above INT64_MAX as a negative number, and
 * truncate 0.5 to 0. */
typedef struct test_val {
    char kind; /* 's', 'u', 'f' or 'p' */
    union {
        long long s;
        unsigned long long u;
        double f;
        const volatile void *p;
    } v;
} test_val;

static inline test_val test_val_s(long long x) { return (test_val){'s', {.s = x}}; }
static inline test_val test_val_u(unsigned long long x) { return (test_val){'u', {.u = x}}; }
static inline test_val test_val_f(double x) { return (test_val){'f', {.f = x}}; }
static inline test_val test_val_p(const volatile void *x) { return (test_val){'p', {.p = x}}; }
/* Plain char is signed on some targets (x86), unsigned on others (Arm). */
static inline test_val test_val_c(char x) { return CHAR_MIN < 0 ? test_val_s(x) : test_val_u(x); }

/* The test_val of x, by x's type after lvalue conversion (an _Atomic
 * variable gives its plain type, an enum its compatible integer type, an
 * array a pointer). Any other type is taken as a pointer: one that is not
 * (a struct) fails to compile rather than compare wrongly. */
// clang-format off
#define TEST_VAL(x)                                                                                \
    _Generic((x),                                                                                  \
        _Bool: test_val_u,                                                                         \
        char: test_val_c,                                                                          \
        signed char: test_val_s,                                                                   \
        short: test_val_s,                                                                         \
        int: test_val_s,                                                                           \
        long: test_val_s,                                                                          \
        long long: test_val_s,                                                                     \
        unsigned char: test_val_u,                                                                 \
        unsigned short: test_val_u,                                                                \
        unsigned int: test_val_u,                                                                  \
        unsigned long: test_val_u,                                                                 \
        unsigned long long: test_val_u,                                                            \
        float: test_val_f,                                                                         \
        double: test_val_f,                                                                        \
        default: test_val_p)(x)
// clang-format on

static inline long double test_val_ld(test_val v)
{
    return v.kind == 'f'   ? (long double)v.v.f
           : v.kind == 's' ? (long double)v.v.s
                           : (long double)v.v.u;
}

/* -1, 0 or 1 as a is below, equal to or above b by mathematical value: a
 * negative number is below every unsigned one, whatever C's conversions
 * would make of the pair. A pointer counts as its address, so that it
 * compares with 0 as the null pointer does. With a floating operand both
 * compare as long double (exact for a double and for 64-bit integers on
 * x86 and Arm), and a NaN gives 2, for which only "not equal" holds. */
static inline int test_val_cmp(test_val a, test_val b)
{
    if (a.kind == 'p')
        a = test_val_u((uintptr_t)a.v.p);
    if (b.kind == 'p')
        b = test_val_u((uintptr_t)b.v.p);
    if (a.kind == 'f' || b.kind == 'f') {
        long double x = test_val_ld(a), y = test_val_ld(b);
        return x < y ? -1 : x > y ? 1 : x == y ? 0 : 2;
    }
    if (a.kind == 's' && b.kind == 's')
        return (a.v.s > b.v.s) - (a.v.s < b.v.s);
    if (a.kind == 's' && a.v.s < 0)
        return -1;
    if (b.kind == 's' && b.v.s < 0)
        return 1;
    unsigned long long x = a.kind == 's' ? (unsigned long long)a.v.s : a.v.u;
    unsigned long long y = b.kind == 's' ? (unsigned long long)b.v.s : b.v.u;
    return (x > y) - (x < y);
}

static inline const char *test_val_str(test_val v, char *buf, size_t size)
{
    if (v.kind == 's')
        snprintf(buf, size, "%lld", v.v.s);
    else if (v.kind == 'u')
        snprintf(buf, size, "%llu", v.v.u);
    else if (v.kind == 'f')
        snprintf(buf, size, "%.17g", v.v.f);
    else
        snprintf(buf, size, "%p", (const void *)v.v.p);
    return buf;
}

enum test_op { TEST_EQ, TEST_NE, TEST_LT, TEST_LE, TEST_GT, TEST_GE };

/* Checks a op b for the CHECK_EQ family; a failure prints both operands'
 * text and values and aborts. */
static inline void test_check_cmp(test_val a, test_val b, enum test_op op, const char *ta,
                                  const char *tb, const char *file, int line)
{
    static const char *const names[] = {"==", "!=", "<", "<=", ">", ">="};
    int c = test_val_cmp(a, b);
    int ok = op == TEST_EQ   ? c == 0
             : op == TEST_NE ? c != 0
             : op == TEST_LT ? c == -1
             : op == TEST_LE ? c == -1 || c == 0
             : op == TEST_GT ? c == 1
                             : c == 1 || c == 0;
    if (ok)
        return;
    char x[48], y[48];
    fprintf(stderr, "%s:%d: CHECK failed: %s %s %s (left %s, right %s)\n", file, line, ta,
            names[op], tb, test_val_str(a, x, sizeof x), test_val_str(b, y, sizeof y));
    fflush(stdout);
    fflush(stderr);
    abort();
}

/* CHECK_EQ(a, b) and the orderings: each operand is evaluated once and
 * compared by value (see test_val_cmp); a failure names both expressions
 * as written and prints both values. */
#define CHECK_CMP_(a, op, b, ta, tb)                                                               \
    test_check_cmp(TEST_VAL(a), TEST_VAL(b), op, ta, tb, __FILE__, __LINE__)
#define CHECK_EQ(a, b) CHECK_CMP_(a, TEST_EQ, b, #a, #b)
#define CHECK_NE(a, b) CHECK_CMP_(a, TEST_NE, b, #a, #b)
#define CHECK_LT(a, b) CHECK_CMP_(a, TEST_LT, b, #a, #b)
#define CHECK_LE(a, b) CHECK_CMP_(a, TEST_LE, b, #a, #b)
#define CHECK_GT(a, b) CHECK_CMP_(a, TEST_GT, b, #a, #b)
#define CHECK_GE(a, b) CHECK_CMP_(a, TEST_GE, b, #a, #b)

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

/* A bounded wait: how long a condition may take to come true, ms
 * milliseconds of wall-clock time times test_time_factor(). The clock
 * bounds it, not a count of polls: on a busy machine each 1 ms sleep
 * lasts longer. */
typedef struct test_wait_bound {
    uint64_t t0, bound_ns;
    unsigned ms;
} test_wait_bound;

static inline test_wait_bound test_wait_start(unsigned ms)
{
    return (test_wait_bound){test_now_ns(), (uint64_t)ms * test_time_factor() * 1000000u, ms};
}

/* The time waited so far. Read it before the condition's last look, so
 * that the condition is looked at once more after the bound has passed
 * and a thread the machine delayed until then is still seen. */
static inline uint64_t test_wait_elapsed(const test_wait_bound *w) { return test_now_ns() - w->t0; }

static inline void test_wait_failed(const test_wait_bound *w, uint64_t elapsed, const char *what,
                                    const char *cond, const char *file, int line)
{
    fprintf(stderr, "%s:%d: %s timed out after %.0f ms (bound %u ms x %u): %s\n", file, line, what,
            (double)elapsed / 1e6, w->ms, test_time_factor(), cond);
    fflush(stdout);
    fflush(stderr);
    abort();
}

/* Polls cond about every millisecond until it holds, for up to ms
 * milliseconds (times test_time_factor(), see test_wait_bound), and fails the
 * test when the bound passes first, naming the condition and the time it
 * waited. A wait that must end: for one the machine may legitimately
 * never end (a skip, a note), use test_poll_until, which says whether the
 * condition came true. */
#define WAIT_UNTIL(cond, ms)                                                                       \
    do {                                                                                           \
        test_wait_bound w_ = test_wait_start(ms);                                                  \
        for (;;) {                                                                                 \
            uint64_t w_elapsed_ = test_wait_elapsed(&w_);                                          \
            if (cond)                                                                              \
                break;                                                                             \
            if (w_elapsed_ > w_.bound_ns)                                                          \
                test_wait_failed(&w_, w_elapsed_, "WAIT_UNTIL", #cond, __FILE__, __LINE__);        \
            test_sleep_ms(1);                                                                      \
        }                                                                                          \
    } while (0)

/* The same wait, but its end is the caller's to judge: 1 when cond(arg)
 * came true within the bound, 0 when the bound passed first. For a
 * condition this machine may never make true (a task that cannot park
 * here: the caller skips), or one the test only prefers to have waited
 * for (a warm-up). A wait that must end is WAIT_UNTIL. */
static inline int test_poll_until(int (*cond)(void *), void *arg, unsigned ms)
{
    test_wait_bound w = test_wait_start(ms);
    for (;;) {
        uint64_t elapsed = test_wait_elapsed(&w);
        if (cond(arg))
            return 1;
        if (elapsed > w.bound_ns)
            return 0;
        test_sleep_ms(1);
    }
}

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
