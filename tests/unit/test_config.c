/* Configuration: defaults, every UP_* variable, and every way to get one
 * wrong (garbage, out of range, min above max, zero queue, not a power of
 * two) giving UP_EINVAL with a message that names the culprit. */
#include <string.h>

#include <ultrapool/pool.h>

#include "check.h"
#include "config.h"

static const char *vars[] = {"UP_SHARDS",
                             "UP_SHARD_MIN_WORKERS",
                             "UP_SHARD_MAX_WORKERS",
                             "UP_MAX_WORKERS",
                             "UP_QUEUE_CAPACITY",
                             "UP_DEQUE_CAPACITY",
                             "UP_IDLE_TIMEOUT",
                             "UP_SPAWN_DELAY",
                             "UP_SPIN",
                             "UP_SUBMIT_HELP",
                             "UP_BIND",
                             "UP_SHARD_MAX_CORES",
                             "UP_STACK_SIZE",
                             "UP_PRINT_CONFIG",
                             "UP_SHARD_CHOICE"};

static void clear_env(void)
{
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
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

static void expect_cfg_error(up_config cfg, const char *needle)
{
    up_pool *p = NULL;
    CHECK_EQ(up_pool_create(&p, &cfg), UP_EINVAL);
    CHECK(p == NULL);
    if (!strstr(up_last_error(), needle)) {
        fprintf(stderr, "message \"%s\" lacks \"%s\"\n", up_last_error(), needle);
        CHECK(0);
    }
}

int main(void)
{
    clear_env();
    up_config cfg;
    CHECK_EQ(up_config_init(&cfg), UP_OK);
    CHECK_EQ(cfg.shards, 0);
    CHECK_EQ(cfg.shard_min_workers, 1);
    CHECK_EQ(cfg.queue_capacity, 1024);
    CHECK_EQ(cfg.idle_timeout_ns, 1000000000ull);
    CHECK_EQ(cfg.submit_help, 2);
    CHECK_EQ(cfg.shard_choice, UP_SHARD_LOCAL);
    CHECK_EQ(up_config_validate(&cfg), UP_OK);

    /* Every variable is applied. */
    setenv("UP_SHARDS", "3", 1);
    setenv("UP_SHARD_MIN_WORKERS", "2", 1);
    setenv("UP_SHARD_MAX_WORKERS", "7", 1);
    setenv("UP_MAX_WORKERS", "20", 1);
    setenv("UP_QUEUE_CAPACITY", "64", 1);
    setenv("UP_DEQUE_CAPACITY", "32", 1);
    setenv("UP_IDLE_TIMEOUT", "500ms", 1);
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
    expect_env_error("UP_QUEUE_CAPACITY", "0");
    expect_env_error("UP_QUEUE_CAPACITY", "1000");
    expect_env_error("UP_SHARD_MAX_WORKERS", "0");
    expect_env_error("UP_IDLE_TIMEOUT", "500");
    expect_env_error("UP_IDLE_TIMEOUT", "5 s");
    expect_env_error("UP_IDLE_TIMEOUT", "1fortnight");
    expect_env_error("UP_IDLE_TIMEOUT", "0");
    expect_env_error("UP_SPAWN_DELAY", "1ns");
    expect_env_error("UP_SUBMIT_HELP", "maybe");
    expect_env_error("UP_BIND", "socket");
    expect_env_error("UP_STACK_SIZE", "1k");
    expect_env_error("UP_PRINT_CONFIG", "loud");
    expect_env_error("UP_SHARD_CHOICE", "nearest");
    /* Two bad variables: the first is reported, both are printed. */
    setenv("UP_SPIN", "x", 1);
    setenv("UP_SHARDS", "y", 1);
    CHECK_EQ(up_config_init(&cfg), UP_EINVAL);
    CHECK(strstr(up_last_error(), "UP_SHARDS") != NULL);
    clear_env();

    /* Bad values set in code. */
    up_config base;
    CHECK_EQ(up_config_init(&base), UP_OK);
    up_config c = base;
    c.shard_min_workers = 5;
    c.shard_max_workers = 4;
    expect_cfg_error(c, "shard_min_workers");
    c = base;
    c.queue_capacity = 0;
    expect_cfg_error(c, "UP_QUEUE_CAPACITY");
    c = base;
    c.queue_capacity = 100;
    expect_cfg_error(c, "power of two");
    c = base;
    c.bind = (up_bind)7;
    expect_cfg_error(c, "bind");
    c = base;
    c.shard_choice = (up_shard_choice)2;
    expect_cfg_error(c, "shard_choice");
    c = base;
    c.shards = 4;
    c.shard_min_workers = 2;
    c.max_workers = 3;
    expect_cfg_error(c, "max_workers");
    CHECK_EQ(up_config_init(NULL), UP_EINVAL);
    CHECK_EQ(up_config_validate(NULL), UP_EINVAL);
    CHECK_EQ(up_pool_create(NULL, NULL), UP_EINVAL);

    /* The parsers directly. */
    uint64_t ns;
    CHECK(up__parse_duration("2s", &ns) == 0 && ns == 2000000000ull);
    CHECK(up__parse_duration("1m", &ns) == 0 && ns == 60000000000ull);
    CHECK(up__parse_duration("7ns", &ns) == 0 && ns == 7);
    CHECK(up__parse_duration("0", &ns) == 0 && ns == 0);
    CHECK(up__parse_duration("99999999999999999999h", &ns) == -1);
    CHECK(up__parse_duration("ms", &ns) == -1);
    up_bind b;
    CHECK(up__parse_bind("core", &b) == 0 && b == UP_BIND_CORE);
    CHECK(up__parse_bind("Core", &b) == -1);
    up_shard_choice sc;
    CHECK(up__parse_shard_choice("random", &sc) == 0 && sc == UP_SHARD_RANDOM);
    CHECK(up__parse_shard_choice("local", &sc) == 0 && sc == UP_SHARD_LOCAL);
    CHECK(up__parse_shard_choice("", &sc) == -1);

    CHECK(strcmp(up_strerror(UP_EOVERLOAD), "unknown error") != 0);
    CHECK(strcmp(up_strerror(12345), "unknown error") == 0);
    printf("config: defaults, 14 variables, 18 malformed values and 6 bad fields checked\n");
    return 0;
}
