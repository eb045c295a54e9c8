/* Parked tasks: up_sleep_ns, up_event_wait(_timeout) and up_yield inside a
 * pool task park the task, not the thread (switch-on-block).
 *
 * Each worker runs its loop on a fiber (a "loop fiber") from the pool's
 * stack pool, as large as a worker thread's stack, so the tasks the loop
 * runs run on that fiber too and nothing changes per task. When a task
 * parks, the current context (the task's frames and the loop frames below
 * them) becomes the parked fiber: the worker switches to a fresh loop
 * fiber, which publishes the parked one (a record whose function resumes
 * it, accepted with up__wait_record_parked, after a stop too, so the stop
 * and destroy rules hold) and runs the worker loop from the top. A task that parks again after a
 * resume switches back to the context that resumed it, which publishes it.
 *
 * Resuming on any thread X: the record's function (resume_task) switches
 * from X's current context into the parked fiber and records itself as
 * the fiber's resumer. When the task returns into its old loop frames,
 * the loop sees that its fiber has a resumer (up__park_loop_stale): those
 * frames are no longer a loop, so they count the task executed for the
 * thread that ran its end (re-read from thread-local storage through a
 * non-inlined function) and exit to the resumer, which frees the stack.
 *
 * Invariant: a loop fiber with no resumer runs only on its own worker's
 * thread (it is that worker's w->park.loop, or was until it parked; a parked
 * fiber gets a resumer before it runs again). So the loop frames' worker
 * pointer is right exactly while tf->resumer is NULL, and worker_loop
 * returns (retirement, stop) only on its own thread, which then switches
 * back to the thread's own stack in up__park_run_worker.
 *
 * Publication: a parking fiber never publishes itself (fiber.h); the
 * request travels through the switch's argument and the destination
 * publishes it. Every field the destination needs is copied out of the
 * request before the first record is published, since the task may be
 * resumed, finish and free its stack while the destination still runs. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "fiber.h"
#include "help.h"
#include "os/os.h"
#include "pool_internal.h"
#include "os/stack_pool.h"
#include "wait_internal.h"

/* A task fiber (pool_internal.h) sits at the top of its stack's usable
 * area. */

/* REQ_NAP: a short sleep's turn (event.c), released at once like a task
 * whose timer fired, not behind the queued tasks as a yield is. */
enum { REQ_SLEEP, REQ_EVENT, REQ_YIELD, REQ_NAP };

/* A timed event wait has two records, one on the event and one on the
 * wheel; the first to run resumes the task, the other does nothing. The
 * ticket outlives the task's frame; the last of its three users (the two
 * records and the publisher) frees it.
 *
 * The event's record is published first and may run (a set, a destroy's
 * sweep) before the wheel's is pushed; its removal of the wheel's record
 * would then find nothing, and that record would hold a stop until its
 * deadline. tm_pub says who deals with it: the publisher moves it from
 * TM_NONE to TM_PUSHING before the push and to TM_PUSHED after; a winner
 * from the event's side moves it from TM_NONE to TM_FIRED, and the
 * publisher, failing its move, never pushes the record but gives it back;
 * a winner that finds TM_PUSHING waits the few instructions of the push
 * for TM_PUSHED, then removes it. One CAS on one word decides, so exactly
 * one of the two takes the record out.
 *
 * Who owns each record, and who frees it. A record belongs to its
 * container (the event's list, the wheel) while on it; an event set, the
 * wheel or a destroy moves it to the release list, and the worker that
 * takes it from there frees it (up__wait_take) before its task runs. The
 * first of the two tasks to run wins fired; the loser only drops its
 * reference. The winner takes the other record back if it is still on its
 * container (else it would hold a stop until released) and then frees it,
 * as its owner. But by then that record may have been released, taken and
 * freed, even reused by another wait on the same event or wheel: its
 * address alone does not name it. So the winner never reads it; the
 * container, under its exclusion, unlinks the record at that address only
 * if it holds this ticket's tagged arg, which no other record can hold
 * while the winner keeps the ticket alive. */
