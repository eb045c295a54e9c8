/* OpenMP's internal control variables (gomp.h), per thread, and the omp_
 * calls that set and read them. */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#include "gomp.h"
#include "par_env.h"

enum { SCHED_STATIC = 1, SCHED_DYNAMIC, SCHED_GUIDED, SCHED_AUTO };
#define SCHED_MONOTONIC ((int)0x80000000u)

static _Thread_local gomp_icv icv;
static _Thread_local int icv_ready;

/* The innermost explicit task running on this thread (gomp_icv_scope). */
static _Thread_local gomp_icv_scope *scope;

static gomp_icv initial;
static pthread_once_t initial_once = PTHREAD_ONCE_INIT;

/* The team size nothing else sets: one per CPU the process may run on,
 * as libgomp counts them (the affinity mask). */
static unsigned cpus_default(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return (unsigned)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

/* OMP_SCHEDULE as the layer parsed it, in omp_sched_t's terms; libgomp's
 * chunk for dynamic and guided is 1 when none is given. */
static void sched_from_env(const par_env *e, gomp_icv *v)
{
    static const int kinds[] = {SCHED_STATIC, SCHED_DYNAMIC, SCHED_GUIDED, SCHED_AUTO};
    v->run_sched = kinds[e->sched <= UP_SCHED_AUTO ? e->sched : 0];
    /* Static is monotonic unless the value says nonmonotonic: (libgomp). */
    if (e->sched_monotonic > 0 || (e->sched == UP_SCHED_STATIC && e->sched_monotonic == 0))
        v->run_sched |= SCHED_MONOTONIC;
    v->run_chunk = e->chunk > INT_MAX ? INT_MAX : (int)e->chunk;
    if (e->sched == UP_SCHED_AUTO || (v->run_chunk == 0 && e->sched != UP_SCHED_STATIC))
        v->run_chunk = 1; /* auto ignores a chunk and keeps the default's */
}

/* The initial thread's ICVs: the environment's. */
static void make_initial(void)
{
    const par_env *env = par_env_get();
    const gomp_env *g = gomp_env_get();
    gomp_icv *v = &initial;
    memset(v, 0, sizeof *v);
    v->nthreads = env->nlevels ? env->nthreads[0] : cpus_default();
    v->dynamic = g->dynamic;
    sched_from_env(env, v);
    v->bind = g->nbind ? g->bind[0] : 0;
    v->default_device = g->default_device;
    v->def_allocator = g->def_allocator;
    v->limits.max_active = env->max_active;
    /* libgomp: a list of bindings asks for nesting too, unless a
     * variable says how deep. */
    if (!env->max_active_from.name && g->nbind > 1)
        v->limits.max_active = GOMP_MAX_LEVELS_SUPPORTED;
    v->limits.thread_limit = env->thread_limit;
}

const gomp_icv *gomp_icv_initial(void)
{
    pthread_once(&initial_once, make_initial);
    return &initial;
}

/* The thread's ICVs govern the regions it opens (team.c reads limits
 * through its par_thread). */
static void attach(void)
{
    par_thread *th = par_self();
    if (!th)
        gomp_fatal("out of memory for a thread's state");
    th->limits = &icv.limits;
}

gomp_icv *gomp_icv_get(void)
{
    if (!icv_ready) {
        icv = *gomp_icv_initial();
        icv_ready = 1;
        attach();
    }
    return &icv;
}

void gomp_icv_inherit(const gomp_icv *parent)
{
    icv = *parent;
    if (!icv_ready) {
        icv_ready = 1;
        attach();
    }
    /* OMP_NUM_THREADS=4,2 and OMP_PROC_BIND=spread,close: the list's
     * item of the new level sizes and binds the regions its members
     * open; past the list's end the inherited value stays. */
    const par_env *env = par_env_get();
    const gomp_env *g = gomp_env_get();
    unsigned level = gomp_level();
    if (level < env->nlevels)
        icv.nthreads = env->nthreads[level];
    if (level < g->nbind)
        icv.bind = g->bind[level];
    gomp_display_affinity_entry();
}

void gomp_icv_scope_enter(gomp_icv_scope *s)
{
    s->saved = 0;
    s->outer = scope;
    scope = s;
}

void gomp_icv_scope_leave(gomp_icv_scope *s)
{
    if (s->saved)
        icv = s->icv;
    scope = s->outer;
}

/* The ICVs for an omp_set_* call: the task's first change keeps the
 * values its task scope restores at its end. */
static gomp_icv *icv_write(void)
{
    gomp_icv *v = gomp_icv_get();
    if (scope && !scope->saved) {
        scope->icv = *v;
        scope->saved = 1;
    }
    return v;
}

const void *gomp_task_id(void)
{
    static _Thread_local char outside; /* the thread, outside any task frame */
    par_thread *th = par_tls;
    par_frame *f = th ? th->c.frame : NULL;
    if (!f)
        return &outside;
    /* A taskgroup's frame runs on its task's thread with a group of its
     * own (tasks.c); the task's frame is the one below it. */
    while (f->taskgroup && f->parent)
        f = f->parent;
    return f;
}

/* ---- omp_ calls on the ICVs -------------------------------------------- */

GOMP_API void omp_set_num_threads(int n) { icv_write()->nthreads = n > 0 ? (unsigned)n : 1; }
GOMP_API int omp_get_max_threads(void) { return (int)gomp_icv_get()->nthreads; }
GOMP_API void omp_set_dynamic(int on) { icv_write()->dynamic = on != 0; }
GOMP_API int omp_get_dynamic(void) { return gomp_icv_get()->dynamic; }

GOMP_API void omp_set_schedule(int kind, int chunk)
{
    gomp_icv *v = icv_write();
    switch (kind & ~SCHED_MONOTONIC) {
    case SCHED_STATIC:
        v->run_chunk = chunk < 1 ? 0 : chunk;
        break;
    case SCHED_DYNAMIC:
    case SCHED_GUIDED:
        v->run_chunk = chunk < 1 ? 1 : chunk;
        break;
    case SCHED_AUTO:
        break;
    default: /* not a schedule: nothing changes, as in libgomp */
        return;
    }
    v->run_sched = kind;
}

GOMP_API void omp_get_schedule(int *kind, int *chunk)
{
    const gomp_icv *v = gomp_icv_get();
    *kind = v->run_sched;
    *chunk = v->run_chunk;
}

GOMP_API void omp_set_max_active_levels(int n)
{
    if (n >= 0)
        icv_write()->limits.max_active =
            n > GOMP_MAX_LEVELS_SUPPORTED ? GOMP_MAX_LEVELS_SUPPORTED : (unsigned)n;
}

GOMP_API int omp_get_max_active_levels(void) { return (int)gomp_icv_get()->limits.max_active; }
GOMP_API int omp_get_supported_active_levels(void) { return GOMP_MAX_LEVELS_SUPPORTED; }

/* Deprecated by OpenMP 5.0, as libgomp 12 maps them onto the levels. */
GOMP_API void omp_set_nested(int on)
{
    gomp_icv *v = icv_write();
    if (on)
        v->limits.max_active = GOMP_MAX_LEVELS_SUPPORTED;
    else if (v->limits.max_active > 1)
        v->limits.max_active = 1;
}

GOMP_API int omp_get_nested(void)
{
    par_thread *th = par_tls;
    unsigned active = th && th->c.team ? th->c.team->active : 0;
    unsigned m = gomp_icv_get()->limits.max_active;
    return m > 1 && m > active;
}

GOMP_API int omp_get_thread_limit(void)
{
    unsigned l = gomp_icv_get()->limits.thread_limit;
    return l == 0 || l > INT_MAX ? INT_MAX : (int)l;
}

GOMP_API int omp_get_proc_bind(void) { return gomp_icv_get()->bind; }

GOMP_API void omp_set_default_device(int d) { icv_write()->default_device = d >= 0 ? d : 0; }
GOMP_API int omp_get_default_device(void) { return gomp_icv_get()->default_device; }

GOMP_API void omp_set_default_allocator(uintptr_t a) { icv_write()->def_allocator = a; }
GOMP_API uintptr_t omp_get_default_allocator(void) { return gomp_icv_get()->def_allocator; }

GOMP_API int omp_get_cancellation(void) { return par_env_get()->cancellation; }
GOMP_API int omp_get_max_task_priority(void) { return gomp_env_get()->max_task_priority; }

GOMP_API void omp_set_num_teams(int n)
{
    if (n > 0)
        gomp_env_set_teams(n, -1);
}

GOMP_API int omp_get_max_teams(void)
{
    int n, l;
    gomp_env_teams(&n, &l);
    return n;
}

GOMP_API void omp_set_teams_thread_limit(int n)
{
    if (n >= 0)
        gomp_env_set_teams(-1, n);
}

GOMP_API int omp_get_teams_thread_limit(void)
{
    int n, l;
    gomp_env_teams(&n, &l);
    return l;
}
