/* Internal structures of the pool, shared by the files of runtime/src.
 * Each shared field is tagged with who may touch it:
 *   (ro)     read-only after create;
 *   (atomic) any thread, through atomic.h;
 *   (owner)  only the worker that owns the structure;
 *   (lock X) only while holding mutex X. */
#ifndef UP_POOL_INTERNAL_H
#define UP_POOL_INTERNAL_H

#include <pthread.h>
#include <stdio.h>

#include "atomic.h"
#include "debug.h"
#include "deque.h"
#include "fiber.h"
#include "mpmc.h"
#include "os.h"
#include "park.h"
#include "stack_pool.h"
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
    unsigned cede_tasks;       /* (owner) tasks since it last asked whether to cede */
    uint64_t cede_at;          /* (owner) when it last asked; 0: since it looked for work */
    _Atomic uint64_t cedes;    /* (atomic, owner writes) times it stood aside (cede.c) */
    unsigned omp_last;         /* (owner) the OpenMP team size it last set (omp_share.c) */
    unsigned omp_default;      /* (owner) the runtime's own default; 0: not read yet */
    /* The monitor's last reading of this thread's times (monitor only). */
    uint32_t mon_id;
    uint64_t mon_at, mon_run, mon_wait, mon_parks, mon_cedes;
    uint32_t rng; /* (owner) victim selection */
    /* Parked tasks (park_task.c): the fiber running this worker's loop,
     * the fiber running on this worker now (a resumed task's, or the
     * loop's; NULL when the loop runs on the thread's own stack and
     * nothing may park), the thread's own context and a few stacks. */
    struct up__tfiber *loop; /* (owner) */
    struct up__tfiber *cur;  /* (owner) */
    up__fiber *thread_ctx;   /* (owner) */
    up__stack_cache stacks;  /* (owner) */
    /* When this worker last left queued tasks for want of a stack (0: it
     * is not short; up__park_room), and how long it has looked for one
     * since the last stack came back to it, each gap between two looks
     * counted at most SHORT_GAP_MAX_NS (park_task.c). */
    uint64_t stack_short_last;   /* (owner) */
    uint64_t stack_short_looked; /* (owner) */
    unsigned turns;              /* (owner) released tasks first on odd turns (find_work) */
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

