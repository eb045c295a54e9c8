/* Stackless waiting: the records of tasks that wait on an event or a
 * timer, the per-pool state that holds them, and the hooks the pool calls.
 *
 * A waiting task is one record (up__wrec, 32 bytes) from the pool's slabs
 * (waiter_slab.c). It sits on an event's list (event.c) or in a slot of
 * the pool's timer wheel (timer.c) and occupies no queue slot and no
 * thread. When its event is set or its time comes, the chain of released
 * records is handed to the pool's release list (wait.c); workers whose
 * deque and queues are empty take batches from it (up__wait_take, called
 * from find_work), turn the records into ordinary tasks in their deque and
 * free the records. The stackful calls (fibers) will hang their parked
 * tasks on the same lists with a record whose function resumes the fiber.
 *
 * Counting. accepted counts records that entered an event or the wheel,
 * taken those a worker (or a stopping thread) took off the release list;
 * waiting = accepted - taken. A taken record becomes a task counted
 * submitted before it can run (a worker's pushed count, or direct_run for
 * a non-worker), so a stop waits for executed == submitted and
 * accepted == taken. The records of parked tasks (function
 * up__park_resume_fn, one per parked task, two for a timed event wait)
 * count in accepted and taken too, and also in park_accepted and
 * park_taken, so that up_stats counts each waiting task once: waiting
 * and released are the other records, tasks_parked the parked tasks
 * (pool.h). */
#ifndef UP_WAIT_INTERNAL_H
#define UP_WAIT_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include <ultrapool/wait.h>

#include "atomic.h"
#include "os/park.h"
#include "task.h"

struct up__worker;

/* One waiting task. next links the record into an event's list, a wheel
 * slot or a released chain; word is the expiry tick while on the wheel,
 * and on the release list the head record of a chain keeps there the link
 * to the next chain (bit 0: the chain was cancelled by a destroy; bit 1:
 * the chain is one parked up_yield). */
typedef struct up__wrec {
    struct up__wrec *next;
    up_fn fn;
    void *arg;
    uint64_t word;
} up__wrec;

_Static_assert(sizeof(up__wrec) <= 64, "a waiting task costs at most 64 bytes");
_Static_assert(_Alignof(up__wrec) >= 4, "bits 0 and 1 of a record pointer are free");

/* The slabs of one pool (waiter_slab.c). */
typedef struct up__slab {
    pthread_mutex_t mu;
    up__wrec *batches;         /* (lock mu) free batches: next links a batch, arg the next batch */
    char *bump, *end;          /* (lock mu) the uncarved rest of the newest chunk */
    void **chunks;             /* (lock mu) every chunk, for unmapping */
    size_t nchunks, cap;       /* (lock mu) */
    uint64_t id;               /* (ro) unique in the process; thread caches check it */
    struct up__slab *reg_next; /* (lock registry) */
    UP_ALIGNED_LINE _Atomic uint64_t bytes; /* (atomic) mapped bytes */
} up__slab;

int up__slab_init(up__slab *s);
/* Unmaps every chunk. Records still cached by threads become garbage they
 * drop on their next allocation (the slab id no longer matches). */
void up__slab_destroy(up__slab *s);
/* One record, from the calling thread's cache (no atomic operation) or,
 * once per batch, from the slab under its lock. NULL when memory is out. */
up__wrec *up__slab_alloc(up__slab *s);
/* Gives back the n records first..last (linked by next). */
void up__slab_free_chain(up__slab *s, up__wrec *first, up__wrec *last, uint64_t n);
/* The calling thread's cached records go back to their slab (thread exit,
 * tests). */
void up__slab_flush_thread(void);

/* The per-pool state, created on first use (up__wait_get). */
typedef struct up__wait up__wait;

struct up__timer_wheel; /* timer.c */

