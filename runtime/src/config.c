/* Configuration: defaults, the UP_* environment variables, validation and
 * printing. Every option has a field, a variable, a default and a range;
 * a value outside its range is an error that names it, never a clamp.
 *
 * One table (options[]) describes every field-backed variable, so parsing,
 * validation and UP_PRINT_CONFIG cannot disagree about names, units or
 * ranges. Which UP_* names exist at all, for the unknown-name warning, is
 * the environment registry's to say (env_registry.c): it lists every
 * layer's variables and the names reserved for the tools. */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ultrapool/version.h>

#include "abi_struct.h"
#include "config.h"
#include "env_registry.h"
#include "os/os.h"
#include "pool_internal.h"

/* The enumerations: the words a variable accepts (the index is the value)
 * and the C constants a program uses for the field. */
static const char *const bind_words[] = {"none", "shard", "core", NULL};
static const char *const bind_cnames[] = {"UP_BIND_NONE", "UP_BIND_SHARD", "UP_BIND_CORE", NULL};
static const char *const choice_words[] = {"local", "random", NULL};
static const char *const choice_cnames[] = {"UP_SHARD_LOCAL", "UP_SHARD_RANDOM", NULL};

/* Enumerations are read and written as int. */
_Static_assert(sizeof(up_bind) == sizeof(int), "up_bind is not int-sized");
_Static_assert(sizeof(up_shard_choice) == sizeof(int), "up_shard_choice is not int-sized");

typedef struct option {
    const char *env;   /* the variable */
    const char *field; /* the up_config member */
    size_t offset;     /* into up_config */
    char kind; /* 'u' unsigned, 'i' int, 'd' duration (uint64 ns), 'z' size_t bytes, 'e' enum */
    unsigned char pow2;        /* must be a power of two */
    unsigned char zero_ok;     /* 0 is allowed besides [lo, hi] (means "auto" or "none") */
    uint64_t lo, hi;           /* the range; for 'e' the largest value is hi */
    const char *const *words;  /* 'e': the accepted words */
    const char *const *cnames; /* 'e': the C constants */
} option;

#define NUM(env, field, kind, lo, hi, pow2, zero)                                                  \
    {                                                                                              \
        env, #field, offsetof(up_config, field), kind, pow2, zero, lo, hi, NULL, NULL              \
    }
#define ENUM(env, field, words, cnames)                                                            \
    {                                                                                              \
        env, #field, offsetof(up_config, field), 'e', 0, 0, 0, sizeof words / sizeof words[0] - 2, \
            words, cnames                                                                          \
    }

/* In the order of the fields of up_config, which is the order of
 * UP_PRINT_CONFIG's lines. */
static const option options[] = {
    NUM("UP_SHARDS", shards, 'u', 1, 4096, 0, 1),
    NUM("UP_SHARD_MIN_WORKERS", shard_min_workers, 'u', 0, 65536, 0, 1),
    NUM("UP_SHARD_MAX_WORKERS", shard_max_workers, 'u', 1, 65536, 0, 0),
    NUM("UP_MAX_WORKERS", max_workers, 'u', 1, 1u << 20, 0, 1),
    NUM("UP_QUEUE_CAPACITY", queue_capacity, 'u', 2, 1u << 24, 1, 0),
    NUM("UP_DEQUE_CAPACITY", deque_capacity, 'u', 2, 1u << 20, 1, 0),
    NUM("UP_IDLE_TIMEOUT", idle_timeout_ns, 'd', UP__US, 30 * 24 * 3600 * UP__SEC, 0, 0),
    NUM("UP_EXTRA_IDLE_TIMEOUT", extra_idle_timeout_ns, 'd', UP__US, 30 * 24 * 3600 * UP__SEC, 0,
        0),
    NUM("UP_SPAWN_DELAY", spawn_delay_ns, 'd', 10 * UP__US, 10 * UP__SEC, 0, 0),
    NUM("UP_SPIN", spin, 'u', 0, 10000000, 0, 1),
    NUM("UP_SUBMIT_HELP", submit_help, 'i', 0, 2, 0, 1),
    ENUM("UP_BIND", bind, bind_words, bind_cnames),
    NUM("UP_SHARD_MAX_CORES", shard_max_cores, 'u', 1, 4096, 0, 1),
    ENUM("UP_SHARD_CHOICE", shard_choice, choice_words, choice_cnames),
    NUM("UP_STACK_SIZE", stack_size, 'z', 64 * UP__KIB, 1024 * 1024 * UP__KIB, 0, 1),
    NUM("UP_OMP_SHARE", omp_share, 'i', 0, 1, 0, 1),
};
#define NOPTIONS (sizeof options / sizeof options[0])

