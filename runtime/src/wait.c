/* The pool's side of stackless waiting: its state, the release list that
 * hands released records to workers, the stop and destroy rules and the
 * counters (the records and the counting scheme: wait_internal.h).
 *
 * The release list is a FIFO of chains under a mutex. A setter appends
 * the whole chain it detached from an event in O(1), however long it is,
 * so releasing 1e8 waiters costs the setter one exchange and one lock. A
 * worker takes the first chain, walks at most BATCH records of it outside
 * the lock and puts the rest back at the end (round robin between
 * chains). The lock is thus held for a few pointer moves, once or twice
 * per batch of records.
 *
 * Publishing follows the pool's idle protocol (idle.c): the appender
 * stores nchains with seq_cst under the lock and then, through
 * up__publish_wake (submit.c's after-publish step), loads the idle word;
 * a worker going to sleep moves its count to parked with a seq_cst RMW and
 * then looks at nchains (up__wait_released_any, in idle.c's last look). So
 * either the sleeper sees the chain or the appender sees the sleeper and
 * wakes one worker. */
#include <stdlib.h>
#include <string.h>

#include "../layer/up_layer.h"
#include "pool_internal.h"
#include "wait_internal.h"

/* Records a worker turns into tasks per visit: enough to amortize the
 * lock, few enough that other workers get their share of a long chain. */
#define BATCH 256u

/* The parallel layer's test (a cancelled taskgroup), set before main. */
static int (*cancel_hook)(void);

void up__set_cancel_hook(int (*fn)(void)) { cancel_hook = fn; }

int up__wait_in_cancelled(void) { return up__tls_task.cancelled; }

static int (*pinned_hook)(void);

void up__set_pinned_hook(int (*fn)(void)) { pinned_hook = fn; }

int up__wait_pinned(void) { return pinned_hook && pinned_hook(); }

int up_cancelled(void) { return up__tls_task.cancelled || (cancel_hook && cancel_hook()); }

up__wait *up__wait_get(up_pool *p)
{
    up__wait *ws = up__load_acquire(&p->wait);
    if (ws)
        return ws;
    ws = aligned_alloc(UP_CACHE_LINE, sizeof *ws);
    if (!ws) {
        up__set_error("out of memory for the pool's waiting state");
        return NULL;
    }
    memset(ws, 0, sizeof *ws);
    if (up__slab_init(&ws->slab) != UP_OK) {
        free(ws);
        up__set_error("out of memory for the pool's waiting state");
        return NULL;
    }
    pthread_mutex_init(&ws->rel_mu, NULL);
    pthread_mutex_init(&ws->reg_mu, NULL);
    pthread_mutex_init(&ws->timer_once, NULL);
    ws->pool = p;
    ws->refs = 1;
    up__wait *expected = NULL;
    if (up__cas_strong_acq_rel(&p->wait, &expected, ws))
        return ws;
    /* Another thread made it first. */
    up__slab_destroy(&ws->slab);
    pthread_mutex_destroy(&ws->timer_once);
    pthread_mutex_destroy(&ws->reg_mu);
    pthread_mutex_destroy(&ws->rel_mu);
    free(ws);
    return expected;
}

/* Counted accepted before the stop check, both sequentially consistent,
 * like a queue's tail CAS against its close: a stop that sets stopping and
 * then reads accepted either sees this task or this call sees the stop. */
int up__wait_accept(up__wait *ws)
{
    up__fetch_add_seqcst(&ws->accepted, 1);
    if (!up__load_seqcst(&ws->pool->stopping))
        return 1;
    up__fetch_sub_seqcst(&ws->accepted, 1);
    return 0;
}

void up__wait_unaccept(up__wait *ws) { up__fetch_sub_seqcst(&ws->accepted, 1); }

/* fresh: a new task, refused once the pool is stopping; else the resume
 * of a task already accepted and not yet counted executed, which a stop
 * waits for anyway (see up__wait_record_parked). */
