/* OpenMP's internal control variables (gomp.h), per thread, and the omp_
 * calls that set and read them. */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "gomp.h"
#include "par_env.h"

enum { SCHED_STATIC = 1, SCHED_DYNAMIC, SCHED_GUIDED, SCHED_AUTO };
#define SCHED_MONOTONIC ((int)0x80000000u)

static _Thread_local gomp_icv icv UP__TLS_IE;
static _Thread_local int icv_ready UP__TLS_IE;

/* Every task's creation and run reads these (gomp.h): initial-exec, as
 * par_tls, so that no access calls __tls_get_addr. */
_Thread_local gomp_icv_scope *gomp_icv_scope_top UP__TLS_IE;
_Thread_local uintptr_t gomp_icv_mark UP__TLS_IE;

static gomp_icv initial;
static pthread_once_t initial_once = PTHREAD_ONCE_INIT;

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
    v->nthreads = env->nlevels ? env->nthreads[0] : par_cpus(); /* one per CPU */
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

/* ---- A task's ICVs: its creator's ------------------------------------
 *
 * OpenMP gives a task its creator's ICVs. Copying them (48 bytes) into
 * every task record would cost fib's tasks more than their work and does
 * not fit the record's 40-byte payload, yet a task's ICVs almost always
 * are its team's: they differ only after an omp_set_* (or a target or
 * teams construct) in the creating task. So a thread says whether its
 * current values are still its region's, the values every member took
 * as it entered (gomp_icv_inherit); a task created then records nothing
 * more (gomp_icv_capture gives NULL), else one pointer, a reference to an
 * immutable snapshot of its creator's values, made at most once per
 * change (at the first task creation after it).
 *
 * A thread's state (owner-only), gomp_icv_mark:
 *   0 (clean): icv holds the region's values;
 *   a snapshot S: icv equals S's values;
 *   S | GOMP_ICV_DIRTY, or just the flag: icv may have changed since S
 *   was made (since the region's values without S).
 * base, when not NULL, is a snapshot of the region's values; it exists
 * whenever the thread is not clean (made at its first step away from
 * clean in the region), so that a task that carries NULL finds them on
 * a thread that changed its own.
 *
 * Lifetime of snapshots: one is never written after snap_new fills it;
 * refs counts its holders, and each gives its reference back once:
 *   - a thread's mark: moved into a scope (a task it runs) or into a
 *     gomp_icv_outer (a region part it runs) and back at their end; the
 *     thread releases the one it holds when it replaces it;
 *   - a thread's base: for its region part, released at
 *     gomp_icv_region_leave, where the outer part's base comes back;
 *   - a task's: taken by gomp_icv_capture in the creator before the task
 *     is published, so the snapshot outlives its creating task; the task's
 *     scope takes it over as the runner's mark (the runner's own moves
 *     into the scope) and gives it back at the task's end, tasks.c when
 *     the task is skipped.
 * The last release frees it. The task's publication in the deque
 * (release, acquire by the runner) orders the snapshot's contents before
 * its use on another thread; the release-acquire decrement orders every
 * holder's reads before the free. */
struct gomp_icv_snap {
    atomic_long refs;
    gomp_icv icv;
};

static _Thread_local gomp_icv_snap *base;

/* The snapshot in a mark. */
static gomp_icv_snap *snap_of(uintptr_t mark) { return (gomp_icv_snap *)(mark & ~GOMP_ICV_DIRTY); }

static gomp_icv_snap *snap_new(const gomp_icv *v)
{
    gomp_icv_snap *s = malloc(sizeof *s);
    if (!s)
        gomp_fatal("out of memory for a task's ICVs");
    atomic_init(&s->refs, 1);
    s->icv = *v;
    return s;
}

void gomp_icv_release(gomp_icv_snap *s)
{
    if (s && up__fetch_sub_acq_rel(&s->refs, 1) == 1)
        free(s);
}

/* Before the thread's values may stop being its region's: keep those. */
static void leave_clean(void)
{
    if (!gomp_icv_mark && !base)
        base = snap_new(gomp_icv_get());
}

void gomp_icv_touch(void)
{
    leave_clean();
    gomp_icv_mark |= GOMP_ICV_DIRTY;
}

gomp_icv_snap *gomp_icv_capture_slow(void)
{
    gomp_icv_snap *s = snap_of(gomp_icv_mark);
    if (gomp_icv_mark & GOMP_ICV_DIRTY) {
        gomp_icv_release(s);
        s = snap_new(gomp_icv_get());
        gomp_icv_mark = (uintptr_t)s;
    }
    up__fetch_add_relaxed(&s->refs, 1);
    return s;
}

/* gomp_icv_scope_enter's work when the task or the runner is not clean
 * (s->mark, the runner's, already saved). */
void gomp_icv_scope_install(gomp_icv_scope *s, gomp_icv_snap *captured)
{
    if (captured && (uintptr_t)captured == s->mark)
        return; /* the runner's are the task's: the mark now holds the task's reference */
    const gomp_icv_snap *from = captured;
    if (captured) {
        leave_clean();
        gomp_icv_mark = (uintptr_t)captured; /* the task's reference */
    } else {
        from = base; /* the runner is not clean, so base exists */
        gomp_icv_mark = 0;
    }
    gomp_icv *v = gomp_icv_get();
    s->icv = *v;
    s->saved = 1;
    *v = from->icv;
}

void gomp_icv_scope_restore(gomp_icv_scope *s)
{
    if (s->saved)
        icv = s->icv;
    gomp_icv_release(snap_of(gomp_icv_mark)); /* the task's, not the runner's */
    gomp_icv_mark = s->mark;
    gomp_icv_scope_top = s->outer;
}

void gomp_icv_region_enter(gomp_icv_outer *o)
{
    o->mark = gomp_icv_mark;
    o->base = base;
    gomp_icv_mark = 0;
    base = NULL;
}

void gomp_icv_region_leave(const gomp_icv_outer *o)
{
    gomp_icv_release(snap_of(gomp_icv_mark));
    gomp_icv_release(base);
    gomp_icv_mark = o->mark;
    base = o->base;
}

/* The ICVs for an omp_set_* call: the task's first change keeps the
 * values its task scope restores at its end; tasks created afterwards
 * take the new values. */
static gomp_icv *icv_write(void)
{
    gomp_icv *v = gomp_icv_get();
    gomp_icv_scope *scope = gomp_icv_scope_top;
    if (scope && !scope->saved) {
        scope->icv = *v;
        scope->saved = 1;
    }
    gomp_icv_touch();
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
