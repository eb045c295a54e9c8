/* Explicit tasks of GCC's ABI: GOMP_task and its waits (taskwait, with
 * depend; taskyield; taskgroup start and end), omp_in_final and
 * omp_fulfill_event, on the layer's one task path (par_task_create).
 *
 * A task's arguments. GCC hands the firstprivate block (data, arg_size
 * bytes aligned to arg_align) and, for C++ objects, a copy function
 * (cpyfn) that constructs the task's copy. A block of up to 32 bytes,
 * aligned to at most 8, without cpyfn and without a detach clause, goes
 * into the task record itself beside GCC's function (no allocation: the
 * common case, fib's two integers; 24 bytes when the record also carries
 * its creator's ICVs, gomp_icv_capture). Anything else is copied into an
 * allocation the task owns, aligned as asked, freed after the task has
 * run or was skipped: a block built by a copy constructor cannot move
 * (a C++ object may point into itself), so it is built where it stays. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gomp.h"
#include "gomp_tasks.h"
#include "par_env.h"

/* The firstprivate bytes that fit in a record beside GCC's function. */
#define INLINE_ARGS (UP_PAYLOAD_MAX - 8)

/* A record holding GCC's function and up to INLINE_ARGS bytes of its
 * block: words[0] the function, the block from words[1] on. Its ICVs are
 * its team's (gomp_icv_capture gave NULL). */
static void inline_run(void *words)
{
    void (*fn)(void *);
    memcpy(&fn, words, sizeof fn);
    gomp_icv_scope scope;
    gomp_icv_scope_enter(&scope, NULL);
    fn((char *)words + 8);
    gomp_icv_scope_leave(&scope);
}

/* The same for a task with its creator's snapshot of ICVs: words[1] the
 * snapshot, the block (up to INLINE_ARGS - 8 bytes) from words[2] on. */
static void inline_run_icv(void *words)
{
    void (*fn)(void *);
    gomp_icv_snap *icv;
    memcpy(&fn, words, sizeof fn);
    memcpy(&icv, (char *)words + 8, sizeof icv);
    gomp_icv_scope scope;
    gomp_icv_scope_enter(&scope, icv);
    fn((char *)words + 16);
    gomp_icv_scope_leave(&scope);
}

/* OpenMP's tasks complete when their body returns, children or not: the
 * layer runs the tasks of these two (and every par_ext_task) so. */
__attribute__((constructor)) static void alone_tasks(void)
{
    par_alone_fn = inline_run;
    par_alone_icv_fn = inline_run_icv;
}

/* An allocated block: this header, then the block at arg. */
typedef struct box {
    void (*fn)(void *);
    char *arg;
    gomp_icv_snap *icv; /* the creator's ICVs, NULL: the team's */
} box;

static void box_handler(void *data, int run)
{
    box *b = data;
    if (run) {
        gomp_icv_scope scope;
        gomp_icv_scope_enter(&scope, b->icv);
        b->fn(b->arg);
        gomp_icv_scope_leave(&scope);
    } else {
        gomp_icv_release(b->icv); /* the scope gives it back when the task runs */
    }
    free(b);
}

/* Makes a box for arg_size bytes aligned to arg_align, not yet filled. */
static box *box_new(void (*fn)(void *), long arg_size, long arg_align)
{
    size_t align = arg_align > 16 ? (size_t)arg_align : 16;
    size_t head = (sizeof(box) + align - 1) / align * align;
    size_t size = (head + (size_t)arg_size + align - 1) / align * align;
    box *b = aligned_alloc(align, size ? size : align);
    if (!b)
        gomp_fatal("GOMP_task: out of memory for a task's %ld bytes of arguments", arg_size);
    b->fn = fn;
    b->arg = (char *)b + head;
    return b;
}

/* GCC's dependence kinds (gomp-constants.h's GOMP_DEPEND_*; 5 is
 * inoutset, which GCC 13 emits, ordered here like inout: tasks of one
 * inoutset then run one at a time, an order OpenMP allows). */
static up_dep_kind dep_kind(uintptr_t k)
{
    switch (k) {
    case 1:
        return UP_DEP_IN;
    case 2:
    case 3:
    case 5:
        return UP_DEP_INOUT;
    case 4:
        return UP_DEP_MUTEXINOUTSET;
    default:
        gomp_fatal("unknown omp_depend_t dependence type %d", (int)k);
    }
}

size_t gomp_deps_count(void **depend) { return (uintptr_t)(depend[0] ? depend[0] : depend[1]); }

/* GCC's two layouts (libgomp's task.c reads them the same way):
 *   old: [n, nout, addr * n]: the first nout out or inout, then in;
 *   new: [0, n, nout, nmutexinoutset, nin, addr * (nout + nmutex + nin),
 *         then n - those pointers to omp_depend_t objects {addr, kind}].
 * Depend iterators reach the runtime already expanded into these
 * addresses. out must hold gomp_deps_count(depend) entries. */
