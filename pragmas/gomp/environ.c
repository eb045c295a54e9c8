/* OpenMP's environment variables that the parallel layer (pragmas/src/env.c)
 * does not read, read once when the library is loaded, and
 * OMP_DISPLAY_ENV's block in libgomp's layout.
 *
 * The layer reads OMP_NUM_THREADS, OMP_THREAD_LIMIT, OMP_MAX_ACTIVE_LEVELS
 * (with OMP_NESTED), OMP_SCHEDULE and OMP_CANCELLATION, with OpenMP's
 * defaults in this library (PAR_ENV_OPENMP); the pool reads OMP_STACKSIZE,
 * OMP_WAIT_POLICY, OMP_PROC_BIND and OMP_PLACES for its workers (and
 * reports their malformed values); this file reads every other variable
 * libgomp reads, and those four again, quietly, for the ICVs. As in
 * libgomp, a malformed value is reported on stderr and ignored: the
 * default stays. */
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gomp.h"
#include "par_env.h"

static gomp_env genv;
static pthread_once_t genv_once = PTHREAD_ONCE_INIT;
static _Atomic int nteams_var, teams_limit_var;
static pthread_mutex_t format_lock = PTHREAD_MUTEX_INITIALIZER;
static char affinity_format[GOMP_AFFINITY_FORMAT_MAX] = "level %L thread %i affinity %A";

void gomp_env_warn(const char *name, const char *value, const char *why, const char *dflt)
{
    fprintf(stderr, "ultrapool: %s=\"%s\": %s; ignored, the default stays (%s)\n", name, value, why,
            dflt);
}

/* ---- values ------------------------------------------------------------ */

/* A size as OMP_STACKSIZE takes it (up__omp_size). */
static int stacksize(const char *v, unsigned long *out)
{
    uint64_t bytes;
    if (up__omp_size(v, &bytes) != 0)
        return -1;
    *out = (unsigned long)bytes;
    return 0;
}

/* GOMP_SPINCOUNT: a number with an optional k, M, G or T, or infinite. */
static int spincount(const char *v, unsigned long long *out)
{
    char buf[64];
    if (!up__trimmed(v, buf, sizeof buf))
        return -1;
    if (!strcasecmp(buf, "infinite") || !strcasecmp(buf, "infinity")) {
        *out = ULLONG_MAX;
        return 0;
    }
    const char *p = buf;
    uint64_t n;
    int over;
    if (up__digits(&p, &n, &over) == 0 || over)
        return -1;
    static const struct {
        char c;
        uint64_t mul;
    } units[] = {{'k', 1000}, {'m', 1000000}, {'g', 1000000000}, {'t', 1000000000000}};
    if (*p) {
        size_t i = 0;
        while (i < 4 && units[i].c != (*p | 0x20))
            i++;
        if (i == 4 || p[1] != '\0' || n > UINT64_MAX / units[i].mul)
            return -1;
        n *= units[i].mul;
    }
    *out = n;
    return 0;
}

/* OMP_PROC_BIND: true, false, or a list of primary, master, close and
 * spread (omp_proc_bind_t values). */
