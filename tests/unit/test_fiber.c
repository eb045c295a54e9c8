/* Fibers and their stacks (runtime/src/fiber.h, os/stack_pool.h): values
 * through many switches; a fiber's registers, floating-point control word
 * and stack contents intact after it was suspended on one thread and
 * resumed on another; 100,000 fibers parked at once within 8 KiB of RSS
 * each; an overflow dying on the guard page with the message, and other
 * faults left to the default action; every stack of every chunk guarded
 * (the kernel refuses to read its guard page, reads the page above); the
 * pool's reuse, hot and cold lists, limits and argument checks; the raw
 * backends (assembly and
 * ucontext) in plain builds. */
#include "check.h"
#include "child.h"
#include "fiber.h"
#include "os/stack_pool.h"

#include <errno.h>
#include <fenv.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ultrapool/pool.h>

#if defined(UP_SANITIZER_BUILD)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

static up__stack_pool pool;

static up__stack *get_stack(void)
{
    up__stack *s = NULL;
    CHECK_EQ(up__stack_acquire(&pool, &s), 0);
    CHECK(s != NULL);
    return s;
}

/* ---- 1. Values through many switches ---- */

static uint64_t pingpong_rounds;

static void pingpong_fn(up__fiber *self, void *arg)
{
    up__fiber *back = arg;
    uint64_t v = 0;
    for (uint64_t i = 0; i < pingpong_rounds; i++) {
        /* Send v + 1, receive the next value: main sends back 2 * v. */
        uintptr_t got = (uintptr_t)up__fiber_switch(self, back, (void *)(uintptr_t)(v + 1));
        v = got;
    }
    up__fiber_exit(self, back, (void *)(uintptr_t)0xdeadu);
}

static void test_pingpong(void)
{
    pingpong_rounds = test_size("UP_TEST_FIBER_ROUNDS", 1000000);
    up__fiber main_f, f;
    up__fiber_init_thread(&main_f);
    up__stack *s = get_stack();
    CHECK_EQ(up__fiber_init(&f, s->lo, s->size, up__stack_guard_size(&pool), pingpong_fn), 0);
    uint64_t expect = 0;
    uintptr_t got = (uintptr_t)up__fiber_switch(&main_f, &f, &main_f);
    for (uint64_t i = 0; i < pingpong_rounds; i++) {
        CHECK_EQ(got, expect + 1);
        expect = (expect + 1) * 2 % 1000003u;
        got = (uintptr_t)up__fiber_switch(&main_f, &f, (void *)(uintptr_t)expect);
    }
    CHECK_EQ(got, 0xdeadu);
    up__fiber_destroy(&f);
    up__stack_release(&pool, s);
    printf("pingpong: %llu round trips on the %s switch\n", (unsigned long long)pingpong_rounds,
           up__fiber_backend());
}

/* ---- 2. Migration: suspended on thread A, resumed on thread B ---- */

struct hop {
    up__fiber *back; /* the context to switch to next */
    int step;
};

static uint64_t mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x9e3779b97f4a7c15ull;
    return x ^ (x >> 29);
}

static up__fiber hop_fiber;
static volatile int hop_checked;

/* Many values live across each switch, so the compiler keeps some in
 * callee-saved registers (integer and, on AArch64, d8-d15) and spills the
 * rest to the fiber's stack; all must come back. The fiber also sets its
 * own rounding mode, which must travel with it and never leak into the
 * threads it runs on. */
static volatile uint64_t hop_seed = 12345;

