/* GCC's OpenMP ABI (GOMP_* and omp_* entry points) on the parallel layer's
 * team, task, loop and dependency machinery (pragmas/src): the library
 * libgomp.so.1 that ultrapool installs in <libdir>/ultrapool/omp, so that
 * an unmodified gcc -fopenmp binary runs on the pool.
 *
 * Every file of this folder implements one group of entry points and
 * reaches the machinery through par_internal.h; what the ABI needs beyond
 * parallel.h's semantics is added there, not here, so that one scheduler
 * serves both. This header holds what the entry points share: the pool the
 * regions run on and OpenMP's internal control variables (ICVs). */
#ifndef UP_GOMP_H
#define UP_GOMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "par_internal.h"

/* The entry points are exported by the version script (libgomp.map);
 * everything else in the library is hidden. */
#define GOMP_API __attribute__((visibility("default")))

/* The pool that a region opened on this thread runs on: the pool of the
 * task that opens it (so that OpenMP code called from a pool task shares
 * the pool's workers), else the process's own OpenMP pool, created on
 * first use and never destroyed (OpenMP threads live until exit). */
up_pool *gomp_pool(void);
/* omp_pause_resource on the host: outside any region, ends the process
 * pool's threads (the next region makes a new pool, whose threads start
 * with fresh threadprivate data, as libgomp's do); -1 inside a region or
 * a pool's task, where nothing is released. */
int gomp_pool_pause(void);

/* OpenMP's internal control variables as one thread sees them. OpenMP
 * scopes most of them to a task's data environment; here a thread keeps
 * its own copy, which a region's members take from the thread that opens
 * the region (gomp_icv_inherit), so an omp_set_* call affects the regions
 * its thread opens afterwards, as the specification says; an explicit
 * task installs its creator's while it runs (gomp_icv_scope). */
typedef struct gomp_icv {
    unsigned nthreads; /* nthreads-var at this level: team size of the next region */
    int dynamic;       /* dyn-var: 0 (libgomp's default) gives regions their full team */
    int run_sched;     /* run-sched-var: an omp_sched_t value, monotonic flag included */
    int run_chunk;     /* its chunk (libgomp's: 1 for dynamic and guided unless set) */
    int bind;          /* bind-var at this level: an omp_proc_bind_t value */
    int default_device;
    uintptr_t def_allocator; /* def-allocator-var: an omp_allocator_handle_t */
    /* max-active-levels-var and thread-limit-var (0: none), which the
     * thread's par_thread points at: they govern par_parallel. */
    par_limits limits;
    /* The teams construct this thread runs in (target.c): the team's number
     * and the league's size, 0 outside any teams construct. Here so that
     * the members of a region opened inside a team inherit them. */
    unsigned team_num, num_teams;
} gomp_icv;

/* This thread's ICVs, initialized from the environment on first use. */
gomp_icv *gomp_icv_get(void);
/* Called by a member as it enters a region opened by a thread whose ICVs
 * were parent (the member's par_tls already in the region's team): copies
 * them; the lists of OMP_NUM_THREADS and OMP_PROC_BIND give the values of
 * the new level. */
void gomp_icv_inherit(const gomp_icv *parent);
/* An explicit task's ICVs are its creator's (icv.c says how): the creator
 * captures them when it makes the task, as a reference to an immutable
 * snapshot, NULL (the common case) when they are still its team's as
 * every member entered the region; the task's runner brackets it with
 * enter and leave (tasks.c), which install the captured values and then
 * give the runner's back, and what the task sets with omp_set_* ends
 * with it. A task whose creator and runner both hold their team's values
 * costs a test of gomp_icv_mark at its creation and a few loads and
 * stores around its run, all inline. */
typedef struct gomp_icv_snap gomp_icv_snap;
/* (owner) The thread's snapshot of its current ICVs, with GOMP_ICV_DIRTY
 * when they changed since it was made; 0 while they are its region's. */
extern _Thread_local uintptr_t gomp_icv_mark UP__TLS_IE;
#define GOMP_ICV_DIRTY ((uintptr_t)1)
typedef struct gomp_icv_scope {
    struct gomp_icv_scope *outer;
    uintptr_t mark; /* the runner's gomp_icv_mark before the task */
    int saved;      /* icv holds the runner's values, restored at leave */
    gomp_icv icv;
} gomp_icv_scope;
/* (owner) The innermost explicit task running on this thread. */
extern _Thread_local gomp_icv_scope *gomp_icv_scope_top UP__TLS_IE;
gomp_icv_snap *gomp_icv_capture_slow(void);
void gomp_icv_scope_install(gomp_icv_scope *s, gomp_icv_snap *captured);
void gomp_icv_scope_restore(gomp_icv_scope *s);
void gomp_icv_release(gomp_icv_snap *s);