static int proc_bind(const char *v, gomp_env *g)
{
    char buf[256];
    if (!up__trimmed(v, buf, sizeof buf))
        return -1;
    if (!strcasecmp(buf, "false") || !strcasecmp(buf, "true")) {
        g->bind[0] = !strcasecmp(buf, "true");
        g->nbind = 1;
        return 0;
    }
    static const char *const names[] = {"primary", "master", "close", "spread"};
    static const int values[] = {2, 2, 3, 4};
    unsigned n = 0;
    for (char *save = NULL, *item = strtok_r(buf, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char word[32];
        int k = up__trimmed(item, word, sizeof word)
                    ? up__word_index(word, names, sizeof names / sizeof names[0])
                    : -1;
        if (k < 0)
            return -1;
        if (n < 8)
            g->bind[n++] = values[k];
    }
    if (n == 0)
        return -1;
    g->nbind = n;
    return 0;
}

static const char *const allocator_names[] = {"omp_default_mem_alloc", "omp_large_cap_mem_alloc",
                                              "omp_const_mem_alloc",   "omp_high_bw_mem_alloc",
                                              "omp_low_lat_mem_alloc", "omp_cgroup_mem_alloc",
                                              "omp_pteam_mem_alloc",   "omp_thread_mem_alloc"};

/* ---- reading ------------------------------------------------------------ */

/* A boolean variable into *out, reported when malformed. */
static void read_bool(const char *name, int *out, const char *dflt)
{
    const char *v = up__env(name);
    int on;
    if (!v)
        return;
    if (par_env_bool(v, &on) != 0)
        gomp_env_warn(name, v, "must be true or false", dflt);
    else
        *out = on;
}

/* A whole number in lo..hi into *out, reported when malformed. */
static void read_int(const char *name, int *out, uint64_t lo, const char *dflt)
{
    const char *v = up__env(name);
    uint64_t x;
    if (!v)
        return;
    if (par_env_whole(v, lo, INT_MAX, &x) != 0) {
        char why[64];
        snprintf(why, sizeof why, "must be a whole number in %" PRIu64 "..%d", lo, INT_MAX);
        gomp_env_warn(name, v, why, dflt);
    } else
        *out = (int)x;
}

static void read_all(void)
{
    gomp_env *g = &genv;
    g->wait_policy = -1;
    g->def_allocator = 1; /* omp_default_mem_alloc */
    read_bool("OMP_DYNAMIC", &g->dynamic, "false");
    read_int("OMP_MAX_TASK_PRIORITY", &g->max_task_priority, 0, "0");
    read_int("OMP_DEFAULT_DEVICE", &g->default_device, 0, "0");
    read_int("OMP_NUM_TEAMS", &g->num_teams, 1, "0");
    read_int("OMP_TEAMS_THREAD_LIMIT", &g->teams_thread_limit, 1, "0");
    read_bool("OMP_DISPLAY_AFFINITY", &g->display_affinity, "false");
    up__store_seqcst(&nteams_var, g->num_teams);
    up__store_seqcst(&teams_limit_var, g->teams_thread_limit);

    const char *v = up__env("OMP_DISPLAY_ENV");
    char buf[32];
    if (v) {
        int on;
        if (up__trimmed(v, buf, sizeof buf) && !strcasecmp(buf, "verbose"))
            g->display_env = 2;
        else if (par_env_bool(v, &on) == 0)
            g->display_env = on;
        else
            gomp_env_warn("OMP_DISPLAY_ENV", v, "must be true, false or verbose", "false");
    }
    if ((v = up__env("OMP_AFFINITY_FORMAT")) != NULL)
        gomp_affinity_format_set(v, strlen(v));
    if ((v = up__env("OMP_ALLOCATOR")) != NULL) {
        int k = -1;
        if (up__trimmed(v, buf, sizeof buf))
            for (int i = 0; i < 8; i++)
                if (!strcmp(buf, allocator_names[i]))
                    k = i;
        if (k < 0)
            gomp_env_warn("OMP_ALLOCATOR", v, "not a predefined allocator",
                          "omp_default_mem_alloc");
        else
            g->def_allocator = (uintptr_t)k + 1;
    }

    /* Read by the pool too, which reports a malformed value: quiet here. */
    if ((v = up__env("OMP_PROC_BIND")) != NULL && proc_bind(v, g) != 0)
        g->nbind = 0;
    if ((v = up__env("OMP_WAIT_POLICY")) != NULL && up__trimmed(v, buf, sizeof buf)) {
        if (!strcasecmp(buf, "active"))
            g->wait_policy = 1;
        else if (!strcasecmp(buf, "passive"))
            g->wait_policy = 0;
    }
    g->spincount = g->wait_policy > 0 ? 30000000000ull : g->wait_policy == 0 ? 0 : 300000;
    if ((v = up__env("GOMP_SPINCOUNT")) != NULL && spincount(v, &g->spincount) != 0)
        gomp_env_warn("GOMP_SPINCOUNT", v, "not a count such as 10000, 20k, 3M or infinite",
                      "300000");
    unsigned long size;
    if ((v = up__env("OMP_STACKSIZE")) != NULL && stacksize(v, &size) == 0)
        g->stacksize = size;
    else if ((v = up__env("GOMP_STACKSIZE")) != NULL) {
        if (stacksize(v, &size) != 0)
            gomp_env_warn("GOMP_STACKSIZE", v, "not a size such as 512 (KiB), 512K, 8M or 1G",
                          "the system's");
        else
            g->stacksize = size;
    }
    /* Places given without a binding bind (libgomp): OMP_PROC_BIND=true. */
    if (gomp_places_init(g->nbind && g->bind[0] != 0) > 0 && g->nbind == 0) {
        g->bind[0] = 1;
        g->nbind = 1;
    }
}

const gomp_env *gomp_env_get(void)
{
    pthread_once(&genv_once, read_all);
    return &genv;
}

void gomp_env_set_teams(int num_teams, int thread_limit)
{
    gomp_env_get();
    if (num_teams >= 0)
        up__store_seqcst(&nteams_var, num_teams);
    if (thread_limit >= 0)
        up__store_seqcst(&teams_limit_var, thread_limit);
}

void gomp_env_teams(int *num_teams, int *thread_limit)
{
    gomp_env_get();
    *num_teams = up__load_seqcst(&nteams_var);
    *thread_limit = up__load_seqcst(&teams_limit_var);
}

void gomp_affinity_format_get(char *buf, size_t size)
{
    pthread_mutex_lock(&format_lock);
    snprintf(buf, size, "%s", affinity_format);
    pthread_mutex_unlock(&format_lock);
}

void gomp_affinity_format_set(const char *fmt, size_t len)
{
    if (len >= sizeof affinity_format)
        len = sizeof affinity_format - 1;
    pthread_mutex_lock(&format_lock);
    memcpy(affinity_format, fmt, len);
    affinity_format[len] = '\0';
    pthread_mutex_unlock(&format_lock);
}

/* ---- OMP_DISPLAY_ENV ------------------------------------------------------ */

static const char *tf(int on) { return on ? "TRUE" : "FALSE"; }

static void show_schedule(FILE *f, const gomp_icv *v)
{
    static const char *const kinds[] = {"?", "STATIC", "DYNAMIC", "GUIDED", "AUTO"};
    int mono = (v->run_sched & (int)0x80000000u) != 0;
    int kind = v->run_sched & 0x7fffffff;
    fputs("  OMP_SCHEDULE = '", f);
    if (mono && kind != 1)
        fputs("MONOTONIC:", f);
    else if (!mono && kind == 1)
        fputs("NONMONOTONIC:", f);
    fputs(kinds[kind >= 1 && kind <= 4 ? kind : 0], f);
    if (kind != 4 && v->run_chunk != (kind == 1 ? 0 : 1))
        fprintf(f, ",%d", v->run_chunk);
    fputs("'\n", f);
}

void gomp_display_env(int verbose)
{
    static const char *const binds[] = {"FALSE", "TRUE", "PRIMARY", "CLOSE", "SPREAD"};
    const gomp_env *g = gomp_env_get();
    const par_env *env = par_env_get();
    const gomp_icv *v = gomp_icv_initial();
    char text[1024];
    FILE *f = stderr;
    flockfile(f);
    fputs("\nOPENMP DISPLAY ENVIRONMENT BEGIN\n  _OPENMP = '201511'\n", f);
    fprintf(f, "  OMP_DYNAMIC = '%s'\n", tf(v->dynamic));
    fprintf(f, "  OMP_NESTED = '%s'\n", tf(v->limits.max_active > 1));
    fputs("  OMP_NUM_THREADS = '", f);
    if (env->nlevels)
        for (unsigned i = 0; i < env->nlevels; i++)
            fprintf(f, "%s%u", i ? "," : "", env->nthreads[i]);
    else
        fprintf(f, "%u", v->nthreads);
    fputs("'\n", f);
    show_schedule(f, v);
    fputs("  OMP_PROC_BIND = '", f);
    for (unsigned i = 0; i < (g->nbind ? g->nbind : 1); i++)
        fprintf(f, "%s%s", i ? "," : "", binds[g->nbind ? g->bind[i] : 0]);
    fputs("'\n", f);
    gomp_places_text(text, sizeof text);
    fprintf(f, "  OMP_PLACES = '%s'\n", text);
    fprintf(f, "  OMP_STACKSIZE = '%lu'\n", g->stacksize);
    fprintf(f, "  OMP_WAIT_POLICY = '%s'\n", g->wait_policy > 0 ? "ACTIVE" : "PASSIVE");
    fprintf(f, "  OMP_THREAD_LIMIT = '%u'\n",
            v->limits.thread_limit ? v->limits.thread_limit : UINT_MAX);
    fprintf(f, "  OMP_MAX_ACTIVE_LEVELS = '%u'\n", v->limits.max_active);
    fprintf(f, "  OMP_NUM_TEAMS = '%d'\n", g->num_teams);
    fprintf(f, "  OMP_TEAMS_THREAD_LIMIT = '%d'\n", g->teams_thread_limit);
    fprintf(f, "  OMP_CANCELLATION = '%s'\n", tf(env->cancellation));
    fprintf(f, "  OMP_DEFAULT_DEVICE = '%d'\n", v->default_device);
    fprintf(f, "  OMP_MAX_TASK_PRIORITY = '%d'\n", g->max_task_priority);
    fprintf(f, "  OMP_DISPLAY_AFFINITY = '%s'\n", tf(g->display_affinity));
    gomp_affinity_format_get(text, sizeof text);
    fprintf(f, "  OMP_AFFINITY_FORMAT = '%s'\n", text);
    uintptr_t a = v->def_allocator;
    fprintf(f, "  OMP_ALLOCATOR = '%s'\n",
            a >= 1 && a <= 8 ? allocator_names[a - 1] : "omp_default_mem_alloc");
    fputs("  OMP_TARGET_OFFLOAD = 'DEFAULT'\n", f);
    if (verbose) {
        /* libgomp folds GOMP_CPU_AFFINITY into OMP_PLACES and shows it empty. */
        fputs("  GOMP_CPU_AFFINITY = ''\n", f);
        fprintf(f, "  GOMP_STACKSIZE = '%lu'\n", g->stacksize);
        fprintf(f, "  GOMP_SPINCOUNT = '%llu'\n", g->spincount);
    }
    fputs("OPENMP DISPLAY ENVIRONMENT END\n", f);
    funlockfile(f);
}

GOMP_API void omp_display_env(int verbose) { gomp_display_env(verbose != 0); }

/* On load, as libgomp: the variables are read (and their problems
 * reported) and OMP_DISPLAY_ENV shows them, before main. */
__attribute__((constructor)) static void on_load(void)
{
    par_env_get(); /* the layer's variables too: their problems now */
    const gomp_env *g = gomp_env_get();
    if (g->display_env)
        gomp_display_env(g->display_env == 2);
}