static void hop_fn(up__fiber *self, void *arg)
{
    struct hop *h = arg;
    unsigned char buf[3000];
    uint64_t a0 = mix(hop_seed + 0), a1 = mix(hop_seed + 1), a2 = mix(hop_seed + 2),
             a3 = mix(hop_seed + 3), a4 = mix(hop_seed + 4), a5 = mix(hop_seed + 5),
             a6 = mix(hop_seed + 6), a7 = mix(hop_seed + 7);
    double d0 = (double)(a0 % 1000) / 3.0, d1 = (double)(a1 % 1000) / 7.0,
           d2 = (double)(a2 % 1000) * 0.5, d3 = (double)(a3 % 1000) * 1e-300,
           d4 = (double)(a4 % 1000) / 11.0, d5 = -(double)(a5 % 1000) / 13.0;
    float f0 = (float)(a6 % 100) / 7.0f, f1 = -(float)(a7 % 100) / 9.0f;
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)mix(i + hop_seed);
    CHECK_EQ(fesetround(FE_UPWARD), 0);
    volatile double one = 1.0, three = 3.0;
    double up_third = one / three;

    h = up__fiber_switch(self, h->back, NULL); /* park on thread A */
    CHECK_EQ(h->step, 2);                      /* resumed on thread B */

    CHECK_EQ(fegetround(), FE_UPWARD);
    CHECK_EQ(one / three, up_third);
    CHECK_EQ(fesetround(FE_TONEAREST), 0);
    CHECK_LT(one / three, up_third); /* rounding to nearest gives the lower neighbour here */
    for (size_t i = 0; i < sizeof buf; i++)
        CHECK_EQ(buf[i], (unsigned char)mix(i + hop_seed));
    /* hop_seed is read anew (volatile), so the values before the switch
     * had to survive it: in registers or on this stack. */
    CHECK(a0 == mix(hop_seed + 0) && a1 == mix(hop_seed + 1) && a2 == mix(hop_seed + 2));
    CHECK(a3 == mix(hop_seed + 3) && a4 == mix(hop_seed + 4) && a5 == mix(hop_seed + 5));
    CHECK(a6 == mix(hop_seed + 6) && a7 == mix(hop_seed + 7));
    CHECK_EQ(d0, (double)(mix(hop_seed + 0) % 1000) / 3.0);
    CHECK_EQ(d1, (double)(mix(hop_seed + 1) % 1000) / 7.0);
    CHECK_EQ(d2, (double)(mix(hop_seed + 2) % 1000) * 0.5);
    CHECK_EQ(d3, (double)(mix(hop_seed + 3) % 1000) * 1e-300);
    CHECK_EQ(d4, (double)(mix(hop_seed + 4) % 1000) / 11.0);
    CHECK_EQ(d5, -(double)(mix(hop_seed + 5) % 1000) / 13.0);
    CHECK_EQ(f0, (float)(mix(hop_seed + 6) % 100) / 7.0f);
    CHECK_EQ(f1, -(float)(mix(hop_seed + 7) % 100) / 9.0f);
    hop_checked = 1;
    up__fiber_exit(self, h->back, NULL);
}

static void *hop_thread_b(void *arg)
{
    (void)arg;
    CHECK_EQ(fegetround(), FE_TONEAREST);
    up__fiber b;
    up__fiber_init_thread(&b);
    struct hop h = {&b, 2};
    up__fiber_switch(&b, &hop_fiber, &h);
    CHECK_EQ(fegetround(), FE_TONEAREST);
    return NULL;
}

static void *hop_thread_a(void *arg)
{
    up__fiber *a_ctx = malloc(sizeof *a_ctx);
    up__stack *s = arg;
    up__fiber_init_thread(a_ctx);
    CHECK_EQ(up__fiber_init(&hop_fiber, s->lo, s->size, up__stack_guard_size(&pool), hop_fn), 0);
    struct hop h = {a_ctx, 1};
    up__fiber_switch(a_ctx, &hop_fiber, &h);
    CHECK_EQ(fegetround(), FE_TONEAREST); /* the fiber's rounding mode stayed with it */
    free(a_ctx);                          /* nothing of thread A may be needed again */
    return NULL;
}