static up__wrec *record(up__wait *ws, up_fn fn, void *arg, const char *who, int *rc, int fresh)
{
    up__wrec *r = up__slab_alloc(&ws->slab);
    if (!r) {
        up__set_error("%s: out of memory for a waiting record", who);
        *rc = UP_ENOMEM;
        return NULL;
    }
    if (!fresh) {
        up__fetch_add_seqcst(&ws->accepted, 1);
    } else if (!up__wait_accept(ws)) {
        up__slab_free_chain(&ws->slab, r, r, 1);
        up__set_error("%s: the pool is stopped", who);
        *rc = UP_ESTOPPED;
        return NULL;
    }
    r->fn = fn;
    r->arg = arg;
    r->next = NULL;
    return r;
}

up__wrec *up__wait_record(up__wait *ws, up_fn fn, void *arg, const char *who, int *rc)
{
    return record(ws, fn, arg, who, rc, 1);
}

up__wrec *up__wait_record_parked(up__wait *ws, up_fn fn, void *arg, const char *who, int *rc)
{
    return record(ws, fn, arg, who, rc, 0);
}

int up__wait_run_now(up_pool *p, up__wait *ws, up_fn fn, void *arg, const char *who)
{
    int rc = up_submit(p, fn, arg);
    if (rc != UP_EOVERLOAD && rc != UP_EAGAIN)
        return rc;
    up__wrec *r = up__wait_record(ws, fn, arg, who, &rc);
    if (!r)
        return rc;
    up__wait_release(ws, r, 0);
    return UP_OK;
}

/* A chain's head word: the next chain, and these flags in its low bits. */
#define CHAIN_CANCELLED UINT64_C(1)
#define CHAIN_YIELD     UINT64_C(2) /* one parked up_yield (nyield counts them) */
#define CHAIN_FLAGS     (CHAIN_CANCELLED | CHAIN_YIELD)

/* Under rel_mu: chain c becomes the list's last. */
static void link_chain(up__wait *ws, up__wrec *c, uint64_t flags)
{
    c->word = flags;
    if (flags & CHAIN_YIELD)
        up__store_relaxed(&ws->nyield, up__load_relaxed(&ws->nyield) + 1);
    if (ws->rel_last)
        ws->rel_last->word = (uint64_t)(uintptr_t)c | (ws->rel_last->word & CHAIN_FLAGS);
    else
        ws->rel_first = c;
    ws->rel_last = c;
    up__store_seqcst(&ws->nchains, up__load_relaxed(&ws->nchains) + 1);
}

static void put_chain(up__wait *ws, up__wrec *c, uint64_t flags)
{
    pthread_mutex_lock(&ws->rel_mu);
    link_chain(ws, c, flags);
    pthread_mutex_unlock(&ws->rel_mu);
    up_pool *p = ws->pool;
    up__publish_wake(p, up__home_shard(p));
    if (up__load_seqcst(&p->stopping))
        up__notify_stopper(p); /* a stop waiting without workers runs it */
}

void up__wait_release(up__wait *ws, up__wrec *chain, int cancelled)
{
    if (chain)
        put_chain(ws, chain, cancelled ? CHAIN_CANCELLED : 0);
}

void up__wait_release_yield(up__wait *ws, up__wrec *r)
{
    r->next = NULL;
    put_chain(ws, r, CHAIN_YIELD);
}

/* Takes the first chain; NULL when there is none. */
static up__wrec *pop_chain(up__wait *ws, int *cancelled)
{
    if (up__load_relaxed(&ws->nchains) == 0)
        return NULL; /* a peek; the lock decides */
    pthread_mutex_lock(&ws->rel_mu);
    up__wrec *c = ws->rel_first;
    if (c) {
        ws->rel_first = (up__wrec *)(uintptr_t)(c->word & ~CHAIN_FLAGS);
        if (!ws->rel_first)
            ws->rel_last = NULL;
        if (c->word & CHAIN_YIELD)
            up__store_relaxed(&ws->nyield, up__load_relaxed(&ws->nyield) - 1);
        up__store_seqcst(&ws->nchains, up__load_relaxed(&ws->nchains) - 1);
    }
    pthread_mutex_unlock(&ws->rel_mu);
    if (c)
        *cancelled = (int)(c->word & CHAIN_CANCELLED);
    return c;
}

/* A cancelled record runs through this trampoline, its function and
 * argument copied into the task's payload, so up_cancelled() is true
 * while it runs. */
typedef struct cancelled_call {
    up_fn fn;
    void *arg;
} cancelled_call;