/* Variables that are not fields: booleans that ask for an action. */
static const char *const flag_vars[] = {"UP_PRINT_CONFIG"};
#define NFLAGS (sizeof flag_vars / sizeof flag_vars[0])

/* The names of the other layers' variables, and those reserved for the
 * tools and tests, are in the environment registry (env_registry.c),
 * which the unknown-name check below consults. */

#define BOOL_WORDS "1 0 true false yes no on off y n"

static uint64_t get_field(const up_config *cfg, const option *o)
{
    const char *base = (const char *)cfg + o->offset;
    switch (o->kind) {
    case 'd': {
        uint64_t v;
        memcpy(&v, base, sizeof v);
        return v;
    }
    case 'z': {
        size_t v;
        memcpy(&v, base, sizeof v);
        return v;
    }
    case 'i':
    case 'e': {
        int v;
        memcpy(&v, base, sizeof v);
        return (uint64_t)(int64_t)v; /* a negative value becomes huge, so out of range */
    }
    default: {
        unsigned v;
        memcpy(&v, base, sizeof v);
        return v;
    }
    }
}

/* Only called with a value that passed in_range(), so every cast is exact. */
static void set_field(up_config *cfg, const option *o, uint64_t v)
{
    char *base = (char *)cfg + o->offset;
    switch (o->kind) {
    case 'd':
        memcpy(base, &v, sizeof v);
        break;
    case 'z': {
        size_t z = (size_t)v;
        memcpy(base, &z, sizeof z);
        break;
    }
    case 'i':
    case 'e': {
        int i = (int)v;
        memcpy(base, &i, sizeof i);
        break;
    }
    default: {
        unsigned u = (unsigned)v;
        memcpy(base, &u, sizeof u);
        break;
    }
    }
}

/* ---- parsing ---------------------------------------------------------- */

static int parse_word(const char *s, const char *const *words, uint64_t *out)
{
    for (uint64_t i = 0; words[i]; i++)
        if (!strcmp(s, words[i])) {
            *out = i;
            return 0;
        }
    return -1;
}

int up__env_flag(const char *name)
{
    const char *v = up__env(name);
    int on = 0;
    return v && up__parse_bool(v, &on) == 0 && on;
}

int up__print_config_wanted(void)
{
    if (up__env("UP_PRINT_CONFIG"))
        return up__env_flag("UP_PRINT_CONFIG");
    uint64_t on = 0;
    char from[256], err[256];
    return up__omp_value("UP_PRINT_CONFIG", &on, from, sizeof from, err, sizeof err) == 1 && on;
}

int up__parse_bind(const char *s, up_bind *out)
{
    uint64_t v;
    if (parse_word(s, bind_words, &v) != 0)
        return -1;
    *out = (up_bind)v;
    return 0;
}

int up__parse_shard_choice(const char *s, up_shard_choice *out)
{
    uint64_t v;
    if (parse_word(s, choice_words, &v) != 0)
        return -1;
    *out = (up_shard_choice)v;
    return 0;
}

static int parse_value(const option *o, const char *s, uint64_t *out)
{
    switch (o->kind) {
    case 'd':
        return up__parse_duration(s, out);
    case 'z':
        return up__parse_size(s, out);
    case 'e':
        return parse_word(s, o->words, out);
    default:
        return up__parse_number(s, out);
    }
}

/* ---- printing values -------------------------------------------------- */