static void test_migration(void)
{
    up__stack *s = get_stack();
    pthread_t a, b;
    CHECK_EQ(pthread_create(&a, NULL, hop_thread_a, s), 0);
    CHECK_EQ(pthread_join(a, NULL), 0);
    CHECK_EQ(pthread_create(&b, NULL, hop_thread_b, NULL), 0);
    CHECK_EQ(pthread_join(b, NULL), 0);
    CHECK(hop_checked);
    up__fiber_destroy(&hop_fiber);
    up__stack_release(&pool, s);
    printf("migration: registers, stack, rounding mode intact on another thread\n");
}

/* ---- 3. Many parked fibers and their memory ---- */

static long rss_pages(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return -1;
    long size, rss;
    int ok = fscanf(f, "%ld %ld", &size, &rss) == 2;
    fclose(f);
    return ok ? rss : -1;
}

struct parked {
    up__fiber f;
    up__stack *s;
};
static up__fiber park_main;
static uint64_t park_resumed;

static void park_fn(up__fiber *self, void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    volatile char frame[256]; /* a waiter's usual depth: one small frame */
    frame[0] = (char)id;
    uintptr_t again = (uintptr_t)up__fiber_switch(self, &park_main, NULL);
    CHECK_EQ(again, id + 1);
    CHECK_EQ(frame[0], (char)id);
    park_resumed++;
    up__fiber_exit(self, &park_main, NULL);
}

/* Creates n fibers on p's stacks, parks them all, measures RSS, resumes
 * each once. Returns 0, or 77 when /proc is missing. */
static int park_many(up__stack_pool *p, size_t n, const char *what)
{
    struct parked *all = calloc(n, sizeof *all);
    CHECK(all != NULL);
    up__fiber_init_thread(&park_main);
    park_resumed = 0;
    long before = rss_pages();
    for (size_t i = 0; i < n; i++) {
        CHECK_EQ(up__stack_acquire(p, &all[i].s), 0);
        CHECK_EQ(up__fiber_init(&all[i].f, all[i].s->lo, all[i].s->size, up__stack_guard_size(p),
                                park_fn),
                 0);
        up__fiber_switch(&park_main, &all[i].f, (void *)(uintptr_t)i);
    }
    long after = rss_pages();
    for (size_t i = 0; i < n; i++) {
        up__fiber_switch(&park_main, &all[i].f, (void *)(uintptr_t)(i + 1));
        up__fiber_destroy(&all[i].f);
        up__stack_release(p, all[i].s);
    }
    CHECK_EQ(park_resumed, n);
    free(all);
    if (before < 0 || after < 0) {
        printf("park %s: %zu fibers parked and resumed; no /proc/self/statm, RSS not measured\n",
               what, n);
        return 77;
    }
    double per = (double)(after - before) * (double)sysconf(_SC_PAGESIZE) / (double)n;
    printf("park %s: %zu fibers parked at once, %.0f bytes of RSS each (the fiber, its "
           "descriptor and its touched stack pages)\n",
           what, n, per);
    if (SANITIZED)
        printf("  (not checked against 8 KiB: sanitizer shadow memory counts in RSS)\n");
    else
        CHECK_LE(per, 8192.0);
    return 0;
}

