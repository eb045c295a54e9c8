/* OpenMP's variables in up_config_init: OMP_STACKSIZE into stack_size,
 * OMP_WAIT_POLICY into spin, OMP_PROC_BIND and OMP_PLACES into bind,
 * OMP_DISPLAY_ENV into UP_PRINT_CONFIG's switch. Each is read only while
 * its UP_ variable is unset (a set UP_ one wins, and the OMP_ one is not
 * even checked); a malformed or out-of-range value is OpenMP's
 * convention: one warning naming the OMP_ variable and its value on
 * stderr, the configuration at its defaults, and pools created as usual
 * (without the warning again); UP_PRINT_CONFIG says where each value
 * came from. The layer's new UP_ names draw no unknown-name warning. */
#include <string.h>
#include <unistd.h>

#include <ultrapool/pool.h>

#include "capture.h"
#include "check.h"
#include "config.h"
#include "pool_internal.h"

#define KIB UINT64_C(1024)

static const char *vars[] = {"UP_STACK_SIZE",   "UP_SPIN",         "UP_BIND",
                             "UP_PRINT_CONFIG", "OMP_STACKSIZE",   "OMP_WAIT_POLICY",
                             "OMP_PROC_BIND",   "OMP_PLACES",      "OMP_DISPLAY_ENV",
                             "UP_SHARDS",       "OMP_NUM_THREADS", "OMP_SCHEDULE"};

static void clear_env(void)
{
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
}

/* up_config_init with only name=value (and extra=extra_value, if given)
 * set; returns its result, with the configuration in *cfg. */
static int init_with(const char *name, const char *value, const char *extra,
                     const char *extra_value, up_config *cfg)
{
    clear_env();
    setenv(name, value, 1);
    if (extra)
        setenv(extra, extra_value, 1);
    return up_config_init(cfg);
}

/* name=value must be ignored: up_config_init warns once on stderr, naming
 * name and the value, and leaves every field at its default; a pool is
 * then created as usual, without the warning again. Returns the
 * warning. */
static char warning[4096];
static const char *expect_ignored(const char *name, const char *value)
{
    up_config cfg, dflt;
    clear_env();
    CHECK_EQ(up_config_init(&dflt), UP_OK);
    capture_start();
    int rc = init_with(name, value, NULL, NULL, &cfg);
    snprintf(warning, sizeof warning, "%s", capture_stop());
    char quoted[256], plain[256]; /* a malformed value is quoted, one out of range not */
    snprintf(quoted, sizeof quoted, "%s=\"%s\"", name, value);
    snprintf(plain, sizeof plain, "%s=%s:", name, value);
    const char *at = strstr(warning, "ultrapool: ");
    if (rc != UP_OK || !at || strstr(at + 1, "ultrapool: ") || !strstr(warning, name) ||
        (!strstr(warning, quoted) && !strstr(warning, plain)) ||
        !strstr(warning, "keeps its default") || memcmp(&cfg, &dflt, sizeof cfg) != 0) {
        fprintf(stderr, "%s=\"%s\": rc %d, defaults kept %d, stderr \"%s\"\n", name, value, rc,
                memcmp(&cfg, &dflt, sizeof cfg) == 0, warning);
        CHECK(0);
    }
    up_pool *p = NULL;
    capture_start();
    rc = up_pool_create(&p, NULL);
    const char *again = capture_stop();
    CHECK_EQ(rc, UP_OK);
    CHECK(strstr(again, "ultrapool: ") == NULL);
    up_pool_stop_and_wait(p);
    up_pool_destroy(p);
    return warning;
}