/* The ICVs a task created now takes (NULL: the team's): a reference that
 * gomp_icv_scope_enter takes over (its leave gives it back), or that
 * gomp_icv_release gives back when the task does not run. */
static inline gomp_icv_snap *gomp_icv_capture(void)
{
    return gomp_icv_mark ? gomp_icv_capture_slow() : NULL;
}

static inline void gomp_icv_scope_enter(gomp_icv_scope *s, gomp_icv_snap *captured)
{
    s->outer = gomp_icv_scope_top;
    gomp_icv_scope_top = s;
    s->mark = gomp_icv_mark;
    s->saved = 0;
    if (captured || s->mark)
        gomp_icv_scope_install(s, captured);
}

static inline void gomp_icv_scope_leave(gomp_icv_scope *s)
{
    if (s->saved || s->mark || gomp_icv_mark)
        gomp_icv_scope_restore(s);
    else
        gomp_icv_scope_top = s->outer;
}

/* A thread's snapshot state outside a region, which a member keeps while
 * it runs its part (from gomp_icv_region_enter to gomp_icv_region_leave,
 * around gomp_icv_inherit and the restoring of its ICVs). */
typedef struct gomp_icv_outer {
    uintptr_t mark;
    gomp_icv_snap *base;
} gomp_icv_outer;
void gomp_icv_region_enter(gomp_icv_outer *o);
void gomp_icv_region_leave(const gomp_icv_outer *o);
/* Called after ICVs were written other than by omp_set_* (target.c's
 * teams and host fallback): tasks created afterwards take the values. */
void gomp_icv_touch(void);
/* The initial thread's ICVs as the environment set them (omp_display_env). */
const gomp_icv *gomp_icv_initial(void);

/* The process's settings that are not per task: read once, on load. */
#define GOMP_MAX_LEVELS_SUPPORTED 255 /* omp_get_supported_active_levels, as libgomp */
#define GOMP_AFFINITY_FORMAT_MAX  512
typedef struct gomp_env {
    int dynamic;           /* dyn-var's initial value (OMP_DYNAMIC) */
    int max_task_priority; /* max-task-priority-var */
    int bind[8];           /* OMP_PROC_BIND's list, nbind 0: unset (false) */
    unsigned nbind;
    unsigned long stacksize;      /* stacksize-var in bytes, 0: the system's */
    int wait_policy;              /* wait-policy-var: -1 unset, 0 passive, 1 active */
    unsigned long long spincount; /* GOMP_SPINCOUNT */
    int default_device;
    int num_teams, teams_thread_limit; /* initial nteams-var, teams-thread-limit-var */
    int display_affinity;
    int display_env;         /* 0, 1 true, 2 verbose */
    uintptr_t def_allocator; /* OMP_ALLOCATOR: a predefined omp_allocator_handle_t */
} gomp_env;

const gomp_env *gomp_env_get(void);
/* nteams-var and teams-thread-limit-var now: omp_set_num_teams and
 * omp_set_teams_thread_limit change them (-1: keep). */
void gomp_env_set_teams(int num_teams, int thread_limit);
void gomp_env_teams(int *num_teams, int *thread_limit);
/* The affinity format (affinity-format-var): process-wide, settable. */
void gomp_affinity_format_get(char *buf, size_t size);
void gomp_affinity_format_set(const char *fmt, size_t len);
/* Shows the calling thread's affinity at region entry, when
 * OMP_DISPLAY_AFFINITY is true and what it shows changed (places.c). */
void gomp_display_affinity_entry(void);
/* The place list (places.c): from OMP_PLACES, else GOMP_CPU_AFFINITY,
 * else, when binding is asked for, one place per core. Parsed once; a
 * malformed value is reported and leaves the list empty. */
int gomp_places_init(int binding); /* returns the count */
int gomp_places_count(void);
/* The CPUs of place p, at most max of them in ids; returns how many it has. */
int gomp_place_cpus(int p, int *ids, int max);
/* The list as OMP_DISPLAY_ENV shows it: {0},{1}... */
void gomp_places_text(char *buf, size_t size);
/* Writes OMP_DISPLAY_ENV's block (verbose: the GOMP_ variables too). */
void gomp_display_env(int verbose);
/* A message on stderr for a malformed OpenMP variable: the value is
 * ignored and dflt, its default, stays. */
void gomp_env_warn(const char *name, const char *value, const char *why, const char *dflt);

/* The task that runs on this thread now, for nestable locks' owner: its
 * frame (a taskgroup's frame counts as the task's), or the thread outside
 * any region. */
const void *gomp_task_id(void);
/* locks.c: the simple lock's word (0 free, 1 held, 2 held with sleepers),
 * taken by spinning briefly, then sleeping on a futex; the critical
 * sections use it too. */