static int test_park(void)
{
    size_t n = test_size("UP_TEST_FIBER_PARKED", 100000);
#if defined(UP_TSAN_BUILD)
    /* GCC 12's ThreadSanitizer maps a trace of about 1.2 MiB for each
     * fiber context (875 KB of RSS each, measured); at ten thousand its
     * mmap fails with ENOMEM on this VM. (clang 14's needs 27 KB.) Each
     * fiber also costs about 7 ms of CPU there (2000 took 14.8 s of CPU,
     * 110 s on a busy machine), and the RSS is not checked under a
     * sanitizer: what is left to show, that many fibers park at once and
     * resume intact, a fiftieth of the count shows as well. */
    size_t tsan_n = n / 50 ? n / 50 : 1;
    if (tsan_n > 2000)
        tsan_n = 2000;
    printf("park: %zu fibers, not %zu, under ThreadSanitizer (a trace mapping per fiber)\n", tsan_n,
           n);
    n = tsan_n;
#endif
    size_t budget = up__stack_guarded_budget();
    long maps = up__stack_max_map_count();
    printf("vm.max_map_count %ld: %zu guarded stacks fit (two mappings each, 4096 left)\n", maps,
           budget);
    up__stack_pool_config c;
    up__stack_pool_config_init(&c);
    int rc = 0;
    /* Guarded, as many as the budget lets this test take. */
    size_t ng = n < budget / 2 ? n : budget / 2;
    up__stack_pool gp;
    CHECK_EQ(up__stack_pool_init(&gp, &c), 0);
    rc |= park_many(&gp, ng, "guarded");
    up__stack_pool_destroy(&gp);
    if (ng < n) {
        /* The full count does not fit the map budget with guard pages:
         * the same run on unguarded stacks shows the memory per fiber. */
        printf("  %zu guarded stacks need vm.max_map_count >= %zu; the full count runs unguarded\n",
               n, 2 * n + 4096);
        c.guard = 0;
        up__stack_pool up;
        CHECK_EQ(up__stack_pool_init(&up, &c), 0);
        rc |= park_many(&up, n, "unguarded");
        up__stack_pool_destroy(&up);
    }
    return rc;
}

/* ---- 4. Overflow into the guard page, and other faults ---- */

static up__fiber over_main, over_f;

/* Deeper than any stack (the compiler cannot know it never stops). */
static volatile unsigned recurse_limit = 0xffffffffu;

static unsigned recurse(unsigned depth)
{
    volatile unsigned char frame[512];
    frame[0] = (unsigned char)depth;
    frame[511] = (unsigned char)depth;
    if (depth == recurse_limit)
        return 0;
    return recurse(depth + 1) + frame[0] + frame[511];
}

static void over_fn(up__fiber *self, void *arg)
{
    (void)arg;
    recurse(0);
    up__fiber_exit(self, &over_main, NULL);
}

static void overflow_child(void *arg)
{
    up__stack *s = arg;
    if (up__stack_guard_thread_init() != 0)
        _exit(3);
    up__fiber_init_thread(&over_main);
    if (up__fiber_init(&over_f, s->lo, s->size, up__stack_guard_size(&pool), over_fn) != 0)
        _exit(4);
    up__fiber_switch(&over_main, &over_f, NULL);
    _exit(5); /* the recursion returned: impossible */
}

static volatile int *volatile wild_ptr = (volatile int *)(uintptr_t)64;

static void wild_child(void *arg)
{
    (void)arg;
    if (up__stack_guard_thread_init() != 0)
        _exit(3);
    *wild_ptr = 1;
    _exit(6);
}

static int test_overflow(void)
{
    up__stack *s = get_stack();
    char out[4096], want[128];
    int st = child_stderr(overflow_child, s, out, sizeof out);
    snprintf(want, sizeof want, "ultrapool: stack overflow in a task (guard page at %p",
             (void *)(s->lo - up__stack_guard_size(&pool)));
    if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGABRT || !strstr(out, want)) {
        fprintf(stderr, "overflow: status %d (signal %d), want SIGABRT and \"%s\"; stderr:\n%s\n",
                st, WIFSIGNALED(st) ? WTERMSIG(st) : 0, want, out);
        CHECK(0);
    }
    CHECK(strstr(out, "give tasks a larger stack") != NULL);
    printf("overflow: child died of SIGABRT with: %.*s", (int)(strchr(out, '\n') - out + 1), out);
    up__stack_release(&pool, s);

    st = child_stderr(wild_child, NULL, out, sizeof out);
    CHECK(strstr(out, "stack overflow") == NULL);
    CHECK(!(WIFEXITED(st) && WEXITSTATUS(st) == 6));
    if (!SANITIZED)
        CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
    printf("other faults: not reported as an overflow (%s %d)\n",
           WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
    return 0;
}

