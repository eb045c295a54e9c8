/* Internal structures of the OpenMP-style layer (library ultrapool_par).
 *
 * A team is the set of threads of one parallel region: the calling thread
 * (member 0) and pool workers that picked up the region's member tasks.
 * Every member owns a work-stealing deque of task records (task_deque.c).
 * A task runs with a frame on the stack of the thread running it; a frame
 * counts the children created in it and the ones completed, and waits for
 * all of them before the task completes (so frames never outlive their
 * children).
 *
 * Shared fields carry who may touch them: (owner) the thread that owns the
 * structure, (atomic) any thread through C11 atomics, (ro) read-only after
 * setup, (lock) under the named lock. */
#ifndef UP_PAR_INTERNAL_H
#define UP_PAR_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <ultrapool/parallel.h>

#define PAR_LINE           64
#define PAR_MAX_TEAM       1024
#define PAR_MAX_LEVELS     8
#define PAR_WS_SLOTS       8
#define PAR_MAX_HELP_DEPTH 256

/* Inlining hints for the task fast paths (tasks.c); plain C elsewhere. */
#if defined(__GNUC__) || defined(__clang__)
#define PAR_NOINLINE      __attribute__((noinline))
#define PAR_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define PAR_NOINLINE
#define PAR_ALWAYS_INLINE inline
#endif

typedef struct par_thread par_thread;
typedef struct par_team par_team;
typedef struct par_frame par_frame;
typedef struct par_group par_group;
typedef struct par_node par_node;
typedef struct par_deptable par_deptable;

/* A task as it sits in a deque: what to run, with what, for whom. */
typedef struct par_task {
    up_task_fn fn;
    par_frame *parent; /* the frame that created it and waits for it */
    par_node *node;    /* dependency node, NULL for a task without deps */
    uint64_t size;     /* 0: words[0] is the argument pointer */
    uint64_t words[UP_TASK_PAYLOAD / 8];
} par_task;

struct par_group {
    _Atomic int cancelled;
};

struct par_frame {
    par_frame *parent;
    par_thread *owner;            /* (ro) thread running the task of this frame */
    uint64_t spawned;             /* (owner) children created */
    uint64_t local_done;          /* (owner) children completed on the owner thread */
    _Atomic uint64_t remote_done; /* (atomic) children completed elsewhere */
    int64_t mark;                 /* (owner) deque bottom when the frame started */
    par_group *group;             /* (ro) innermost taskgroup, NULL for none */
    par_deptable *deps;           /* (owner) dependency table, created on first use */
    int final;                    /* (ro) descendants run undeferred */
};

/* Per-member slot of a team, on its own cache line. */
typedef struct par_member {
    _Alignas(PAR_LINE) struct par_deque *_Atomic dq; /* (atomic) for thieves */
    par_thread *_Atomic th;
    char reduce[2][256]; /* (owner writes, all read after a barrier) */
} par_member;

/* One worksharing loop in flight: the shared iteration counter of a
 * dynamic or guided loop, reset by the last member to leave it. */
typedef struct par_ws {
    _Alignas(PAR_LINE) _Atomic uint64_t gen; /* construct number it serves */
    _Atomic uint64_t next;                   /* iterations handed out (loops.c) */
    _Atomic unsigned done;                   /* members finished with it */
} par_ws;

struct par_team {
    up_pool *pool;         /* (ro) */
    up_region_fn fn;       /* (ro) */
    void *ctx;             /* (ro) */
    unsigned requested;    /* (ro) */
    unsigned level;        /* (ro) nesting depth */
    _Atomic unsigned refs; /* (atomic) master + member tasks not yet returned */
    /* Gathering: state = (closed << 31) | joined; members claim an index
     * with a CAS while it is open, the master closes it. */
    _Atomic uint32_t state;
    _Atomic unsigned size; /* (atomic) final team size, set when closed */
    _Atomic int running;   /* (atomic) 1 once members may start */
    _Atomic int abandoned; /* (atomic) set before running: members leave at once */
    _Atomic unsigned left; /* (atomic) members done with the region */
    par_member *members;   /* (ro) requested slots */
    _Alignas(PAR_LINE) _Atomic unsigned bar_count;
    _Atomic unsigned bar_gen;
    _Alignas(PAR_LINE) _Atomic uint64_t single_next;
    par_ws ws[PAR_WS_SLOTS];
    /* Tasks with a priority: a small heap under a lock (priority is a hint). */
    _Alignas(PAR_LINE) pthread_mutex_t urgent_lock;
    _Atomic unsigned urgent_n;
    struct {
        int prio;
        par_task t;
    } urgent[64]; /* (lock urgent_lock) */
};

/* What a thread is doing in the layer: its team membership and frame, saved
 * and restored around nested regions. */
typedef struct par_ctx {
    par_team *team;
    unsigned member;
    unsigned size; /* the team's final size (0 outside a region) */
    par_frame *frame;
    struct par_deque *dq;
    uint64_t ws_count, single_count, reduce_count;
} par_ctx;

struct par_thread {
    par_ctx c;
    unsigned level;
    unsigned help_depth; /* tasks run on top of a waiting frame */
    uint32_t rng;
    struct par_deque *dqs[PAR_MAX_LEVELS]; /* one deque per nesting level, kept */
    par_node *free_nodes;                  /* recycled dependency nodes */
    par_deptable *free_tables;
};

par_thread *par_self(void); /* creates the thread's context on first use */
extern _Thread_local par_thread *par_tls;

/* tasks.c */
void par_run_task(par_thread *th, par_task *t);
int par_find_task(par_thread *th, par_task *out, int64_t mark);
void par_run_helping(par_thread *th, par_task *t);
struct par_deque *par_level_deque(par_thread *th, unsigned level);
void par_wait_children(par_thread *th, par_frame *f);
void par_join(par_thread *th, par_frame *f);
void par_push_ready(par_thread *th, par_task *t);
void par_relax(unsigned *spins);
/* deps.c */
int par_deps_create(par_thread *th, par_task *t, const up_dep *deps, size_t ndeps);
void par_deps_complete(par_thread *th, par_node *n);
void par_deps_free(par_thread *th, par_frame *f);
void par_deps_thread_exit(par_thread *th);
/* team.c */
void par_barrier(par_thread *th);

/* Does a task created now on th, in frame f, go to the deque (deferred)?
 * Not in a team of one or without a deque, and not below a final task:
 * there OpenMP runs it at once. f is read only inside a team, where the
 * thread always has a frame. */
static inline int par_defers(const par_thread *th, const par_frame *f)
{
    return th->c.size > 1 && th->c.dq && !f->final;
}

#endif