enum { TM_NONE, TM_PUSHING, TM_PUSHED, TM_FIRED };

typedef struct ticket {
    _Atomic unsigned refs;
    _Atomic int fired;
    _Atomic int tm_pub;        /* (atomic) TM_*, above */
    struct park_req *req;      /* valid until fired is won */
    up_event *ev;              /* (ro) */
    up__wait *ws;              /* (ro) */
    up__wrec *ev_rec, *tm_rec; /* (ro) the two records */
} ticket;

/* On the parking task's stack; valid until it is resumed. */
typedef struct park_req {
    int kind;
    up__wait *ws;
    up_event *ev;
    uint64_t deadline;
    up__wrec *rec, *rec2; /* accepted, not yet published */
    up__tfiber *tf;       /* the parked fiber */
    int result;           /* written by the resumer */
} park_req;

#define MSG_DONE ((uintptr_t)1)

/* Thread-local reads after a possible switch go through these: the
 * compiler may not reuse a thread-local address computed on another
 * thread. */
__attribute__((noinline)) static up__worker *tls_worker_now(void)
{
    up__worker *w = up__tls_worker;
    __asm__ volatile("" : : : "memory");
    return w;
}

/* The pool's stack pool, set up once: the thread that moves stacks_state
 * from 0 to 1 initializes it and publishes it with a release store of
 * stacks; the others wait for that store (a few microseconds, once per
 * pool). NULL when it cannot be set up (state back to 0). */
static up__stack_pool *pool_stacks(up_pool *p)
{
    up__stack_pool *sp = up__load_acquire(&p->park.stacks);
    if (sp)
        return sp;
    int expected = 0;
    if (!up__cas_strong_acq_rel(&p->park.stacks_state, &expected, 1)) {
        while (up__load_acquire(&p->park.stacks_state) == 1)
            sched_yield();
        return up__load_acquire(&p->park.stacks);
    }
    sp = &p->park.stacks_mem;
    up__stack_pool_config c;
    up__stack_pool_config_init(&c);
    c.stack_size = p->cfg.stack_size ? p->cfg.stack_size : up__os_default_stack_size();
    if (c.stack_size < UP__STACK_MIN_SIZE)
        c.stack_size = UP__STACK_MIN_SIZE;
    if (c.stack_size > UP__STACK_MAX_SIZE)
        c.stack_size = UP__STACK_MAX_SIZE;
    if (up__stack_pool_init(sp, &c) != 0) {
        up__store_release(&p->park.stacks_state, 0);
        return NULL;
    }
    up__store_release(&p->park.stacks, sp);
    up__store_release(&p->park.stacks_state, 2);
    return sp;
}

void up__park_free_pool(up_pool *p)
{
    up__stack_pool *sp = up__load_acquire(&p->park.stacks);
    if (!sp)
        return;
    up__stack_pool_destroy(sp);
    up__store_relaxed(&p->park.stacks, NULL);
    up__store_relaxed(&p->park.stacks_state, 0);
}

static void loop_entry(up__fiber *self, void *arg);

/* A stack came back, to a worker's cache or to the pool's: tells the
 * workers short of one that watch (up__park_room_slow). One relaxed load
 * when none watches. */
static inline void stack_came_back(up_pool *p)
{
    uint64_t b = up__load_relaxed(&p->park.stacks_back);
    while ((b & 1) && !up__cas_weak_relaxed(&p->park.stacks_back, &b, b + 1))
        ; /* b reloaded: done once another free has moved it on */
}

/* A fresh fiber that will run the worker loop; NULL when no stack can be
 * had (the map-count budget, memory). */
