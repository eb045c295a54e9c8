/* The functions the files of runtime/src share, grouped by the file that
 * defines them, then the inline helpers several of them use. The structs
 * and types are in types.h. */
#ifndef UP_POOL_INTERNAL_H
#define UP_POOL_INTERNAL_H

#include <stdio.h>

#include "debug.h"
#include "tls.h"
#include "types.h"

/* pool.c */
/* Tasks the shard's runners have finished (workers, helpers). */
uint64_t up__shard_executed(up__shard *s);
/* Wakes a waiting stop, which compares executed with submitted. */
void up__notify_stopper(up_pool *p);

/* submit.c */
unsigned up__home_shard(const up_pool *p);
/* After tasks became visible somewhere other than a queue or a deque (a
 * released chain of waiting tasks, wait.c): the same step as a submit's
 * after publishing (wake one if nobody searches, else grow or poke). */
void up__publish_wake(up_pool *p, unsigned shard);

/* worker.c: the loop, and the thread-local context */
/* Thread-local context: the worker running on this thread (NULL for other
 * threads) and the pool whose task this thread is running right now. */
extern _Thread_local up__worker *up__tls_worker UP__TLS_IE;
extern _Thread_local up_pool *up__tls_running UP__TLS_IE;
extern _Thread_local up__task_tls up__tls_task UP__TLS_IE;
/* &up__tls_task of the calling thread, looked up anew at every call: code
 * that may have parked since its last look uses this, never an address
 * the compiler computed before the park (on the old thread). */
up__task_tls *up__task_tls_here(void);
void *up__worker_main(void *arg);
/* The worker loop, running on the fiber me (NULL: the thread's own
 * stack); 1 when a loop on the thread's stack for want of a stack should
 * move onto a fiber now (worker.c), 0 when the worker leaves. */
int up__worker_loop(up__worker *w, struct up__tfiber *me);
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
/* up__spawn's answer when a cap leaves no room: positive, so never one of
 * the public codes, which callers may pass on; it is never passed on. */
#define UP__CAPPED 1
int up__spawn(up_pool *p, up__shard *s, int beyond_cpus);
/* Starts a worker in shard s when the pool has none; UP_OK once one is
 * counted, else why the OS refused it (submit.c). */
int up__spawn_first(up_pool *p, up__shard *s);
/* 1 while no worker may retire: a reserve runs or returned less than an
 * idle timeout ago. Called by a retiring worker after it gave up its
 * searcher count (idle.c). */
int up__reserve_holds(up_pool *p);
void up__free_worker(up__worker *w);
void up__join_exited(up_pool *p);

/* blocking.c */
/* After a publish found no worker to wake and the shard at one worker per
 * CPU, starts one beyond that when workers of s are inside blocking
 * regions and fewer than one per CPU are left outside; 1 when it started
 * one. Closes a region the task left open (the worker loop). */
int up__region_spawn(up_pool *p, up__shard *s);
void up__region_close(up__worker *w);

/* monitor.c */
int up__monitor_start(up_pool *p);
void up__monitor_poke(up_pool *p);
void up__monitor_join(up_pool *p);

/* cede.c */
/* Submitters that run their own tasks, workers that make room.
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

/* park_task.c */
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
/* For a loop on its thread's stack for want of a stack (w->park.fiberless):
 * 1 when a stack for its fiber is in w's cache, taken from the pool's if
 * none was (also where the pool's tasks never parked and up__park_room
 * takes none). */
int up__park_fiber_ready(up__worker *w);
static inline int up__park_room(up__worker *w)
{
    if (w->park.stacks.n != 0) {
        /* A stack is here (one came back, or never left): any shortage
         * has ended, and the 250 ms rule times from the next one. */
        if (w->park.stack_short_last)
            w->park.stack_short_last = 0;
        return 1;
    }
    return !up__load_relaxed(&w->pool->park.parked_ever) || up__park_room_slow(w);
}
/* A worker found no task it could start while up__park_room said no: a short
 * sleep before it looks again. */
void up__park_room_wait(void);

/* omp_share.c */
/* Set up and tear down with the pool; before a task, the OpenMP team
 * size for w's thread; the wait of a worker while the pool's CPUs are
 * lent (up_omp_lend). */
void up__omp_share_init(up_pool *p);
void up__omp_share_destroy(up_pool *p);
void up__omp_share_update(up__worker *w);
int up__omp_task_begin(up_pool *p, up__worker *w, up__shard *s, int *before);
void up__lend_wait(up__worker *w);