struct up__shard {
    up__mpmc q;
    UP_ALIGNED_LINE _Atomic unsigned nworkers; /* (atomic) reserved worker count */
    _Atomic unsigned in_region;                /* (atomic) workers inside a blocking region */
    unsigned index;                            /* (ro) */
    unsigned ncpus;                            /* (ro) CPUs the plan gave this shard */
    unsigned nslots;                           /* (ro) slot table size: shard_max_workers */
    up__worker **slots;                        /* (atomic elements) worker structs, lazily */
    _Atomic unsigned slots_used;               /* (atomic) high-water mark of slots */
    pthread_mutex_t slot_lock;                 /* spawning and joining */
    pthread_mutex_t idle_lock;
    up__worker *idle_top;     /* (lock idle_lock) parked workers, LIFO */
    _Atomic unsigned nparked; /* (written under idle_lock) length of that list */
    /* Submitters blocked on a full queue: one of them sets space_armed
     * before sleeping, and the first consumer that sees it set with the
     * queue drained to half clears it and wakes one of them; a woken one
     * that queued its task wakes the next while room remains (submit.c).
     * space_sleepers counts the submitters asleep on space. */
    UP_ALIGNED_LINE _Atomic int space_armed;
    _Atomic unsigned space_sleepers;
    up__event space;
    /* Tasks run by submitters while the queue was full (counted after
     * each returns). */
    UP_ALIGNED_LINE _Atomic uint64_t helped;
    _Atomic uint64_t direct; /* accepted by running them on the submitter */
    /* Submitters running their own tasks while the queue has a backlog
     * (cede.c): per slot, when its lease lapses (ns, monotonic); and the
     * workers standing aside for them now. */
    UP_ALIGNED_LINE _Atomic uint64_t lease[UP__LEASES];
    UP_ALIGNED_LINE _Atomic unsigned ceded;
    _Atomic uint64_t task_ns; /* the workers' recent time per task; 0: not known */
    _Atomic int parking;      /* a task parked since a worker's last CEDE_EVERY returned */
    /* Whether a backlog's submits run inline, and the measurement that
     * decides it (cede.c): read by every submitter, changed per window. */
    UP_ALIGNED_LINE _Atomic int inline_way; /* (atomic) UP__WAY_* */
    _Atomic uint64_t ctl_next; /* (atomic) when the next step is due; 0: never measured */
    _Atomic int ctl_lock;      /* (atomic) held by the submitter taking the step */
    _Atomic uint64_t ctl_seen; /* (atomic) when submits were last seen, to GAP_NS */
    _Atomic int ctl_gap;       /* (atomic) a pause since the window started */
    int ctl_phase, ctl_counting, ctl_last; /* (ctl_lock) the rest of the measurement */
    unsigned ctl_hold, ctl_left;
    uint64_t ctl_start, ctl_executed, ctl_inlined;
    double ctl_inline_rate;
    up__inline_count inline_counts[UP__LEASES];
    /* The monitor's view of progress. */
    uint64_t mon_head, mon_tail;    /* (monitor thread only) positions at its last look */
    uint64_t mon_deque_taken;       /* (monitor thread only) deque tasks taken, at its last look */
    uint64_t mon_executed;          /* (monitor thread only) tasks finished, at its last look */
    uint64_t mon_finished_at;       /* (monitor thread only) when that count last moved */
    unsigned mon_probe_next;        /* (monitor thread only) slot its next probe starts at */
    unsigned mon_backoff, mon_skip; /* (monitor thread only) looks to skip after runnable ones */
    uint64_t mon_moved_at;          /* (monitor thread only) when the backlog last made progress */
    /* (monitor thread only) when a worker was last added for waits on the
     * process's own locks (0: none since the backlog began) and the tasks
     * finished then (monitor.c). */
    uint64_t mon_own_at, mon_own_executed;
};

/* One word of the work map (workmap.h), alone on its cache line. */
typedef struct up__work_word {
    UP_ALIGNED_LINE _Atomic uint64_t bits;
} up__work_word;

/* Shards an idle worker probes directly, nearest first; a pool with more
 * keeps a work map for the others (workmap.h). */
#define UP__NEAR_SHARDS 8

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
    /* up_pool_reserve calls running now, and the time the last one
     * returned (atomic; spawn.c: up__reserve_holds). */
    _Atomic unsigned reserving;
    _Atomic uint64_t reserve_end_ns;
    /* Region members parked in the layer's waits (waiter.c): how many now,
     * and how many times (atomic, counted in up_stats.parked and parks). */
    UP_ALIGNED_LINE _Atomic unsigned layer_parked;
    _Atomic uint64_t layer_parks;
    /* Tasks waiting on events and timers (wait.c, wait_internal.h):
     * created on first use, freed by destroy. */
    struct up__wait *_Atomic wait; /* (atomic) */
    /* The task fibers' stacks (park_task.c): set up by the first worker
     * (stacks_state 0: not yet, 1: being set up, 2: ready), freed by
     * destroy; stacks is NULL until ready. Embedded, so that no worker
     * start allocates. */
    struct up__stack_pool *_Atomic stacks; /* (atomic) */
    _Atomic int stacks_state;              /* (atomic) */
    _Atomic int parked_ever;               /* (atomic) a task of the pool has parked */
    up__stack_pool stacks_mem;             /* (once, then its own lock) */

    pthread_mutex_t mu;      /* protects live and the cv waits */
    pthread_mutex_t join_mu; /* serializes the final joins of concurrent stoppers */
    pthread_cond_t cv;
    unsigned live; /* (lock mu) worker threads inside worker_main */

    up__parker monitor_parker;
    pthread_t monitor;
    int monitor_started;

    /* The lends in progress (omp_share.c; written under lend_mu), on a
     * line of their own: every worker reads it before each look. */
    UP_ALIGNED_LINE _Atomic unsigned lent;
    pthread_mutex_t lend_mu;
    pthread_cond_t lend_cv;
};

