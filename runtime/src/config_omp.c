/* OpenMP's environment variables that stand in for the pool's UP_* ones
 * when those are unset: OMP_PROC_BIND and OMP_PLACES for UP_BIND,
 * OMP_STACKSIZE for UP_STACK_SIZE, OMP_WAIT_POLICY for UP_SPIN and
 * OMP_DISPLAY_ENV for UP_PRINT_CONFIG. up_config_init (config.c) asks
 * here, through up__omp_value, for each variable it finds unset; the
 * values follow OpenMP's syntax (any case, spaces around them), and a
 * malformed one is a warning naming the OMP_ variable, after which the
 * default stays (up__omp_warn), as OpenMP does. docs/env.md says what
 * each becomes and where the meaning differs from OpenMP's. */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "env_registry.h"
#include "text.h"

static void say(char *err, size_t esize, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void say(char *err, size_t esize, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, esize, fmt, ap);
    va_end(ap);
}

/* ---- OMP_PROC_BIND and OMP_PLACES ------------------------------------- */

/* OMP_PROC_BIND: false, true, or a list of primary, master, close and
 * spread (one per nesting level). Sets *on; the list's policies all mean
 * "bound" here, since the pool's plan places its workers. */
static int proc_bind_on(const char *v, int *on)
{
    char buf[256];
    if (!up__trimmed(v, buf, sizeof buf) || !buf[0])
        return -1;
    if (!strcasecmp(buf, "false") || !strcasecmp(buf, "true")) {
        *on = !strcasecmp(buf, "true");
        return 0;
    }
    static const char *const policies[] = {"primary", "master", "close", "spread"};
    for (char *item = buf; item;) {
        char *comma = strchr(item, ',');
        if (comma)
            *comma = '\0';
        char word[16];
        if (!up__trimmed(item, word, sizeof word) ||
            up__word_index(word, policies, sizeof policies / sizeof policies[0]) < 0)
            return -1;
        item = comma ? comma + 1 : NULL;
    }
    *on = 1;
    return 0;
}

/* OMP_PLACES: an abstract name (threads, cores, ll_caches, numa_domains,
 * sockets, any case), optionally with a count "(4)", or an explicit list
 * of places such as {0,1},{2,3} or {0:4}:4:4. Sets *wide when each place
 * holds a cache domain or more (workers then share their shard's CPUs). */
static int places_wide(const char *v, int *wide)
{
    char buf[1024];
    if (!up__trimmed(v, buf, sizeof buf) || !buf[0])
        return -1;
    if (buf[0] == '{' || buf[0] == '!') {
        /* An explicit list: checked for its characters and balanced
         * braces only, since its CPUs are not followed (docs/env.md). */
        int depth = 0, places = 0;
        for (const char *p = buf; *p; p++) {
            if (*p == '{') {
                if (depth++)
                    return -1;
                places++;
            } else if (*p == '}') {
                if (--depth < 0)
                    return -1;
            } else if (!strchr("0123456789,:!- \t", *p))
                return -1;
        }
        if (depth || !places)
            return -1;
        *wide = 0;
        return 0;
    }
    char *paren = strchr(buf, '(');
    if (paren) {
        /* "(n)": a positive count of places, nothing after it. */
        char *end;
        unsigned long long n = strtoull(paren + 1, &end, 10);
        if (paren[1] < '0' || paren[1] > '9' || n == 0 || *end != ')' || end[1] != '\0')
            return -1;
        *paren = '\0';
    }
    /* The first two are narrow, the others a cache domain or more. */
    static const char *const names[] = {"threads", "cores", "ll_caches", "numa_domains", "sockets"};
    char name[16];
    int k = up__trimmed(buf, name, sizeof name)
                ? up__word_index(name, names, sizeof names / sizeof names[0])
                : -1;
    if (k < 0)
        return -1;
    *wide = k >= 2;
    return 0;
}

int up__omp_bind(const char *proc_bind, const char *places, up_bind *out, char *err, size_t esize)
{
    int on = 1, wide = 0;
    if (proc_bind && proc_bind_on(proc_bind, &on) != 0) {
        say(err, esize,
            "OMP_PROC_BIND=\"%s\": must be true, false, or a list of primary, master, close "
            "and spread",
            proc_bind);
        return -1;
    }
    if (!on) {
        *out = UP_BIND_NONE; /* OMP_PLACES does not matter then */
        return 0;
    }
    if (places && places_wide(places, &wide) != 0) {
        say(err, esize,
            "OMP_PLACES=\"%s\": must be threads, cores, ll_caches, numa_domains or sockets "
            "(optionally with a count such as cores(4)), or a list of places such as "
            "{0,1},{2,3}",
            places);
        return -1;
    }
    *out = wide ? UP_BIND_SHARD : UP_BIND_CORE;
    return 0;
}

/* ---- OMP_STACKSIZE ---------------------------------------------------- */

int up__omp_stacksize(const char *s, uint64_t *bytes, char *err, size_t esize)
{
    int rc = up__omp_size(s, bytes);
    if (rc == -1)
        say(err, esize,
            "OMP_STACKSIZE=\"%s\": not a size such as 512 (KiB), 512K, 8M or 1G (a number, "
            "then B, K, M or G in any case)",
            s);
    else if (rc == -2)
        say(err, esize, "OMP_STACKSIZE=\"%s\": a stack size must be positive", s);
    else if (rc == -3)
        say(err, esize, "OMP_STACKSIZE=\"%s\": too large", s);
    return rc == 0 ? 0 : -1;
}