/* error.c */
/* up_last_error()'s text, at most UP__ERROR_MAX bytes with its terminator
 * (long enough for a backend error that lists every folder it tried). */
#define UP__ERROR_MAX 1024
void up__set_error(const char *fmt, ...);

/* config.c */
void up__print_config(const up_config *cfg, const up__plan *plan, FILE *f);

/* Inline helpers of several files. */

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
    unsigned idle = up__load_relaxed(&s->nparked) + up__load_relaxed(&s->cede.ceded);
    return n > idle ? n - idle : 0;
}

/* The worker in slot i of shard s, or NULL while the slot was never used. */
static inline up__worker *up__slot_worker(up__shard *s, unsigned i)
{
    return up__load_acquire(&s->slots[i]);
}

/* Tasks waiting in the deques of s's workers, and (in *taken) the sum of
 * the deques' tops, which grows by one for every task taken from one. A
 * worker blocked inside a task keeps the children that task pushed, and
 * only a thief can run them: if the task waits for them without helping
 * (a semaphore, a condition variable), no worker is searching and the
 * CPUs are idle, only a new worker will (monitor.c). The gatherer's
 * count of queued tasks reads it too (idle.c: up__pool_queued). */
static inline uint64_t up__deque_backlog(up__shard *s, uint64_t *taken)
{
    uint64_t n = 0, tops = 0;
    unsigned used = up__load_acquire(&s->slots_used);
    for (unsigned i = 0; i < used; i++) {
        up__worker *w = up__slot_worker(s, i);
        if (!w)
            continue;
        int64_t top = up__load_acquire(&w->dq.top);
        int64_t bottom = up__load_acquire(&w->dq.bottom);
        tops += (uint64_t)top;
        if (bottom > top)
            n += (uint64_t)(bottom - top);
    }
    *taken = tops;
    return n;
}

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
 * -Wstringop-overflow warns on that path even where it cannot run).
 * up__count_executed_to is the shared-counter form, for a counter other
 * than the shard's (a submitter's inline slot, cede.c). */
static inline void up__count_executed_to(up_pool *p, _Atomic uint64_t *executed, uint64_t n)
{
    up__fetch_add_acq_rel(executed, n);
    if (up__load_relaxed(&p->stopping))
        up__notify_stopper(p);
}

static inline void up__count_executed(up_pool *p, up__worker *w, up__shard *s, uint64_t n)
{
    if (w) {
        up__store_release(&w->executed, up__load_relaxed(&w->executed) + n);
        return;
    }
    up__count_executed_to(p, &s->helped, n);
}

/* The one path that runs a task of p on this thread, whoever runs it (a
 * worker's loop, a helping or inline submitter, a waiter, a stop draining
 * the queues), taken from shard s or accepted there; w is the calling
 * thread's worker of p, or NULL. Counting is the caller's (above), once
 * per task or once per batch.
 *
 * The thread's "running for pool" marker is set across the task and put
 * back after it, which keeps it right across nesting. In a process with
 * OpenMP, the task's OpenMP team size is set first (omp_share.c; a
 * non-worker's own size comes back after the task).
 *
 * me is the fiber of a worker's loop (worker.c), NULL everywhere else: a
 * task run there may park and be resumed on another thread, and then
 * these frames are no longer this thread's (park_task.c). That is checked
 * before anything thread-local is written again. */
static inline void up__run(up_pool *p, up__worker *w, up__shard *s, const up__task *t,
                           up__tfiber *me)
{
    int omp_restore = 0, omp_before = 0;
    if (__builtin_expect(p->omp_set != NULL, 0))
        omp_restore = up__omp_task_begin(p, w, s, &omp_before);
    up_pool *saved = up__tls_running;
    up__tls_running = p;
    up__task_run(t);
    if (__builtin_expect(me != NULL && me->resumer != NULL, 0))
        up__park_loop_stale(p, me);
    up__tls_running = saved;
    if (__builtin_expect(omp_restore, 0))
        p->omp_set(omp_before);
}

/* Runs a queued task of p and counts it (see above). */
static inline void up__run_counted(up_pool *p, up__worker *w, up__shard *s, const up__task *t)
{
    up__run(p, w, s, t, NULL);
    up__count_executed(p, w, s, 1);
}

#endif
