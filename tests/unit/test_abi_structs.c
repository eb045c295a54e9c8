/* The structs a later version will grow (runtime/src/abi_struct.h): a
 * program built against another version's headers passes another size.
 *
 * The helper on two versions of a struct made up here (1.0 with one
 * field, a later one with two more): a program built against 1.0 gets
 * the later fields as 0, their default; size 0, a size below 1.0's and a
 * garbage size are refused, the struct untouched; a program built against
 * the later version is accepted by a 1.0 library while it leaves the
 * later fields at 0 and refused once it sets one; an init call and an
 * output never write past the program's size.
 *
 * Then the same rules through the public calls, on the real structs: an
 * up_config, up_for_opts, up_task_opts or up_taskloop_opts whose size was
 * never set is UP_EINVAL naming what fills it; one larger than the
 * library's, as a newer program's, is accepted with a zero tail and
 * refused with a non-zero one; up_config_init fills such a larger one with
 * 0 past the library's size; up_pool_stats and up_pool_shard_stats write
 * nothing past a smaller size (guard bytes) and set size to what they
 * wrote. */
#include <stdint.h>
#include <string.h>

#include <ultrapool/parallel.h>
#include <ultrapool/pool.h>

#include "abi_struct.h"
#include "check.h"
#include "counted.h"
#include "pool_helpers.h"

/* ---- the helper, on a made-up struct in two versions ------------------ */

typedef struct v1 { /* as 1.0 declared it */
    size_t size;
    uint64_t a;
} v1;

typedef struct v2 { /* a later version: two fields added at the end */
    size_t size;
    uint64_t a;
    uint64_t b; /* default 0, as every added field's */
    uint64_t c;
} v2;

static const up__struct_kind kind_v1 = UP__STRUCT_KIND(v1, a, "V_INIT()");
static const up__struct_kind kind_v2 = UP__STRUCT_KIND(v2, a, "V_INIT()");

static int has(const char *needle)
{
    if (strstr(up_last_error(), needle))
        return 1;
    fprintf(stderr, "up_last_error() \"%s\" lacks \"%s\"\n", up_last_error(), needle);
    return 0;
}

/* A later library reads a 1.0 program's struct: the fields it lacks are
 * their defaults, 0. */
static void check_older_program(void)
{
    v1 in = {.size = sizeof in, .a = 7};
    v2 out;
    memset(&out, 0xab, sizeof out);
    CHECK_EQ(up__struct_in("t", &kind_v2, &in, &out), UP_OK);
    CHECK_EQ(out.size, sizeof out);
    CHECK_EQ(out.a, 7);
    CHECK_EQ(out.b, 0);
    CHECK_EQ(out.c, 0);
    /* The same struct as a later program passes it is read whole. */
    v2 later = {.size = sizeof later, .a = 1, .b = 2, .c = 3};
    CHECK_EQ(up__struct_in("t", &kind_v2, &later, &out), UP_OK);
    CHECK(out.a == 1 && out.b == 2 && out.c == 3);
}

/* Sizes no program built against any version passes. */
static void check_bad_sizes(void)
{
    static const size_t bad[] = {0, sizeof(size_t), offsetof(v2, a) + 4, UP__STRUCT_MAX + 1,
                                 SIZE_MAX};
    static const char *const why[] = {"size is 0", "below the", "below the", "no struct's size",
                                      "no struct's size"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v2 in = {.size = bad[i], .a = 1};
        v2 out;
        memset(&out, 0xcd, sizeof out);
        CHECK_EQ(up__struct_in("t_call", &kind_v2, &in, &out), UP_EINVAL);
        CHECK(has("t_call: v2.size is ") && has(why[i]) && has("V_INIT()"));
        for (size_t k = 0; k < sizeof out; k++)
            CHECK_EQ(((unsigned char *)&out)[k], 0xcd); /* untouched */
    }
}

/* A 1.0 library reads a later program's struct: accepted while the fields
 * it lacks are 0, refused once one is set. */