/* Every stack a pool maps has its guard, whichever way the guards of its
 * chunk were installed (one call for the chunk or one per stack): 300
 * stacks span chunks of 4, 8, 16, 32, 64, 64, 64 and part of one more.
 * The kernel's copy out of a guard page fails with EFAULT; out of the
 * page above it, it succeeds. */
static void test_guards_all(void)
{
    enum { N = 300 };
    up__stack_pool p;
    CHECK_EQ(up__stack_pool_init(&p, NULL), 0);
    size_t guard = up__stack_guard_size(&p);
    CHECK_GT(guard, 0);
    int fds[2];
    CHECK_EQ(pipe(fds), 0);
    static up__stack *s[N];
    unsigned refused = 0;
    for (int i = 0; i < N; i++) {
        CHECK_EQ(up__stack_acquire(&p, &s[i]), 0);
        char byte;
        errno = 0;
        if (write(fds[1], s[i]->lo - guard, 1) < 0 && errno == EFAULT)
            refused++;
        else
            fprintf(stderr, "stack %d: its guard page at %p can be read\n", i,
                    (void *)(s[i]->lo - guard));
        CHECK_EQ(write(fds[1], s[i]->lo, 1), 1);
        CHECK_EQ(read(fds[0], &byte, 1), 1);
    }
    for (int i = 0; i < N; i++)
        up__stack_release(&p, s[i]);
    close(fds[0]);
    close(fds[1]);
    up__stack_pool_destroy(&p);
    printf("guards: %u of %d stacks refuse access below their usable area\n", refused, N);
    CHECK_EQ(refused, (unsigned)N);
}

/* ---- 5. The pool: reuse, hot and cold, limits, arguments ---- */

static void test_pool(void)
{
    up__stack_pool_config c;
    up__stack_pool p;
    up__stack_pool_config_init(&c);
    c.stack_size = UP__STACK_MIN_SIZE - 1;
    CHECK_EQ(up__stack_pool_init(&p, &c), UP_EINVAL);
    c.stack_size = UP__STACK_MAX_SIZE + 1;
    CHECK_EQ(up__stack_pool_init(&p, &c), UP_EINVAL);
    c.stack_size = UP__STACK_DEFAULT_SIZE;
    c.hot_max = 4;
    c.free_max = 3;
    CHECK_EQ(up__stack_pool_init(&p, &c), UP_EINVAL);
    c.guard = 2;
    c.free_max = 8;
    CHECK_EQ(up__stack_pool_init(&p, &c), UP_EINVAL);
    CHECK_EQ(up__stack_pool_init(NULL, NULL), UP_EINVAL);

    /* One hot, one cold, the rest unmapped; at most 3 mapped at once. The
     * peak of stacks in use, which raises both bounds, decays at every
     * release here (peak_decay_ns 0): the bounds are hot_max and free_max
     * once nothing is in use. */
    up__stack_pool_config_init(&c);
    c.stack_size = 20000; /* rounded up to pages */
    c.hot_max = 1;
    c.free_max = 2;
    c.max_stacks = 3;
    c.peak_decay_ns = 0;
    CHECK_EQ(up__stack_pool_init(&p, &c), 0);
    up__stack *s[4];
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(up__stack_acquire(&p, &s[i]), 0);
        CHECK(s[i]->size >= 20000 && s[i]->size < 20000 + 4096);
        CHECK_EQ(((uintptr_t)s[i]->lo & 4095), 0);
        memset(s[i]->lo, 0xab, s[i]->size);
    }
    CHECK_EQ(up__stack_acquire(&p, &s[3]), UP_ENOMEM);
    CHECK(s[3] == NULL);
    up__stack_pool_stats st;
    up__stack_pool_read_stats(&p, &st);
    CHECK(st.mapped == 3 && st.in_use == 3 && st.created == 3);
    up__stack_release(&p, s[0]); /* hot */
    up__stack_release(&p, s[1]); /* cold: pages given back */
    up__stack_release(&p, s[2]); /* over free_max: unmapped */
    up__stack_pool_read_stats(&p, &st);
    CHECK(st.mapped == 2 && st.in_use == 0 && st.free_hot == 1 && st.free_cold == 1);
    up__stack *r0, *r1;
    CHECK_EQ(up__stack_acquire(&p, &r0), 0);
    CHECK_EQ(r0, s[0]); /* the hot one first, its contents kept */
    CHECK_EQ((unsigned char)r0->lo[100], 0xab);
    CHECK_EQ(up__stack_acquire(&p, &r1), 0);
    CHECK_EQ(r1, s[1]);
