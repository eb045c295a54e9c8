/* How long a user-space context switch takes: ultrapool's fiber switch
 * (through its wrapper, and its raw assembly jump), its ucontext fallback,
 * and Boost.Context's jump_fcontext (libboost_context's C-ABI entry
 * point, called straight from C: its transfer_t is two pointers, which
 * the x86-64 and AArch64 C ABIs return in two registers, as C++ does).
 *
 * Each peer ping-pongs between the main context and one fiber N times (2N
 * switches). Rounds run every peer once in a fresh random order, so the
 * peers share the machine's noise; the table gives the median over rounds
 * and the spread (min..max) of ns per one-way switch.
 *   fiber_switch [--n N] [--rounds R] [--seed S]
 * Default N = 2,000,000 and R = 9. */
#include "bench_stats.h"
#include "bench_util.h"
#include "fiber.h"
#include "os/stack_pool.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(UP_HAVE_FCONTEXT)
typedef struct {
    void *fctx;
    void *data;
} bc_transfer;
extern bc_transfer jump_fcontext(void *to, void *vp);
extern void *make_fcontext(void *sp, size_t size, void (*fn)(bc_transfer));
#endif

static uint64_t n_trips;
static up__stack_pool pool;

/* ---- ultrapool's wrapper (what the runtime calls) ---- */

static up__fiber w_main, w_fiber;

static void w_fn(up__fiber *self, void *arg)
{
    for (;;)
        arg = up__fiber_switch(self, &w_main, arg);
}

static double run_wrapper(up__stack *s)
{
    up__fiber_init_thread(&w_main);
    if (up__fiber_init(&w_fiber, s->lo, s->size, 0, w_fn) != 0)
        abort();
    uint64_t t0 = bench_now_ns();
    for (uint64_t i = 0; i < n_trips; i++)
        up__fiber_switch(&w_main, &w_fiber, (void *)(uintptr_t)i);
    uint64_t t1 = bench_now_ns();
    up__fiber_destroy(&w_fiber);
    return (double)(t1 - t0) / (double)(2 * n_trips);
}

/* ---- the raw backends ---- */

typedef void *(*jump_fn)(void **, void *, void *);
typedef void *(*make_fn)(void *, size_t, void (*)(void *, void *), void *);
static jump_fn r_jump;
static void *r_main, *r_fiber;

static void r_start(void *arg, void *data)
{
    (void)data;
    for (;;)
        arg = r_jump(&r_fiber, r_main, arg);
}

static double run_raw(up__stack *s, jump_fn jump, make_fn make)
{
    r_jump = jump;
    r_fiber = make(s->lo, s->size, r_start, NULL);
    uint64_t t0 = bench_now_ns();
    for (uint64_t i = 0; i < n_trips; i++)
        jump(&r_main, r_fiber, (void *)(uintptr_t)i);
    uint64_t t1 = bench_now_ns();
    return (double)(t1 - t0) / (double)(2 * n_trips);
}

#if defined(UP__FIBER_HAVE_ASM)
static double run_asm(up__stack *s) { return run_raw(s, up__fiber_asm_jump, up__fiber_asm_make); }
#endif
static double run_ucontext(up__stack *s)
{
    return run_raw(s, up__fiber_uc_jump, up__fiber_uc_make);
}

/* ---- Boost.Context ---- */

#if defined(UP_HAVE_FCONTEXT)
static void f_fn(bc_transfer t)
{
    for (;;)
        t = jump_fcontext(t.fctx, t.data);
}

static double run_fcontext(up__stack *s)
{
    void *ctx = make_fcontext(s->lo + s->size, s->size, f_fn);
    uint64_t t0 = bench_now_ns();
    for (uint64_t i = 0; i < n_trips; i++) {
        bc_transfer t = jump_fcontext(ctx, (void *)(uintptr_t)i);
        ctx = t.fctx;
    }
    uint64_t t1 = bench_now_ns();
    return (double)(t1 - t0) / (double)(2 * n_trips);
}
#endif

struct peer {
    const char *name;
    double (*run)(up__stack *s);
};

int main(int argc, char **argv)
{
    unsigned rounds = 9;
    uint64_t seed = (uint64_t)time(NULL);
    n_trips = 2000000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc)
            n_trips = (uint64_t)strtod(argv[++i], NULL);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: %s [--n N] [--rounds R] [--seed S]\n", argv[0]);
            return 2;
        }
    }
    if (n_trips == 0 || rounds == 0 || rounds > 1000) {
        fprintf(stderr, "fiber_switch: --n and --rounds must be positive (rounds <= 1000)\n");
        return 2;
    }
    struct peer peers[] = {
        {"ultrapool (up__fiber_switch)", run_wrapper},
#if defined(UP__FIBER_HAVE_ASM)
        {"ultrapool raw asm jump", run_asm},
#endif
#if defined(UP_HAVE_FCONTEXT)
        {"boost fcontext (jump_fcontext)", run_fcontext},
#endif
        {"ucontext (swapcontext)", run_ucontext},
    };
    enum { NP = sizeof peers / sizeof peers[0] };
    if (up__stack_pool_init(&pool, NULL) != 0)
        return 1;
    up__stack *stacks[NP];
    for (unsigned p = 0; p < NP; p++)
        if (up__stack_acquire(&pool, &stacks[p]) != 0)
            return 1;
    printf("# fiber_switch: %llu round trips per run, %u rounds, seed %llu, runtime switch: %s\n",
           (unsigned long long)n_trips, rounds, (unsigned long long)seed, up__fiber_backend());
#if !defined(UP_HAVE_FCONTEXT)
    printf(
        "# boost fcontext left out: libboost_context not found (Debian: libboost-context-dev)\n");
#endif
    double *res = calloc((size_t)rounds * NP, sizeof *res);
    unsigned order[NP];
    for (unsigned p = 0; p < NP; p++)
        order[p] = p;
    for (unsigned r = 0; r < rounds; r++) {
        bench_shuffle(order, NP, &seed);
        for (unsigned k = 0; k < NP; k++) {
            unsigned p = order[k];
            /* A fresh stack region per peer each round would measure page
             * faults; the stack is reused, each run starting a new context. */
            res[(size_t)p * rounds + r] = peers[p].run(stacks[p]);
        }
    }
    printf("%-32s %10s %10s %10s\n", "switch", "median_ns", "min_ns", "max_ns");
    for (unsigned p = 0; p < NP; p++) {
        bench_summary st = bench_summarize(res + (size_t)p * rounds, rounds);
        printf("%-32s %10.2f %10.2f %10.2f\n", peers[p].name, st.median, st.min, st.max);
    }
    free(res);
    /* The fibers stay suspended in their loops; their stacks are simply
     * unmapped with the pool. */
    for (unsigned p = 0; p < NP; p++)
        up__stack_release(&pool, stacks[p]);
    up__stack_pool_destroy(&pool);
    return 0;
}