void gomp_deps_convert(void **depend, up_dep *out)
{
    size_t n;
    if (depend[0]) {
        n = (uintptr_t)depend[0];
        size_t nout = (uintptr_t)depend[1];
        for (size_t i = 0; i < n; i++) {
            out[i].addr = depend[2 + i];
            out[i].kind = i < nout ? UP_DEP_INOUT : UP_DEP_IN;
        }
        return;
    }
    n = (uintptr_t)depend[1];
    if (n == 0) /* depend iterators of no iterations: the other counts are not filled in */
        return;
    size_t nout = (uintptr_t)depend[2], nmutex = (uintptr_t)depend[3], nin = (uintptr_t)depend[4];
    size_t normal = nout + nmutex + nin;
    if (normal > n)
        gomp_fatal("GOMP_task: a depend array of %zu entries counts %zu", n, normal);
    for (size_t i = 0; i < n; i++) {
        if (i < normal) {
            out[i].addr = depend[5 + i];
            out[i].kind = i < nout            ? UP_DEP_INOUT
                          : i < nout + nmutex ? UP_DEP_MUTEXINOUTSET
                                              : UP_DEP_IN;
        } else {
            void **obj = depend[5 + i];
            out[i].addr = obj[0];
            out[i].kind = dep_kind((uintptr_t)obj[1]);
        }
    }
}

/* Dependencies of up to this many addresses convert on the stack. */
#define DEPS_ON_STACK 16

int gomp_task_create(const char *who, up_fn fn, const par_task *proto, const up_task_opts *opts,
                     void **depend)
{
    if (!depend)
        return par_task_create(who, fn, proto, opts, NULL, 0);
    size_t n = gomp_deps_count(depend);
    if (n == 0) /* depend iterators of no iterations */
        return par_task_create(who, fn, proto, opts, NULL, 0);
    up_dep local[DEPS_ON_STACK];
    up_dep *deps = n <= DEPS_ON_STACK ? local : malloc(n * sizeof *deps);
    if (!deps)
        gomp_fatal("%s: out of memory for %zu dependencies", who, n);
    gomp_deps_convert(depend, deps);
    int rc = par_task_create(who, fn, proto, opts, deps, n);
    if (deps != local)
        free(deps);
    return rc;
}

int gomp_cancelled_here(par_thread *th)
{
    if (!gomp_cancel_var())
        return 0;
    par_team *t = th->c.team;
    if (t && (up__load_relaxed(&t->cancel) & PAR_CANCEL_PARALLEL))
        return 1;
    const par_group *g = th->c.frame ? th->c.frame->group : NULL;
    if (!g)
        return 0;
    if (up__load_relaxed(&g->cancelled))
        return 1;
    return g->workshare && g->outer && up__load_relaxed(&g->outer->cancelled);
}

par_thread *gomp_thread_state(const char *who)
{
    par_thread *th = par_tls ? par_tls : par_self();
    if (!th)
        gomp_fatal("%s: out of memory for the thread's state", who);
    return th;
}

void gomp_task_spawn(const char *who, void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                     long arg_size, long arg_align, const up_task_opts *opts, void **depend,
                     void *detach, const uint64_t *bounds)
{
    par_thread *th = gomp_thread_state(who);
    if (arg_align < 1)
        arg_align = 1;
    par_task t;
    memset(&t, 0, sizeof t);
    /* The creator's ICVs: NULL unless it changed its team's. A record
     * with a snapshot must run to give its reference back, so with the
     * layer's cancellation on (a cancelled task is skipped, whether
     * GOMP_cancel or parallel.h's up_cancel_taskgroup cancelled it) it
     * goes in a box, whose handler is called either way. */
    gomp_icv_snap *icv = gomp_icv_capture();
    size_t at = icv ? 16 : 8; /* where the block starts in the record */
    if (!cpyfn && !detach && arg_size <= INLINE_ARGS + 8 - (long)at && arg_align <= 8 &&
        !(icv && par_env_get()->cancellation)) {
        memcpy(t.words, &fn, sizeof fn);
        if (icv)
            memcpy((char *)t.words + 8, &icv, sizeof icv);
        if (arg_size > 0)
            memcpy((char *)t.words + at, data, (size_t)arg_size);
        if (bounds) /* a taskloop chunk: its first two words are its range */
            memcpy((char *)t.words + at, bounds, 2 * sizeof *bounds);
        t.size = UP_PAYLOAD_MAX;
        if (gomp_task_create(who, icv ? inline_run_icv : inline_run, &t, opts, depend) != UP_OK)
            gomp_fatal("%s: a task cannot be created: %s", who, up_last_error());
        return;
    }
    box *b = box_new(fn, arg_size, arg_align);
    b->icv = icv;
    /* A block a copy function built runs even when cancelled: its
     * destructors are in fn (libgomp's copy_ctors_done). */
    par_ext x = {box_handler, b, NULL, cpyfn != NULL};
    if (detach) {
        /* Whether this thread waits for the event's completion (and
         * frees it), as libgomp does: an undeferred task (if(0), final or
         * included in a final task) or one outside any region. In a team
         * of one, par_task_create runs the task at once too, but it
         * completes when its event is fulfilled, checked at the next
         * taskwait or barrier (task-detach-2.c: a later task fulfils it). */
        par_frame *f = par_current_frame(th);
        int undeferred = opts->undeferred || opts->final || f->final || !th->c.team;
        x.event = par_event_new(th, undeferred);
        if (!x.event)
            gomp_fatal("%s: out of memory for a detach event", who);
        /* The event handle goes to the detach variable and, as libgomp
         * does, to the block's first word before it is copied. */
        *(void **)detach = x.event;
        if (data)
            *(void **)data = x.event;
    }
    if (cpyfn)
        cpyfn(b->arg, data);
    else if (arg_size > 0)
        memcpy(b->arg, data, (size_t)arg_size);
    if (bounds)
        memcpy(b->arg, bounds, 2 * sizeof *bounds);
    memcpy(t.words, &x, sizeof x);
    t.size = sizeof x;
    if (gomp_task_create(who, par_ext_task, &t, opts, depend) != UP_OK)
        gomp_fatal("%s: a task cannot be created: %s", who, up_last_error());
}

