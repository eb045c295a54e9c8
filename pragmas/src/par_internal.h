/* Internal structures of the OpenMP-style layer (library ultrapool_par).
 *
 * A team is the set of threads of one parallel region: the calling thread
 * (member 0) and pool workers that picked up the region's member tasks.
 * Every member owns a work-stealing deque of task records: the runtime's
 * deque (runtime/src/deque.h, through up_layer.h) with records of
 * PAR_TASK_HDR header words. A task runs with a frame that counts the
 * children created in it and the ones completed. A task of parallel.h has
 * its frame on the stack of the thread running it and waits for its
 * children before it completes; a task of the GOMP ABI completes when its
 * body returns, as OpenMP says, with a frame from a per-thread free list
 * that lives on while children are left (tasks.c: frames that outlive
 * their body). A member that waits (for its
 * children, at a barrier, for its team) goes through wait.c: it spins for
 * the pool's budget, then parks until a publish that concerns it.
 *
 * Shared fields carry who may touch them: (owner) the thread that owns the
 * structure, (atomic) any thread through C11 atomics, (ro) read-only after
 * setup, (lock) under the named lock. */
#ifndef UP_PAR_INTERNAL_H
#define UP_PAR_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <ultrapool/parallel.h>

#include "up_layer.h"

#define PAR_LINE       64
#define PAR_MAX_TEAM   1024
#define PAR_MAX_LEVELS 8
#define PAR_WS_SLOTS   8

/* Inlining hints for the task fast paths (tasks.c); plain C elsewhere. */
#if defined(__GNUC__) || defined(__clang__)
#define PAR_NOINLINE      __attribute__((noinline))
#define PAR_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define PAR_NOINLINE
#define PAR_ALWAYS_INLINE inline
#endif

/* The backend (backend.c): NULL while ultrapool's own scheduler runs the
 * calls of parallel.h, else the OpenMP module's table, which every public
 * call forwards to after checking its arguments. One acquire load on the
 * way of every call; the first call resolves UP_BACKEND. */
#include "../interop/up_omp_ops.h"
enum { PAR_BACKEND_UNRESOLVED = 0, PAR_BACKEND_OWN, PAR_BACKEND_FOREIGN };
extern atomic_int par_backend_state;
extern _Atomic(const up_omp_ops *) par_foreign_ops;
const up_omp_ops *par_omp_slow(void);
static inline const up_omp_ops *par_omp(void)
{
    int s = up__load_acquire(&par_backend_state);
    if (s == PAR_BACKEND_OWN)
        return NULL;
    return s == PAR_BACKEND_FOREIGN ? up__load_relaxed(&par_foreign_ops) : par_omp_slow();
}
/* UP_OK, or UP_EINVAL with "who: " and the loading error for a backend
 * that UP_BACKEND named but could not be loaded: every int-returning call
 * asks before it forwards. */
int par_backend_error(const up_omp_ops *ops, const char *who);
static inline int par_backend_check(const char *who)
{
    const up_omp_ops *ops = par_omp();
    return ops ? par_backend_error(ops, who) : UP_OK;
}
/* The build tree's module folder, for the static library inside a program
 * of the build tree: called before main by build_tree.c, which only those
 * programs compile (never the installed library). */
void up__par_backend_build_dir(const char *dir);

/* How a region's team is gathered (team.c, par_parallel). */
typedef enum par_team_mode { PAR_TEAM_UPTO, PAR_TEAM_EXACT, PAR_TEAM_FULL } par_team_mode;

typedef struct par_thread par_thread;
typedef struct par_team par_team;
typedef struct par_frame par_frame;
typedef struct par_group par_group;
typedef struct par_node par_node;
typedef struct par_deptable par_deptable;
typedef struct par_member par_member;
typedef struct par_crew par_crew;

/* A task as it sits in a deque: what to run, with what, for whom. In the
 * deque's terms (deque.h) a record of PAR_TASK_HDR header words, the last
 * of them the payload size. */
typedef struct par_task {
    up_fn fn;
    par_frame *parent; /* the frame that created it and waits for it */
    par_node *node;    /* dependency node, NULL for a task without deps */
    uint64_t size;     /* 0: words[0] is the argument pointer */
    uint64_t words[UP_PAYLOAD_MAX / 8];
} par_task;