static up__tfiber *tf_new(up__worker *w)
{
    up__stack_pool *sp = pool_stacks(w->pool);
    up__stack *s;
    if (!sp || up__stack_cache_get(&w->park.stacks, sp, &s) != 0)
        return NULL;
    size_t carve = (sizeof(up__tfiber) + 63) & ~(size_t)63;
    up__tfiber *tf = (up__tfiber *)(s->lo + s->size - carve);
    if (up__fiber_init(&tf->f, s->lo, s->size - carve, up__stack_guard_size(sp), loop_entry) != 0) {
        up__stack_cache_put(&w->park.stacks, sp, s);
        return NULL;
    }
    tf->stack = s;
    tf->pool = w->pool;
    tf->resumer = NULL;
    return tf;
}

/* Frees an exited fiber; w is the calling thread's worker of its pool, or
 * NULL. */
static void tf_free(up__worker *w, up__tfiber *tf)
{
    up_pool *p = tf->pool; /* tf lives on the stack about to go back */
    up__stack_pool *sp = up__load_acquire(&p->park.stacks);
    up__stack *s = tf->stack;
    up__fiber_destroy(&tf->f);
    if (w && w->pool == p)
        up__stack_cache_put(&w->park.stacks, sp, s);
    else
        up__stack_release(sp, s);
    stack_came_back(p);
}

static void resume_task(void *arg);
const up_fn up__park_resume_fn = resume_task;

static void ticket_drop(ticket *t)
{
    if (up__fetch_sub_acq_rel(&t->refs, 1) == 1)
        free(t);
}

/* Publishes a parked task's records (runs on the destination context). */
static void publish(park_req *req)
{
    int kind = req->kind;
    up__wait *ws = req->ws;
    up_event *ev = req->ev;
    uint64_t deadline = req->deadline;
    up__wrec *rec = req->rec, *rec2 = req->rec2;
    up__assert_internal(rec && kind >= REQ_SLEEP && kind <= REQ_NAP &&
                        (rec2 == NULL || kind == REQ_EVENT));
    /* From here on req may be gone. */
    up__fetch_add_relaxed(&ws->tasks_parked, 1);
    if (!up__load_relaxed(&ws->pool->park.parked_ever))
        up__store_relaxed(&ws->pool->park.parked_ever, 1);
    switch (kind) {
    case REQ_SLEEP:
        up__timer_push(ws, rec, deadline);
        break;
    case REQ_YIELD:
        up__wait_release_yield(ws, rec);
        break;
    case REQ_NAP:
        up__wait_release(ws, rec, 0);
        break;
    default: {
        ticket *tk = rec2 ? (ticket *)((uintptr_t)rec2->arg & ~(uintptr_t)3) : NULL;
        up__event_push(ev, rec, up__load_acquire(&ev->head));
        if (!tk)
            break;
        int st = TM_NONE;
        if (up__cas_strong_acq_rel(&tk->tm_pub, &st, TM_PUSHING)) {
            up__timer_push(ws, rec2, deadline);
            up__store_release(&tk->tm_pub, TM_PUSHED);
        } else {
            /* The event's record won first: the wheel's never goes out. */
            up__wait_unaccept(ws);
            up__fetch_sub_relaxed(&ws->park_accepted, 1);
            up__slab_free_chain(&ws->slab, rec2, rec2, 1);
            ticket_drop(tk);
        }
        ticket_drop(tk); /* the publisher's */
        break;
    }
    }
}

/* A message from a fiber that left: MSG_DONE-tagged fiber to free, or a
 * parked task's request to publish. */
static void handle(up__worker *w, void *msg)
{
    uintptr_t m = (uintptr_t)msg;
    if (!m)
        return;
    if (m & MSG_DONE)
        tf_free(w, (up__tfiber *)(m & ~MSG_DONE));
    else
        publish((park_req *)msg);
}

static void loop_entry(up__fiber *self, void *arg)
{
    up__tfiber *me = (up__tfiber *)self;
    up__worker *w = tls_worker_now();
    handle(w, arg);
    (void)up__worker_loop(w, me); /* a loop on a fiber never asks to move */
    /* Only the worker's current loop returns, on its own thread. */
    up__fiber_exit(self, w->park.thread_ctx, (void *)((uintptr_t)me | MSG_DONE));
}

