/* The types of the pool, shared by the files of runtime/src: the structs
 * of the pool, its shards and workers, and the constants of their layout.
 * No prototypes: those are in pool_internal.h, which includes this file.
 * The fields of a shard or a worker that one file owns sit in a sub-struct
 * named after that file (s->cede, s->mon, w->park), of a type named after
 * both (up__shard_cede), placed where those fields were, so that every
 * field keeps its cache line. The worker's three cede.c and two
 * omp_share.c fields stay loose (see there).
 * Each shared field is tagged with who may touch it:
 *   (ro)     read-only after create;
 *   (atomic) any thread, through atomic.h;
 *   (owner)  only the worker that owns the structure;
 *   (lock X) only while holding mutex X. */
#ifndef UP_TYPES_H
#define UP_TYPES_H

#include <pthread.h>

#include "atomic.h"
#include "deque.h"
#include "fiber.h"
#include "mpmc.h"
#include "os/os.h"
#include "os/park.h"
#include "os/stack_pool.h"
#include "topo.h"

/* The pool-wide idle word packs three counts of UP__IDLE_BITS bits, so
 * that one load tells a submitter whether anyone is looking for work and
 * up_pool_reserve how many workers are free: searching workers
 * (spinning), workers on their way to their loop (starting: a new thread,
 * perhaps still in the start hook, or a worker whose task a layer ended
 * early, up__return_expected; nobody counts on them to look yet, but
 * up_pool_reserve and the monitor count on them to come) and parked
 * workers. A worker leaves starting for searching with one
 * read-modify-write, so no load sees it in both or in neither. Each count
 * is at most the pool's workers, which up__reserve_worker keeps at or
 * below UP__IDLE_FIELD_MAX, so no field carries into the next. */
#define UP__IDLE_BITS        21
#define UP__IDLE_FIELD_MAX   ((1u << UP__IDLE_BITS) - 1)
#define UP__IDLE_PARK_ONE    UINT64_C(1)
#define UP__IDLE_START_ONE   (UINT64_C(1) << UP__IDLE_BITS)
#define UP__IDLE_SPIN_ONE    (UINT64_C(1) << (2 * UP__IDLE_BITS))
#define UP__IDLE_PARKED(v)   ((uint32_t)((v)&UP__IDLE_FIELD_MAX))
#define UP__IDLE_STARTING(v) ((uint32_t)(((v) >> UP__IDLE_BITS) & UP__IDLE_FIELD_MAX))
#define UP__IDLE_SPINNING(v) ((uint32_t)(((v) >> (2 * UP__IDLE_BITS)) & UP__IDLE_FIELD_MAX))

enum { UP__SLOT_FREE = 0, UP__SLOT_RUNNING = 1, UP__SLOT_EXITED = 2 };

typedef struct up__worker up__worker;
typedef struct up__shard up__shard;

/* park_task.c: a task fiber (the fields the loop reads). */
typedef struct up__tfiber {
    up__fiber f;
    up__stack *stack;
    struct up_pool *pool; /* (ro) */
    up__fiber *resumer;   /* (owner: the code on the fiber) NULL until first resumed */
} up__tfiber;

/* A worker's part in park_task.c: parked tasks. */
typedef struct up__worker_park {
    /* The fiber running this worker's loop, the fiber running on this
     * worker now (a resumed task's, or the loop's; NULL when the loop runs
     * on the thread's own stack and nothing may park), the thread's own
     * context and a few stacks. */
    struct up__tfiber *loop; /* (owner) */
    struct up__tfiber *cur;  /* (owner) */
    up__fiber *thread_ctx;   /* (owner) */
    up__stack_cache stacks;  /* (owner) */
    /* When this worker last left queued tasks for want of a stack (0: it
     * is not short; up__park_room), how long it has looked for one since
     * a stack last came back to it or to the pool, each gap between two
     * looks counted at most SHORT_GAP_MAX_NS, and the pool's stacks_back
     * at its last look. */
    uint64_t stack_short_last;   /* (owner) */
    uint64_t stack_short_looked; /* (owner) */
    uint64_t stack_back_seen;    /* (owner) */
    /* 1 while its loop runs on the thread's own stack for want of one for
     * a fiber: it moves onto a fiber once a stack is in its cache
     * (up__park_run_worker, worker.c FIND_FIBER). */
    unsigned char fiberless; /* (owner) */
} up__worker_park;