#define PAR_TASK_HDR 4
_Static_assert(offsetof(par_task, size) == 8 * (PAR_TASK_HDR - 1) &&
                   offsetof(par_task, words) == 8 * PAR_TASK_HDR &&
                   UP_PAYLOAD_MAX == 8 * UP__TASK_WORDS && sizeof(void *) == 8,
               "a task is a header of four 8-byte words, then its words");

struct par_group {
    _Atomic int cancelled;
    par_group *outer; /* (ro) the enclosing taskgroup of the same task, or NULL */
    void *data;       /* (owner: the group's task) the GOMP ABI's task reductions */
    int workshare;    /* (ro) a worksharing construct's group (GOMP reductions) */
};

/* A frame's remote_done holds, besides the children completed elsewhere,
 * PAR_HOLD for each child frame that outlived its body and is not yet
 * released, and PAR_ORPHAN once the frame itself outlived its body
 * (tasks.c says how the sum is read). PAR_ORPHAN is 3 * 2^62, not 2^63:
 * an orphan's word, PAR_ORPHAN minus fewer than 2^32 completions still
 * owed, keeps bit 63 set, so its completions wake nobody. */
#define PAR_HOLD   (UINT64_C(1) << 32)
#define PAR_ORPHAN (UINT64_C(3) << 62)

struct par_frame {
    par_frame *parent; /* (ro) alive as long as this frame: it holds it (tasks.c) */
    /* (atomic, relaxed) the thread running the frame's body, which counts
     * its children's completions in local_done; NULL once the body has
     * returned with children left (then every completion is remote). */
    _Atomic(par_thread *) owner;
    par_member *slot;             /* (ro) the owner's team slot, where it parks (wait.c) */
    uint64_t spawned;             /* (owner) children created */
    uint64_t local_done;          /* (owner) children completed on the owner thread */
    _Atomic uint64_t remote_done; /* (atomic) children completed elsewhere, and holds */
    int64_t mark;                 /* (owner) deque bottom when the frame started */
    par_group *group;             /* (ro) innermost taskgroup, NULL for none */
    par_deptable *deps;           /* (owner) dependency table, created on first use */
    int final;                    /* (ro) descendants run undeferred */
    /* (ro) a taskgroup's frame (par_taskgroup): the dependencies of its
     * tasks go to the enclosing task's table, since OpenMP orders sibling
     * tasks, children of one task, whatever taskgroup holds them. */
    int taskgroup;
};

/* A taskgroup: a frame of its own above the current one, whose children
 * its end waits for. Its storage is the caller's and stays put from begin
 * to end (the children point to f): up_taskgroup's stack, or the GOMP
 * ABI's allocation between GOMP_taskgroup_start and _end. */
typedef struct par_taskgroup {
    par_group g;
    par_frame f;
    par_frame *outer; /* the frame current at begin, current again after end */
} par_taskgroup;

/* Per-member slot of a team, on its own cache line. A member parks in its
 * slot (wait.c): the claim word lives in the team, which outlives every
 * wake-up of its members. */
struct par_member {
    _Alignas(PAR_LINE) up__deque *_Atomic dq; /* (atomic) for thieves */
    _Atomic int asleep; /* (atomic) wait.c's claim word: 0, or PAR_ASLEEP (| PAR_HELPING) */
    up__parker *pk;     /* (ro once asleep is first set) the member's parker */
    par_team *team;     /* (ro) */
    /* Member numbers (team.c): the thread that took this slot asks for the
     * number it had in the previous region (pref: 0 not yet said,
     * PAR_PREF_NONE, else number + 2), and the master gives it one
     * (index), published with running. */
    _Atomic unsigned pref; /* (atomic) */
    unsigned index;        /* (ro once running is set) */
    /* The slot's thread, and whether it docks after the region (crew.c):
     * both written before its arrival in left, read by the master after. */
    par_thread *th;
    int docks;
    /* (owner writes, all read after a barrier) a reduction's partial value
     * of any type up to 256 bytes: aligned for any. */
    _Alignas(max_align_t) char reduce[2][256];
};

#define PAR_PREF_NONE 1

#define PAR_ASLEEP  1
#define PAR_HELPING 2