void up__park_run_worker(up__worker *w)
{
    up__fiber here;
    up__fiber_init_thread(&here);
    w->park.thread_ctx = &here;
    /* A worker's slot outlives its thread: a new thread starts with no
     * shortage of its own (up__park_room_slow). */
    w->park.stack_short_last = 0;
    w->park.stack_short_looked = 0;
    if (up__stack_guard_thread_init() == 0) {
        for (;;) {
            int cached = w->park.stacks.n != 0;
            up__tfiber *first = tf_new(w);
            if (first) {
                w->park.loop = w->park.cur = first;
                void *msg = up__fiber_switch(&here, &first->f, NULL);
                w->park.loop = w->park.cur = NULL;
                handle(w, msg);
                break;
            }
            /* No stack for a loop fiber: parked tasks hold them all (or
             * the budget is spent). The loop runs on this stack, where no
             * task can park, so it starts no queued task while one could
             * be had: once a stack is in its cache it returns 1, and moves
             * onto a fiber here (worker.c, FIND_FIBER). A worker that
             * started here for good ran every task it took where none
             * could park, each blocking its thread. A stack already
             * cached that made no fiber will not make one later. */
            w->park.fiberless = !cached;
            int move = up__worker_loop(w, NULL);
            w->park.fiberless = 0;
            if (!move)
                break;
        }
        up__stack_pool *sp = up__load_acquire(&w->pool->park.stacks);
        if (sp)
            up__stack_cache_flush(&w->park.stacks, sp);
        up__stack_guard_thread_fini();
    } else {
        (void)up__worker_loop(w, NULL); /* not fiberless: it never asks to move */
        /* Its loop may still have taken spare stacks (up__park_room). */
        up__stack_pool *sp = up__load_acquire(&w->pool->park.stacks);
        if (sp)
            up__stack_cache_flush(&w->park.stacks, sp);
    }
    w->park.thread_ctx = NULL;
}

/* Room for one more parked task. Every task that parks keeps the stack it
 * ran on and needs a fresh one for its worker's loop, so the pool's stack
 * budget (vm.max_map_count, os/stack_pool.h) bounds the tasks parked at once.
 * A task that parks when no stack is left can only block its thread, and
 * a pool whose workers block that way grows toward its caps (the monitor
 * adds a worker for each blocked one) while every new worker blocks the
 * same way. So a worker starts a new task only holding a spare stack in
 * its cache, the one the task's park would take; when none can be had it
 * leaves the queues to the submitters (who wait for room) and resumes
 * parked tasks, whose ends give stacks back (worker.c: released tasks,
 * and tasks in the deques). Tasks parked on an event that only a queued
 * task would set never give them back, and tasks that poll (a sleep or a
 * yield in a loop) resume without giving one back: after SHORT_WAIT_MAX_NS
 * without a stack to be had, however many resumes happened meanwhile, the
 * worker starts queued tasks anyway, and those that park block, as they
 * would without this rule. The time counts from the first miss after
 * the last stack the worker had: one that comes back to its cache
 * (up__park_room) ends the shortage as one from the process's pool does,
 * else a long run short of stacks, with stacks coming back all along,
 * would start a task to block at its first miss 250 ms in. And the time is
 * the worker's own looking: a gap between two misses counts at most
 * SHORT_GAP_MAX_NS, since a worker kept from its CPU (a busy machine, a
 * sanitizer's lock) has not seen whether stacks came back meanwhile, and
 * counting its absence started queued tasks to block in a run whose
 * stacks came back all along. A worker that runs long resumed tasks
 * between misses still reaches the limit, a gap's worth at a time. A
 * pool whose tasks never parked skips all of it (parked_ever).
 *
 * A stack that comes back to another worker restarts the time too. With
 * two workers, one can take every stack that comes back (its parked tasks
 * end on it, it starts the next queued tasks with their stacks) while the
 * other finds none for 250 ms and starts a task to block, in a run whose
 * stacks came back all along (test_wait_park_many's budget part, 6 runs
 * in 20 beside two CPU hogs). p->park.stacks_back tells it:
 *   - a short worker makes the word odd at each look (CAS from even to
 *     odd, +1) and notes the odd value it saw or made;
 *   - a parked task's stack going back (tf_free: to a cache or to the
 *     pool) moves an odd word on to even (+1), and leaves an even one
 *     alone, so the free costs one relaxed load while nobody watches;
 *   - only a free moves the word from odd, so a worker that finds it
 *     other than the odd value it noted knows a stack came back since, and
 *     restarts its time from that look.
 * Relaxed is enough: the word publishes nothing (stacks change hands
 * through the stack pool's lock and the owners' caches); a move seen a
 * look late costs that look's time, no more. A worker that gets no stack
 * while none comes back anywhere (the tasks poll, or wait for a queued
 * task) still reaches the limit. */