static void check_newer_program(void)
{
    v2 in = {.size = sizeof in, .a = 5};
    v1 out;
    CHECK_EQ(up__struct_in("t", &kind_v1, &in, &out), UP_OK);
    CHECK_EQ(out.size, sizeof out);
    CHECK_EQ(out.a, 5);
    in.c = UINT64_MAX;
    memset(&out, 0xcd, sizeof out);
    CHECK_EQ(up__struct_in("t_call", &kind_v1, &in, &out), UP_EINVAL);
    CHECK(has("t_call: v1 of 32 bytes sets byte 24") && has("built against a newer ultrapool"));
    CHECK_EQ(out.a, UINT64_C(0xcdcdcdcdcdcdcdcd));
}

/* An init call fills the program's size: no byte past a smaller one, 0
 * past the library's in a larger one, and size set to the program's. */
static void check_init(void)
{
    v2 lib = {.size = sizeof lib, .a = 1, .b = 2, .c = 3};
    struct {
        v1 s;
        unsigned char guard[32];
    } small;
    memset(&small, 0xee, sizeof small);
    CHECK_EQ(up__struct_init("t", &kind_v2, &small.s, sizeof small.s, &lib), UP_OK);
    CHECK_EQ(small.s.size, sizeof small.s);
    CHECK_EQ(small.s.a, 1);
    for (size_t k = 0; k < sizeof small.guard; k++)
        CHECK_EQ(small.guard[k], 0xee);
    v2 big;
    memset(&big, 0xee, sizeof big);
    v1 lib1 = {.size = sizeof lib1, .a = 9};
    CHECK_EQ(up__struct_init("t", &kind_v1, &big, sizeof big, &lib1), UP_OK);
    CHECK(big.size == sizeof big && big.a == 9 && big.b == 0 && big.c == 0);
    /* So the struct goes back in whole, until the program sets a field. */
    v1 back;
    CHECK_EQ(up__struct_in("t", &kind_v1, &big, &back), UP_OK);
    big.b = 4;
    CHECK_EQ(up__struct_in("t", &kind_v1, &big, &back), UP_EINVAL);
    CHECK_EQ(up__struct_init("t_init", &kind_v1, &big, 0, &lib1), UP_EINVAL);
    CHECK(has("t_init: ") && has("V_INIT()"));
    CHECK_EQ(up__struct_init("t", &kind_v1, &big, UP__STRUCT_MAX + 1, &lib1), UP_EINVAL);
}

/* An output writes the smaller size and says so in size. */
static void check_out(void)
{
    v2 lib = {.size = 0, .a = 1, .b = 2, .c = 3};
    struct {
        v1 s;
        unsigned char guard[32];
    } small;
    memset(&small, 0xee, sizeof small);
    CHECK_EQ(up__struct_out(&small.s, sizeof small.s, &lib, sizeof lib), sizeof small.s);
    CHECK(small.s.size == sizeof small.s && small.s.a == 1);
    for (size_t k = 0; k < sizeof small.guard; k++)
        CHECK_EQ(small.guard[k], 0xee);
    struct {
        v2 s;
        unsigned char guard[8];
    } big;
    memset(&big, 0xee, sizeof big);
    v1 lib1 = {.size = 0, .a = 6};
    CHECK_EQ(up__struct_out(&big.s, sizeof big.s, &lib1, sizeof lib1), sizeof lib1);
    CHECK(big.s.size == sizeof lib1 && big.s.a == 6);
    CHECK_EQ(big.s.b, UINT64_C(0xeeeeeeeeeeeeeeee)); /* not written: past size */
    memset(&small, 0xee, sizeof small);
    CHECK_EQ(up__struct_out(&small.s, 0, &lib, sizeof lib), 0);
    for (size_t k = 0; k < sizeof small; k++)
        CHECK_EQ(((unsigned char *)&small)[k], 0xee);
}

/* ---- the public calls, on the real structs ---------------------------- */