/* One worksharing construct in flight: the shared iteration counter of a
 * dynamic or guided loop, and what the OpenMP ABI hangs on a construct,
 * all reset by the last member to leave it (loops.c). */
typedef struct par_ws {
    _Alignas(PAR_LINE) _Atomic uint64_t gen; /* construct number it serves */
    _Atomic uint64_t next;                   /* iterations handed out (loops.c) */
    _Atomic unsigned done;                   /* members finished with it */
    _Atomic uint64_t ord;  /* ordered: offset whose chunk holds the turn (loops.c) */
    _Atomic(void *) data;  /* the construct's shared block (par_ws_data) */
    _Atomic(void *) stale; /* the block of the slot's previous construct */
    _Atomic(void *) aux;   /* a pointer one member publishes to the others */
} par_ws;

/* The bit of par_team.cancel: GCC's GOMP_CANCEL_PARALLEL. */
#define PAR_CANCEL_PARALLEL 1u
/* Worksharing as an iterator, for callers that ask for chunk after chunk
 * (the GOMP ABI): a member starts a construct over offsets [0, n), takes
 * chunks by the schedule until none is left, and ends it. The chunks are
 * those up_for runs (loops.c: one computation for both). ws is NULL when
 * the thread runs the construct alone (no team, or a team of one): then
 * it takes everything as one chunk and solo_data is its private block.
 * base, step and last describe the caller's loop (offset k is the value
 * base + k * step modulo 2^64, offset n the value last); kind is the
 * caller's. (owner) all of it: it sits in the thread's par_ctx. */
enum { PAR_WS_STATIC = 0, PAR_WS_DYNAMIC = 1, PAR_WS_GUIDED = 2 };
typedef struct par_ws_iter {
    par_ws *ws;
    uint64_t n, chunk;
    unsigned me, size;
    int sched;
    int ordered;   /* ordered chunks: each passes the turn on when it is done */
    int state;     /* 0 no construct, 1 taking chunks, 2 no chunk left */
    int holds;     /* a chunk [b, e) is held and its turn not yet passed on */
    uint64_t trip; /* static: this member's chunks taken */
    /* Worked out once at the start, so that taking a chunk divides
     * nothing: static with a chunk, this member's number of chunks;
     * dynamic, 1 when its counter may take a fetch-and-add (loops.c). */
    uint64_t limit;
    uint64_t b, e;   /* the chunk handed out last */
    void *solo_data; /* alone: the construct's block */
    uint64_t base, step, last;
    int kind;
} par_ws_iter;

/* What a thread is doing in the layer: its team membership and frame, saved
 * and restored around nested regions. */
typedef struct par_ctx {
    par_team *team;
    unsigned member;
    unsigned size; /* the team's final size (0 outside a region) */
    par_frame *frame;
    up__deque *dq;
    par_member *slot; /* its slot in team, NULL outside a region */
    uint64_t ws_count, single_count, reduce_count;
    par_ws_iter ws_it; /* the worksharing construct the thread is in (GOMP ABI) */
} par_ctx;

