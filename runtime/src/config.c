/* Configuration: defaults, the UP_* environment variables, validation and
 * printing. Every option has a field, a variable, a default and a range;
 * a value outside its range is an error that names it, never a clamp. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "pool_internal.h"

#define KIB 1024ull
#define MS  1000000ull
#define SEC 1000000000ull

static _Thread_local char errbuf[256];

void up__set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, sizeof errbuf, fmt, ap);
    va_end(ap);
}

const char *up_last_error(void) { return errbuf; }

const char *up_strerror(int err)
{
    switch (err) {
    case UP_OK:
        return "success";
    case UP_EINVAL:
        return "invalid argument";
    case UP_ENOMEM:
        return "out of memory";
    case UP_ESTOPPED:
        return "stopped";
    case UP_EOVERLOAD:
        return "overloaded: every queue is full";
    case UP_ETIMEDOUT:
        return "timed out";
    case UP_ECANCELED:
        return "cancelled";
    case UP_EAGAIN:
        return "resource temporarily unavailable";
    case UP_EDEADLK:
        return "would deadlock: called from one of the pool's own tasks";
    default:
        return "unknown error";
    }
}

/* The numeric options, with their ranges. */
typedef struct option {
    const char *env;
    size_t offset; /* into up_config */
    int kind;      /* 'u' unsigned, 'i' int, 'd' duration (uint64 ns), 'z' size_t bytes */
    uint64_t lo, hi;
    int pow2;    /* must be a power of two */
    int zero_ok; /* 0 is allowed besides [lo, hi] (means "auto" or "none") */
} option;

#define OPT(env, field, kind, lo, hi, pow2, zero)                                                  \
    {                                                                                              \
        env, offsetof(up_config, field), kind, lo, hi, pow2, zero                                  \
    }

static const option options[] = {
    OPT("UP_SHARDS", shards, 'u', 1, 4096, 0, 1),
    OPT("UP_SHARD_MIN_WORKERS", shard_min_workers, 'u', 0, 65536, 0, 1),
    OPT("UP_SHARD_MAX_WORKERS", shard_max_workers, 'u', 1, 65536, 0, 0),
    OPT("UP_MAX_WORKERS", max_workers, 'u', 1, 1u << 20, 0, 1),
    OPT("UP_QUEUE_CAPACITY", queue_capacity, 'u', 2, 1u << 24, 1, 0),
    OPT("UP_DEQUE_CAPACITY", deque_capacity, 'u', 2, 1u << 20, 1, 0),
    OPT("UP_IDLE_TIMEOUT", idle_timeout_ns, 'd', 1000, 30 * 24 * 3600 * SEC, 0, 0),
    OPT("UP_SPAWN_DELAY", spawn_delay_ns, 'd', 10000, 10 * SEC, 0, 0),
    OPT("UP_SPIN", spin, 'u', 0, 10000000, 0, 1),
    OPT("UP_SUBMIT_HELP", submit_help, 'i', 0, 2, 0, 1),
    OPT("UP_SHARD_MAX_CORES", shard_max_cores, 'u', 1, 4096, 0, 1),
    OPT("UP_STACK_SIZE", stack_size, 'z', 64 * KIB, 1024 * 1024 * KIB, 0, 1),
};
#define NOPTIONS (sizeof options / sizeof options[0])

static uint64_t get_field(const up_config *cfg, const option *o)
{
    const char *base = (const char *)cfg + o->offset;
    switch (o->kind) {
    case 'd':
        return *(const uint64_t *)base;
    case 'z':
        return *(const size_t *)base;
    case 'i':
        return (uint64_t)(int64_t) * (const int *)base;
    default:
        return *(const unsigned *)base;
    }
}

static void set_field(up_config *cfg, const option *o, uint64_t v)
{
    char *base = (char *)cfg + o->offset;
    switch (o->kind) {
    case 'd':
        *(uint64_t *)base = v;
        break;
    case 'z':
        *(size_t *)base = (size_t)v;
        break;
    case 'i':
        *(int *)base = (int)v;
        break;
    default:
        *(unsigned *)base = (unsigned)v;
        break;
    }
}

static int check_range(const option *o, uint64_t v, const char *shown)
{
    if (v == 0 && o->zero_ok)
        return UP_OK;
    if (v < o->lo || v > o->hi) {
        up__set_error("%s=%s: out of range [%" PRIu64 ", %" PRIu64 "]%s", o->env, shown, o->lo,
                      o->hi, o->zero_ok ? " (or 0)" : "");
        return UP_EINVAL;
    }
    if (o->pow2 && (v & (v - 1)) != 0) {
        up__set_error("%s=%s: must be a power of two", o->env, shown);
        return UP_EINVAL;
    }
    return UP_OK;
}

