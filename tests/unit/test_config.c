/* Configuration: defaults, every UP_* variable, and every way to get one
 * wrong (garbage, out of range, min above max, zero queue, not a power of
 * two) giving UP_EINVAL with a message that names the culprit; every
 * boolean spelling; the warning for an unknown UP_* name (once per
 * process, never for the reserved names); validation messages that name
 * the field and its variable on stderr; and UP_PRINT_CONFIG's output,
 * which must parse back to the configuration it shows. */
#include <stdarg.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ultrapool/pool.h>
#include <ultrapool/version.h>

#include "capture.h"
#include "check.h"
#include "child.h"
#include "config.h"
#include "pool_internal.h"

static const char *vars[] = {"UP_SHARDS",
                             "UP_SHARD_MIN_WORKERS",
                             "UP_SHARD_MAX_WORKERS",
                             "UP_MAX_WORKERS",
                             "UP_QUEUE_CAPACITY",
                             "UP_DEQUE_CAPACITY",
                             "UP_IDLE_TIMEOUT",
                             "UP_EXTRA_IDLE_TIMEOUT",
                             "UP_SPAWN_DELAY",
                             "UP_SPIN",
                             "UP_SUBMIT_HELP",
                             "UP_BIND",
                             "UP_SHARD_MAX_CORES",
                             "UP_STACK_SIZE",
                             "UP_OMP_SHARE",
                             "UP_PRINT_CONFIG",
                             "UP_SHARD_CHOICE"};
#define NVARS (sizeof vars / sizeof vars[0])

static void clear_env(void)
{
    for (size_t i = 0; i < NVARS; i++)
        unsetenv(vars[i]);
    /* OpenMP's variables stand in for unset UP_ ones (test_config_omp
     * checks them): none of the caller's may change the defaults here. */
    static const char *const omp[] = {"OMP_STACKSIZE", "OMP_WAIT_POLICY", "OMP_PROC_BIND",
                                      "OMP_PLACES", "OMP_DISPLAY_ENV"};
    for (size_t i = 0; i < sizeof omp / sizeof omp[0]; i++)
        unsetenv(omp[i]);
}

static int contains(const char *hay, const char *needle)
{
    if (strstr(hay, needle))
        return 1;
    fprintf(stderr, "\"%s\" lacks \"%s\"\n", hay, needle);
    return 0;
}

static void expect_env_error(const char *var, const char *value)
{
    clear_env();
    setenv(var, value, 1);
    up_config cfg;
    CHECK_EQ(up_config_init(&cfg), UP_EINVAL);
    CHECK(strstr(up_last_error(), var) != NULL);
    up_pool *p = NULL;
    CHECK_EQ(up_pool_create(&p, NULL), UP_EINVAL);
    CHECK(p == NULL);
    unsetenv(var);
}

/* A bad field set by the program: UP_EINVAL, and the message, in
 * up_last_error() and on stderr, contains needle. */
static void expect_cfg_error(up_config cfg, const char *needle)
{
    up_pool *p = NULL;
    capture_start();
    int rc = up_pool_create(&p, &cfg);
    const char *err = capture_stop();
    CHECK_EQ(rc, UP_EINVAL);
    CHECK(p == NULL);
    CHECK(contains(up_last_error(), needle));
    CHECK(contains(err, needle));
    CHECK(contains(err, up_last_error()));
}

/* A word as written (form 0), in upper case (1), capitalised (2), or in
 * alternating case (3). */
static void recase(const char *in, int form, char *out, size_t size)
{
    size_t k = 0;
    for (; in[k] && k + 1 < size; k++) {
        char c = in[k];
        int up = form == 1 || (form == 2 && k == 0) || (form == 3 && k % 2 == 0);
        out[k] = up && c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
    }
    out[k] = '\0';
}