#define SHORT_WAIT_MAX_NS 250000000u
#define SHORT_GAP_MAX_NS  10000000u
#define SHORT_WAIT_NAP_NS 100000u

/* 1 when a stack came back to the pool since w's last look (the comment
 * above says how stacks_back tells); leaves the word odd, and noted. */
static int stack_back_since(up__worker *w)
{
    up_pool *p = w->pool;
    uint64_t b = up__load_relaxed(&p->park.stacks_back);
    int moved = b != w->park.stack_back_seen;
    while (!(b & 1) && !up__cas_weak_relaxed(&p->park.stacks_back, &b, b + 1))
        ; /* b reloaded: done once odd (another watcher made it so) */
    w->park.stack_back_seen = b & 1 ? b : b + 1;
    return moved;
}

int up__park_room_slow(up__worker *w)
{
    up_pool *p = w->pool;
    if (!up__load_relaxed(&p->park.parked_ever))
        return 1;
    up__stack_pool *sp = up__load_acquire(&p->park.stacks);
    up__stack *s;
    if (!sp || up__stack_acquire(sp, &s) == 0) {
        if (sp)
            up__stack_cache_put(&w->park.stacks, sp, s);
        w->park.stack_short_last = 0;
        return 1;
    }
    uint64_t now = up__now_ns();
    int back = stack_back_since(w);
    if (w->park.stack_short_last == 0) {
        w->park.stack_short_last = now;
        w->park.stack_short_looked = 0;
        /* Idle workers may hold spare stacks in their caches, and this one,
         * napping, counts as searching, so submits wake none of them. */
        if (up__load_relaxed(&p->shards[w->shard].nparked) != 0)
            up__wake_one(p, w->shard);
        return 0;
    }
    uint64_t gap = now - w->park.stack_short_last;
    w->park.stack_short_last = now;
    if (back) {
        w->park.stack_short_looked = 0; /* a stack came back elsewhere */
        return 0;
    }
    w->park.stack_short_looked += gap < SHORT_GAP_MAX_NS ? gap : SHORT_GAP_MAX_NS;
    return w->park.stack_short_looked > SHORT_WAIT_MAX_NS;
}

int up__park_fiber_ready(up__worker *w)
{
    if (w->park.stacks.n != 0)
        return 1;
    up__stack_pool *sp = up__load_acquire(&w->pool->park.stacks);
    up__stack *s;
    if (!sp || up__stack_acquire(sp, &s) != 0)
        return 0;
    up__stack_cache_put(&w->park.stacks, sp, s);
    return 1;
}

void up__park_room_wait(void)
{
    struct timespec ts = up__timespec_from_ns(SHORT_WAIT_NAP_NS);
    nanosleep(&ts, NULL); /* a signal only shortens the nap */
}

/* The task that just returned into the loop frames on me has been resumed
 * elsewhere: count it for the thread that ran its end, and leave. */
_Noreturn void up__park_loop_stale(up_pool *p, up__tfiber *me)
{
    up__worker *x = tls_worker_now();
    if (x && x->pool == p)
        up__count_executed(p, x, &p->shards[x->shard], 1);
    else
        up__count_executed(p, NULL, &p->shards[0], 1);
    up__fiber_exit(&me->f, me->resumer, (void *)((uintptr_t)me | MSG_DONE));
}