struct up__wait {
    struct up_pool *pool; /* (ro) NULL once the pool is destroyed (lock reg_mu) */
    up__slab slab;
    /* Released chains waiting for a worker, FIFO (chains linked through
     * their head's word). nchains is written under rel_mu with seq_cst and
     * read without the lock: the idle protocol's last look. */
    UP_ALIGNED_LINE pthread_mutex_t rel_mu;
    up__wrec *rel_first, *rel_last; /* (lock rel_mu) */
    _Atomic uint64_t nchains;       /* (atomic, written under rel_mu) */
    _Atomic uint64_t nyield;        /* (atomic, written under rel_mu) of them, parked up_yields */
    /* Counters (see the top of this file). */
    UP_ALIGNED_LINE _Atomic uint64_t accepted;
    UP_ALIGNED_LINE _Atomic uint64_t taken;
    _Atomic uint64_t cancelled;  /* of taken: released by a destroy */
    _Atomic uint64_t direct_run; /* of taken: run by a non-worker, counted submitted */
    /* Stackful tasks parked and resumed so far (park_task.c), and their
     * records: accepted (less those given back) and taken. */
    UP_ALIGNED_LINE _Atomic uint64_t tasks_parked;
    _Atomic uint64_t tasks_resumed;
    _Atomic uint64_t park_accepted, park_taken;
    /* Events alive on this pool, for a destroy to cancel their waiters. */
    pthread_mutex_t reg_mu;
    struct up_event *events; /* (lock reg_mu) */
    unsigned refs;           /* (lock reg_mu) the pool's plus one per live event */
    _Atomic int cancelling;  /* (atomic) a destroy is releasing every waiter */
    /* The timer wheel and its thread, started on first use (timer.c). */
    pthread_mutex_t timer_once;            /* serializes the start */
    int timer_closed;                      /* (lock timer_once) a destroy closed the timers */
    struct up__timer_wheel *_Atomic wheel; /* (atomic) NULL until then */
};

/* The function of a parked task's records (park_task.c). */
extern const up_fn up__park_resume_fn;

/* The pool's state, created on first call; NULL (and up_last_error set)
 * when memory is out. */
up__wait *up__wait_get(struct up_pool *p);
/* Accepts one waiting task: 1, or 0 when the pool is stopped (the caller
 * frees the record and fails with UP_ESTOPPED). */
int up__wait_accept(up__wait *ws);
/* Undoes an accept whose record was never published. */
void up__wait_unaccept(up__wait *ws);
/* A record for fn(arg), accepted: NULL with *rc = UP_ENOMEM or
 * UP_ESTOPPED (and up_last_error naming who) when none can be had or the
 * pool is stopped. The caller publishes it (on an event, in the wheel) or
 * gives it back with up__wait_unaccept and up__slab_free_chain. */
up__wrec *up__wait_record(up__wait *ws, up_fn fn, void *arg, const char *who, int *rc);
/* The same for the resume of a task that parks (park_task.c), never
 * UP_ESTOPPED: the task was accepted before any stop and is counted
 * submitted but not executed until it returns, so a stop waits for it
 * whether it parks or blocks, and its record is accepted (seq_cst) before
 * its end can be counted, so a stop that sees the task done sees the
 * record taken too. Parking after the stop keeps such a task waiting as
 * it would have without the stop, holding no thread; a destroy's sweep
 * that came first leaves the record to the closed wheel or the
 * cancelling event (timer.c, event.c), which release it cancelled at
 * once. */
up__wrec *up__wait_record_parked(up__wait *ws, up_fn fn, void *arg, const char *who, int *rc);
/* A task whose event is set or whose time is now: a plain submit when a
 * queue has room, else a released record, so never UP_EOVERLOAD. */
int up__wait_run_now(struct up_pool *p, up__wait *ws, up_fn fn, void *arg, const char *who);
/* Hands a chain of released records (linked by next, NULL-terminated) to
 * the pool and makes sure a worker will look. cancelled: released by a
 * destroy (each runs with up_cancelled() true). */
void up__wait_release(up__wait *ws, up__wrec *chain, int cancelled);

/* Releases r, the record of a task parked in up_yield: it resumes after
 * the tasks queued or released before it (see up__wait_take_early). */
void up__wait_release_yield(up__wait *ws, up__wrec *r);

/* Hooks of the pool. */
/* find_work, when the deque and the queues are empty: takes a batch of
 * released records, returns one as *out and pushes the rest into w's
 * deque, each counted in w's pushed before it is visible. 1 when *out was
 * filled. */
int up__wait_take(struct up__worker *w, up__task *out);
/* find_work's turn for released tasks ahead of the queues (worker.c): as
 * up__wait_take, but 0 while a parked up_yield is on the list, which must
 * resume after the tasks queued before it, as it does when the list is
 * taken after the queues. */
int up__wait_take_early(struct up__worker *w, up__task *out);
/* Released chains are waiting (seq_cst load: the idle protocol's last
 * look and the stop's check). */
int up__wait_released_any(struct up_pool *p);
/* A stopping thread with no worker left runs the released records itself;
 * returns 1 if it ran any. */