/* Parses a whole decimal number; returns the index after the digits or -1. */
static int parse_digits(const char *s, uint64_t *out)
{
    int i = 0;
    uint64_t v = 0;
    if (!isdigit((unsigned char)s[0]))
        return -1;
    for (; isdigit((unsigned char)s[i]); i++) {
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return i;
}

static int mul_checked(uint64_t v, uint64_t m, uint64_t *out)
{
    if (m && v > UINT64_MAX / m)
        return -1;
    *out = v * m;
    return 0;
}

/* "500ms", "2s", "100us", "750ns", "1m", "0"; a bare number other than 0
 * is refused because its unit would be a guess. */
int up__parse_duration(const char *s, uint64_t *out)
{
    uint64_t v;
    int n = parse_digits(s, &v);
    if (n < 0)
        return -1;
    const char *u = s + n;
    uint64_t m;
    if (*u == '\0')
        m = v == 0 ? 1 : 0;
    else if (!strcmp(u, "ns"))
        m = 1;
    else if (!strcmp(u, "us"))
        m = 1000;
    else if (!strcmp(u, "ms"))
        m = MS;
    else if (!strcmp(u, "s"))
        m = SEC;
    else if (!strcmp(u, "m") || !strcmp(u, "min"))
        m = 60 * SEC;
    else if (!strcmp(u, "h"))
        m = 3600 * SEC;
    else
        m = 0;
    if (m == 0)
        return -1;
    return mul_checked(v, m, out);
}

/* "65536", "256k", "8M", "1G" (binary multiples). */
static int parse_size(const char *s, uint64_t *out)
{
    uint64_t v;
    int n = parse_digits(s, &v);
    if (n < 0)
        return -1;
    const char *u = s + n;
    uint64_t m = 0;
    if (*u == '\0')
        m = 1;
    else if (!strcmp(u, "k") || !strcmp(u, "K") || !strcmp(u, "KiB"))
        m = KIB;
    else if (!strcmp(u, "M") || !strcmp(u, "MiB"))
        m = KIB * KIB;
    else if (!strcmp(u, "G") || !strcmp(u, "GiB"))
        m = KIB * KIB * KIB;
    if (m == 0)
        return -1;
    return mul_checked(v, m, out);
}

static int parse_bool(const char *s, uint64_t *out)
{
    if (!strcmp(s, "1") || !strcmp(s, "yes") || !strcmp(s, "on") || !strcmp(s, "true"))
        *out = 1;
    else if (!strcmp(s, "0") || !strcmp(s, "no") || !strcmp(s, "off") || !strcmp(s, "false"))
        *out = 0;
    else
        return -1;
    return 0;
}

int up__parse_bind(const char *s, up_bind *out)
{
    if (!strcmp(s, "none"))
        *out = UP_BIND_NONE;
    else if (!strcmp(s, "shard"))
        *out = UP_BIND_SHARD;
    else if (!strcmp(s, "core"))
        *out = UP_BIND_CORE;
    else
        return -1;
    return 0;
}

int up__parse_shard_choice(const char *s, up_shard_choice *out)
{
    if (!strcmp(s, "local"))
        *out = UP_SHARD_LOCAL;
    else if (!strcmp(s, "random"))
        *out = UP_SHARD_RANDOM;
    else
        return -1;
    return 0;
}

static int apply_env_option(up_config *cfg, const option *o, const char *val)
{
    uint64_t v = 0;
    int bad;
    const char *what;
    switch (o->kind) {
    case 'd':
        bad = up__parse_duration(val, &v);
        what = "a duration such as 500ms, 2s, 100us";
        break;
    case 'z':
        bad = parse_size(val, &v);
        what = "a size in bytes such as 262144, 256k, 8M";
        break;
    default:
        bad = parse_digits(val, &v);
        bad = bad < 0 || val[bad] != '\0' || v > UINT32_MAX;
        what = "a whole number";
        break;
    }
    if (bad) {
        up__set_error("%s=\"%s\": not %s", o->env, val, what);
        return UP_EINVAL;
    }
    int rc = check_range(o, v, val);
    if (rc == UP_OK)
        set_field(cfg, o, v);
    return rc;
}

static void defaults(up_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->shards = 0;
    cfg->shard_min_workers = 1;
    cfg->shard_max_workers = 1024;
    cfg->max_workers = 0;
    cfg->queue_capacity = 1024;
    cfg->deque_capacity = 256;
    cfg->idle_timeout_ns = 1 * SEC;
    cfg->spawn_delay_ns = 1 * MS;
    cfg->spin = 256;
    cfg->submit_help = 2;
    cfg->bind = UP_BIND_NONE;
    cfg->shard_max_cores = 0;
    cfg->shard_choice = UP_SHARD_LOCAL;
    cfg->stack_size = 0;
}

/* A malformed variable: printed now, and the first one kept for
 * up_last_error(). */
static void env_failed(int *rc, char *first, size_t size)
{
    fprintf(stderr, "ultrapool: %s\n", errbuf);
    if (*rc == UP_OK)
        memcpy(first, errbuf, size);
    *rc = UP_EINVAL;
}

int up_config_init(up_config *cfg)
{
    if (!cfg) {
        up__set_error("up_config_init: cfg is NULL");
        return UP_EINVAL;
    }
    defaults(cfg);
    int rc = UP_OK;
    char first[sizeof errbuf] = "";
    for (size_t i = 0; i < NOPTIONS; i++) {
        const char *val = getenv(options[i].env);
        if (val && apply_env_option(cfg, &options[i], val) != UP_OK)
            env_failed(&rc, first, sizeof first);
    }
    const char *bind = getenv("UP_BIND");
    if (bind && up__parse_bind(bind, &cfg->bind) != 0) {
        up__set_error("UP_BIND=\"%s\": not none, shard or core", bind);
        env_failed(&rc, first, sizeof first);
    }
    const char *choice = getenv("UP_SHARD_CHOICE");
    if (choice && up__parse_shard_choice(choice, &cfg->shard_choice) != 0) {
        up__set_error("UP_SHARD_CHOICE=\"%s\": not local or random", choice);
        env_failed(&rc, first, sizeof first);
    }
    const char *print = getenv("UP_PRINT_CONFIG");
    uint64_t dummy;
    if (print && parse_bool(print, &dummy) != 0) {
        up__set_error("UP_PRINT_CONFIG=\"%s\": not 0 or 1", print);
        env_failed(&rc, first, sizeof first);
    }
    if (rc != UP_OK)
        memcpy(errbuf, first, sizeof errbuf); /* report the first problem */
    return rc;
}

int up_config_validate(const up_config *cfg)
{
    if (!cfg) {
        up__set_error("config is NULL");
        return UP_EINVAL;
    }
    char shown[32];
    for (size_t i = 0; i < NOPTIONS; i++) {
        uint64_t v = get_field(cfg, &options[i]);
        snprintf(shown, sizeof shown, "%" PRIu64, v);
        if (check_range(&options[i], v, shown) != UP_OK)
            return UP_EINVAL;
    }
    if (cfg->shard_min_workers > cfg->shard_max_workers) {
        up__set_error("shard_min_workers (%u) is above shard_max_workers (%u)",
                      cfg->shard_min_workers, cfg->shard_max_workers);
        return UP_EINVAL;
    }
    if ((unsigned)cfg->bind > UP_BIND_CORE) {
        up__set_error("bind (%d) is not UP_BIND_NONE, UP_BIND_SHARD or UP_BIND_CORE",
                      (int)cfg->bind);
        return UP_EINVAL;
    }
    if ((unsigned)cfg->shard_choice > UP_SHARD_RANDOM) {
        up__set_error("shard_choice (%d) is not UP_SHARD_LOCAL or UP_SHARD_RANDOM",
                      (int)cfg->shard_choice);
        return UP_EINVAL;
    }
    return UP_OK;
}

static const char *bind_name(up_bind b)
{
    return b == UP_BIND_SHARD ? "shard" : b == UP_BIND_CORE ? "core" : "none";
}

void up__print_config(const up_config *cfg, const up__plan *plan, FILE *f)
{
    fprintf(f, "ultrapool configuration:\n");
    fprintf(f, "  shards              %u (%s plan%s)\n", plan->nshards, plan->source,
            cfg->shards ? ", set" : "");
    fprintf(f, "  shard_min_workers   %u\n", cfg->shard_min_workers);
    fprintf(f, "  shard_max_workers   %u\n", cfg->shard_max_workers);
    fprintf(f, "  max_workers         %u%s\n", cfg->max_workers, cfg->max_workers ? "" : " (none)");
    fprintf(f, "  queue_capacity      %u\n", cfg->queue_capacity);
    fprintf(f, "  deque_capacity      %u\n", cfg->deque_capacity);
    fprintf(f, "  idle_timeout        %" PRIu64 " ns\n", cfg->idle_timeout_ns);
    fprintf(f, "  spawn_delay         %" PRIu64 " ns\n", cfg->spawn_delay_ns);
    fprintf(f, "  spin                %u\n", cfg->spin);
    fprintf(f, "  submit_help         %d\n", cfg->submit_help);
    fprintf(f, "  bind                %s\n", bind_name(cfg->bind));
    if (cfg->shard_max_cores)
        fprintf(f, "  shard_max_cores     %u\n", cfg->shard_max_cores);
    else
        fprintf(f, "  shard_max_cores     0 (default %u)\n", UP__SHARD_MAX_CORES_DEFAULT);
    fprintf(f, "  shard_choice        %s\n",
            cfg->shard_choice == UP_SHARD_RANDOM ? "random" : "local");
    fprintf(f, "  stack_size          %zu%s\n", cfg->stack_size,
            cfg->stack_size ? "" : " (system)");
    up__plan_print(plan, cfg, f);
}
