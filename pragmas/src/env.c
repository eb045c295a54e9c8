/* The parallel layer's environment variables, and OpenMP's that stand in
 * for them: read once per process, on the first region or loop that needs
 * them, and fixed from then on (as an OpenMP runtime reads its ICVs once).
 *
 *   UP_NUM_THREADS       OMP_NUM_THREADS        team size for nthreads 0, by level
 *   UP_THREAD_LIMIT      OMP_THREAD_LIMIT       threads of one contention group
 *   UP_MAX_ACTIVE_LEVELS OMP_MAX_ACTIVE_LEVELS  nested active regions
 *                        (OMP_NESTED)
 *   UP_SCHEDULE          OMP_SCHEDULE           what UP_SCHED_RUNTIME means
 *   UP_CANCELLATION      OMP_CANCELLATION       whether up_cancel_taskgroup cancels
 *
 * A set UP_* variable always wins: the OMP_* one is then not even read,
 * so a value meant for another OpenMP runtime cannot break it. Values
 * take OpenMP's syntax for both names, spaces around values and list
 * items included. A malformed value is printed once on stderr. For an
 * OMP_* variable that is all, as OpenMP does: the default stays, and
 * regions run (the variable may have been meant for another runtime, or
 * a version with other values). A malformed UP_* variable is ours alone:
 * every region fails with UP_EINVAL from then on, as a malformed UP_*
 * variable of the pool makes up_pool_create fail, so nothing runs with
 * settings the user did not ask for. */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "par_env.h"
#include "par_internal.h" /* PAR_MAX_TEAM, PAR_MAX_LEVELS */
#include "up_layer.h"     /* up__parse_bool, up__set_print_hook */

_Static_assert(PAR_ENV_LEVELS == PAR_MAX_LEVELS, "a level past the list runs a team of one");

#define INT_LIMIT    UINT64_C(2147483647) /* OpenMP's ICVs are ints */
#define DFLT_THREADS "one thread per CPU"

/* The defaults (par_env.h): the layer's, or OpenMP's in libgomp.so.1. */
#ifdef PAR_ENV_OPENMP
#define DFLT_MAX_ACTIVE 1u
#define DFLT_NESTED     PAR_ENV_SUPPORTED_LEVELS
#define DFLT_SCHED      UP_SCHED_DYNAMIC
#define DFLT_CANCEL     0
#else
#define DFLT_MAX_ACTIVE UINT32_MAX
#define DFLT_NESTED     UINT32_MAX
#define DFLT_SCHED      UP_SCHED_STATIC
#define DFLT_CANCEL     1
#endif
/* The kinds a schedule names, each at its up_schedule value. */
static const char *const sched_names[] = {"static", "dynamic", "guided", "auto"};
_Static_assert(UP_SCHED_STATIC == 0 && UP_SCHED_DYNAMIC == 1 && UP_SCHED_GUIDED == 2 &&
                   UP_SCHED_AUTO == 3,
               "sched_names follows up_schedule");
#define DFLT_ACTIVE_TEXT (DFLT_MAX_ACTIVE == 1u ? "1" : "no limit")
#define DFLT_CANCEL_TEXT (DFLT_CANCEL ? "true" : "false")

/* ---- reporting -------------------------------------------------------- */