#if defined(__linux__)
    /* MADV_DONTNEED on private memory: the pages come back zeroed. */
    CHECK_EQ((unsigned char)r1->lo[100], 0);
    CHECK_EQ((unsigned char)r1->lo[r1->size - 4096 - 1], 0);
#endif
    up__stack_pool_read_stats(&p, &st);
    CHECK(st.reused == 2 && st.created == 3);
    up__stack_release(&p, r1);
    up__stack_release(&p, r0);
    up__stack_pool_destroy(&p);

    /* With the default decay (a second) the recent peak of stacks in use
     * bounds the free ones instead: all four released stay hot, their
     * pages kept, however small hot_max and free_max are. */
    up__stack_pool_config_init(&c);
    c.hot_max = 1;
    c.free_max = 1;
    CHECK_EQ(up__stack_pool_init(&p, &c), 0);
    for (int i = 0; i < 4; i++) {
        CHECK_EQ(up__stack_acquire(&p, &s[i]), 0);
        s[i]->lo[100] = (char)(0x10 + i);
    }
    for (int i = 0; i < 4; i++)
        up__stack_release(&p, s[i]);
    up__stack_pool_read_stats(&p, &st);
    CHECK(st.mapped == 4 && st.in_use == 0 && st.free_hot == 4 && st.free_cold == 0);
    for (int i = 3; i >= 0; i--) {
        CHECK_EQ(up__stack_acquire(&p, &r0), 0);
        CHECK_EQ(r0, s[i]); /* most recently released first */
        CHECK_EQ((unsigned char)r0->lo[100], 0x10 + i);
    }
    for (int i = 0; i < 4; i++)
        up__stack_release(&p, s[i]);
    up__stack_pool_destroy(&p);

    /* A worker's cache: what is put comes back first, without the pool;
     * beyond its size, and on flush, stacks go back to the pool. */
    CHECK_EQ(up__stack_pool_init(&p, NULL), 0);
    up__stack_cache cache = {{0}, 0};
    up__stack *cs[UP__STACK_CACHE + 1];
    for (int i = 0; i <= UP__STACK_CACHE; i++)
        CHECK_EQ(up__stack_cache_get(&cache, &p, &cs[i]), 0);
    for (int i = 0; i <= UP__STACK_CACHE; i++)
        up__stack_cache_put(&cache, &p, cs[i]);
    up__stack_pool_read_stats(&p, &st);
    CHECK(st.in_use == UP__STACK_CACHE && st.free_hot == 1);
    up__stack *back;
    CHECK_EQ(up__stack_cache_get(&cache, &p, &back), 0);
    CHECK_EQ(back, cs[UP__STACK_CACHE - 1]);
    up__stack_cache_put(&cache, &p, back);
    up__stack_cache_flush(&cache, &p);
    up__stack_pool_read_stats(&p, &st);
    CHECK(st.in_use == 0 && st.free_hot == UP__STACK_CACHE + 1 && cache.n == 0);
    up__stack_pool_destroy(&p);

    /* A fiber set up and dropped without ever running. */
    CHECK_EQ(up__stack_pool_init(&p, NULL), 0);
    up__stack *unrun;
    CHECK_EQ(up__stack_acquire(&p, &unrun), 0);
    up__fiber uf;
    CHECK_EQ(up__fiber_init(&uf, unrun->lo, unrun->size, up__stack_guard_size(&p), pingpong_fn), 0);
    up__fiber_destroy(&uf);
    up__stack_release(&p, unrun);
    up__stack_pool_destroy(&p);

    /* Fiber arguments. */
    up__fiber f;
    char small[UP__FIBER_MIN_STACK];
    CHECK_EQ(up__fiber_init(&f, small, sizeof small - 1, 0, pingpong_fn), UP_EINVAL);
    CHECK_EQ(up__fiber_init(&f, NULL, sizeof small, 0, pingpong_fn), UP_EINVAL);
    CHECK_EQ(up__fiber_init(&f, small, sizeof small, 0, NULL), UP_EINVAL);
    CHECK_EQ(up__fiber_init(NULL, small, sizeof small, 0, pingpong_fn), UP_EINVAL);
    /* No fiber with a guard runs here: no address is taken for one. */
    void *g;
    size_t sz;
    CHECK_EQ(up__fiber_fault_in_guard((void *)(uintptr_t)4096, &g, &sz), 0);
    printf("pool: reuse, hot and cold lists, limits and arguments as documented\n");
}