/* A worker's part in monitor.c: the monitor's last reading of this
 * thread's times (monitor only). */
typedef struct up__worker_mon {
    uint32_t id;
    uint64_t at, run, wait, parks, cedes;
} up__worker_mon;

struct up__worker {
    up__deque dq;          /* owner pushes/pops; thieves steal */
    up__parker parker;     /* where this worker sleeps when idle */
    struct up_pool *pool;  /* (ro) */
    unsigned shard;        /* (ro) */
    unsigned slot;         /* (ro) index in the shard's slot table */
    unsigned id;           /* (lock shard->slot_lock) incarnation number, for hooks */
    pthread_t thread;      /* (lock shard->slot_lock) */
    int joinable;          /* (lock shard->slot_lock) a thread to join before reuse */
    _Atomic int state;     /* (atomic) UP__SLOT_* */
    up__worker *idle_next; /* (lock shard->idle_lock) */
    int listed;            /* (lock shard->idle_lock) on the shard's idle list */
    void *local;           /* (owner) what the start hook returned */
    /* For the monitor's question "is this worker blocked?" (monitor.c):
     * the thread as the OS knows it, whether the worker is looking for
     * work (searching or parked, not in a task), and how deep it is in
     * up_blocking_begin regions (blocking.c). Written by the owner. */
    up__os_thread os_thread;   /* (atomic) */
    _Atomic int looking;       /* (atomic) */
    _Atomic unsigned blocking; /* (atomic) */
    int in_loop;               /* (owner) this thread's loop has started once */
    int returning;             /* (owner) counted starting until its loop looks again (waiter.c) */
    /* cede.c's and omp_share.c's fields stay loose: a sub-struct of
     * cede.c's would start 4 bytes later (aligned for cede_at) and move
     * every field after it; omp_share.c has only two. */
    unsigned cede_tasks;    /* (owner) tasks since it last asked whether to cede */
    uint64_t cede_at;       /* (owner) when it last asked; 0: since it looked for work */
    _Atomic uint64_t cedes; /* (atomic, owner writes) times it stood aside (cede.c) */
    unsigned omp_last;      /* (owner) the OpenMP team size it last set (omp_share.c) */
    unsigned omp_default;   /* (owner) the runtime's own default; 0: not read yet */
    up__worker_mon mon;     /* (monitor thread only) monitor.c */
    uint32_t rng;           /* (owner) victim selection */
    up__worker_park park;   /* (owner) park_task.c */
    unsigned turns;         /* (owner) released tasks first on odd turns (find_work) */
    /* Statistics: written by the owner only (relaxed), summed by readers. */
    UP_ALIGNED_LINE _Atomic uint64_t executed;
    _Atomic uint64_t steals;
    _Atomic uint64_t parks;
    _Atomic uint64_t pushed; /* nested submits that landed in this deque */
};

/* Lease slots and count stripes per shard, of submitters that run their
 * own tasks (cede.c). */
#define UP__LEASES 8

/* How a shard's submitters treat a backlog (cede.c): run their own tasks
 * inline, or queue them. */
enum { UP__WAY_INLINE, UP__WAY_QUEUE };

/* Tasks a submitter accepted by running them itself, counted on the
 * slot's own line so that submitters on different CPUs do not share one. */
typedef struct up__inline_count {
    UP_ALIGNED_LINE _Atomic uint64_t submitted;
    _Atomic uint64_t executed;
} up__inline_count;

/* A shard's part in submit.c: its submitters blocked on a full queue. One
 * of them sets armed before sleeping, and the first consumer that sees it
 * set with the queue drained to half clears it and wakes one of them; a
 * woken one that queued its task wakes the next while room remains.
 * sleepers counts the submitters asleep on the event. */
typedef struct up__shard_space {
    UP_ALIGNED_LINE _Atomic int armed;
    _Atomic unsigned sleepers;
    up__event event;
} up__shard_space;

/* A shard's part in cede.c: its submitters that run their own tasks, and
 * the workers that stand aside for them. */