/* A value as the variable would spell it. */
static void format_value(const option *o, uint64_t v, char *buf, size_t size)
{
    switch (o->kind) {
    case 'd':
        up__format_duration(v, buf, size);
        break;
    case 'z':
        up__format_size(v, buf, size);
        break;
    case 'e':
        if (v <= o->hi)
            snprintf(buf, size, "%s", o->words[v]);
        else
            snprintf(buf, size, "%" PRId64, (int64_t)v);
        break;
    case 'i':
        snprintf(buf, size, "%" PRId64, (int64_t)v);
        break;
    default:
        snprintf(buf, size, "%" PRIu64, v);
        break;
    }
}

/* What a value must be, e.g. "a power of two in 2..16777216", "0 or in
 * 1..4096", "in 1us..720h", "one of none, shard, core". */
static void describe_range(const option *o, int c_names, char *buf, size_t size)
{
    if (o->kind == 'e') {
        const char *const *w = c_names ? o->cnames : o->words;
        int n = snprintf(buf, size, "one of");
        for (size_t i = 0; w[i] && n >= 0 && (size_t)n < size; i++)
            n += snprintf(buf + n, size - (size_t)n, "%s %s", i ? "," : "", w[i]);
        return;
    }
    char lo[32], hi[32];
    format_value(o, o->lo, lo, sizeof lo);
    format_value(o, o->hi, hi, sizeof hi);
    snprintf(buf, size, "%s%sin %s..%s", o->zero_ok && o->lo > 0 ? "0 or " : "",
             o->pow2 ? "a power of two " : "", lo, hi);
}

static int in_range(const option *o, uint64_t v)
{
    if (v == 0 && o->zero_ok)
        return 1;
    if (v < o->lo || v > o->hi)
        return 0;
    return !o->pow2 || (v & (v - 1)) == 0;
}

/* ---- the environment -------------------------------------------------- */

static int apply_env_option(up_config *cfg, const option *o, const char *val)
{
    uint64_t v = 0;
    char range[160];
    int rc = parse_value(o, val, &v);
    if (rc == -1) {
        const char *what;
        switch (o->kind) {
        case 'd':
            what = "not a duration with a unit (ns us ms s m h), such as 500ms or 2s";
            break;
        case 'z':
            what = "not a size in bytes such as 262144, 256k, 8M or 1G";
            break;
        case 'e':
            describe_range(o, 0, range, sizeof range);
            up__set_error("%s=\"%s\": must be %s", o->env, val, range);
            return UP_EINVAL;
        default:
            what = "not a whole number";
            break;
        }
        up__set_error("%s=\"%s\": %s", o->env, val, what);
        return UP_EINVAL;
    }
    /* rc == -2: too large for 64 bits, so certainly out of range. */
    if (rc != 0 || !in_range(o, v)) {
        describe_range(o, 0, range, sizeof range);
        up__set_error("%s=%s: must be %s", o->env, val, range);
        return UP_EINVAL;
    }
    set_field(cfg, o, v);
    return UP_OK;
}

/* An unset variable: the OpenMP variable standing in for it, if any
 * (config_omp.c). A malformed one, or one out of the range of the UP_ one
 * (OpenMP's syntax has no 0 for "automatic", so none is offered), is
 * OpenMP's convention: a warning naming the OMP_ variable, and the
 * default stays. */
static int apply_omp_option(up_config *cfg, const option *o)
{
    uint64_t v = 0;
    char from[256], err[512];
    int rc = up__omp_value(o->env, &v, from, sizeof from, err, sizeof err);
    if (rc == 0)
        return UP_OK;
    if (rc < 0) {
        up__omp_warn(o->env, err);
        return UP_OK;
    }
    if (!in_range(o, v)) {
        option q = *o;
        q.zero_ok = 0;
        char range[160];
        describe_range(&q, 0, range, sizeof range);
        snprintf(err, sizeof err, "%s: must be %s (the range of %s)", from, range, o->env);
        up__omp_warn(o->env, err);
        return UP_OK;
    }
    set_field(cfg, o, v);
    return UP_OK;
}