static void problem(par_env *e, par_env_source *src, const char *dflt, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* A malformed variable (src->name, which lookup set). An UP_ one: the
 * first message is kept for up_last_error(), all of them for stderr. An
 * OMP_ one: a warning for stderr saying that dflt, the default, stays. */
static void problem(par_env *e, par_env_source *src, const char *dflt, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (strncmp(src->name, "UP_", 3) != 0) {
        size_t n = strlen(e->warnings);
        snprintf(e->warnings + n, sizeof e->warnings - n, "%s; ignored, the default stays (%s)\n",
                 msg, dflt);
        src->ignored = 1;
        return;
    }
    if (!e->bad)
        snprintf(e->error, sizeof e->error, "%s", msg);
    size_t n = strlen(e->errors);
    snprintf(e->errors + n, sizeof e->errors - n, "%s\n", msg);
    e->bad = 1;
    src->bad = 1;
}

/* ---- values ----------------------------------------------------------- */

/* A whole number of decimal digits (no sign) from *s on, spaces around it
 * skipped: 0, -1 when there is none, -2 above hi (or above 64 bits). */
static int number(const char **s, uint64_t hi, uint64_t *out)
{
    const char *p = *s;
    uint64_t v;
    int over;
    if (up__digits(&p, &v, &over) == 0)
        return -1;
    *s = p;
    *out = v;
    return over || v > hi ? -2 : 0;
}

int par_env_whole(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    int rc = number(&s, hi, out);
    if (rc == 0 && *s != '\0')
        return -1;
    return rc == 0 && *out < lo ? -2 : rc;
}

/* ---- the variables ---------------------------------------------------- */

/* The variable that sets a value: up_name when set, else omp_name (and
 * then alt, OMP_NESTED for the active levels). Returns the value, NULL
 * when neither is set; src says which it was. */
static const char *lookup(par_getenv_fn get, const char *up_name, const char *omp_name,
                          const char *alt, par_env_source *src)
{
    const char *names[3] = {up_name, omp_name, alt};
    for (int i = 0; i < 3; i++) {
        const char *v = names[i] ? get(names[i]) : NULL;
        if (v) {
            src->name = names[i];
            snprintf(src->text, sizeof src->text, "%s", v);
            return v;
        }
    }
    src->name = NULL;
    return NULL;
}

static void read_num_threads(par_env *e, par_getenv_fn get)
{
    par_env_source *src = &e->num_threads_from;
    const char *v = lookup(get, "UP_NUM_THREADS", "OMP_NUM_THREADS", NULL, src);
    if (!v)
        return;
    /* "4", "4,2,1", " 4 , 2 ": every item a team size in 1..PAR_MAX_TEAM.
     * Items past PAR_ENV_LEVELS are checked, not kept: such levels run
     * on a team of one whatever they say. */
    const char *p = v;
    unsigned n = 0;
    for (;;) {
        uint64_t x;
        int rc = number(&p, PAR_MAX_TEAM, &x);
        if (rc == 0 && x == 0)
            rc = -2;
        if (rc == -2) {
            problem(e, src, DFLT_THREADS, "%s=\"%s\": every team size must be in 1..%u", src->name,
                    v, PAR_MAX_TEAM);
            return;
        }
        if (rc != 0 || (*p != ',' && *p != '\0')) {
            problem(e, src, DFLT_THREADS,
                    "%s=\"%s\": not a list of team sizes (whole numbers in 1..%u) such as 4 or "
                    "4,2,1",
                    src->name, v, PAR_MAX_TEAM);
            return;
        }
        if (n < PAR_ENV_LEVELS)
            e->nthreads[n++] = (unsigned)x;
        if (*p == '\0')
            break;
        p++; /* the comma */
    }
    e->nlevels = n;
}

static void read_thread_limit(par_env *e, par_getenv_fn get)
{
    par_env_source *src = &e->thread_limit_from;
    const char *v = lookup(get, "UP_THREAD_LIMIT", "OMP_THREAD_LIMIT", NULL, src);
    uint64_t x;
    if (!v)
        return;
    if (par_env_whole(v, 1, INT_LIMIT, &x) != 0) {
        problem(e, src, "no limit", "%s=\"%s\": must be a whole number in 1..%" PRIu64, src->name,
                v, INT_LIMIT);
        return;
    }
    e->thread_limit = (unsigned)x;
}

int par_env_bool(const char *v, int *out)
{
    char buf[16];
    return up__trimmed(v, buf, sizeof buf) ? up__parse_bool(buf, out) : -1;
}

static void read_max_active(par_env *e, par_getenv_fn get)
{
    par_env_source *src = &e->max_active_from;
    const char *v = lookup(get, "UP_MAX_ACTIVE_LEVELS", "OMP_MAX_ACTIVE_LEVELS", "OMP_NESTED", src);
    if (!v)
        return;
    if (!strcmp(src->name, "OMP_NESTED")) {
        /* Deprecated by OpenMP 5.0: false is one active level, true as
         * many as the implementation supports. */
        int on;
        if (par_env_bool(v, &on) != 0) {
            problem(e, src, DFLT_ACTIVE_TEXT,
                    "OMP_NESTED=\"%s\": must be true or false (or 1 0 yes no on off y n, any case)",
                    v);
            return;
        }
        e->max_active = on ? DFLT_NESTED : 1;
        return;
    }
    uint64_t x;
    if (par_env_whole(v, 0, INT_LIMIT, &x) != 0) {
        problem(e, src, DFLT_ACTIVE_TEXT, "%s=\"%s\": must be a whole number in 0..%" PRIu64,
                src->name, v, INT_LIMIT);
        return;
    }
    e->max_active = (unsigned)x;
#ifdef PAR_ENV_OPENMP
    if (x > PAR_ENV_SUPPORTED_LEVELS) /* OpenMP: at most the supported levels */
        e->max_active = PAR_ENV_SUPPORTED_LEVELS;
#endif
}

/* "[monotonic:|nonmonotonic:]kind[,chunk]", any case, spaces around each
 * part allowed. chunk 0 keeps the kind's default, as in up_for_opts (and
 * in libgomp); auto takes a chunk and ignores it, as UP_SCHED_AUTO does.
 * The modifiers change nothing here: a dynamic or guided loop hands out
 * its chunks from one counter in increasing order, which both allow. */
static int parse_schedule(const char *v, up_schedule *kind, int64_t *chunk, int *monotonic)
{
    char buf[128];
    if (!up__trimmed(v, buf, sizeof buf))
        return -1;
    char *s = buf;
    char *colon = strchr(s, ':');
    if (colon) {
        *colon = '\0';
        char mod[32];
        if (!up__trimmed(s, mod, sizeof mod) ||
            (strcasecmp(mod, "monotonic") && strcasecmp(mod, "nonmonotonic")))
            return -1;
        *monotonic = !strcasecmp(mod, "monotonic") ? 1 : -1;
        s = colon + 1;
    }
    char *comma = strchr(s, ',');
    if (comma)
        *comma = '\0';
    char word[32];
    if (!up__trimmed(s, word, sizeof word))
        return -1;
    int k = up__word_index(word, sched_names, sizeof sched_names / sizeof sched_names[0]);
    if (k < 0)
        return -1;
    *kind = (up_schedule)k;
    *chunk = 0;
    if (comma) {
        uint64_t c;
        int rc = par_env_whole(comma + 1, 0, (uint64_t)INT64_MAX, &c);
        if (rc != 0)
            return rc;
        *chunk = (int64_t)c;
    }
    return 0;
}

static void read_schedule(par_env *e, par_getenv_fn get)
{
    par_env_source *src = &e->schedule_from;
    const char *v = lookup(get, "UP_SCHEDULE", "OMP_SCHEDULE", NULL, src);
    if (!v)
        return;
    up_schedule kind;
    int64_t chunk;
    int monotonic = 0;
    int rc = parse_schedule(v, &kind, &chunk, &monotonic);
    if (rc == -2)
        problem(e, src, sched_names[DFLT_SCHED], "%s=\"%s\": the chunk must be in 0..%" PRId64,
                src->name, v, INT64_MAX);
    else if (rc != 0)
        problem(e, src, sched_names[DFLT_SCHED],
                "%s=\"%s\": not a schedule such as static, dynamic,4, guided,8, auto or "
                "nonmonotonic:dynamic,4",
                src->name, v);
    else {
        e->sched = kind;
        e->chunk = chunk;
        e->sched_monotonic = monotonic;
    }
}

static void read_cancellation(par_env *e, par_getenv_fn get)
{
    par_env_source *src = &e->cancellation_from;
    const char *v = lookup(get, "UP_CANCELLATION", "OMP_CANCELLATION", NULL, src);
    int on;
    if (!v)
        return;
    if (par_env_bool(v, &on) != 0) {
        problem(e, src, DFLT_CANCEL_TEXT,
                "%s=\"%s\": must be true or false (or 1 0 yes no on off y n, any case)", src->name,
                v);
        return;
    }
    e->cancellation = on;
}

void par_env_parse(par_env *e, par_getenv_fn get)
{
    memset(e, 0, sizeof *e);
    e->max_active = DFLT_MAX_ACTIVE;
    e->sched = DFLT_SCHED;
    e->cancellation = DFLT_CANCEL; /* the API always cancelled; OpenMP's default is false */
    read_num_threads(e, get);
    read_thread_limit(e, get);
    read_max_active(e, get);
#ifdef PAR_ENV_OPENMP
    /* libgomp: a list of team sizes asks for nesting, unless a variable
     * says how deep. */
    if (!e->max_active_from.name && e->nlevels > 1)
        e->max_active = PAR_ENV_SUPPORTED_LEVELS;
#endif
    read_schedule(e, get);
    read_cancellation(e, get);
}

unsigned par_env_threads(const par_env *e, unsigned level)
{
    if (e->nlevels == 0 || level == 0)
        return 0;
    return e->nthreads[level <= e->nlevels ? level - 1 : e->nlevels - 1];
}

/* ---- the process's settings ------------------------------------------- */

static par_env process_env;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void load_process_env(void)
{
    par_env_parse(&process_env, up__env); /* the registry's read path */
    for (const char *line = process_env.warnings; *line;) {
        const char *nl = strchr(line, '\n');
        fprintf(stderr, "ultrapool: %.*s\n", (int)(nl - line), line);
        line = nl + 1;
    }
    for (const char *line = process_env.errors; *line;) {
        const char *nl = strchr(line, '\n');
        fprintf(stderr, "ultrapool: %.*s; every parallel region fails with UP_EINVAL\n",
                (int)(nl - line), line);
        line = nl + 1;
    }
}

const par_env *par_env_get(void)
{
    pthread_once(&env_once, load_process_env);
    return &process_env;
}

/* ---- UP_PRINT_CONFIG -------------------------------------------------- */

/* The comment after a value line: where it came from, or why it is not
 * in effect. */
static void print_source(const char *up_name, const par_env_source *src, FILE *f)
{
    if (!src->name || !strcmp(src->name, up_name))
        return;
    if (src->ignored)
        fprintf(f, "# %s=%s is malformed and ignored: %s keeps its default\n", src->name, src->text,
                up_name);
    else
        fprintf(f, "# %s from %s=%s\n", up_name, src->name, src->text);
}

/* A setting whose variable is malformed: no line that would parse back,
 * only the reason. */
static int print_bad(const char *up_name, const par_env_source *src, FILE *f)
{
    if (!src->bad)
        return 0;
    fprintf(f, "# %s not in effect: %s=%s is malformed, so every region fails\n", up_name,
            src->name, src->text);
    return 1;
}

void par_env_print(const par_env *e, FILE *f)
{
    const char *const *kinds = sched_names;
    fprintf(f, "# parallel layer (<ultrapool/parallel.h>), read when first used:\n");
    if (!print_bad("UP_NUM_THREADS", &e->num_threads_from, f)) {
        if (e->nlevels == 0)
            fprintf(f, "# UP_NUM_THREADS unset: nthreads 0 is one thread per CPU at every level\n");
        else {
            fprintf(f, "UP_NUM_THREADS=");
            for (unsigned i = 0; i < e->nlevels; i++)
                fprintf(f, "%s%u", i ? "," : "", e->nthreads[i]);
            fprintf(f, "\n");
        }
        print_source("UP_NUM_THREADS", &e->num_threads_from, f);
    }
    if (!print_bad("UP_THREAD_LIMIT", &e->thread_limit_from, f)) {
        if (e->thread_limit)
            fprintf(f, "UP_THREAD_LIMIT=%u\n", e->thread_limit);
        else
            fprintf(f, "# UP_THREAD_LIMIT unset: no limit\n");
        print_source("UP_THREAD_LIMIT", &e->thread_limit_from, f);
    }
    if (!print_bad("UP_MAX_ACTIVE_LEVELS", &e->max_active_from, f)) {
        if (e->max_active != UINT32_MAX)
            fprintf(f, "UP_MAX_ACTIVE_LEVELS=%u\n", e->max_active);
        else
            fprintf(f,
                    "# UP_MAX_ACTIVE_LEVELS unset: no limit (regions nested more than %d deep "
                    "run on a team of one)\n",
                    PAR_MAX_LEVELS);
        print_source("UP_MAX_ACTIVE_LEVELS", &e->max_active_from, f);
    }
    if (!print_bad("UP_SCHEDULE", &e->schedule_from, f)) {
        fprintf(f, "UP_SCHEDULE=%s", kinds[e->sched]);
        if (e->chunk)
            fprintf(f, ",%" PRId64, e->chunk);
        fprintf(f, "\n");
        print_source("UP_SCHEDULE", &e->schedule_from, f);
    }
    if (!print_bad("UP_CANCELLATION", &e->cancellation_from, f)) {
        fprintf(f, "UP_CANCELLATION=%d\n", e->cancellation);
        print_source("UP_CANCELLATION", &e->cancellation_from, f);
    }
}

static void print_process_env(FILE *f) { par_env_print(par_env_get(), f); }

/* The runtime's UP_PRINT_CONFIG shows this layer's settings when the layer
 * is linked: the hook is set when the library is loaded. */
__attribute__((constructor)) static void register_print_hook(void)
{
    up__set_print_hook(print_process_env);
}