/* UP_DEBUG: the fields of an idle word v each within the most workers
 * the pool can have. A count taken below zero borrows from the field above
 * it and shows as a value near UP__IDLE_FIELD_MAX, far above any cap. Any
 * load of the word may be checked: no field is ever transiently negative
 * (each decrement follows its own increment). */
static inline int up__idle_sane(const up_pool *p, uint64_t v)
{
    uint64_t cap = (uint64_t)p->nshards * p->cfg.shard_max_workers;
    if (p->cfg.max_workers && p->cfg.max_workers < cap)
        cap = p->cfg.max_workers;
    if (cap > UP__IDLE_FIELD_MAX)
        cap = UP__IDLE_FIELD_MAX;
    return (v >> (3 * UP__IDLE_BITS)) == 0 && UP__IDLE_PARKED(v) <= cap &&
           UP__IDLE_STARTING(v) <= cap && UP__IDLE_SPINNING(v) <= cap;
}

/* omp_share.c: set up and tear down with the pool; before a task, the
 * OpenMP team size for w's thread; the wait of a worker while the pool's
 * CPUs are lent (up_omp_lend). */
void up__omp_share_init(up_pool *p);
void up__omp_share_destroy(up_pool *p);
void up__omp_share_update(up__worker *w);
void up__omp_run_shared(up_pool *p, up__worker *w, up__shard *s, const up__task *t);
void up__lend_wait(up__worker *w);

/* Thread-local context: the worker running on this thread (NULL for other
 * threads) and the pool whose task this thread is running right now. */
extern _Thread_local up__worker *up__tls_worker;
extern _Thread_local up_pool *up__tls_running;

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
extern _Thread_local up__task_tls up__tls_task;
/* &up__tls_task of the calling thread, looked up anew at every call: code
 * that may have parked since its last look uses this, never an address
 * the compiler computed before the park (on the old thread). */
up__task_tls *up__task_tls_here(void);

/* worker.c: the loop */
void *up__worker_main(void *arg);
struct up__tfiber;
/* The worker loop, running on the fiber me (NULL: the thread's own stack). */
void up__worker_loop(up__worker *w, struct up__tfiber *me);
/* park_task.c: a task fiber (the fields the loop reads). */
typedef struct up__tfiber {
    up__fiber f;
    up__stack *stack;
    struct up_pool *pool; /* (ro) */
    up__fiber *resumer;   /* (owner: the code on the fiber) NULL until first resumed */
} up__tfiber;
/* Runs w's loop on a loop fiber (or on the thread's stack when none can
 * be had) and returns when the worker exits. */
void up__park_run_worker(up__worker *w);
/* The loop frames on me after a task returned that was resumed elsewhere:
 * counts it for the calling thread and leaves the fiber for good. */
_Noreturn void up__park_loop_stale(struct up_pool *p, up__tfiber *me);
/* Destroy: frees the pool's task stacks (every worker has exited). */
void up__park_free_pool(struct up_pool *p);
/* Whether w may start a new task (a queued one; not one of its own
 * deque's or a released one): 1 when a task that parks would find a
 * stack, or the pool's tasks never park (park_task.c says why). */
int up__park_room_slow(up__worker *w);
static inline int up__park_room(up__worker *w)
{
    if (w->stacks.n != 0) {
        /* A stack is here (one came back, or never left): any shortage
         * has ended, and the 250 ms rule times from the next one. */
        if (w->stack_short_last)
            w->stack_short_last = 0;
        return 1;
    }
    return !up__load_relaxed(&w->pool->parked_ever) || up__park_room_slow(w);
}
/* A worker found no task it could start while up__park_room said no: a short
 * sleep before it looks again. */
void up__park_room_wait(void);
int up__take_from_shard(up_pool *p, up__shard *s, up__task *out);
int up__help_once(up_pool *p);
/* Whether the calling thread should help p now: a worker of p always (it
 * runs in its own place); any other thread only while its home shard has
 * a CPU that no running worker holds: fewer busy workers than CPUs, or
 * busy ones the OS shows blocked (worker.c). */
int up__room_to_help(up_pool *p);
/* idle.c: searching, parking, waking, retirement */
/* up__park's answers: woken, or timed out after idle_timeout_ns, or after
 * the shorter extra_idle_timeout_ns of a worker beyond one per CPU. */