static void check_stacksize(void)
{
    static const struct {
        const char *text;
        uint64_t bytes;
    } good[] = {
        {"4M", 4 * KIB * KIB},   {"4m", 4 * KIB * KIB},   {" 4 M ", 4 * KIB * KIB},
        {"512", 512 * KIB},      {"512k", 512 * KIB},     {"512K", 512 * KIB},
        {"65536B", 64 * KIB},    {"65536b", 64 * KIB},    {"64K", 64 * KIB},
        {"1G", KIB * KIB * KIB}, {"1g", KIB * KIB * KIB}, {"1048576", KIB * KIB * KIB},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        up_config cfg;
        int rc = init_with("OMP_STACKSIZE", good[i].text, NULL, NULL, &cfg);
        if (rc != UP_OK)
            fprintf(stderr, "OMP_STACKSIZE=\"%s\": %s\n", good[i].text, up_last_error());
        CHECK_EQ(rc, UP_OK);
        CHECK_EQ(cfg.stack_size, good[i].bytes);
    }
    static const char *const bad[] = {"",
                                      "  ",
                                      "0",
                                      "0M",
                                      "-1",
                                      "-4M",
                                      "abc",
                                      "4X",
                                      "4MB",
                                      "4 M x",
                                      "1.5M",
                                      "M",
                                      "63K",    /* below the range */
                                      "65535B", /* below the range */
                                      "2G",     /* above the range */
                                      "1048577",
                                      "18446744073709551615",
                                      "99999999999999999999999",
                                      "17179869184G"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_ignored("OMP_STACKSIZE", bad[i]);
    /* The range in the warning is UP_STACK_SIZE's, without its 0. */
    CHECK(strstr(expect_ignored("OMP_STACKSIZE", "2G"),
                 "OMP_STACKSIZE=2G: must be in 64k..1G (the range of UP_STACK_SIZE)") != NULL);
    up_config cfg;
    /* UP_STACK_SIZE wins; the OMP_ value is not even checked then. */
    CHECK_EQ(init_with("UP_STACK_SIZE", "256k", "OMP_STACKSIZE", "4M", &cfg), UP_OK);
    CHECK_EQ(cfg.stack_size, 256 * KIB);
    CHECK_EQ(init_with("UP_STACK_SIZE", "256k", "OMP_STACKSIZE", "garbage", &cfg), UP_OK);
    CHECK_EQ(cfg.stack_size, 256 * KIB);
}

static void check_wait_policy(void)
{
    up_config cfg;
    CHECK_EQ(init_with("OMP_WAIT_POLICY", "passive", NULL, NULL, &cfg), UP_OK);
    CHECK_EQ(cfg.spin, 0);
    CHECK_EQ(init_with("OMP_WAIT_POLICY", " PASSIVE ", NULL, NULL, &cfg), UP_OK);
    CHECK_EQ(cfg.spin, 0);
    CHECK_EQ(init_with("OMP_WAIT_POLICY", "Active", NULL, NULL, &cfg), UP_OK);
    CHECK_EQ(cfg.spin, UP_OMP_ACTIVE_SPIN);
    CHECK_GT(UP_OMP_ACTIVE_SPIN, 1000 * 256); /* far above the default */
    CHECK_EQ(up_config_validate(&cfg), UP_OK);
    CHECK_EQ(init_with("UP_SPIN", "10", "OMP_WAIT_POLICY", "active", &cfg), UP_OK);
    CHECK_EQ(cfg.spin, 10);
    CHECK_EQ(init_with("UP_SPIN", "10", "OMP_WAIT_POLICY", "sometimes", &cfg), UP_OK);
    static const char *const bad[] = {"", "busy", "activ", "1", "active,passive"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_ignored("OMP_WAIT_POLICY", bad[i]);
}

static void check_bind(void)
{
    static const struct {
        const char *proc_bind, *places;
        up_bind bind;
    } cases[] = {
        {"false", NULL, UP_BIND_NONE},
        {"FALSE", "sockets", UP_BIND_NONE},
        {"false", "garbage", UP_BIND_NONE}, /* places do not matter then */
        {"true", NULL, UP_BIND_CORE},
        {" True ", NULL, UP_BIND_CORE},
        {"close", NULL, UP_BIND_CORE},
        {"spread", NULL, UP_BIND_CORE},
        {"primary", NULL, UP_BIND_CORE},
        {"master", NULL, UP_BIND_CORE},
        {"spread,close", NULL, UP_BIND_CORE},
        {"SPREAD, close ,primary", NULL, UP_BIND_CORE},
        {"true", "threads", UP_BIND_CORE},
        {"close", "cores", UP_BIND_CORE},
        {"close", "cores(4)", UP_BIND_CORE},
        {"spread", "sockets", UP_BIND_SHARD},
        {"true", "numa_domains", UP_BIND_SHARD},
        {"true", "LL_CACHES", UP_BIND_SHARD},
        {"true", "sockets(2)", UP_BIND_SHARD},
        {"true", "{0,1},{2,3}", UP_BIND_CORE},
        {"true", "{0:4}:4:4", UP_BIND_CORE},
        {"true", "!{0}", UP_BIND_CORE},
        /* OMP_PLACES alone: bound, as OpenMP 5 does. */
        {NULL, "cores", UP_BIND_CORE},
        {NULL, "threads", UP_BIND_CORE},
        {NULL, "sockets", UP_BIND_SHARD},
        {NULL, " numa_domains ", UP_BIND_SHARD},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        clear_env();
        if (cases[i].proc_bind)
            setenv("OMP_PROC_BIND", cases[i].proc_bind, 1);
        if (cases[i].places)
            setenv("OMP_PLACES", cases[i].places, 1);
        up_config cfg;
        int rc = up_config_init(&cfg);
        if (rc != UP_OK || cfg.bind != cases[i].bind)
            fprintf(stderr, "OMP_PROC_BIND=%s OMP_PLACES=%s: rc %d, bind %d (%s)\n",
                    cases[i].proc_bind ? cases[i].proc_bind : "(unset)",
                    cases[i].places ? cases[i].places : "(unset)", rc, (int)cfg.bind,
                    up_last_error());
        CHECK_EQ(rc, UP_OK);
        CHECK_EQ(cfg.bind, cases[i].bind);
    }
    up_config cfg;
    CHECK_EQ(init_with("UP_BIND", "none", "OMP_PROC_BIND", "true", &cfg), UP_OK);
    CHECK_EQ(cfg.bind, UP_BIND_NONE);
    CHECK_EQ(init_with("UP_BIND", "shard", "OMP_PLACES", "???", &cfg), UP_OK);
    CHECK_EQ(cfg.bind, UP_BIND_SHARD);
    static const char *const bad_bind[] = {"",           "yes",           "1",       "closer",
                                           "true,close", "spread,,close", "spread,", "none"};
    for (size_t i = 0; i < sizeof bad_bind / sizeof bad_bind[0]; i++)
        expect_ignored("OMP_PROC_BIND", bad_bind[i]);
    static const char *const bad_places[] = {"",     "core",  "cores(0)", "cores(", "cores(2)x",
                                             "{0,1", "{{0}}", "{a}",      "}{",     "sockets(-1)"};
    for (size_t i = 0; i < sizeof bad_places / sizeof bad_places[0]; i++) {
        expect_ignored("OMP_PLACES", bad_places[i]);
        /* With OMP_PROC_BIND=true as well, still OMP_PLACES's fault. */
        clear_env();
        setenv("OMP_PROC_BIND", "true", 1);
        setenv("OMP_PLACES", bad_places[i], 1);
        capture_start();
        int rc = up_config_init(&cfg);
        capture_stop();
        CHECK_EQ(rc, UP_OK);
        CHECK_EQ(cfg.bind, UP_BIND_NONE); /* the default */
    }
}

static void check_display_env(void)
{
    static const struct {
        const char *text;
        int on;
    } good[] = {{"true", 1},  {"TRUE", 1},  {"verbose", 1}, {" VERBOSE ", 1},
                {"false", 0}, {"FALSE", 0}, {"1", 1},       {"0", 0}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        up_config cfg;
        CHECK_EQ(init_with("OMP_DISPLAY_ENV", good[i].text, NULL, NULL, &cfg), UP_OK);
        CHECK_EQ(up__print_config_wanted(), good[i].on);
    }
    up_config cfg;
    CHECK_EQ(init_with("UP_PRINT_CONFIG", "0", "OMP_DISPLAY_ENV", "true", &cfg), UP_OK);
    CHECK_EQ(up__print_config_wanted(), 0);
    CHECK_EQ(init_with("UP_PRINT_CONFIG", "1", "OMP_DISPLAY_ENV", "false", &cfg), UP_OK);
    CHECK_EQ(up__print_config_wanted(), 1);
    CHECK_EQ(init_with("UP_PRINT_CONFIG", "1", "OMP_DISPLAY_ENV", "what", &cfg), UP_OK);
    clear_env();
    CHECK_EQ(up__print_config_wanted(), 0);
    static const char *const bad[] = {"", "verbosely", "maybe", "2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        expect_ignored("OMP_DISPLAY_ENV", bad[i]);
        CHECK_EQ(up__print_config_wanted(), 0);
    }
    /* A pool prints its configuration at creation. */
    clear_env();
    setenv("OMP_DISPLAY_ENV", "true", 1);
    up_pool *p;
    capture_start();
    int rc = up_pool_create(&p, NULL);
    const char *out = capture_stop();
    CHECK_EQ(rc, UP_OK);
    up_pool_stop_and_wait(p);
    up_pool_destroy(p);
    CHECK(strstr(out, "# ULTRAPOOL CONFIGURATION BEGIN\n") != NULL);
    CHECK(strstr(out, "UP_PRINT_CONFIG=1\n# UP_PRINT_CONFIG from OMP_DISPLAY_ENV=true\n"));
}

/* UP_PRINT_CONFIG's block for cfg with the environment as it is. */
static char printed[16384];
static const char *print_block(const up_config *cfg)
{
    FILE *f = fmemopen(printed, sizeof printed - 1, "w");
    CHECK(f != NULL);
    up__print_config(cfg, NULL, f);
    fclose(f);
    return printed;
}

static int has(const char *hay, const char *needle)
{
    if (strstr(hay, needle))
        return 1;
    fprintf(stderr, "the block lacks \"%s\":\n%s\n", needle, hay);
    return 0;
}

static void check_print_sources(void)
{
    up_config cfg;
    clear_env();
    setenv("OMP_STACKSIZE", "4M", 1);
    setenv("OMP_WAIT_POLICY", "passive", 1);
    setenv("OMP_PROC_BIND", "spread", 1);
    setenv("OMP_PLACES", "sockets", 1);
    CHECK_EQ(up_config_init(&cfg), UP_OK);
    const char *b = print_block(&cfg);
    CHECK(has(b, "UP_STACK_SIZE=4M\n# UP_STACK_SIZE from OMP_STACKSIZE=4M\n"));
    CHECK(has(b, "UP_SPIN=0\n# UP_SPIN from OMP_WAIT_POLICY=passive\n"));
    CHECK(has(b, "UP_BIND=shard\n# UP_BIND from OMP_PROC_BIND=spread OMP_PLACES=sockets\n"));
    /* The program overrides one: a note, as for an UP_ variable. */
    cfg.stack_size = 8 * KIB * KIB;
    b = print_block(&cfg);
    CHECK(has(b, "UP_STACK_SIZE=8M\n# note: OMP_STACKSIZE=4M in the environment is not in "
                 "effect: the program set up_config.stack_size\n"));
    /* UP_ set beside OMP_: the OMP_ one is not read, and the block says so. */
    setenv("UP_STACK_SIZE", "1M", 1);
    CHECK_EQ(up_config_init(&cfg), UP_OK);
    b = print_block(&cfg);
    CHECK(has(b, "UP_STACK_SIZE=1M\n# note: OMP_STACKSIZE=4M is not read: UP_STACK_SIZE is set"));
    /* No OpenMP variable: no such comment at all. */
    clear_env();
    CHECK_EQ(up_config_init(&cfg), UP_OK);
    b = print_block(&cfg);
    CHECK(!strstr(b, " from OMP_") && !strstr(b, "# note: OMP_") && !strstr(b, "not in effect"));
}

static void check_names(void)
{
    static char *const layer_names[] = {"UP_NUM_THREADS=4,2",
                                        "UP_THREAD_LIMIT=8",
                                        "UP_MAX_ACTIVE_LEVELS=1",
                                        "UP_SCHEDULE=dynamic,4",
                                        "UP_CANCELLATION=false",
                                        "OMP_SCHEDULE=x",
                                        NULL};
    FILE *f = tmpfile();
    CHECK(f != NULL);
    CHECK_EQ(up__env_check_names(layer_names, f), 0);
    static char *const typo[] = {"UP_NUM_THREAD=4", NULL};
    char buf[512] = "";
    FILE *m = fmemopen(buf, sizeof buf - 1, "w");
    CHECK(m != NULL);
    CHECK_EQ(up__env_check_names(typo, m), 1);
    fclose(m);
    fclose(f);
    CHECK(strstr(buf, "the nearest is UP_NUM_THREADS") != NULL);
}

int main(void)
{
    check_stacksize();
    check_wait_policy();
    check_bind();
    check_display_env();
    check_print_sources();
    check_names();
    clear_env();
    printf("test_config_omp: ok\n");
    return 0;
}