GOMP_API void GOMP_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                        long arg_size, long arg_align, bool if_clause, unsigned flags,
                        void **depend, int priority, void *detach)
{
    par_thread *th = gomp_thread_state("GOMP_task");
    /* A cancelled region or taskgroup starts no new task. */
    if (gomp_cancelled_here(th))
        return;
    up_task_opts opts = UP_TASK_OPTS();
    opts.undeferred = !if_clause;
    opts.final = (flags & GOMP_TASK_FLAG_FINAL) != 0;
    if ((flags & GOMP_TASK_FLAG_PRIORITY) && priority > 0)
        opts.priority = priority;
    /* untied: every task here is tied (OpenMP allows it); mergeable: a
     * hint, the task keeps its own data. */
    gomp_task_spawn("GOMP_task", fn, data, cpyfn, arg_size, arg_align, &opts,
                    (flags & GOMP_TASK_FLAG_DEPEND) ? depend : NULL,
                    (flags & GOMP_TASK_FLAG_DETACH) ? detach : NULL, NULL);
}

GOMP_API void GOMP_taskwait(void)
{
    par_thread *th = par_tls;
    par_frame *f = th ? th->c.frame : NULL;
    if (f)
        par_join(th, f);
}

static void no_op(void *arg) { (void)arg; }

/* Waits for the sibling tasks these dependencies name: an undeferred
 * empty task with them, which the layer holds until its predecessors are
 * done (running other tasks meanwhile). */
GOMP_API void GOMP_taskwait_depend(void **depend)
{
    par_thread *th = gomp_thread_state("GOMP_taskwait_depend");
    if (gomp_cancelled_here(th))
        return;
    par_task t;
    memset(&t, 0, sizeof t);
    up_task_opts opts = UP_TASK_OPTS();
    opts.undeferred = 1;
    int rc = gomp_task_create("GOMP_taskwait_depend", no_op, &t, &opts, depend);
    if (rc != UP_OK)
        gomp_fatal("GOMP_taskwait_depend: %s", up_last_error());
}

GOMP_API void GOMP_taskyield(void) { up_taskyield(); }

/* A GOMP taskgroup is a pair of calls in one function: its frame lives in
 * an allocation from start to end (the frame the children point to must
 * stay put while the creating function goes on). */
GOMP_API void GOMP_taskgroup_start(void)
{
    par_thread *th = gomp_thread_state("GOMP_taskgroup_start");
    par_taskgroup *tg = malloc(sizeof *tg);
    if (!tg)
        gomp_fatal("GOMP_taskgroup_start: out of memory");
    par_taskgroup_begin(th, tg);
}

par_taskgroup *gomp_current_taskgroup(par_thread *th, const char *who)
{
    par_frame *f = th ? th->c.frame : NULL;
    par_taskgroup *tg =
        f ? (par_taskgroup *)(void *)((char *)f - offsetof(par_taskgroup, f)) : NULL;
    if (!tg || f->group != &tg->g)
        gomp_fatal("%s: not at the end of a taskgroup of this task", who);
    return tg;
}

GOMP_API void GOMP_taskgroup_end(void)
{
    par_thread *th = par_tls;
    par_taskgroup *tg = gomp_current_taskgroup(th, "GOMP_taskgroup_end");
    par_taskgroup_end(th, tg);
    free(tg);
}

GOMP_API int omp_in_final(void) { return par_in_final(); }

GOMP_API void omp_fulfill_event(uintptr_t event)
{
    if (!event || par_event_fulfill((par_event *)event) != 0)
        gomp_fatal("omp_fulfill_event: %p event is invalid or has already been fulfilled",
                   (void *)event);
}