static void check_booleans(void)
{
    static const char *const yes[] = {"1", "true", "yes", "on", "y"};
    static const char *const no[] = {"0", "false", "no", "off", "n"};
    for (size_t i = 0; i < 5; i++)
        for (int form = 0; form < 4; form++) {
            char t[8], f[8];
            recase(yes[i], form, t, sizeof t);
            recase(no[i], form, f, sizeof f);
            int v = -1;
            CHECK(up__parse_bool(t, &v) == 0 && v == 1);
            CHECK(up__parse_bool(f, &v) == 0 && v == 0);
            /* Through the environment too. */
            clear_env();
            setenv("UP_PRINT_CONFIG", t, 1);
            CHECK_EQ(up__env_flag("UP_PRINT_CONFIG"), 1);
            up_config cfg;
            CHECK_EQ(up_config_init(&cfg), UP_OK);
            setenv("UP_PRINT_CONFIG", f, 1);
            CHECK_EQ(up__env_flag("UP_PRINT_CONFIG"), 0);
            CHECK_EQ(up_config_init(&cfg), UP_OK);
        }
    static const char *const bad[] = {"", "2", "yess", "tru", " 1", "1 ", "oui", "nope", "-1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int v = 7;
        CHECK(up__parse_bool(bad[i], &v) == -1 && v == 7);
        clear_env();
        setenv("UP_PRINT_CONFIG", bad[i], 1);
        CHECK_EQ(up__env_flag("UP_PRINT_CONFIG"), 0);
        up_config cfg;
        capture_start();
        int rc = up_config_init(&cfg);
        const char *err = capture_stop();
        CHECK_EQ(rc, UP_EINVAL);
        CHECK(contains(up_last_error(), "UP_PRINT_CONFIG"));
        CHECK(contains(up_last_error(), "1 0 true false yes no on off y n"));
        CHECK(contains(err, "1 0 true false yes no on off y n"));
    }
    clear_env();
}

/* Runs up__env_check_names on env; returns what it wrote. */
static const char *names_warnings(char *const *env, unsigned *count)
{
    static char out[4096];
    FILE *f = tmpfile();
    CHECK(f != NULL);
    *count = up__env_check_names(env, f);
    rewind(f);
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    fclose(f);
    return out;
}

static void expect_nearest(const char *entry, const char *nearest)
{
    char *env[] = {(char *)entry, NULL};
    unsigned n;
    const char *out = names_warnings(env, &n);
    CHECK_EQ(n, 1);
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(entry, "="), entry);
    CHECK(contains(out, name));
    char want[96];
    snprintf(want, sizeof want, "the nearest is %s", nearest ? nearest : "UP_");
    CHECK(contains(out, want));
}