enum { UP__PARK_AWAKE, UP__PARK_TIMEOUT, UP__PARK_TIMEOUT_EXTRA };
int up__park(up__worker *w);
/* Retires w unless that would leave its shard fewer than `keep` workers
 * (never fewer than the floor); 1 when w must exit. */
int up__try_retire(up__worker *w, unsigned keep);
void up__stop_searching(up__worker *w);
int up__wake_one(up_pool *p, unsigned shard); /* 1 when it woke one */
/* As up__wake_one, but the longest parked worker of a shard: one that
 * parked after a caller's look at the idle word is woken only once the
 * workers parked before it are gone (up_pool_reserve). */
int up__wake_oldest(up_pool *p, unsigned shard);
void up__wake_all(up_pool *p);
/* spawn.c: caps, threads, joins */
unsigned up__reserve_worker(up_pool *p, up__shard *s, unsigned limit);
int up__spawn(up_pool *p, up__shard *s, int beyond_cpus);
/* 1 while no worker may retire: a reserve runs or returned less than an
 * idle timeout ago. Called by a retiring worker after it gave up its
 * searcher count (idle.c). */
int up__reserve_holds(up_pool *p);
void up__free_worker(up__worker *w);
void up__join_exited(up_pool *p);
/* cede.c: submitters that run their own tasks, workers that make room.
 * up__inline_try runs t on the calling submitter (1) when s has a backlog
 * of short tasks and running them inline measured faster, counting it in
 * slot's stripe; the worker loop calls up__cede_check after every task and
 * up__cede_searching when it starts looking for work. */
int up__inline_try(up_pool *p, up__shard *s, unsigned slot, const up__task *t);
void up__cede_check(up__worker *w);
void up__cede_searching(up__worker *w);
/* A task running on w is about to wait (event.c), or w resumes a parked
 * one (park_task.c). */
void up__cede_note_wait(up__worker *w);
/* Submitters of s running their tasks inline now (their live leases). */
unsigned up__cede_leases(up__shard *s);
/* pool.c: tasks the shard's runners have finished (workers, helpers). */
uint64_t up__shard_executed(up__shard *s);
/* submit.c */
unsigned up__home_shard(const up_pool *p);
/* After tasks became visible somewhere other than a queue or a deque (a
 * released chain of waiting tasks, wait.c): the same step as a submit's
 * after publishing (wake one if nobody searches, else grow or poke). */
void up__publish_wake(up_pool *p, unsigned shard);
/* blocking.c: after a publish found no worker to wake and the shard at
 * one worker per CPU, starts one beyond that when workers of s are inside
 * blocking regions and fewer than one per CPU are left outside; 1 when it
 * started one. Closes a region the task left open (the worker loop). */
int up__region_spawn(up_pool *p, up__shard *s);
void up__region_close(up__worker *w);
/* monitor.c */
int up__monitor_start(up_pool *p);
void up__monitor_poke(up_pool *p);
void up__monitor_join(up_pool *p);
/* error.c: up_last_error()'s text, at most UP__ERROR_MAX bytes with its
 * terminator (long enough for a backend error that lists every folder it
 * tried). */
#define UP__ERROR_MAX 1024
void up__set_error(const char *fmt, ...);
/* config.c */
void up__print_config(const up_config *cfg, const up__plan *plan, FILE *f);

/* A statistic only its owner writes: a plain increment, published
 * relaxed for readers that sum it. */
static inline void up__count_owner(_Atomic uint64_t *c)
{
    up__store_relaxed(c, up__load_relaxed(c) + 1);
}

/* The CPUs a shard's workers count as theirs: its plan's, and 1 for a
 * shard that got none (more shards than CPUs). */
static inline unsigned up__shard_cpus(const up__shard *s) { return s->ncpus ? s->ncpus : 1; }

/* The busy workers of s: reserved, neither parked nor standing aside
 * (cede.c); a searching worker counts, as it is about to take a task. */
static inline unsigned up__shard_busy(up__shard *s)
{
    unsigned n = up__load_relaxed(&s->nworkers);
    unsigned idle = up__load_relaxed(&s->nparked) + up__load_relaxed(&s->ceded);
    return n > idle ? n - idle : 0;
}