struct par_team {
    up_pool *pool;         /* (ro) */
    up_fn fn;              /* (ro) */
    up_fn leave;           /* (ro) NULL, or each member's last step (par_parallel_leave) */
    void *ctx;             /* (ro) */
    unsigned requested;    /* (ro) */
    unsigned level;        /* (ro) OpenMP's nesting level */
    unsigned depth;        /* (ro) regions its master is nested in, +1: the deque's level */
    unsigned spin;         /* (ro) the pool's spin budget, for wait.c */
    _Atomic unsigned refs; /* (atomic) master + member tasks not yet returned */
    /* Gathering: state = (closed << 31) | joined; members claim an index
     * with a CAS while it is open, the master closes it. */
    _Atomic uint32_t state;
    _Atomic unsigned taken;   /* (atomic) member tasks a worker has begun, joined or not */
    _Atomic unsigned size;    /* (atomic) final team size, set when closed */
    _Atomic int running;      /* (atomic) 1 once members may start */
    _Atomic int abandoned;    /* (atomic) set before running: members leave at once */
    _Atomic unsigned left;    /* (atomic) members done with the region */
    par_member *members;      /* (ro) requested slots, by join order; member numbers in index */
    unsigned cap;             /* (ro) slots allocated in members, requested or more */
    const par_thread *master; /* (ro) compared, never dereferenced by members */
    /* (ro) A docking team (crew.c): a top-level full region opened by a
     * thread outside the pool, whose members wait in its master's crew
     * for the next region. */
    int dock;
    par_team_mode mode; /* (ro) */
    /* OpenMP's contention group, for the thread limit (env.c): cg points
     * to the counter of the top-level team, cg_used, which counts the
     * threads in use by that region and every region nested in it. active
     * counts the enclosing regions of more than one member, this one
     * included (OpenMP's active levels). */
    _Atomic unsigned *cg;     /* (ro) */
    _Atomic unsigned cg_used; /* (atomic) the top-level team's count */
    unsigned active;          /* (ro once running is set) */
    /* The enclosing region's team and the opener's number in it (NULL
     * and 0 at the top level), for OpenMP's ancestor queries. */
    par_team *outer;       /* (ro) lives as long as this team: its member waits */
    unsigned outer_member; /* (ro) */
    /* Members parked in one of wait.c's waits on this team: a push reads it
     * after publishing (wait.c). Signed: a waker may count a claim before
     * the sleeper has counted itself in. */
    _Alignas(PAR_LINE) _Atomic int sleepers;
    _Alignas(PAR_LINE) _Atomic unsigned bar_count;
    _Atomic unsigned bar_gen;
    _Alignas(PAR_LINE) _Atomic uint64_t single_next;
    par_ws ws[PAR_WS_SLOTS];
    /* Cancellation (OpenMP's cancel construct, pragmas/gomp/cancel.c),
     * set by a member's cancel when cancel-var is on. cancel holds
     * PAR_CANCEL_PARALLEL once the region is cancelled, until it ends:
     * tasks of the team not yet started are skipped, cancellable barriers
     * and cancellation points report it. cancel_ws holds 1 + the number
     * (par_ctx's ws_count order) of the worksharing construct (loop or
     * sections) cancelled last, so a later construct is never seen
     * cancelled and nothing needs a reset. cbar is the cancellable
     * barrier's own word, generation << 32 | arrivals
     * (par_barrier_cancel): a member that leaves it for a cancellation
     * takes its arrival back, so the plain barriers' count (bar_count) is
     * never disturbed. */
    _Alignas(PAR_LINE) _Atomic unsigned cancel;
    _Atomic uint64_t cancel_ws;
    _Atomic uint64_t cbar;
    /* Tasks with a priority: a small heap under a lock (priority is a hint). */
    _Alignas(PAR_LINE) pthread_mutex_t urgent_lock;
    _Atomic unsigned urgent_n; /* entries in urgent and urgent_more */
    struct {
        int prio;
        par_task t;
    } urgent[64];                   /* (lock urgent_lock) */
    struct par_urgent *urgent_more; /* (lock urgent_lock) past the 64, allocated */
    /* (owner: the master) Its part of the region, from par_parallel_enter
     * to par_parallel_leave: what it was doing outside, its root frame
     * (the parent of the tasks it creates, so it lives as long as the
     * team) and the threads the team took from the enclosing group. */
    par_ctx master_saved;
    unsigned master_level[2]; /* and depth */
    unsigned master_extra;
    par_frame master_root;
};

/* The least time a waiting member spins before it parks (wait.c). */
#define PAR_SPIN_NS 50000u
/* The most time it spins, however few polls that was (wait.c). */
#define PAR_SPIN_MAX_NS 1000000u

/* Limits on the regions a thread opens: OpenMP's max-active-levels-var
 * and thread-limit-var (0: no limit), which OpenMP lets a program change
 * at run time per task (omp_set_max_active_levels). */
typedef struct par_limits {
    unsigned max_active;
    unsigned thread_limit;
} par_limits;