static void check_unknown_names(void)
{
    expect_nearest("UP_SHRADS=4", "UP_SHARDS");
    expect_nearest("UP_SHARD=4", "UP_SHARDS");
    expect_nearest("UP_shards=4", "UP_SHARDS");
    expect_nearest("UP_QUEUE_CAPACTIY=64", "UP_QUEUE_CAPACITY");
    expect_nearest("UP_DEQUE_CAPACITY_=64", "UP_DEQUE_CAPACITY");
    expect_nearest("UP_IDLE_TIMOUT=2s", "UP_IDLE_TIMEOUT");
    expect_nearest("UP_PRINTCONFIG=1", "UP_PRINT_CONFIG");
    expect_nearest("UP_SHARD_MAX_WORKER=9", "UP_SHARD_MAX_WORKERS");
    expect_nearest("UP_MIN_WORKERS=9", "UP_MAX_WORKERS");
    expect_nearest("UP_BINDING=core", "UP_BIND");
    expect_nearest("UP_STACKSIZE=1M", "UP_STACK_SIZE");
    expect_nearest("UP_SHARD_CHOISE=local", "UP_SHARD_CHOICE");
    expect_nearest("UP_TEST=1", NULL); /* not the reserved prefix, which is UP_TEST_ */
    expect_nearest("UP_=1", NULL);
    expect_nearest("UP_NO_VALUE", NULL);

    /* Ours, reserved, and not ours at all: no warning. */
    char *quiet[] = {"UP_SHARDS=4",
                     "UP_SHARD_MIN_WORKERS=1",
                     "UP_SHARD_MAX_WORKERS=8",
                     "UP_MAX_WORKERS=0",
                     "UP_QUEUE_CAPACITY=64",
                     "UP_DEQUE_CAPACITY=64",
                     "UP_IDLE_TIMEOUT=1s",
                     "UP_EXTRA_IDLE_TIMEOUT=50ms",
                     "UP_SPAWN_DELAY=1ms",
                     "UP_SPIN=0",
                     "UP_SUBMIT_HELP=1",
                     "UP_BIND=none",
                     "UP_SHARD_MAX_CORES=8",
                     "UP_SHARD_CHOICE=local",
                     "UP_STACK_SIZE=0",
                     "UP_PRINT_CONFIG=0",
                     "UP_TEST_SCALE=0.25",
                     "UP_TEST_SEED=1",
                     "UP_TEST_WHATEVER_NEW=3",
                     "UP_TEST_=x",
                     "UP_BENCH_ROUNDS=5",
                     "UP_FUZZ=1",
                     "UP_MACHINE=amd-epyc-2cpu",
                     "UP_BACKEND=gomp",
                     "UP_BACKEND_PATH=/opt/up/lib",
                     "OMP_NUM_THREADS=2",
                     "up_shards=4",
                     "UPSHARDS=4",
                     "XUP_SHARDS=4",
                     "PATH=/usr/bin",
                     "U=1",
                     "",
                     NULL};
    unsigned n;
    const char *out = names_warnings(quiet, &n);
    CHECK_EQ(n, 0);
    CHECK_EQ(strlen(out), 0);
    /* Several at once: one line each. */
    char *two[] = {"UP_SHRADS=1", "UP_TEST_SCALE=1", "UP_SPINN=3", NULL};
    out = names_warnings(two, &n);
    CHECK_EQ(n, 2);
    CHECK(contains(out, "UP_SHRADS"));
    CHECK(contains(out, "UP_SPINN"));
    CHECK(!strstr(out, "UP_TEST_SCALE"));
    CHECK_EQ(up__env_check_names(NULL, stderr), 0);
    /* A very long name is cut, not overrun. */
    char longname[300];
    memset(longname, 'A', sizeof longname);
    memcpy(longname, "UP_", 3);
    longname[sizeof longname - 3] = '=';
    longname[sizeof longname - 2] = '1';
    longname[sizeof longname - 1] = '\0';
    char *lone[] = {longname, NULL};
    (void)names_warnings(lone, &n);
    CHECK_EQ(n, 1);
}

/* The child of check_warning_once_per_process: a typo and two reserved
 * names in the environment, read twice by up_config_init and twice by
 * up_pool_create; exits 3 when a call fails. */
static void read_env_twice(void *arg)
{
    (void)arg;
    clear_env();
    setenv("UP_SHRADS", "4", 1);
    setenv("UP_TEST_SCALE", "0.5", 1);
    setenv("UP_MACHINE", "here", 1);
    up_config cfg;
    int bad = up_config_init(&cfg) != UP_OK || up_config_init(&cfg) != UP_OK;
    for (int i = 0; i < 2 && !bad; i++) {
        up_pool *p;
        bad = up_pool_create(&p, NULL) != UP_OK || up_pool_destroy(p) != UP_OK;
    }
    if (bad)
        _exit(3);
}

/* The real thing, in a child process whose stderr is a pipe: a typo draws
 * one warning however many times the environment is read, the reserved
 * names none, and neither fails. Runs before this process has threads. */
static void check_warning_once_per_process(void)
{
    char out[4096];
    int status = child_stderr(read_env_twice, NULL, out, sizeof out);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    const char *first = strstr(out, "UP_SHRADS");
    CHECK(first != NULL);
    CHECK(strstr(first + 1, "UP_SHRADS") == NULL);
    CHECK(contains(out, "warning"));
    CHECK(contains(out, "the nearest is UP_SHARDS"));
    CHECK(!strstr(out, "UP_TEST_SCALE") && !strstr(out, "UP_MACHINE"));
}

/* Prints p's configuration and returns it. */
static const char *printed(up_pool *p)
{
    static char out[16384];
    FILE *f = tmpfile();
    CHECK(f != NULL);
    up_pool_print_config(p, f);
    rewind(f);
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    fclose(f);
    return out;
}

/* Every line is a comment or NAME=VALUE with a shell-safe value; applies
 * the assignments to the environment and returns how many there were. */