/* The worker in slot i of shard s, or NULL while the slot was never used. */
static inline up__worker *up__slot_worker(up__shard *s, unsigned i)
{
    return (up__worker *)up__load_acquire((_Atomic(up__worker *) *)&s->slots[i]);
}

/* Runs one task on behalf of pool p on this thread, keeping the thread's
 * "running for pool" marker right across nesting. */
static inline void up__run_task(up_pool *p, const up__task *t)
{
    up_pool *saved = up__tls_running;
    up__tls_running = p;
    up__task_run(t);
    up__tls_running = saved;
}

/* pool.c: wakes a waiting stop, which compares executed with submitted. */
void up__notify_stopper(up_pool *p);

/* Accepts a task that the calling thread (not a worker) will run itself,
 * counting it in `submitted`; 0 when the pool is stopping (nothing
 * counted). Counted first, then the stop looked at, both sequentially
 * consistent: a stop sets stopping before it compares the counts
 * (all_executed in pool.c), so either this thread sees the stop and
 * backs out, waking the stopper that may have seen the count, or the
 * stopper sees the count and waits for the task to finish. Checking the
 * stop first would let a waiting stop return, and destroy free the pool,
 * while the task is still to run. */
static inline int up__accept_own(up_pool *p, _Atomic uint64_t *submitted)
{
    up__fetch_add_seqcst(submitted, 1);
    if (!up__load_seqcst(&p->stopping))
        return 1;
    up__fetch_sub_seqcst(submitted, 1);
    up__notify_stopper(p);
    return 0;
}

/* Counting executed tasks: the one place, for every runner.
 *
 * The invariant: a stats snapshot never shows more executed than
 * submitted, and a waiting stop (executed == submitted, no worker left)
 * never returns while an accepted task is still running. Every task is
 * counted submitted before any thread can take it (the queue's tail CAS,
 * a worker's pushed count before its deque push, a shard's direct count
 * before it runs inline), and counted executed here, after it returned,
 * with a release. up_pool_stats loads every executed counter with acquire
 * first and every submitted counter after. A reader whose acquire load
 * sees an executed count therefore synchronizes with this release, which
 * follows (in the runner) the take of the task, which synchronizes with
 * its publication, which follows its submitted count: the reader's later
 * load of that submitted counter sees it (coherence along happens-before).
 * A relaxed executed count would let a reader see the task executed but
 * not yet submitted.
 *
 * w is the calling thread's worker when it is one of p's workers: its own
 * counter, written only by it, so a plain increment published by a
 * release store. Any other thread (a helping submitter, a group waiter, a
 * stop draining on its caller's thread) adds to the shard s the tasks came
 * from, a counter several threads share, with an RMW; it also wakes a
 * waiting stop, which otherwise sees the count only at its next slice.
 * Callers always pass the shard, a worker its own: then no path of the
 * inlined function forms &s->helped from a null s (gcc's
 * -Wstringop-overflow warns on that path even where it cannot run). */
static inline void up__count_executed(up_pool *p, up__worker *w, up__shard *s, uint64_t n)
{
    if (w) {
        up__store_release(&w->executed, up__load_relaxed(&w->executed) + n);
        return;
    }
    up__fetch_add_acq_rel(&s->helped, n);
    if (up__load_relaxed(&p->stopping))
        up__notify_stopper(p);
}

/* Runs a task of p taken from shard s, or accepted there, on this thread
 * (w: its worker, or NULL). In a process with OpenMP, the task's OpenMP
 * team size is set first (omp_share.c). */
static inline void up__run_shared(up_pool *p, up__worker *w, up__shard *s, const up__task *t)
{
    if (__builtin_expect(p->omp_set != NULL, 0))
        up__omp_run_shared(p, w, s, t);
    else
        up__run_task(p, t);
}

/* The one path that runs a queued task of p and counts it (see above). */
static inline void up__run_counted(up_pool *p, up__worker *w, up__shard *s, const up__task *t)
{
    up__run_shared(p, w, s, t);
    up__count_executed(p, w, s, 1);
}

#endif