static void check_config(void)
{
    up_config cfg;
    CHECK_EQ(up_config_init(&cfg), UP_OK);
    CHECK_EQ(cfg.size, sizeof cfg);
    up_config unsized = cfg;
    unsized.size = 0;
    up_pool *p = NULL;
    CHECK_EQ(up_pool_create(&p, &unsized), UP_EINVAL);
    CHECK(p == NULL);
    CHECK(has("up_pool_create: up_config.size is 0") && has("up_config_init()"));
    CHECK_EQ(up_config_validate(&unsized), UP_EINVAL);
    CHECK(has("up_config_validate: up_config.size is 0"));
    /* A size below 1.0's: no program's, refused by the init call too. */
    CHECK_EQ(up_config_init_sized(&cfg, offsetof(up_config, hook_ctx)), UP_EINVAL);
    CHECK(has("up_config_init: "));

    /* A program built against a later version: its up_config is larger.
     * up_config_init fills the part this library lacks with 0 and sets the
     * program's size, and the pool takes it while that part stays 0. */
    struct {
        up_config cfg;
        uint64_t later[2];
    } big;
    memset(&big, 0xff, sizeof big);
    CHECK_EQ(up_config_init_sized(&big.cfg, sizeof big), UP_OK);
    CHECK_EQ(big.cfg.size, sizeof big);
    CHECK(big.later[0] == 0 && big.later[1] == 0);
    CHECK_EQ(big.cfg.queue_capacity, cfg.queue_capacity);
    big.cfg.shards = 1;
    CHECK_EQ(up_config_validate(&big.cfg), UP_OK);
    CHECK_EQ(up_pool_create(&p, &big.cfg), UP_OK);
    CHECK_EQ(up_pool_shards(p), 1);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    big.later[1] = 1; /* a later field set: this library cannot honour it */
    CHECK_EQ(up_config_validate(&big.cfg), UP_EINVAL);
    CHECK(has("up_config_validate: up_config of ") && has("built against a newer ultrapool"));
    p = NULL;
    CHECK_EQ(up_pool_create(&p, &big.cfg), UP_EINVAL);
    CHECK(p == NULL);
}

static _Atomic int64_t loop_sum;
static void sum_range(int64_t lo, int64_t hi, void *ctx)
{
    (void)ctx;
    for (int64_t i = lo; i < hi; i++)
        loop_sum += i;
}

/* Outside a region: a team of one, so each call runs at once. */
static void check_options(void)
{
    /* Never set: refused, naming the macro. */
    up_for_opts fo = {0};
    CHECK_EQ(up_for(0, 10, &fo, sum_range, NULL), UP_EINVAL);
    CHECK(has("up_for: up_for_opts.size is 0") && has("UP_FOR_OPTS(...)"));
    up_task_opts to = {0};
    CHECK_EQ(up_task(counted_task, NULL, &to), UP_EINVAL);
    CHECK(has("up_task: up_task_opts.size is 0") && has("UP_TASK_OPTS(...)"));
    up_taskloop_opts lo = {0};
    CHECK_EQ(up_taskloop(0, 10, &lo, sum_range, NULL), UP_EINVAL);
    CHECK(has("up_taskloop: up_taskloop_opts.size is 0") && has("UP_TASKLOOP_OPTS(...)"));
    CHECK_EQ(loop_sum, 0);
    CHECK_EQ(counted_ran, 0);

    /* Made by the macros: accepted. */
    CHECK_EQ(up_for(0, 10, &UP_FOR_OPTS(.schedule = UP_SCHED_DYNAMIC, .chunk = 3), sum_range, NULL),
             UP_OK);
    CHECK_EQ(loop_sum, 45);
    CHECK_EQ(up_task(counted_task, NULL, &UP_TASK_OPTS(.undeferred = 1)), UP_OK);
    CHECK_EQ(counted_ran, 1);
    CHECK_EQ(up_taskloop(0, 10, &UP_TASKLOOP_OPTS(.grainsize = 4), sum_range, NULL), UP_OK);
    CHECK_EQ(loop_sum, 90);

    /* Larger, as a later program's: a zero tail is accepted, a set one
     * refused. */
    struct {
        up_for_opts o;
        uint64_t later;
    } bf = {UP_FOR_OPTS(.chunk = 2), 0};
    bf.o.size = sizeof bf;
    CHECK_EQ(up_for(0, 10, &bf.o, sum_range, NULL), UP_OK);
    CHECK_EQ(loop_sum, 135);
    bf.later = 1;
    CHECK_EQ(up_for(0, 10, &bf.o, sum_range, NULL), UP_EINVAL);
    CHECK(has("up_for: up_for_opts of ") && has("built against a newer ultrapool"));
    CHECK_EQ(loop_sum, 135);
    struct {
        up_task_opts o;
        uint64_t later;
    } bt = {UP_TASK_OPTS(.priority = 1), 0};
    bt.o.size = sizeof bt;
    CHECK_EQ(up_task(counted_task, NULL, &bt.o), UP_OK);
    CHECK_EQ(counted_ran, 2);
    bt.later = 1;
    CHECK_EQ(up_task_copy(counted_task, &bt, 8, &bt.o), UP_EINVAL);
    CHECK(has("up_task_copy: up_task_opts of ") && has("built against a newer ultrapool"));
    CHECK_EQ(counted_ran, 2);
    struct {
        up_taskloop_opts o;
        uint64_t later;
    } bl = {UP_TASKLOOP_OPTS(.num_tasks = 2), 0};
    bl.o.size = sizeof bl;
    CHECK_EQ(up_taskloop(0, 10, &bl.o, sum_range, NULL), UP_OK);
    CHECK_EQ(loop_sum, 180);
    bl.later = 1;
    CHECK_EQ(up_taskloop(0, 10, &bl.o, sum_range, NULL), UP_EINVAL);
    CHECK_EQ(loop_sum, 180);

    /* The 1.0 layout ends at nowait: a program whose compiler left no
     * padding after it passes that size, and the rest reads as 0. */
    up_for_opts tight = UP_FOR_OPTS(.chunk = 5);
    tight.size = offsetof(up_for_opts, nowait) + sizeof tight.nowait;
    CHECK_EQ(up_for(0, 10, &tight, sum_range, NULL), UP_OK);
    CHECK_EQ(loop_sum, 225);
}