static void defaults(up_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
    cfg->shards = 0;
    cfg->shard_min_workers = 1;
    cfg->shard_max_workers = 1024;
    cfg->max_workers = 0;
    cfg->queue_capacity = 1024;
    cfg->deque_capacity = 256;
    cfg->idle_timeout_ns = 1 * UP__SEC;
    cfg->extra_idle_timeout_ns = 50 * UP__MS;
    cfg->spawn_delay_ns = 1 * UP__MS;
    cfg->spin = 256;
    cfg->submit_help = 2;
    cfg->bind = UP_BIND_NONE;
    cfg->shard_max_cores = 0;
    cfg->shard_choice = UP_SHARD_LOCAL;
    cfg->stack_size = 0;
    cfg->omp_share = 1;
}

/* A malformed variable: printed now, and the first one kept for
 * up_last_error(). */
static void env_failed(int *rc, char *first, size_t size)
{
    fprintf(stderr, "ultrapool: %s\n", up_last_error());
    if (*rc == UP_OK)
        snprintf(first, size, "%s", up_last_error());
    *rc = UP_EINVAL;
}

/* ---- names that look like ours but are not ---------------------------- */

#define NAME_MAX_CMP 64

/* Upper case for ASCII letters only: the C library's toupper depends on
 * the locale, and variable names are ASCII. */
static int toupper_ascii(char c) { return c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c; }

/* Optimal string alignment distance (Levenshtein plus the swap of two
 * neighbours, the commonest typo: UP_SHRADS), ignoring case, over the
 * first NAME_MAX_CMP characters. */
static unsigned name_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    la = la > NAME_MAX_CMP ? NAME_MAX_CMP : la;
    lb = lb > NAME_MAX_CMP ? NAME_MAX_CMP : lb;
    unsigned rows[3][NAME_MAX_CMP + 1];
    unsigned *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= lb; j++)
        prev[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            int ca = toupper_ascii(a[i - 1]), cb = toupper_ascii(b[j - 1]);
            unsigned best = prev[j - 1] + (ca != cb);
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            if (i > 1 && j > 1 && ca == toupper_ascii(b[j - 2]) && toupper_ascii(a[i - 2]) == cb &&
                prev2[j - 2] + 1 < best)
                best = prev2[j - 2] + 1;
            cur[j] = best;
        }
        unsigned *t = prev2;
        prev2 = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

/* A registered name (env_registry.c): a variable of any layer, or a name
 * or prefix reserved for the tools. */
static int is_known_name(const char *name) { return up__env_lookup(name) != NULL; }

/* The registered variable nearest to name, among those the registry
 * offers as suggestions (the first one on a tie). */
static const char *nearest_name(const char *name)
{
    const char *best = NULL;
    unsigned best_d = 0;
    for (size_t i = 0; i < up__env_nvars; i++) {
        if (!(up__env_vars[i].flags & UP__ENV_SUGGEST))
            continue;
        unsigned d = name_distance(name, up__env_vars[i].name);
        if (!best || d < best_d) {
            best_d = d;
            best = up__env_vars[i].name;
        }
    }
    return best;
}

unsigned up__env_check_names(char *const *env, FILE *f)
{
    unsigned warned = 0;
    for (size_t i = 0; env && env[i]; i++) {
        const char *e = env[i];
        if (strncmp(e, "UP_", 3) != 0)
            continue;
        char name[NAME_MAX_CMP + 1];
        size_t len = strcspn(e, "=");
        if (len > NAME_MAX_CMP)
            len = NAME_MAX_CMP;
        memcpy(name, e, len);
        name[len] = '\0';
        if (is_known_name(name))
            continue;
        fprintf(f,
                "ultrapool: warning: %s is not an ultrapool variable and is ignored; "
                "the nearest is %s\n",
                name, nearest_name(name));
        warned++;
    }
    return warned;
}

static pthread_once_t names_checked = PTHREAD_ONCE_INIT;

static void check_process_names(void) { (void)up__env_check_names(up__os_environ(), stderr); }

/* up_config as this library reads it: 1.0's layout ends at hook_ctx, a
 * name that never changes (abi_struct.h). */
static const up__struct_kind config_kind = UP__STRUCT_KIND(up_config, hook_ctx, "up_config_init()");