/* The record's function: resumes the parked task on the calling thread. */
static void resume_task(void *arg)
{
    park_req *req;
    ticket *tk = NULL;
    int result = up__wait_in_cancelled() ? UP_ECANCELED : UP_OK;
    uintptr_t a = (uintptr_t)arg;
    if (a & 1) {
        /* A timed wait's record: bit 0 set, a ticket; bit 1 set, the
         * timer's side. */
        tk = (ticket *)(a & ~(uintptr_t)3);
        int expected = 0;
        if (!up__cas_strong_acq_rel(&tk->fired, &expected, 1)) {
            ticket_drop(tk);
            return;
        }
        req = tk->req;
        if ((a & 2) && result == UP_OK)
            result = UP_ETIMEDOUT;
        /* The other record would keep a stop waiting (it counts as
         * accepted until taken): take it back if it has not fired. */
        up__wrec *other = (a & 2) ? tk->ev_rec : tk->tm_rec;
        const void *other_arg = (const void *)((a & 2) ? a & ~(uintptr_t)2 : a | 2);
        int removed = 0;
        if (a & 2) {
            removed = up__event_remove(tk->ev, other, other_arg); /* published before this one */
        } else {
            int st = TM_NONE;
            if (!up__cas_strong_acq_rel(&tk->tm_pub, &st, TM_FIRED)) {
                while (st == TM_PUSHING) {
                    sched_yield();
                    st = up__load_acquire(&tk->tm_pub);
                }
                removed = up__timer_remove(tk->ws, other, req->deadline, other_arg);
            }
        }
        if (removed) {
            up__wait_unaccept(tk->ws);
            up__fetch_sub_relaxed(&tk->ws->park_accepted, 1);
            up__slab_free_chain(&tk->ws->slab, other, other, 1);
            ticket_drop(tk);
        }
        ticket_drop(tk);
    } else {
        req = arg;
    }
    req->result = result;
    up__tfiber *tf = req->tf;
    up__wait *ws = req->ws;
    up__fetch_add_relaxed(&ws->tasks_resumed, 1);
    up__worker *w = tls_worker_now();
    if (w && w->pool != tf->pool)
        w = NULL;
    if (w)
        up__cede_note_wait(w); /* its return does not show a task that never waits */
    up__fiber here;
    up__fiber_init_thread(&here);
    tf->resumer = &here;
    up__tfiber *saved = NULL;
    if (w) {
        saved = w->park.cur;
        w->park.cur = tf;
    }
    /* The task brings its own thread-local state (park below); this
     * context's comes back when the task leaves the thread. */
    up__task_tls mine = up__tls_task;
    void *msg = up__fiber_switch(&here, &tf->f, NULL);
    /* Back on this thread (the task stayed on it until it parked again
     * or finished). */
    up__tls_task = mine;
    if (w)
        w->park.cur = saved;
    handle(w, msg);
}

/* The caller's worker when the calling task may park: a worker of the
 * pool whose task it runs, on a loop or task fiber, not nested in a
 * helping wait, not inside up_blocking_begin (whose end must come on the
 * same worker), and not using the parallel layer on this thread (a region
 * member, a layer task: their thread-local state would not follow the
 * task; the layer's hook says, up_layer.h). NULL: block instead. */
static up__worker *may_park(void)
{
    up__worker *w = up__tls_worker;
    if (!w || !w->park.cur || up__tls_running != w->pool || up__help_depth() != 0 ||
        up__load_relaxed(&w->blocking) != 0)
        return NULL;
    if (up__wait_pinned())
        return NULL;
    return w;
}

/* Parks the calling task on worker w with request req (records
 * accepted). Returns the resumer's result. If no fresh loop fiber can be
 * had, returns 1 without parking (the caller then gives the records back
 * and blocks). */