struct par_thread {
    par_ctx c;
    /* (owner) the limits of the regions it opens: NULL, the environment's
     * (env.c); an ABI with per-thread ICVs (pragmas/gomp) points it at
     * them, for the thread's lifetime. */
    const par_limits *limits;
    /* (owner) OpenMP's nesting level; and the depth of the regions the
     * thread is in, which picks its deque (dqs). They differ inside a
     * target region, whose initial thread is at level 0 again but keeps
     * the deques of the regions around it (pragmas/gomp/target.c). */
    unsigned level, depth;
    uint32_t rng;
    up__deque *dqs[PAR_MAX_LEVELS]; /* one deque per nesting level, kept */
    par_node *free_nodes;           /* recycled dependency nodes */
    par_frame *free_frames;         /* (owner) recycled frames of GOMP ABI tasks (tasks.c) */
    unsigned nframes;               /* (owner) frames it made or adopted (tasks.c) */
    par_deptable *free_tables;
    par_team *release_to; /* (owner) while set, ready tasks go to this team's shared queue */
    up__parker *pk;       /* (ro) where it sleeps in wait.c: its worker's, or its own */
    uint64_t spin_since;  /* (owner) when the current wait's spinning began */
    /* Docking (crew.c). As a docked member: its dock word (PAR_DOCK_* or
     * the team posted to it), the member number it is posted for, and the
     * pool it parks in. As a master: its crew. */
    _Alignas(PAR_LINE) _Atomic uintptr_t dock;
    unsigned dock_slot; /* (master writes before the post; member reads after) its slot */
    up_pool *dock_pool; /* (owner; read by a releaser under the crew's lock after the left count) */
    int dock_ok;        /* (owner) this member part may dock at its end */
    par_crew *crew;     /* (owner, and crew.c's lock for a release) */
    /* (owner) the last two teams it was the master of, newest first,
     * each with the master's reference or NULL, for its next regions to
     * reuse (team.c) */
    par_team *spare[2];
};

par_thread *par_self(void); /* creates the thread's context on first use */
extern _Thread_local par_thread *par_tls UP__TLS_IE;

/* tasks.c */
void par_run_task(par_thread *th, par_task *t);
/* Creates a task of the current frame (up_task's and the GOMP ABI's one
 * path): proto's payload, fn, opts and dependencies as up_task_deps. opts
 * is NULL or in this library's layout: the public calls read the
 * program's into it first (abi_struct.h), and the GOMP ABI makes its own. */
int par_task_create(const char *who, up_fn fn, const par_task *proto, const up_task_opts *opts,
                    const up_dep *deps, size_t ndeps);
/* The current frame of th (a root frame outside any region). */
par_frame *par_current_frame(par_thread *th);
/* Taskgroups (above): begin makes tg's frame current; end waits for its
 * children and restores the outer frame; 1 when the group was cancelled. */
void par_taskgroup_begin(par_thread *th, par_taskgroup *tg);
int par_taskgroup_end(par_thread *th, par_taskgroup *tg);
/* Tasks with state outside their record (the GOMP ABI's arguments larger
 * than a record holds or with a copy constructor, its detach events): fn
 * is par_ext_task and the payload is a par_ext. The layer calls
 * handler(data, 1) to run the task, or handler(data, 0) when the task is
 * skipped (a cancelled taskgroup or region), so that data is freed either
 * way. With an event, the task completes (its dependants run, its parent
 * counts it done) only when it has run and the event was fulfilled
 * (par_event_fulfill), whichever comes last. always: the task runs
 * (handler(data, 1), in its frame) even when it would be skipped, as
 * OpenMP's C++ tasks whose firstprivate objects were copy-constructed do:
 * their destructors are in the task's body (libgomp's copy_ctors_done),
 * whose cancellation points then return at once. */
typedef struct par_event par_event;
typedef struct par_ext {
    void (*handler)(void *data, int run);
    void *data;
    par_event *event;
    int always;
} par_ext;
void par_ext_task(void *words);
/* A new event for a task created next on th; undeferred: the creator waits
 * for its completion and frees it (par_task_create does both, when it runs
 * the task at once). Not undeferred, the task completes when the event is
 * fulfilled, whether it was queued or run at once (a team of one runs its
 * tasks at once, and OpenMP's detached task must not block its creator
 * there): its parent's join waits for it. NULL when out of memory. */
par_event *par_event_new(par_thread *th, int undeferred);
/* 0, or -1 when the event was already fulfilled. */
int par_event_fulfill(par_event *ev);
/* omp_in_final: the current task is final or included in a final one. */
int par_in_final(void);
/* Runs fn(arg) now as an undeferred child task of the current frame: its
 * own frame, skipped in a cancelled taskgroup, done when this returns. */