static void noop(void *arg) { (void)arg; }

/* up_stats written in a smaller size leaves every byte past it alone. */
static void check_stats(void)
{
    up_pool *p = test_fixed_pool(2);
    for (int i = 0; i < 100; i++)
        CHECK_EQ(up_submit_wait(p, noop, NULL), UP_OK);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    up_stats full;
    up_pool_stats(p, &full);
    CHECK_EQ(full.size, sizeof full);
    CHECK_EQ(full.submitted, 100);

    struct {
        up_stats st;
        unsigned char guard[64];
    } g;
    const size_t small = offsetof(up_stats, workers); /* an older program's, say */
    memset(&g, 0xab, sizeof g);
    up_pool_stats_sized(p, &g.st, small);
    CHECK_EQ(g.st.size, small);
    CHECK_EQ(g.st.submitted, 100);
    CHECK_EQ(g.st.executed, 100);
    for (size_t k = small; k < sizeof g; k++)
        CHECK_EQ(((unsigned char *)&g)[k], 0xab);
    memset(&g, 0xab, sizeof g);
    CHECK_EQ(up_pool_shard_stats_sized(p, 0, &g.st, small), UP_OK);
    CHECK_EQ(g.st.size, small);
    for (size_t k = small; k < sizeof g; k++)
        CHECK_EQ(((unsigned char *)&g)[k], 0xab);

    /* A larger one, as a later program's: this library's part is written,
     * size says how much, the rest is left to the program. */
    memset(&g, 0xab, sizeof g);
    up_pool_stats_sized(p, &g.st, sizeof g);
    CHECK_EQ(g.st.size, sizeof g.st);
    CHECK_EQ(g.st.executed, 100);
    for (size_t k = 0; k < sizeof g.guard; k++)
        CHECK_EQ(g.guard[k], 0xab);

    /* Size 0: nothing at all. */
    memset(&g, 0xab, sizeof g);
    up_pool_stats_sized(p, &g.st, 0);
    for (size_t k = 0; k < sizeof g; k++)
        CHECK_EQ(((unsigned char *)&g)[k], 0xab);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
}

int main(void)
{
    check_older_program();
    check_bad_sizes();
    check_newer_program();
    check_init();
    check_out();
    check_config();
    check_options();
    check_stats();
    printf("abi structs: older and newer programs' sizes read, filled and written by the "
           "rules; size 0 refused; no byte written past a program's struct\n");
    return 0;
}