typedef struct up__shard_cede {
    /* Submitters running their own tasks while the queue has a backlog:
     * per slot, when its lease lapses (ns, monotonic); and the workers
     * standing aside for them now. */
    UP_ALIGNED_LINE _Atomic uint64_t lease[UP__LEASES];
    UP_ALIGNED_LINE _Atomic unsigned ceded;
    _Atomic uint64_t task_ns; /* the workers' recent time per task; 0: not known */
    _Atomic int parking;      /* a task parked since a worker's last CEDE_EVERY returned */
    /* Whether a backlog's submits run inline, and the measurement that
     * decides it: read by every submitter, changed per window. */
    UP_ALIGNED_LINE _Atomic int inline_way; /* (atomic) UP__WAY_* */
    _Atomic uint64_t next;     /* (atomic) when the next step is due; 0: never measured */
    _Atomic int lock;          /* (atomic) held by the submitter taking the step */
    _Atomic uint64_t seen;     /* (atomic) when submits were last seen, to GAP_NS */
    _Atomic int gap;           /* (atomic) a pause since the window started */
    int phase, counting, last; /* (cede.lock) the rest of the measurement */
    unsigned hold, left;
    uint64_t start, executed, inlined;
    double inline_rate;
    up__inline_count inline_counts[UP__LEASES];
} up__shard_cede;

/* A shard's part in monitor.c: the monitor's view of its progress. */
typedef struct up__shard_mon {
    uint64_t head, tail;    /* (monitor thread only) positions at its last look */
    uint64_t deque_taken;   /* (monitor thread only) deque tasks taken, at its last look */
    uint64_t executed;      /* (monitor thread only) tasks finished, at its last look */
    uint64_t finished_at;   /* (monitor thread only) when that count last moved */
    unsigned probe_next;    /* (monitor thread only) slot its next probe starts at */
    unsigned backoff, skip; /* (monitor thread only) looks to skip after runnable ones */
    uint64_t moved_at;      /* (monitor thread only) when the backlog last made progress */
    /* (monitor thread only) when a worker was last added for waits on the
     * process's own locks (0: none since the backlog began) and the tasks
     * finished then. */
    uint64_t own_at, own_executed;
} up__shard_mon;

struct up__shard {
    up__mpmc q;
    UP_ALIGNED_LINE _Atomic unsigned nworkers; /* (atomic) reserved worker count */
    _Atomic unsigned in_region;                /* (atomic) workers inside a blocking region */
    unsigned index;                            /* (ro) */
    unsigned ncpus;                            /* (ro) CPUs the plan gave this shard */
    unsigned nslots;                           /* (ro) slot table size: shard_max_workers */
    _Atomic(up__worker *) *slots;              /* worker structs, made lazily */
    _Atomic unsigned slots_used;               /* (atomic) high-water mark of slots */
    pthread_mutex_t slot_lock;                 /* spawning and joining */
    pthread_mutex_t idle_lock;
    up__worker *idle_top;     /* (lock idle_lock) parked workers, LIFO */
    _Atomic unsigned nparked; /* (written under idle_lock) length of that list */
    up__shard_space space;    /* submit.c */
    /* Tasks run by submitters while the queue was full (counted after
     * each returns). */
    UP_ALIGNED_LINE _Atomic uint64_t helped;
    _Atomic uint64_t direct; /* accepted by running them on the submitter */
    up__shard_cede cede;     /* cede.c */
    up__shard_mon mon;       /* (monitor thread only) monitor.c */
};

/* One word of the work map (workmap.h), alone on its cache line. */
typedef struct up__work_word {
    UP_ALIGNED_LINE _Atomic uint64_t bits;
} up__work_word;

/* Shards an idle worker probes directly, nearest first; a pool with more
 * keeps a work map for the others (workmap.h). */
#define UP__NEAR_SHARDS 8

/* The pool's part in spawn.c: up_pool_reserve calls running now, and
 * the time the last one returned (up__reserve_holds). */
typedef struct up__pool_reserve {
    _Atomic unsigned calls;  /* (atomic) */
    _Atomic uint64_t end_ns; /* (atomic) */
} up__pool_reserve;

/* The pool's part in park_task.c: the task fibers' stacks, set up by the
 * first worker (stacks_state 0: not yet, 1: being set up, 2: ready), freed
 * by destroy; stacks is NULL until ready. Embedded, so that no worker
 * start allocates. */