int up__config_read(const char *who, const up_config *in, up_config *out)
{
    if (up__struct_in(who, &config_kind, in, out) == UP_OK)
        return UP_OK;
    fprintf(stderr, "ultrapool: %s\n", up_last_error()); /* as up__config_error */
    return UP_EINVAL;
}

int up_config_init_sized(up_config *out, size_t size)
{
    if (!out) {
        up__set_error("up_config_init: cfg is NULL");
        return UP_EINVAL;
    }
    /* Filled in the library's own layout, then handed over in the
     * program's size (abi_struct.h). */
    up_config full, *cfg = &full;
    /* Once per process, not per pool: the environment rarely changes, and
     * a program that creates many pools should not repeat the warning. */
    pthread_once(&names_checked, check_process_names);
    defaults(cfg);
    int rc = UP_OK;
    char first[UP__ERROR_MAX] = "";
    for (size_t i = 0; i < NOPTIONS; i++) {
        /* A set UP_ variable wins; the OpenMP one is read only without it. */
        const char *val = up__env(options[i].env);
        if (val ? apply_env_option(cfg, &options[i], val) != UP_OK
                : apply_omp_option(cfg, &options[i]) != UP_OK)
            env_failed(&rc, first, sizeof first);
    }
    for (size_t i = 0; i < NFLAGS; i++) {
        const char *val = up__env(flag_vars[i]);
        int on;
        uint64_t v;
        char from[256], err[256];
        if (val && up__parse_bool(val, &on) != 0) {
            up__set_error("%s=\"%s\": not a boolean; use one of " BOOL_WORDS " (any case)",
                          flag_vars[i], val);
            env_failed(&rc, first, sizeof first);
        } else if (!val &&
                   up__omp_value(flag_vars[i], &v, from, sizeof from, err, sizeof err) < 0) {
            up__omp_warn(flag_vars[i], err); /* as apply_omp_option */
        }
    }
    if (up__struct_init("up_config_init", &config_kind, out, size, cfg) != UP_OK)
        return UP_EINVAL;
    if (rc != UP_OK)
        up__set_error("%s", first); /* report the first problem */
    return rc;
}

/* ---- validation ------------------------------------------------------- */

int up_config_validate(const up_config *in)
{
    if (!in) {
        up__config_error("up_config_validate: cfg is NULL");
        return UP_EINVAL;
    }
    up_config cfg;
    if (up__config_read("up_config_validate", in, &cfg) != UP_OK)
        return UP_EINVAL;
    return up__config_check(&cfg);
}

int up__config_check(const up_config *cfg)
{
    for (size_t i = 0; i < NOPTIONS; i++) {
        const option *o = &options[i];
        uint64_t v = get_field(cfg, o);
        if (in_range(o, v))
            continue;
        /* The value as the program wrote it: in the field's own unit (ns,
         * bytes), and an enumeration as its number. */
        char shown[32], range[160];
        if (o->kind == 'i' || o->kind == 'e')
            snprintf(shown, sizeof shown, "%" PRId64, (int64_t)v);
        else
            snprintf(shown, sizeof shown, "%" PRIu64, v);
        describe_range(o, 1, range, sizeof range);
        up__config_error("up_config.%s (%s) = %s: must be %s", o->field, o->env, shown, range);
        return UP_EINVAL;
    }
    if (cfg->shard_min_workers > cfg->shard_max_workers) {
        up__config_error("up_config.shard_min_workers (UP_SHARD_MIN_WORKERS) = %u: above "
                         "up_config.shard_max_workers (UP_SHARD_MAX_WORKERS) = %u",
                         cfg->shard_min_workers, cfg->shard_max_workers);
        return UP_EINVAL;
    }
    return UP_OK;
}

/* ---- UP_PRINT_CONFIG -------------------------------------------------- */

/* When the environment sets a variable to something other than what is in
 * effect (the program filled or changed the field itself), say so, since
 * the program's value wins. */
static void note_environment(const option *o, uint64_t effective, FILE *f)
{
    const char *val = up__env(o->env);
    uint64_t v;
    if (!val || (parse_value(o, val, &v) == 0 && v == effective))
        return;
    fprintf(f, "# note: %s=%s in the environment is not in effect: the program set up_config.%s\n",
            o->env, val, o->field);
}