static unsigned apply_printed(const char *text)
{
    char buf[16384];
    snprintf(buf, sizeof buf, "%s", text);
    unsigned n = 0;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#')
            continue;
        char *eq = strchr(line, '=');
        CHECK(eq != NULL && strncmp(line, "UP_", 3) == 0);
        for (const char *c = eq + 1; *c; c++)
            CHECK((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9'));
        *eq = '\0';
        int known = 0;
        for (size_t i = 0; i < NVARS; i++)
            known |= !strcmp(line, vars[i]);
        CHECK(known);
        setenv(line, eq + 1, 1);
        n++;
    }
    return n;
}

static void check_same(const up_config *a, const up_config *b)
{
    CHECK_EQ(a->shards, b->shards);
    CHECK_EQ(a->shard_min_workers, b->shard_min_workers);
    CHECK_EQ(a->shard_max_workers, b->shard_max_workers);
    CHECK_EQ(a->max_workers, b->max_workers);
    CHECK_EQ(a->queue_capacity, b->queue_capacity);
    CHECK_EQ(a->deque_capacity, b->deque_capacity);
    CHECK_EQ(a->idle_timeout_ns, b->idle_timeout_ns);
    CHECK_EQ(a->spawn_delay_ns, b->spawn_delay_ns);
    CHECK_EQ(a->spin, b->spin);
    CHECK_EQ(a->submit_help, b->submit_help);
    CHECK_EQ(a->bind, b->bind);
    CHECK_EQ(a->shard_max_cores, b->shard_max_cores);
    CHECK_EQ(a->shard_choice, b->shard_choice);
    CHECK_EQ(a->stack_size, b->stack_size);
}

/* Print cfg through a pool (with_pool) or, for values too large to
 * allocate in a test (a 2^24-slot queue is 1 GiB per shard), through the
 * printer alone without a shard plan; paste the lines back as the
 * environment, and read them with up_config_init: the same configuration. */
static const char *round_trip_as(const up_config *cfg, int with_pool)
{
    static char out[16384];
    clear_env();
    if (with_pool) {
        up_pool *p;
        CHECK_EQ(up_pool_create(&p, cfg), UP_OK);
        snprintf(out, sizeof out, "%s", printed(p));
        CHECK_EQ(up_pool_destroy(p), UP_OK);
        CHECK(contains(out, "\n# shard plan: "));
        CHECK(contains(out, "\n# | shard | cpus |"));
    } else {
        CHECK_EQ(up_config_validate(cfg), UP_OK);
        FILE *f = tmpfile();
        CHECK(f != NULL);
        up__print_config(cfg, NULL, f);
        rewind(f);
        size_t n = fread(out, 1, sizeof out - 1, f);
        out[n] = '\0';
        fclose(f);
    }
    const char *begin = "# ULTRAPOOL CONFIGURATION BEGIN\n# ultrapool " UP_VERSION_STRING "\n";
    CHECK(!strncmp(out, begin, strlen(begin)));
    size_t len = strlen(out);
    const char *end = "# ULTRAPOOL CONFIGURATION END\n";
    CHECK(len > strlen(end) && !strcmp(out + len - strlen(end), end));
    CHECK_EQ(apply_printed(out), NVARS);
    up_config back;
    CHECK_EQ(up_config_init(&back), UP_OK);
    check_same(cfg, &back);
    clear_env();
    return out;
}

static const char *round_trip(const up_config *cfg) { return round_trip_as(cfg, 1); }

static void check_print_round_trip(void)
{
    up_config cfg;
    clear_env();
    CHECK_EQ(up_config_init(&cfg), UP_OK);
    const char *out = round_trip(&cfg);
    CHECK(contains(out, "\nUP_IDLE_TIMEOUT=1s\n"));
    CHECK(contains(out, "\nUP_EXTRA_IDLE_TIMEOUT=50ms\n"));
    CHECK(contains(out, "\nUP_SPAWN_DELAY=1ms\n"));
    CHECK(contains(out, "\nUP_STACK_SIZE=0\n"));
    CHECK(contains(out, "\nUP_SHARDS=0\n"));
    CHECK(contains(out, "\nUP_BIND=none\n"));
    CHECK(contains(out, "\nUP_SHARD_CHOICE=local\n"));
    CHECK(contains(out, "\nUP_PRINT_CONFIG=0\n"));
    CHECK(!strstr(out, "# note:"));

    /* Nothing at its default, and values only an exact unit keeps. */
    cfg.shards = 3;
    cfg.shard_min_workers = 2;
    cfg.shard_max_workers = 7;
    cfg.max_workers = 20;
    cfg.queue_capacity = 64;
    cfg.deque_capacity = 32;
    cfg.idle_timeout_ns = 90ull * 1000000000ull; /* 90s, not 1.5m */
    cfg.spawn_delay_ns = 1000001ull;             /* 1000001ns */
    cfg.spin = 0;
    cfg.submit_help = 0;
    cfg.bind = UP_BIND_CORE;
    cfg.shard_max_cores = 5;
    cfg.shard_choice = UP_SHARD_RANDOM;
    cfg.stack_size = 256 * 1024;
    out = round_trip(&cfg);
    CHECK(contains(out, "\nUP_IDLE_TIMEOUT=90s\n"));
    CHECK(contains(out, "\nUP_SPAWN_DELAY=1000001ns\n"));
    CHECK(contains(out, "\nUP_STACK_SIZE=256k\n"));
    CHECK(contains(out, "\nUP_BIND=core\n"));

    /* The extremes of every range (printed without a pool, see above). */
    cfg.shards = 1;
    cfg.shard_min_workers = 0;
    cfg.shard_max_workers = 1;
    cfg.max_workers = 0;
    cfg.queue_capacity = 2;
    cfg.deque_capacity = 1u << 20;
    cfg.idle_timeout_ns = 30ull * 24 * 3600 * 1000000000ull;
    cfg.spawn_delay_ns = 10000;
    cfg.spin = 10000000;
    cfg.submit_help = 2;
    cfg.bind = UP_BIND_SHARD;
    cfg.shard_max_cores = 0;
    cfg.shard_choice = UP_SHARD_LOCAL;
    cfg.stack_size = 1024ull * 1024 * 1024;
    out = round_trip_as(&cfg, 0);
    CHECK(contains(out, "\nUP_IDLE_TIMEOUT=720h\n"));
    CHECK(contains(out, "\nUP_SPAWN_DELAY=10us\n"));
    CHECK(contains(out, "\nUP_STACK_SIZE=1G\n"));
    cfg.idle_timeout_ns = 1000;
    cfg.spawn_delay_ns = 10ull * 1000000000ull;
    cfg.stack_size = 64 * 1024 + 1;
    cfg.queue_capacity = 1u << 24;
    cfg.shards = 2;
    cfg.max_workers = 1u << 20;
    out = round_trip_as(&cfg, 0);
    CHECK(contains(out, "\nUP_IDLE_TIMEOUT=1us\n"));
    CHECK(contains(out, "\nUP_STACK_SIZE=65537\n"));

    /* A variable the program overrode is pointed out, and what is printed
     * is what is in effect. */
    clear_env();
    setenv("UP_SHARDS", "2", 1);
    setenv("UP_PRINT_CONFIG", "YES", 1);
    CHECK_EQ(up_config_init(&cfg), UP_OK);
    CHECK_EQ(cfg.shards, 2);
    cfg.shards = 1;
    up_pool *p;
    capture_start(); /* UP_PRINT_CONFIG: the pool prints at creation */
    int rc = up_pool_create(&p, &cfg);
    const char *err = capture_stop();
    CHECK_EQ(rc, UP_OK);
    CHECK(contains(err, "# ULTRAPOOL CONFIGURATION BEGIN\n"));
    CHECK(contains(err, "\nUP_SHARDS=1\n# note: UP_SHARDS=2 in the environment"));
    CHECK(contains(err, "\nUP_PRINT_CONFIG=1\n"));
    CHECK(contains(err, "# ULTRAPOOL CONFIGURATION END\n"));
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    clear_env();
}

static void check_field_errors(void)
{
    up_config base;
    clear_env();
    CHECK_EQ(up_config_init(&base), UP_OK);
    up_config c = base;
    c.shards = 5000;
    expect_cfg_error(c, "up_config.shards (UP_SHARDS) = 5000: must be 0 or in 1..4096");
    c = base;
    c.queue_capacity = 3;
    expect_cfg_error(
        c,
        "up_config.queue_capacity (UP_QUEUE_CAPACITY) = 3: must be a power of two in 2..16777216");
    c = base;
    c.queue_capacity = 0;
    expect_cfg_error(c, "up_config.queue_capacity (UP_QUEUE_CAPACITY) = 0");
    c = base;
    c.deque_capacity = 1u << 21;
    expect_cfg_error(c, "up_config.deque_capacity (UP_DEQUE_CAPACITY) = 2097152");
    c = base;
    c.idle_timeout_ns = 5;
    expect_cfg_error(c, "up_config.idle_timeout_ns (UP_IDLE_TIMEOUT) = 5: must be in 1us..720h");
    c = base;
    c.spawn_delay_ns = UINT64_MAX;
    expect_cfg_error(c, "up_config.spawn_delay_ns (UP_SPAWN_DELAY) = 18446744073709551615");
    c = base;
    c.stack_size = 1000;
    expect_cfg_error(c, "up_config.stack_size (UP_STACK_SIZE) = 1000: must be 0 or in 64k..1G");
    c = base;
    c.submit_help = -1;
    expect_cfg_error(c, "up_config.submit_help (UP_SUBMIT_HELP) = -1: must be in 0..2");
    c = base;
    c.spin = 10000001;
    expect_cfg_error(c, "up_config.spin (UP_SPIN) = 10000001");
    c = base;
    c.shard_max_workers = 0;
    expect_cfg_error(c, "up_config.shard_max_workers (UP_SHARD_MAX_WORKERS) = 0");
    c = base;
    c.shard_max_cores = 4097;
    expect_cfg_error(c, "up_config.shard_max_cores (UP_SHARD_MAX_CORES) = 4097");
    c = base;
    c.max_workers = (1u << 20) + 1;
    expect_cfg_error(c, "up_config.max_workers (UP_MAX_WORKERS) = 1048577");
    c = base;
    c.shard_min_workers = 5;
    c.shard_max_workers = 4;
    expect_cfg_error(c, "up_config.shard_min_workers (UP_SHARD_MIN_WORKERS) = 5: above "
                        "up_config.shard_max_workers (UP_SHARD_MAX_WORKERS) = 4");
    c = base;
    c.bind = (up_bind)7;
    expect_cfg_error(c, "up_config.bind (UP_BIND) = 7: must be one of UP_BIND_NONE, "
                        "UP_BIND_SHARD, UP_BIND_CORE");
    c = base;
    c.shard_choice = (up_shard_choice)-1;
    expect_cfg_error(c, "up_config.shard_choice (UP_SHARD_CHOICE) = -1");
    c = base;
    c.shards = 4;
    c.shard_min_workers = 2;
    c.max_workers = 3;
    expect_cfg_error(c, "up_config.max_workers (UP_MAX_WORKERS) = 3: below the 4 shards x "
                        "up_config.shard_min_workers (UP_SHARD_MIN_WORKERS) = 2");
    /* up_config_validate says the same without creating anything. */
    c = base;
    c.queue_capacity = 3;
    capture_start();
    int rc = up_config_validate(&c);
    const char *err = capture_stop();
    CHECK_EQ(rc, UP_EINVAL);
    CHECK(contains(err, "up_config.queue_capacity (UP_QUEUE_CAPACITY) = 3"));
}

int main(void)
{
    check_warning_once_per_process();

    clear_env();
    up_config cfg;
    CHECK_EQ(up_config_init(&cfg), UP_OK);
    CHECK_EQ(cfg.shards, 0);
    CHECK_EQ(cfg.shard_min_workers, 1);
    CHECK_EQ(cfg.queue_capacity, 1024);
    CHECK_EQ(cfg.idle_timeout_ns, 1000000000ull);
    CHECK_EQ(cfg.extra_idle_timeout_ns, 50000000ull);
    CHECK_EQ(cfg.submit_help, 2);
    CHECK_EQ(cfg.shard_choice, UP_SHARD_LOCAL);
    CHECK_EQ(up_config_validate(&cfg), UP_OK);

    /* The floor above the cap, from the environment: each variable is in
     * its range, and the program may still raise the cap, so
     * up_config_init applies it; creating a pool with it as it is fails,
     * naming both fields and variables. */
    clear_env();
    setenv("UP_SHARD_MIN_WORKERS", "2000", 1);
    CHECK_EQ(up_config_init(&cfg), UP_OK);
    CHECK_EQ(cfg.shard_min_workers, 2000);
    up_pool *np = NULL;
    capture_start();
    CHECK_EQ(up_pool_create(&np, NULL), UP_EINVAL);
    capture_stop();
    CHECK(np == NULL);
    CHECK(contains(up_last_error(), "(UP_SHARD_MIN_WORKERS) = 2000: above "
                                    "up_config.shard_max_workers (UP_SHARD_MAX_WORKERS) = 1024"));
    cfg.shard_max_workers = 4096;
    cfg.shard_min_workers = 2;
    CHECK_EQ(up_config_validate(&cfg), UP_OK);
    clear_env();

    /* Every variable is applied. */
    setenv("UP_SHARDS", "3", 1);
    setenv("UP_SHARD_MIN_WORKERS", "2", 1);
    setenv("UP_SHARD_MAX_WORKERS", "7", 1);
    setenv("UP_MAX_WORKERS", "20", 1);
    setenv("UP_QUEUE_CAPACITY", "64", 1);
    setenv("UP_DEQUE_CAPACITY", "32", 1);
    setenv("UP_IDLE_TIMEOUT", "500ms", 1);
    setenv("UP_EXTRA_IDLE_TIMEOUT", "20ms", 1);
    setenv("UP_SPAWN_DELAY", "250us", 1);
    setenv("UP_SPIN", "10", 1);
    setenv("UP_SUBMIT_HELP", "0", 1);
    setenv("UP_BIND", "shard", 1);
    setenv("UP_SHARD_MAX_CORES", "8", 1);
    setenv("UP_STACK_SIZE", "256k", 1);
    setenv("UP_SHARD_CHOICE", "random", 1);
    CHECK_EQ(up_config_init(&cfg), UP_OK);
    CHECK_EQ(cfg.shards, 3);
    CHECK_EQ(cfg.shard_min_workers, 2);
    CHECK_EQ(cfg.shard_max_workers, 7);
    CHECK_EQ(cfg.max_workers, 20);
    CHECK_EQ(cfg.queue_capacity, 64);
    CHECK_EQ(cfg.deque_capacity, 32);
    CHECK_EQ(cfg.idle_timeout_ns, 500000000ull);
    CHECK_EQ(cfg.extra_idle_timeout_ns, 20000000ull);
    CHECK_EQ(cfg.spawn_delay_ns, 250000ull);
    CHECK_EQ(cfg.spin, 10);
    CHECK_EQ(cfg.submit_help, 0);
    CHECK_EQ(cfg.bind, UP_BIND_SHARD);
    CHECK_EQ(cfg.shard_max_cores, 8);
    CHECK_EQ(cfg.stack_size, 256 * 1024);
    CHECK_EQ(cfg.shard_choice, UP_SHARD_RANDOM);
    up_pool *p;
    CHECK_EQ(up_pool_create(&p, NULL), UP_OK);
    CHECK_EQ(up_pool_shards(p), 3);
    up_stats st;
    up_pool_stats(p, &st);
    CHECK_EQ(st.workers, 6); /* the floor, 2 per shard, started at creation */
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    clear_env();

    /* Garbage, units, ranges. */
    expect_env_error("UP_SHARDS", "abc");
    expect_env_error("UP_SHARDS", "-1");
    expect_env_error("UP_SHARDS", "4x");
    expect_env_error("UP_SHARDS", "");
    expect_env_error("UP_SHARDS", "99999999999999999999999");
    expect_env_error("UP_SHARDS", "4097");
    expect_env_error("UP_QUEUE_CAPACITY", "0");
    expect_env_error("UP_QUEUE_CAPACITY", "1000");
    expect_env_error("UP_SHARD_MAX_WORKERS", "0");
    expect_env_error("UP_IDLE_TIMEOUT", "500");
    expect_env_error("UP_IDLE_TIMEOUT", "5 s");
    expect_env_error("UP_IDLE_TIMEOUT", "1fortnight");
    expect_env_error("UP_IDLE_TIMEOUT", "0");
    expect_env_error("UP_IDLE_TIMEOUT", "99999999999999999999h");
    expect_env_error("UP_SPAWN_DELAY", "1ns");
    expect_env_error("UP_SUBMIT_HELP", "maybe");
    expect_env_error("UP_SUBMIT_HELP", "3");
    expect_env_error("UP_BIND", "socket");
    expect_env_error("UP_STACK_SIZE", "1k");
    expect_env_error("UP_STACK_SIZE", "2G");
    expect_env_error("UP_OMP_SHARE", "2");
    expect_env_error("UP_OMP_SHARE", "-1");
    expect_env_error("UP_OMP_SHARE", "yes");
    expect_env_error("UP_PRINT_CONFIG", "loud");
    expect_env_error("UP_SHARD_CHOICE", "nearest");
    /* The range is in the message, in the variable's own units. */
    setenv("UP_IDLE_TIMEOUT", "0", 1);
    CHECK_EQ(up_config_init(&cfg), UP_EINVAL);
    CHECK(contains(up_last_error(), "UP_IDLE_TIMEOUT=0: must be in 1us..720h"));
    setenv("UP_QUEUE_CAPACITY", "1000", 1);
    unsetenv("UP_IDLE_TIMEOUT");
    CHECK_EQ(up_config_init(&cfg), UP_EINVAL);
    CHECK(
        contains(up_last_error(), "UP_QUEUE_CAPACITY=1000: must be a power of two in 2..16777216"));
    clear_env();
    /* Two bad variables: the first is reported, both are printed. */
    setenv("UP_SPIN", "x", 1);
    setenv("UP_SHARDS", "y", 1);
    CHECK_EQ(up_config_init(&cfg), UP_EINVAL);
    CHECK(strstr(up_last_error(), "UP_SHARDS") != NULL);
    clear_env();

    check_booleans();
    check_unknown_names();
    check_field_errors();
    check_print_round_trip();
    CHECK_EQ(up_config_init(NULL), UP_EINVAL);
    CHECK_EQ(up_config_validate(NULL), UP_EINVAL);
    CHECK_EQ(up_pool_create(NULL, NULL), UP_EINVAL);

    /* The parsers directly. */
    uint64_t ns;
    CHECK(up__parse_duration("2s", &ns) == 0 && ns == 2000000000ull);
    CHECK(up__parse_duration("1m", &ns) == 0 && ns == 60000000000ull);
    CHECK(up__parse_duration("7ns", &ns) == 0 && ns == 7);
    CHECK(up__parse_duration("0", &ns) == 0 && ns == 0);
    CHECK(up__parse_duration("18446744073709551615ns", &ns) == 0 && ns == UINT64_MAX);
    CHECK_EQ(up__parse_duration("18446744073709551616ns", &ns), -2);
    CHECK_EQ(up__parse_duration("99999999999999999999h", &ns), -2);
    CHECK_EQ(up__parse_duration("18446744073709551615h", &ns), -2);
    CHECK_EQ(up__parse_duration("ms", &ns), -1);
    CHECK_EQ(up__parse_duration("", &ns), -1);
    up_bind b;
    CHECK(up__parse_bind("core", &b) == 0 && b == UP_BIND_CORE);
    CHECK_EQ(up__parse_bind("Core", &b), -1);
    CHECK_EQ(up__parse_bind("", &b), -1);
    up_shard_choice sc;
    CHECK(up__parse_shard_choice("random", &sc) == 0 && sc == UP_SHARD_RANDOM);
    CHECK(up__parse_shard_choice("local", &sc) == 0 && sc == UP_SHARD_LOCAL);
    CHECK_EQ(up__parse_shard_choice("", &sc), -1);

    CHECK(strcmp(up_strerror(UP_EOVERLOAD), "unknown error") != 0);
    CHECK(strcmp(up_strerror(12345), "unknown error") == 0);
    printf("config: defaults, 14 variables, 22 malformed values, every boolean spelling, "
           "unknown names, 16 bad fields and the print round trip checked\n");
    return 0;
}