void par_run_undeferred(par_thread *th, up_fn fn, void *arg);
/* up_taskloop's lazy splitting for the GOMP ABI's taskloop (loops.c):
 * offsets [0, n) in chunks balanced chunks (1 <= chunks <= n), each run
 * as body(INT64_MIN + lo, INT64_MIN + hi, ctx) in a task of the current
 * frame, the first ones on the calling thread; the caller's taskgroup
 * waits for the rest. */
void par_taskloop_offsets(uint64_t n, uint64_t chunks, up_range_fn body, void *ctx);
/* Tasks queued in a thread's deque from which on a new task runs at once
 * (tasks.c says why). */
#define PAR_INLINE_BACKLOG 4
enum { PAR_FOUND_OWN = 1, PAR_FOUND_HELP = 2 };
int par_find_task(par_thread *th, par_task *out, int64_t mark);
/* The same for a thread waiting in frame within at a task scheduling point
 * other than a barrier: only descendants of within (OpenMP's task
 * scheduling constraint for tied tasks; tasks.c). */
int par_find_task_within(par_thread *th, par_task *out, int64_t mark, const par_frame *within);
void par_run_found(par_thread *th, par_task *t, int found);
up__deque *par_level_deque(par_thread *th, unsigned level);
/* The runners of the GOMP ABI's tasks whose arguments sit in their record,
 * without and with their creator's ICVs (pragmas/gomp/tasks.c), set once
 * when that library loads. Their tasks and every par_ext_task complete
 * when their body returns (OpenMP); every other task of the layer after
 * its children too (parallel.h). */
extern up_fn par_alone_fn, par_alone_icv_fn;
/* Waits for f's children (a taskwait), then drops its dependency table. */
void par_join(par_thread *th, par_frame *f);
/* Waits for every descendant of f: its children and the child frames that
 * outlived their body (a taskgroup's end, a barrier, a parallel.h task's
 * end), then drops its dependency table. */
void par_join_all(par_thread *th, par_frame *f);
void par_push_ready(par_thread *th, par_task *t);
/* wait.c */
void par_relax(unsigned *spins);
/* One step of a wait of th, in its slot of team t, for ready(th, arg): a
 * spin while *spins is under the pool's budget, else a park until woken or
 * deadline (an up__now_ns() time, UINT64_MAX for none). helping: the
 * waiter runs the team's tasks between steps, so a task pushed to the team
 * concerns it. ready must read with seq_cst loads: it is the condition's
 * last look. */
typedef int (*par_ready_fn)(par_thread *th, void *arg);
/* par_idle's spin: one step while th's wait (begun at *spins == 0) is
 * within budget rounds and the time bounds, then 0: time to park. */
int par_spin(par_thread *th, unsigned *spins, unsigned budget);
void par_idle(par_thread *th, par_member *slot, unsigned *spins, par_ready_fn ready, void *arg,
              int helping, uint64_t deadline);
/* Takes a slot for th (before anyone may wake it there). */
void par_slot_take(par_member *slot, par_team *t, par_thread *th);
void par_wake_slot(par_member *slot);
void par_wake_team(par_team *t, const par_member *self);
void par_wake_one(par_team *t, const par_member *self);
/* deps.c */
/* An undeferred task with dependencies is held for the thread that created
 * it: when its last predecessor completes, ready is set (seq_cst) and the
 * creator's slot woken, instead of the task being pushed, and the creator,
 * which waits for ready, runs it. slot is the creator's, NULL outside a
 * team; it is read before ready is set, after which the hold may be gone. */
typedef struct par_hold {
    _Atomic int ready;
    par_member *slot;
} par_hold;
/* Registers t's dependencies: 1 when it may run now, 0 when it waits for
 * predecessors (which push it, or release hold when hold is not NULL), or
 * UP_ENOMEM. */
int par_deps_create(par_thread *th, par_task *t, const up_dep *deps, size_t ndeps, par_hold *hold);
void par_deps_complete(par_thread *th, par_node *n);
void par_deps_free(par_thread *th, par_frame *f);
void par_deps_thread_exit(par_thread *th);
/* loops.c: the worksharing iterator (par_ws_iter above). th is in a
 * region (or alone); every member starts the same constructs in the same
 * order with the same n, sched and chunk (chunk 0: static blocks, else at
 * least 1). */