/* Where a value came from when an OpenMP variable stands in for its UP_
 * one, or why that OpenMP variable is not in effect. */
static void note_omp(const option *o, uint64_t effective, FILE *f)
{
    uint64_t v = 0;
    char from[256], err[256];
    int rc = up__omp_value(o->env, &v, from, sizeof from, err, sizeof err);
    if (rc == 0)
        return;
    if (up__env(o->env))
        fprintf(f, "# note: %s is not read: %s is set, and UP_ variables win\n", from, o->env);
    else if (rc < 0)
        fprintf(f, "# note: not in effect: %s\n", err);
    else if (!in_range(o, v))
        fprintf(f, "# note: %s is not in effect: out of the range of %s\n", from, o->env);
    else if (v != effective)
        fprintf(f, "# note: %s in the environment is not in effect: the program set up_config.%s\n",
                from, o->field);
    else
        fprintf(f, "# %s from %s\n", o->env, from);
}

/* A flag's line, with the same notes for its OpenMP stand-in. */
static void print_flag(const char *name, FILE *f)
{
    uint64_t v = 0;
    char from[256], err[256];
    int rc = up__omp_value(name, &v, from, sizeof from, err, sizeof err);
    if (up__env(name) || rc == 0) {
        fprintf(f, "%s=%d\n", name, up__env_flag(name));
        if (rc != 0)
            fprintf(f, "# note: %s is not read: %s is set, and UP_ variables win\n", from, name);
        return;
    }
    fprintf(f, "%s=%d\n", name, rc == 1 && v);
    if (rc == 1)
        fprintf(f, "# %s from %s\n", name, from);
    else
        fprintf(f, "# note: not in effect: %s\n", err);
}

/* The shard plan as comment lines: the planner's table with "# " in front
 * of every line, so that the whole output stays a valid shell script. */
static void print_plan(const up_config *cfg, const up__plan *plan, FILE *f)
{
    unsigned cpus = 0;
    for (unsigned s = 0; s < plan->nshards; s++)
        cpus += plan->shards[s].ncpus;
    fprintf(f, "# shard plan: %u shard%s over %u CPU%s from %s", plan->nshards,
            plan->nshards == 1 ? "" : "s", cpus, cpus == 1 ? "" : "s", plan->source);
    if (plan->max_cores)
        fprintf(f, ", at most %u cores per shard", plan->max_cores);
    fprintf(f, "; binding %s\n",
            plan->pinned_externally ? "left to likwid-pin"
            : plan->bind_supported  ? "supported"
                                    : "not possible here");
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) {
        fprintf(f, "# (the shard table could not be formatted: out of memory)\n");
        return;
    }
    up__plan_print(plan, cfg, mem);
    fclose(mem);
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        fprintf(f, "# %.*s\n", (int)n, line);
        line = nl ? nl + 1 : line + n;
    }
    free(text);
}

void up__print_config(const up_config *cfg, const up__plan *plan, FILE *f)
{
    fprintf(f, "# ULTRAPOOL CONFIGURATION BEGIN\n");
    fprintf(f, "# ultrapool %s\n", UP_VERSION_STRING);
    for (size_t i = 0; i < NOPTIONS; i++) {
        char shown[32];
        uint64_t v = get_field(cfg, &options[i]);
        format_value(&options[i], v, shown, sizeof shown);
        fprintf(f, "%s=%s\n", options[i].env, shown);
        note_environment(&options[i], v, f);
        note_omp(&options[i], v, f);
    }
    for (size_t i = 0; i < NFLAGS; i++)
        print_flag(flag_vars[i], f);
    up__print_layer(f); /* the parallel layer's variables, when it is linked */
    if (cfg->on_worker_start || cfg->on_worker_stop)
        fprintf(f, "# worker hooks set by the program:%s%s\n",
                cfg->on_worker_start ? " on_worker_start" : "",
                cfg->on_worker_stop ? " on_worker_stop" : "");
    if (plan)
        print_plan(cfg, plan, f);
    fprintf(f, "# ULTRAPOOL CONFIGURATION END\n");
}