static void run_cancelled(void *payload)
{
    cancelled_call c;
    memcpy(&c, payload, sizeof c);
    int saved = up__tls_task.cancelled;
    up__tls_task.cancelled = 1;
    c.fn(c.arg);
    up__task_tls_here()->cancelled = saved; /* fn may have parked: see group.c */
}

static void task_of(const up__wrec *r, int cancelled, up__task *t)
{
    if (cancelled) {
        cancelled_call c = {r->fn, r->arg};
        up__task_set_copy(t, run_cancelled, &c, sizeof c);
    } else {
        up__task_set_arg(t, r->fn, r->arg);
    }
}

/* n records taken, parks of them a parked task's: cancelled counts the
 * others only (a parked task resumed by a destroy is one more
 * tasks_resumed, pool.h). */
static void count_taken(up__wait *ws, uint64_t n, uint64_t parks, int cancelled)
{
    if (parks)
        up__fetch_add_relaxed(&ws->park_taken, parks);
    up__fetch_add_acq_rel(&ws->taken, n);
    if (cancelled && n > parks)
        up__fetch_add_relaxed(&ws->cancelled, n - parks);
}

int up__wait_take(up__worker *w, up__task *out)
{
    up_pool *p = w->pool;
    up__wait *ws = up__load_acquire(&p->wait);
    if (!ws)
        return 0;
    int cancelled = 0;
    up__wrec *c = pop_chain(ws, &cancelled);
    if (!c)
        return 0;
    /* The first record is returned to run now, the others go to this
     * worker's deque, where thieves can take them. Each is counted pushed
     * (submitted) before it is visible, as a nested submit is. */
    up__wrec *last = c, *r = c->next;
    task_of(c, cancelled, out);
    up__count_owner(&w->pushed);
    uint64_t n = 1, parks = c->fn == up__park_resume_fn;
    while (r && n < BATCH) {
        up__task t;
        /* A parked task's record points at its request on its stack (a
         * timed wait's at a ticket), untouched since it parked and, with
         * many parked, out of the caches and the TLB: the first line's
         * misses start now, while the tasks before it run. (Other records
         * carry a user's argument; a prefetch of it never faults.) */
        __builtin_prefetch((const void *)((uintptr_t)r->arg & ~(uintptr_t)3), 1);
        task_of(r, cancelled, &t);
        uint64_t pushed = up__load_relaxed(&w->pushed);
        up__store_relaxed(&w->pushed, pushed + 1);
        if (up__deque_push(&w->dq, &t) != UP__DEQUE_OK) {
            up__store_relaxed(&w->pushed, pushed);
            break;
        }
        parks += r->fn == up__park_resume_fn;
        last = r;
        r = r->next;
        n++;
    }
    /* Taken after the pushed counts: a stop that reads taken (acquire)
     * and then the submitted counts sees these tasks submitted. */
    count_taken(ws, n, parks, cancelled);
    up__slab_free_chain(&ws->slab, c, last, n);
    /* The rest of the chain goes to the back: chains are served round
     * robin, BATCH records at a time, so a short chain (a ticker's run)
     * released behind a chain of 1e8 waits for one batch, not for all. */
    if (r)
        put_chain(ws, r, cancelled ? CHAIN_CANCELLED : 0);
    else if (n > 1)
        up__publish_wake(p, w->shard);
    return 1;
}

int up__wait_take_early(up__worker *w, up__task *out)
{
    up__wait *ws = up__load_acquire(&w->pool->wait);
    if (!ws || up__load_relaxed(&ws->nchains) == 0 || up__load_relaxed(&ws->nyield) != 0)
        return 0;
    return up__wait_take(w, out);
}

int up__wait_released_any(up_pool *p)
{
    up__wait *ws = up__load_acquire(&p->wait);
    return ws && up__load_seqcst(&ws->nchains) != 0;
}