void gomp_word_lock(_Atomic int *w);
void gomp_word_unlock(_Atomic int *w);

/* omp_ calls that other entry points use (their files define them). */
uintptr_t omp_get_default_allocator(void);
int omp_get_team_num(void);
int omp_get_num_teams(void);
int omp_get_level(void);
/* omp_get_level: the regions enclosing the calling thread up to its
 * initial thread (a target region starts a new count). */
unsigned gomp_level(void);
int omp_get_thread_num(void);
int omp_get_num_threads(void);
int omp_get_ancestor_thread_num(int level);

/* teams (target.c): this thread's team number and league size (1
 * outside a teams construct), for omp_get_team_num and omp_get_num_teams. */
unsigned gomp_team_num(void);
unsigned gomp_num_teams(void);

/* safety.c: stops the process, naming it, when another OpenMP runtime is
 * loaded beside this one (when: at load, at the first region ...). */
void gomp_check_alone(const char *when);

/* GOMP_parallel's path, for the combined constructs: every member runs
 * pre(pre_arg) as it enters the region, before fn(data) (loops.c starts
 * the worksharing construct of GOMP_parallel_loop_* there). */
void gomp_parallel_run(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags,
                       void (*pre)(const void *), const void *pre_arg);
/* The same region in GCC before 4.9's split form (GOMP_parallel_start,
 * the combined *_start entries): opens it, enters it as member 0 and
 * runs pre on this thread too; the caller then runs its part of the
 * region itself and closes it with GOMP_parallel_end. pre_arg's
 * pre_size bytes (at most GOMP_PRE_MAX) are copied: the members read
 * them after the call returns. */
#define GOMP_PRE_MAX 64
void gomp_parallel_open(void (*fn)(void *), void *data, unsigned num_threads,
                        void (*pre)(const void *), const void *pre_arg, size_t pre_size,
                        const char *who);

/* Cancellation of worksharing constructs (loops.c), for GOMP_cancel and
 * GOMP_cancellation_point: marks the loop or sections construct the
 * calling thread is in as cancelled (par_team's cancel_ws; no more
 * chunks or sections are handed out), and tells whether it is. A
 * cancelled region (par_team's cancel word) is what GOMP_loop_end_cancel
 * and GOMP_sections_end_cancel report, from the cancellable barrier. */
void gomp_ws_cancel(void);
bool gomp_ws_cancelled(void);

/* Task reductions on a worksharing construct (reduction(task, ...) on a
 * loop, sections or scope: the reductions argument of GOMP_loop_start,
 * GOMP_sections2_start, GOMP_scope_start ...). Called on every member as
 * it starts the construct: first is NULL on the one member that registers
 * the construct's reductions (it returns before any other member is
 * called), else the registering member's reductions array. The tasks
 * engineer defines it (task reductions, taskgroups); the weak default in
 * loops.c stops the program naming the construct. */
void gomp_ws_task_reductions(uintptr_t *reductions, uintptr_t *first, const char *who);

/* The worksharing constructs' common steps (loops.c), for sections.c
 * and ordered.c. The thread (made on first use; stops when out of
 * memory). */
par_thread *gomp_ws_thread(void);
/* A schedule as GCC passes it (GFS_* with the monotonic flag; runtime
 * reads run-sched-var) as the iterator's schedule and chunk. */
void gomp_ws_resolve(unsigned long sched, uint64_t chunk, int *psched, uint64_t *pchunk);
/* Iterations of the loop from start by incr while below (up) or above
 * end, the values' 64 bits compared as signed or not. */
uint64_t gomp_ws_count(uint64_t start, uint64_t end, uint64_t incr, int up, int is_signed);
/* Starts the thread's construct (th->c.ws_it) over n iterations whose
 * offset k is the value base + k * step, offset n the value last. */
par_ws_iter *gomp_ws_begin(par_thread *th, uint64_t n, int sched, uint64_t chunk, int ordered,
                           uint64_t base, uint64_t step, uint64_t last);
/* The next chunk as values [*s, *e): 0 when none is left or the
 * construct was cancelled. */
int gomp_ws_next(uint64_t *s, uint64_t *e);
/* The reductions and mem arguments of GCC 12's generic starts. */
void gomp_ws_reductions(par_thread *th, par_ws_iter *it, uintptr_t *reductions, const char *who);
void *gomp_ws_mem(par_ws_iter *it, void **mem, const char *who);
/* Leaves the construct, then the barrier if asked; _cancel also says
 * whether the region was cancelled. */
void gomp_ws_finish(int barrier);
bool gomp_ws_finish_cancel(void);

/* Stops the process with a message naming what failed: for conditions the
 * ABI has no way to report (GOMP_parallel returns nothing), where running
 * on could compute a wrong answer. */
_Noreturn void gomp_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