/* ---- OMP_WAIT_POLICY and OMP_DISPLAY_ENV ------------------------------ */

int up__omp_wait_policy(const char *s, unsigned *spin, char *err, size_t esize)
{
    char buf[16];
    if (up__trimmed(s, buf, sizeof buf) && !strcasecmp(buf, "passive")) {
        *spin = 0;
        return 0;
    }
    if (up__trimmed(s, buf, sizeof buf) && !strcasecmp(buf, "active")) {
        *spin = UP_OMP_ACTIVE_SPIN;
        return 0;
    }
    say(err, esize, "OMP_WAIT_POLICY=\"%s\": must be active or passive", s);
    return -1;
}

int up__omp_display_env(const char *s, int *on, char *err, size_t esize)
{
    char buf[16];
    if (up__trimmed(s, buf, sizeof buf) && !strcasecmp(buf, "verbose")) {
        *on = 1; /* the output always shows everything */
        return 0;
    }
    if (up__trimmed(s, buf, sizeof buf) && up__parse_bool(buf, on) == 0)
        return 0;
    say(err, esize, "OMP_DISPLAY_ENV=\"%s\": must be true, false or verbose", s);
    return -1;
}

/* ---- the stand-ins ---------------------------------------------------- */

/* from: "NAME=value" of each variable that gave the value, for messages
 * and UP_PRINT_CONFIG. */
static void add_from(char *from, size_t fsize, const char *name, const char *val)
{
    size_t n = strlen(from);
    if (n < fsize)
        snprintf(from + n, fsize - n, "%s%s=%s", n ? " " : "", name, val);
}

/* The stand-ins of one OpenMP variable each, parsed to the UP_* field's
 * value. */
static int parse_wait_policy(const char *v, uint64_t *out, char *err, size_t esize)
{
    unsigned spin;
    if (up__omp_wait_policy(v, &spin, err, esize) != 0)
        return -1;
    *out = spin;
    return 0;
}

static int parse_display_env(const char *v, uint64_t *out, char *err, size_t esize)
{
    int on;
    if (up__omp_display_env(v, &on, err, esize) != 0)
        return -1;
    *out = (uint64_t)on;
    return 0;
}

static const struct {
    const char *up_name, *omp_name;
    int (*parse)(const char *v, uint64_t *out, char *err, size_t esize);
} single_standins[] = {
    {"UP_STACK_SIZE", "OMP_STACKSIZE", up__omp_stacksize},
    {"UP_SPIN", "OMP_WAIT_POLICY", parse_wait_policy},
    {"UP_PRINT_CONFIG", "OMP_DISPLAY_ENV", parse_display_env},
};

int up__omp_value(const char *up_name, uint64_t *out, char *from, size_t fsize, char *err,
                  size_t esize)
{
    from[0] = '\0';
    if (!strcmp(up_name, "UP_BIND")) {
        const char *pb = up__env("OMP_PROC_BIND"), *pl = up__env("OMP_PLACES");
        if (!pb && !pl)
            return 0;
        up_bind b;
        if (pb)
            add_from(from, fsize, "OMP_PROC_BIND", pb);
        if (pl)
            add_from(from, fsize, "OMP_PLACES", pl);
        if (up__omp_bind(pb, pl, &b, err, esize) != 0)
            return -1;
        *out = (uint64_t)b;
        return 1;
    }
    for (size_t i = 0; i < sizeof single_standins / sizeof single_standins[0]; i++) {
        if (strcmp(up_name, single_standins[i].up_name))
            continue;
        const char *v = up__env(single_standins[i].omp_name);
        if (!v)
            return 0;
        add_from(from, fsize, single_standins[i].omp_name, v);
        return single_standins[i].parse(v, out, err, esize) == 0 ? 1 : -1;
    }
    return 0;
}

/* ---- warnings --------------------------------------------------------- */

/* The last warning given for each pool variable: every pool's
 * up_config_init reads the environment again, and a program creating
 * many pools should see a bad value named once, not once per pool. */
#define WARNED_VARS 8
static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char up_name[32];
    char said[512];
} warned[WARNED_VARS]; /* (warn_lock) */

void up__omp_warn(const char *up_name, const char *msg)
{
    int say_it = 1;
    pthread_mutex_lock(&warn_lock);
    for (size_t i = 0; i < WARNED_VARS; i++) {
        if (warned[i].up_name[0] && strcmp(warned[i].up_name, up_name) != 0)
            continue;
        say_it = strcmp(warned[i].said, msg) != 0;
        snprintf(warned[i].up_name, sizeof warned[i].up_name, "%s", up_name);
        snprintf(warned[i].said, sizeof warned[i].said, "%s", msg);
        break;
    }
    pthread_mutex_unlock(&warn_lock);
    if (say_it)
        fprintf(stderr, "ultrapool: %s; ignored, %s keeps its default\n", msg, up_name);
}

/* ---- the parallel layer's lines in UP_PRINT_CONFIG -------------------- */

static void (*layer_print)(FILE *f);

void up__set_print_hook(void (*fn)(FILE *f)) { layer_print = fn; }

void up__print_layer(FILE *f)
{
    if (layer_print)
        layer_print(f);
}