int up__wait_drain_here(up_pool *p)
{
    up__wait *ws = up__load_acquire(&p->wait);
    if (!ws)
        return 0;
    int ran = 0, cancelled = 0;
    up__wrec *c;
    while ((c = pop_chain(ws, &cancelled)) != NULL) {
        up__wrec *last = NULL;
        uint64_t n = 0;
        for (up__wrec *r = c; r;) {
            up__task t;
            task_of(r, cancelled, &t);
            last = r;
            r = r->next;
            n++;
            /* Submitted (direct_run), then taken, then run and counted
             * executed on the one path (up__run_counted). */
            up__fetch_add_acq_rel(&ws->direct_run, 1);
            count_taken(ws, 1, last->fn == up__park_resume_fn, cancelled);
            up__run_counted(p, NULL, &p->shards[0], &t);
        }
        up__slab_free_chain(&ws->slab, c, last, n);
        ran = 1;
    }
    return ran;
}

int up__wait_settled(up_pool *p)
{
    up__wait *ws = up__load_acquire(&p->wait);
    if (!ws)
        return 1;
    uint64_t taken = up__load_acquire(&ws->taken);
    return up__load_seqcst(&ws->accepted) == taken;
}

void up__wait_cancel_all(up_pool *p)
{
    /* Made if the pool has none yet: a task the destroy waits for may
     * still make its first wait, and would make the state then, not
     * cancelling, with a timer thread that nothing joins (timer.c,
     * wheel_get). Made here, the state carries the cancel. */
    up__wait *ws = up__wait_get(p);
    if (!ws)
        return;
    /* Announced before the sweep: a submit_on that passed its stop check
     * before the stop and publishes after the sweep sees the flag and
     * sweeps its event itself (event.c). */
    up__store_seqcst(&ws->cancelling, 1);
    pthread_mutex_lock(&ws->reg_mu);
    for (up_event *ev = ws->events; ev; ev = ev->reg_next)
        up__event_cancel_waiters(ev);
    pthread_mutex_unlock(&ws->reg_mu);
    up__timer_cancel_all(ws);
}

void up__wait_unref(up__wait *ws)
{
    pthread_mutex_lock(&ws->reg_mu);
    int last = --ws->refs == 0;
    pthread_mutex_unlock(&ws->reg_mu);
    if (!last)
        return;
    pthread_mutex_destroy(&ws->timer_once);
    pthread_mutex_destroy(&ws->reg_mu);
    pthread_mutex_destroy(&ws->rel_mu);
    free(ws);
}

void up__wait_free(up_pool *p)
{
    up__park_free_pool(p);
    up__wait *ws = up__load_acquire(&p->wait);
    if (!ws)
        return;
    up__timer_free(ws);
    up__slab_destroy(&ws->slab);
    pthread_mutex_lock(&ws->reg_mu);
    ws->pool = NULL; /* events that outlive the pool refuse new waiters */
    pthread_mutex_unlock(&ws->reg_mu);
    up__store_relaxed(&p->wait, NULL);
    up__wait_unref(ws);
}

void up__wait_stats(const up_pool *cp, up_stats *out)
{
    up_pool *p = (up_pool *)cp;
    up__wait *ws = up__load_acquire(&p->wait);
    if (!ws)
        return;
    /* taken before accepted: waiting never shows negative. Parked tasks'
     * records are left out of waiting and released (counted as
     * tasks_parked and tasks_resumed); each counter is read on its own,
     * so a difference is clamped at 0 while a record moves. */
    uint64_t park_taken = up__load_acquire(&ws->park_taken);
    uint64_t taken = up__load_acquire(&ws->taken);
    uint64_t cancelled = up__load_relaxed(&ws->cancelled);
    uint64_t park_accepted = up__load_acquire(&ws->park_accepted);
    uint64_t accepted = up__load_acquire(&ws->accepted);
    uint64_t all = accepted - taken;
    uint64_t parks = park_accepted > park_taken ? park_accepted - park_taken : 0;
    uint64_t plain_taken = taken > park_taken ? taken - park_taken : 0;
    out->waiting = all > parks ? all - parks : 0;
    out->released = plain_taken > cancelled ? plain_taken - cancelled : 0;
    out->cancelled = cancelled;
    out->submitted += up__load_acquire(&ws->direct_run);
    /* resumed before parked: parked-now never shows negative. */
    uint64_t resumed = up__load_acquire(&ws->tasks_resumed);
    uint64_t parked = up__load_acquire(&ws->tasks_parked);
    out->tasks_parked = parked > resumed ? parked - resumed : 0;
    out->tasks_resumed = resumed;
}