typedef struct up__pool_park {
    struct up__stack_pool *_Atomic stacks; /* (atomic) */
    _Atomic int stacks_state;              /* (atomic) */
    _Atomic int parked_ever;               /* (atomic) a task of the pool has parked */
    /* Odd while a worker short of a stack watches for one coming back;
     * a finished parked task's stack moves it on (up__park_room_slow).
     * Beside stacks, which the same free reads. */
    _Atomic uint64_t stacks_back; /* (atomic) */
    up__stack_pool stacks_mem;    /* (once, then its own lock) */
} up__pool_park;

/* The pool's part in monitor.c: its thread and the parker it sleeps on. */
typedef struct up__pool_mon {
    up__parker parker;
    pthread_t thread;
    int started; /* (the creating and the stopping thread) */
} up__pool_mon;

/* The pool's part in omp_share.c: the lends in progress (written under
 * mu), on a line of their own, since every worker reads it before each
 * look, and what a worker waits on while the CPUs are lent. */
typedef struct up__pool_lend {
    UP_ALIGNED_LINE _Atomic unsigned count;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} up__pool_lend;

struct up_pool {
    up_config cfg; /* (ro) */
    up__plan plan; /* (ro) */
    unsigned nshards;
    up__shard *shards;
    int spread_by_thread;     /* (ro) some shard has no CPU: pick shards per thread */
    int use_map;              /* (ro) nshards > UP__NEAR_SHARDS: work_top/work_bits in use */
    up__work_word *work_bits; /* (atomic elements) bit s: shard s may have work */
    /* Sharing with OpenMP (omp_share.c): the runtime's functions when
     * cfg.omp_share found one in the process, NULL otherwise. (ro) Among
     * the read-only fields: every task run reads omp_set, and a line that
     * others write (the monitor's parker, poked by submitters) would make
     * that read a miss. */
    void (*omp_set)(int);
    int (*omp_get)(void);

    UP_ALIGNED_LINE _Atomic uint64_t work_top; /* (atomic) bit w: work_bits[w] may be non-zero */

    UP_ALIGNED_LINE _Atomic uint64_t idle;    /* (atomic) see UP__IDLE_* */
    UP_ALIGNED_LINE _Atomic int stopping;     /* (atomic) set once every queue is closed */
    _Atomic int stop_requested;               /* (atomic) the first stop call owns the stop */
    _Atomic int monitor_parked;               /* (atomic) 1 while the monitor sleeps untimed */
    UP_ALIGNED_LINE _Atomic unsigned workers; /* (atomic) reserved workers, all shards */
    _Atomic unsigned workers_peak;
    _Atomic uint64_t spawned, retired, overloads, spawn_failed, bind_failed, wakes;
    up__pool_reserve reserve; /* (atomic) spawn.c */
    /* Region members parked in the layer's waits (waiter.c): how many now,
     * and how many times (atomic, counted in up_stats.parked and parks). */
    UP_ALIGNED_LINE _Atomic unsigned layer_parked;
    _Atomic uint64_t layer_parks;
    /* Tasks waiting on events and timers (wait.c, wait_internal.h):
     * created on first use, freed by destroy. */
    struct up__wait *_Atomic wait; /* (atomic) */
    up__pool_park park;            /* park_task.c */

    pthread_mutex_t mu;      /* protects live and the cv waits */
    pthread_mutex_t join_mu; /* serializes the final joins of concurrent stoppers */
    pthread_cond_t cv;
    unsigned live; /* (lock mu) worker threads inside worker_main */

    up__pool_mon mon;   /* monitor.c (its parked flag is on the stopping line) */
    up__pool_lend lend; /* omp_share.c */
};

/* Thread-local state that belongs to the running task, not to its thread.
 * A task that parks may resume on another thread (fiber.h), so park_task.c
 * takes this state off the thread when the task parks (the thread's next
 * task starts with it zero, as between tasks) and gives it back on the
 * thread that resumes the task; the resumer keeps its own meanwhile. */
typedef struct up__task_tls {
    struct up__group_frame *group_frames; /* group.c: the group tasks running, innermost first */
    struct up_timer *timer;               /* timer.c: the timer whose run this is */
    int cancelled;                        /* wait.c: the task runs as released by a destroy */
} up__task_tls;

#endif