void par_ws_start(par_thread *th, par_ws_iter *it, uint64_t n, int sched, uint64_t chunk,
                  int ordered);
/* The next chunk [*b, *e): 1, or 0 when none is left (for good). */
int par_ws_next(par_thread *th, par_ws_iter *it, uint64_t *b, uint64_t *e);
/* Leaves the construct (no barrier); the last member to leave frees it. */
void par_ws_end(par_thread *th, par_ws_iter *it);
/* Frees what the team's slots still hold (its last blocks). */
void par_ws_free(par_team *t);
/* The construct's zeroed block of size bytes, the same for every member:
 * the first to ask makes it and runs init(block, arg) on it before the
 * others see it (init may be NULL). NULL when out of memory. */
void *par_ws_data(par_ws_iter *it, size_t size, void (*init)(void *block, void *arg), void *arg);
/* Ordered: waits until the chunk held has the turn (every earlier chunk
 * passed it on). */
void par_ws_ordered_wait(par_thread *th, par_ws_iter *it);
/* Waits in th's team slot until ready(th, arg) (wait.c's step): for a
 * condition on a construct's words whose publisher writes with a seq_cst
 * RMW and then calls par_wake_team, ready reading with seq_cst loads. */
void par_ws_wait(par_thread *th, par_ready_fn ready, void *arg);
/* team.c */
/* The CPUs the process may run on: its affinity mask's on Linux (as
 * libgomp counts them), else the online ones; at least 1. The team size
 * nothing else sets, and omp_get_num_procs. */
unsigned par_cpus(void);
/* How a region's team is gathered: up to nthreads, with the members that
 * come in time (up_parallel); all or nothing (up_parallel_exact, whose
 * UP_EAGAIN runs nothing); or full, waiting as long as it takes for every
 * member the limits allow (OpenMP's regions with dynamic adjustment off,
 * the GOMP ABI in pragmas/gomp/; always on ultrapool's own scheduler). */
int par_parallel(up_pool *pool, unsigned nthreads, up_fn fn, void *ctx, par_team_mode mode,
                 const char *who);
/* par_parallel in two halves, for an ABI whose master runs its part of
 * the region outside any call (GOMP_parallel_start / _end): enter gathers
 * the team, starts the members on fn(ctx) and makes the calling thread
 * member 0; the caller then runs its part and calls leave, which meets
 * the members at the closing barrier and restores the caller. Regions
 * entered so nest and leave in reverse order. par_parallel is enter,
 * fn(ctx), leave. The leave hook, when not NULL, is par_parallel_hooked's
 * and runs on every member, the caller too (in par_parallel_leave).
 * enter needs ultrapool's own teams: on an OpenMP backend it refuses,
 * UP_EINVAL. leave: UP_EINVAL (nothing done) when the calling thread is
 * not the master of an entered region, at its root frame. */
int par_parallel_enter(up_pool *pool, unsigned nthreads, up_fn fn, up_fn leave, void *ctx,
                       par_team_mode mode, const char *who);
int par_parallel_leave(const char *who);
/* par_parallel where every member, after the closing barrier (the tasks
 * of the region all done), runs leave(ctx) before it leaves the team:
 * where an ABI restores per-thread state that the region's tasks use. */
int par_parallel_hooked(up_pool *pool, unsigned nthreads, up_fn fn, up_fn leave, void *ctx,
                        par_team_mode mode, const char *who);
void par_barrier(par_thread *th);
/* A reference on t, for a thread outside it that must touch its slots
 * after publishing what may let it end (an event's fulfiller); taken
 * while t cannot end yet. */
void par_team_hold(par_team *t);
void par_team_release(par_team *t);
/* Drops the team th kept for its next region (team.c), at the thread's end. */
void par_team_spare_drop(par_thread *th);
/* A member part on th, joining t with the number wish pref (PAR_PREF_NONE
 * or number + 2) if t is still gathering; drops the reference th held. */
void par_member_run(par_thread *th, par_team *t, unsigned pref);
/* The same for a member whose slot its master filled (a docked thread,
 * crew.c): no gathering, it waits for the start and runs its part. */
void par_member_start(par_thread *th, par_team *t, unsigned slot);