static int park(up__worker *w, park_req *req)
{
    up__tfiber *me = w->park.cur;
    req->tf = me;
    /* Running -> parked: the task runs on w's current fiber; a task
     * fiber other than the loop runs only once a resumer took it. */
    up__assert_internal(me != NULL && (me == w->park.loop || me->resumer != NULL));
    up__tfiber *fresh = NULL;
    if (me == w->park.loop && (fresh = tf_new(w)) == NULL)
        return 1;
    /* The task's thread-local state goes with it (pool_internal.h): the
     * thread runs on without it (a fresh loop starts from zero; a resumer
     * puts its own back), and whichever thread resumes the task gets it. */
    up__task_tls mine = up__tls_task;
    up__tls_task = (up__task_tls){0};
    if (fresh) {
        w->park.loop = w->park.cur = fresh;
        up__fiber_switch(&me->f, &fresh->f, req);
    } else {
        up__fiber_switch(&me->f, me->resumer, req);
    }
    /* Resumed, perhaps on another thread. Resumed by a destroy, the task
     * runs on as released by it (wait.h: up_cancelled() true). */
    if (req->result == UP_ECANCELED)
        mine.cancelled = 1;
    *up__task_tls_here() = mine;
    return 0;
}

static void give_back(up__wait *ws, up__wrec *r)
{
    if (!r)
        return;
    up__wait_unaccept(ws);
    up__fetch_sub_relaxed(&ws->park_accepted, 1);
    up__slab_free_chain(&ws->slab, r, r, 1);
}

/* A record that resumes a parked task, accepted and counted as one. */
static up__wrec *park_record(up__wait *ws, void *arg, const char *who, int *err)
{
    up__wrec *r = up__wait_record_parked(ws, resume_task, arg, who, err);
    if (r)
        up__fetch_add_relaxed(&ws->park_accepted, 1);
    return r;
}

/* 1 and *rc set when the call parked; 0: the caller blocks. */
static int try_park(int kind, up_event *ev, uint64_t deadline, int *rc)
{
    up__worker *w = may_park();
    if (!w)
        return 0;
    up_pool *p = w->pool;
    up__wait *ws = ev ? ev->ws : up__wait_get(p);
    if (!ws || ws->pool != p)
        return 0;
    int need_timer = kind == REQ_SLEEP || (kind == REQ_EVENT && deadline != UINT64_MAX);
    if (need_timer && up__timer_ensure(ws) != UP_OK)
        return 0;
    park_req req = {.kind = kind, .ws = ws, .ev = ev, .deadline = deadline};
    ticket *tk = NULL;
    int err;
    if (kind == REQ_EVENT && need_timer) {
        tk = malloc(sizeof *tk);
        if (!tk)
            return 0;
        atomic_init(&tk->refs, 3);
        atomic_init(&tk->fired, 0);
        atomic_init(&tk->tm_pub, TM_NONE);
        tk->req = &req;
        req.rec = park_record(ws, (void *)((uintptr_t)tk | 1), "event_wait", &err);
        if (req.rec)
            req.rec2 = park_record(ws, (void *)((uintptr_t)tk | 3), "event_wait", &err);
        if (!req.rec || !req.rec2) {
            give_back(ws, req.rec);
            free(tk);
            return 0;
        }
        tk->ev = ev;
        tk->ws = ws;
        tk->ev_rec = req.rec;
        tk->tm_rec = req.rec2;
    } else {
        req.rec = park_record(ws, &req, "park", &err);
        if (!req.rec)
            return 0;
    }
    if (park(w, &req)) {
        give_back(ws, req.rec);
        give_back(ws, req.rec2);
        free(tk);
        return 0;
    }
    *rc = req.result;
    return 1;
}

int up__park_sleep(uint64_t deadline, int *rc) { return try_park(REQ_SLEEP, NULL, deadline, rc); }

int up__park_event(up_event *ev, uint64_t deadline, int *rc)
{
    return try_park(REQ_EVENT, ev, deadline, rc);
}

int up__park_yield(int *rc) { return try_park(REQ_YIELD, NULL, 0, rc); }

int up__park_nap(int *rc) { return try_park(REQ_NAP, NULL, 0, rc); }