int up__wait_drain_here(struct up_pool *p);
/* No task waits on an event or the wheel or in the release list. Read
 * before the executed/submitted counts (see the top of this file). */
int up__wait_settled(struct up_pool *p);
/* up_pool_destroy, after up_pool_stop and before the final wait: releases
 * every waiting task as cancelled and stops the timer thread. Makes the
 * state if the pool has none, so that a wait first made after it (by a
 * task the destroy waits for) is cancelled too and starts no thread. */
void up__wait_cancel_all(struct up_pool *p);
/* up_pool_destroy, at the end: frees the slabs and the wheel; the state
 * itself lives on while events of the pool do. */
void up__wait_free(struct up_pool *p);
/* up_pool_stats: adds the waiting counts and the tasks run by non-workers
 * to submitted. Called after the executed and submitted counts are read. */
void up__wait_stats(const struct up_pool *p, up_stats *out);

/* Drops one reference to ws (the pool's, or an event's); the last frees it. */
void up__wait_unref(up__wait *ws);

/* An event's head word: EV_EMPTY (unset, nobody waits), EV_SET, or the
 * newest waiting record (unset; the records are linked by next). */
#define UP__EV_EMPTY ((uintptr_t)0)
#define UP__EV_SET   ((uintptr_t)1)
/* UP_DEBUG: h is one of the head word's states (empty, set, a record). */
#define UP__EV_STATE_OK(h) ((h) <= UP__EV_SET || ((h) & (_Alignof(up__wrec) - 1)) == 0)

struct up_event {
    _Atomic(uintptr_t) head;   /* (atomic) see UP__EV_* */
    up__wait *ws;              /* (ro) its pool's state (referenced) */
    _Atomic uint64_t sets;     /* (atomic) unset-to-set transitions, for blocked threads */
    _Atomic unsigned blocked;  /* (atomic) threads blocked in up_event_wait */
    up__event ec;              /* where those threads sleep */
    struct up_event *reg_prev; /* (lock ws->reg_mu) the pool's list of events */
    struct up_event *reg_next; /* (lock ws->reg_mu) */
};

/* event.c: releases the waiters of ev as cancelled (a destroy's sweep). */
void up__event_cancel_waiters(struct up_event *ev);
/* Puts the accepted record r (fn and arg set) among ev's waiters, or,
 * when ev is set, releases it at once; h is the head the caller last
 * loaded. 1 when r waits, 0 when it was released. The fibers' parking
 * path (up_event_wait) will push its resume record here too. */
int up__event_push(struct up_event *ev, up__wrec *r, uintptr_t h);
/* wait.c: the calling task runs as released by a destroy; the calling
 * thread holds state of the parallel layer that would not follow a parked
 * task (the layer's hook, up_layer.h). */
int up__wait_in_cancelled(void);
int up__wait_pinned(void);
/* park_task.c: park the calling task instead of blocking. 1 when it
 * parked and was resumed (*rc: UP_OK, UP_ETIMEDOUT or UP_ECANCELED); 0
 * when it cannot park here (the caller blocks). deadline: absolute
 * (CLOCK_MONOTONIC ns), UINT64_MAX for none. */
int up__park_sleep(uint64_t deadline, int *rc);
int up__park_event(struct up_event *ev, uint64_t deadline, int *rc);
int up__park_yield(int *rc);
/* As up__park_yield, but the task is released at once, taking its turn
 * with the other released tasks (a short sleep, event.c). */
int up__park_nap(int *rc);
/* timer.c */
/* Starts the wheel if needed: after UP_OK, up__timer_push cannot fail. */
int up__timer_ensure(up__wait *ws);
/* Takes r, pushed with deadline_ns and arg, off the wheel if it is still
 * there (1), else 0 (it fired). The caller need not own r any more: r is
 * read only while on the wheel, and a record there at r's address with
 * another arg (r freed and reused) is left alone. */
int up__timer_remove(up__wait *ws, up__wrec *r, uint64_t deadline_ns, const void *arg);
/* event.c: takes r, pushed with arg, off ev's waiters if it is still there
 * (1), else 0 (a set or a destroy released it); r is identified as by
 * up__timer_remove. */
int up__event_remove(struct up_event *ev, up__wrec *r, const void *arg);
int up__timer_push(up__wait *ws, up__wrec *r, uint64_t deadline_ns);
void up__timer_cancel_all(up__wait *ws);
void up__timer_free(up__wait *ws);

#endif