/* crew.c: docking, a top-level team's members kept for the master's next
 * region (the file says how). The dock word's states; any other value is
 * the team posted to the docked thread. */
#define PAR_DOCK_NONE  0u /* not docked */
#define PAR_DOCK_WAIT  1u /* docked, spinning */
#define PAR_DOCK_SLEEP 2u /* docked, parked: a post owes a wake-up */
#define PAR_DOCK_FREE  3u /* released to the pool */
/* Whether a region opened here, in outer at level in mode, docks. */
int par_dock_allowed(const par_team *outer, unsigned level, par_team_mode mode);
/* Posts t to the master's docked members 1 .. n-1 (t->refs counts each
 * post), filling slots 1 .. k of t for them, each with its old number as
 * its wish; returns k, how many took it, for whom no member task is
 * queued. Before anything else may join t. */
unsigned par_crew_post(par_thread *master, par_team *t, unsigned n);
/* After the region's last member left: the docked members join the crew. */
void par_crew_update(par_thread *master, par_team *t);
/* In a member's leaving, before its arrival in left: records its thread
 * in its slot and docks it if it may (th->dock_ok, t->dock). */
void par_dock_mark(par_thread *th, par_team *t, par_member *slot);
/* After a docked member's part: waits for posts and runs them, until
 * released or a part ends without docking. */
void par_dock_serve(par_thread *th);
/* Releases the master's crew and frees it (its thread ends). */
void par_crew_drop(par_thread *master);
/* Releases up to max docked threads of the crews on pool (all of them
 * before its destroy; as many as a region misses when the pool may start
 * no more workers); returns how many. */
unsigned par_crews_release(const up_pool *pool, unsigned max);

/* The deque of records (deque.h's conventions, UP__DEQUE_* codes). */
static inline int par_deque_pop(up__deque *d, par_task *out)
{
    return up__deque_pop_record(d, out, PAR_TASK_HDR);
}

static inline int par_deque_steal(up__deque *d, par_task *out)
{
    return up__deque_steal_record(d, out, PAR_TASK_HDR);
}

/* After a push published with up__deque_publish_sb: publish-then-check
 * (wait.c). The publish's fence orders its store of bottom before this
 * load of the sleeper count; a member that parks counts itself first and
 * then looks at the deques, so either it sees the task or this sees it
 * counted. */
static inline void par_after_push(par_thread *th)
{
    par_team *t = th->c.team;
    if (up__load_sb(&t->sleepers) > 0)
        par_wake_one(t, th->c.slot);
}

/* Owner: pushes t on th's deque (th in a team with a deque). */
static inline int par_deque_push(par_thread *th, const par_task *t)
{
    up__deque *d = th->c.dq;
    int64_t b = up__deque_bottom(d);
    if (!up__deque_room(d, b))
        return UP__DEQUE_FULL;
    up__deque_write_record(d, b, t, PAR_TASK_HDR);
    up__deque_publish_sb(d, b);
    par_after_push(th);
    return UP__DEQUE_OK;
}

/* Owner: the same for a task whose argument is a pointer (up_task's fast
 * path), its five words written without building a par_task first. */
static inline int par_deque_push_ptr(par_thread *th, up_fn fn, par_frame *parent, void *arg)
{
    up__deque *d = th->c.dq;
    int64_t b = up__deque_bottom(d);
    if (!up__deque_room(d, b))
        return UP__DEQUE_FULL;
    uint64_t w[PAR_TASK_HDR + 1] = {(uint64_t)(uintptr_t)fn, (uint64_t)(uintptr_t)parent, 0, 0,
                                    (uint64_t)(uintptr_t)arg}; /* node NULL, size 0 */
    up__deque_write_words(d, b, w, PAR_TASK_HDR + 1);
    up__deque_publish_sb(d, b);
    par_after_push(th);
    return UP__DEQUE_OK;
}

/* Does a task created now on th, in frame f, go to the deque (deferred)?
 * Not in a team of one or without a deque, and not below a final task:
 * there OpenMP runs it at once. f is read only inside a team, where the
 * thread always has a frame. */
static inline int par_defers(const par_thread *th, const par_frame *f)
{
    return th->c.size > 1 && th->c.dq && !f->final;
}

#endif