/* ---- 6. The raw backends, both, without the wrapper ---- */

typedef void *(*jump_fn)(void **, void *, void *);
typedef void *(*make_fn)(void *, size_t, void (*)(void *, void *), void *);
static jump_fn raw_jump;
static void *raw_main_ctx, *raw_fiber_ctx;

static void raw_start(void *arg, void *data)
{
    uintptr_t v = (uintptr_t)arg;
    CHECK_EQ((uintptr_t)data, 0x5eed);
    for (;;)
        v = (uintptr_t)raw_jump(&raw_fiber_ctx, raw_main_ctx, (void *)(v * 3 + 1));
}

static void raw_backend(const char *name, jump_fn jump, make_fn make)
{
    up__stack *s = get_stack();
    raw_jump = jump;
    raw_fiber_ctx = make(s->lo, s->size, raw_start, (void *)(uintptr_t)0x5eed);
    CHECK(raw_fiber_ctx != NULL);
    uint64_t rounds = test_size("UP_TEST_FIBER_ROUNDS", 100000);
    for (uintptr_t i = 1; i <= rounds; i++) {
        uintptr_t r = (uintptr_t)jump(&raw_main_ctx, raw_fiber_ctx, (void *)i);
        CHECK_EQ(r, i * 3 + 1);
    }
    /* The fiber stays suspended in its loop; its stack simply goes back. */
    up__stack_release(&pool, s);
    printf("raw %s: %llu round trips\n", name, (unsigned long long)rounds);
}

static void test_raw(void)
{
    if (SANITIZED) {
        printf("raw backends: skipped in sanitizer builds (unannotated switches confuse the "
               "sanitizers; the annotated wrapper is what runs there)\n");
        return;
    }
#if defined(UP__FIBER_HAVE_ASM)
    raw_backend("assembly", up__fiber_asm_jump, up__fiber_asm_make);
#endif
    raw_backend("ucontext", up__fiber_uc_jump, up__fiber_uc_make);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("fiber switch: %s\n", up__fiber_backend());
    CHECK_EQ(up__stack_pool_init(&pool, NULL), 0);
    test_pool();
    test_guards_all();
    test_pingpong();
    test_migration();
    test_raw();
    int skipped = 0;
    if (test_overflow() == 77)
        skipped = 1;
    if (test_park() == 77)
        skipped = 1;
    up__stack_pool_destroy(&pool);
    if (skipped) {
        printf("some parts skipped (see above)\n");
        return 77;
    }
    printf("ok\n");
    return 0;
}
