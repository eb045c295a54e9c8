/* Timers: up_submit_after and periodic timers, on one hierarchical timer
 * wheel per pool driven by one timer thread, started when the pool first
 * uses a timer.
 *
 * Why one wheel per pool and a thread of its own. A wheel per shard would
 * need a thread (or a worker's attention) per shard to advance it, and a
 * task released on time can run on any worker anyway; one wheel keeps the
 * next deadline in one place, so the thread sleeps exactly until it (no
 * CPU while no timer is due). The monitor (monitor.c) sleeps by its own
 * rule (spawn_delay while there is a backlog, untimed otherwise) and exits
 * when the workers do, while a submit_after accepted before a stop must
 * still fire after it; a separate thread keeps both rules simple.
 *
 * The wheel. A tick is 2^20 ns (1.05 ms). Level L (0..5) has 64 slots of
 * 64^L ticks each; a record due at tick e sits at the lowest level L where
 * (e >> 6L) - (now >> 6L) < 64, in slot (e >> 6L) & 63, so inserting is
 * O(1) under the wheel's mutex. Six levels span 64^6 ticks (2.3 years);
 * later deadlines wait in the top level's farthest slot and are placed
 * again whenever it comes round. When the wheel reaches a tick whose low
 * 6L bits are zero, the slot of level L for that tick is cascaded: its
 * records are placed again, from the highest such level down, so they
 * reach level 0 by their tick; level 0's slot for the tick expires. The
 * thread jumps over ticks at which no slot needs processing (found from
 * the occupancy bitmasks), so a long sleep costs a few steps, not one per
 * tick. A record is never released before its deadline: its tick is the
 * deadline rounded up, and the wheel processes a tick only once the
 * monotonic clock has passed its start.
 *
 * Expired records are handed to the pool's release list as one chain per
 * wake-up (wait.c), outside the wheel's lock. */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "os/os.h"
#include "pool_internal.h"
#include "wait_internal.h"

#define TICK_SHIFT 20
#define LEVELS     6
#define SLOT_BITS  6
#define SLOTS      64u

typedef struct up__timer_wheel {
    pthread_mutex_t mu;
    up__wrec *slot[LEVELS][SLOTS]; /* (lock mu) */
    uint64_t occ[LEVELS];          /* (lock mu) bit j: slot j is not empty */
    uint64_t now;                  /* (lock mu) the last tick processed */
    uint64_t wake;     /* (lock mu) the tick the thread sleeps until (UINT64_MAX: none) */
    int closed;        /* (lock mu) a destroy took every record */
    up__parker parker; /* the thread sleeps here */
    pthread_t thread;
    int threaded; /* (ro) thread was started: born closed, a wheel has none */
    up__wait *ws;
} up__timer_wheel;

/* A periodic timer. Its wheel record is part of it (it never reaches the
 * release list); each run is a fresh slab record released like any other. */
enum { TIMER_STOPPED = 1, TIMER_INFLIGHT = 2 };

struct up_timer {
    up__wrec wheel_rec;       /* (lock wheel mu) fn == fire_marker, arg == the timer */
    up__wait *ws;             /* (ro) */
    up_fn fn;                 /* (ro) */
    void *arg;                /* (ro) */
    uint64_t period_ns;       /* (ro) 0: one run */
    uint64_t next_ns;         /* (lock wheel mu) the deadline of the next run */
    _Atomic unsigned state;   /* (atomic) TIMER_* bits */
    _Atomic unsigned refs;    /* (atomic) the user's, the wheel's, a run's in flight */
    _Atomic uint64_t skipped; /* (atomic) deadlines reached and not run (wait.h) */
    up__event done;           /* a stop waits here for the run in flight */
};

static void fire_marker(void *arg) { (void)arg; }

static uint64_t tick_of(uint64_t ns) /* rounded up */
{
    return (ns >> TICK_SHIFT) + ((ns & ((UINT64_C(1) << TICK_SHIFT) - 1)) != 0);
}

static void timer_unref(up_timer *t)
{
    up__assert_internal(up__load_relaxed(&t->refs) >= 1); /* the caller holds one */
    if (up__fetch_sub_acq_rel(&t->refs, 1) == 1) {
        up__event_destroy(&t->done);
        free(t);
    }
}

/* Under mu: places r (due at tick r->word) on the wheel; 0 when it is due
 * already (the caller releases it). */
static int place(up__timer_wheel *w, up__wrec *r)
{
    uint64_t e = r->word, now = w->now;
    if (e <= now)
        return 0;
    for (unsigned l = 0; l < LEVELS; l++) {
        unsigned sh = l * SLOT_BITS;
        uint64_t d = (e >> sh) - (now >> sh);
        if (d < SLOTS || l == LEVELS - 1) {
            if (d >= SLOTS)
                d = SLOTS - 1; /* beyond the wheel: the top level's farthest slot */
            unsigned j = (unsigned)(((now >> sh) + d) & (SLOTS - 1));
            r->next = w->slot[l][j];
            w->slot[l][j] = r;
            w->occ[l] |= UINT64_C(1) << j;
            return 1;
        }
    }
    return 1; /* not reached */
}

/* Under mu: the next tick at which some slot needs processing. */
static uint64_t next_tick(const up__timer_wheel *w)
{
    uint64_t best = UINT64_MAX;
    for (unsigned l = 0; l < LEVELS; l++) {
        uint64_t m = w->occ[l];
        if (!m)
            continue;
        unsigned sh = l * SLOT_BITS;
        unsigned cur = (unsigned)((w->now >> sh) & (SLOTS - 1));
        unsigned s = (cur + 1) & (SLOTS - 1);
        uint64_t rot = s ? (m >> s) | (m << (SLOTS - s)) : m;
        unsigned k = ((s + (unsigned)__builtin_ctzll(rot)) - cur) & (SLOTS - 1);
        if (k == 0)
            k = SLOTS; /* the slot just processed: a full turn away */
        uint64_t t = l == 0 ? w->now + k : ((w->now >> sh) + k) << sh;
        if (t < best)
            best = t;
    }
    return best;
}

/* Under mu: moves the wheel to tick target; expired records are prepended
 * to *out. */
static void advance(up__timer_wheel *w, uint64_t target, up__wrec **out)
{
    while (w->now < target) {
        uint64_t t = next_tick(w);
        if (t > target) {
            w->now = target;
            return;
        }
        w->now = t;
        for (unsigned l = LEVELS - 1; l >= 1; l--) {
            unsigned sh = l * SLOT_BITS;
            if (t & ((UINT64_C(1) << sh) - 1))
                continue;
            unsigned j = (unsigned)((t >> sh) & (SLOTS - 1));
            up__wrec *r = w->slot[l][j];
            w->slot[l][j] = NULL;
            w->occ[l] &= ~(UINT64_C(1) << j);
            while (r) {
                up__wrec *next = r->next;
                if (!place(w, r)) {
                    r->next = *out;
                    *out = r;
                }
                r = next;
            }
        }
        unsigned j = (unsigned)(t & (SLOTS - 1));
        up__wrec *r = w->slot[0][j];
        w->slot[0][j] = NULL;
        w->occ[0] &= ~(UINT64_C(1) << j);
        while (r) {
            up__wrec *next = r->next;
            r->next = *out;
            *out = r;
            r = next;
        }
    }
}

static void timer_run(void *arg);

/* Under mu: a periodic timer's record came due. Queues a run unless the
 * timer or the pool stopped, or the last run is still in flight (skipped:
 * a ticker never piles up), then places the record for the next period.
 * Returns a run record to release, or NULL; *drop: the wheel lets go of
 * the timer (the caller drops that reference outside the lock). */
static up__wrec *fire(up__timer_wheel *w, up_timer *t, uint64_t now_ns, int *drop)
{
    *drop = 0;
    up__wait *ws = w->ws;
    if ((up__load_acquire(&t->state) & TIMER_STOPPED) || up__load_seqcst(&ws->pool->stopping)) {
        *drop = 1;
        return NULL;
    }
    up__wrec *run = NULL;
    unsigned st = 0;
    if (!up__cas_strong_acq_rel(&t->state, &st, TIMER_INFLIGHT)) {
        if (st & TIMER_STOPPED) {
            *drop = 1;
            return NULL;
        }
        up__fetch_add_relaxed(&t->skipped, 1);
    } else {
        run = up__slab_alloc(&ws->slab);
        if (run && !up__wait_accept(ws)) {
            up__slab_free_chain(&ws->slab, run, run, 1);
            run = NULL;
        }
        if (!run) {
            up__fetch_and_acq_rel(&t->state, ~(unsigned)TIMER_INFLIGHT);
            up__fetch_add_relaxed(&t->skipped, 1);
        } else {
            up__fetch_add_relaxed(&t->refs, 1); /* the run's */
            run->fn = timer_run;
            run->arg = t;
        }
    }
    if (t->period_ns == 0) {
        *drop = 1;
        return run;
    }
    /* The next deadline after now: the deadlines between, passed already
     * (this thread woke late, or the period is below a tick), are skipped
     * and counted, not replayed, so every deadline up to now_ns is run or
     * counted once (wait.h). A deadline past the clock's range is never
     * (UINT64_MAX), not a wrapped one already due. */
    uint64_t next = t->period_ns > UINT64_MAX - t->next_ns ? UINT64_MAX : t->next_ns + t->period_ns;
    if (next <= now_ns) {
        uint64_t behind = (now_ns - t->next_ns) / t->period_ns;
        next = t->next_ns + (behind + 1) * t->period_ns;
        up__fetch_add_relaxed(&t->skipped, behind);
    }
    t->next_ns = next;
    t->wheel_rec.word = tick_of(next);
    if (!place(w, &t->wheel_rec)) {
        t->wheel_rec.word = w->now + 1; /* due already: at the next tick */
        place(w, &t->wheel_rec);
    }
    return run;
}

static void *timer_main(void *arg)
{
    up__timer_wheel *w = arg;
    up__wait *ws = w->ws;
    /* Its own name: it would keep the name of the worker that started it. */
    up__os_name_self("up-timer");
    pthread_mutex_lock(&w->mu);
    while (!w->closed) {
        uint64_t now_ns = up__now_ns();
        up__wrec *due = NULL, *release = NULL, *runs = NULL;
        advance(w, now_ns >> TICK_SHIFT, &due);
        up_timer *drops[64];
        unsigned ndrops = 0;
        while (due) {
            up__wrec *r = due;
            due = r->next;
            if (r->fn != fire_marker) {
                r->next = release;
                release = r;
                continue;
            }
            int drop;
            up__wrec *run = fire(w, r->arg, now_ns, &drop);
            if (run) {
                run->next = runs;
                runs = run;
            }
            if (drop) {
                if (ndrops == 64) { /* rare: many timers stopped at once */
                    pthread_mutex_unlock(&w->mu);
                    for (unsigned i = 0; i < ndrops; i++)
                        timer_unref(drops[i]);
                    pthread_mutex_lock(&w->mu);
                    ndrops = 0;
                }
                drops[ndrops++] = r->arg;
            }
        }
        uint64_t next = next_tick(w);
        w->wake = next;
        pthread_mutex_unlock(&w->mu);
        for (unsigned i = 0; i < ndrops; i++)
            timer_unref(drops[i]);
        /* Periodic runs first, as a chain of their own: a ticker is not
         * queued behind a bulk of expired tasks. */
        if (runs)
            up__wait_release(ws, runs, 0);
        if (release)
            up__wait_release(ws, release, 0);
        if (next == UINT64_MAX) {
            up__parker_wait(&w->parker, UINT64_MAX);
        } else {
            uint64_t at = next > (UINT64_MAX >> TICK_SHIFT) ? UINT64_MAX : next << TICK_SHIFT;
            uint64_t left = up__remaining_ns(at);
            if (left)
                up__parker_wait(&w->parker, left);
        }
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* The pool's wheel, started on first use; NULL when it cannot be.
 *
 * A wheel first wanted after a destroy's cancel (up__timer_cancel_all)
 * is born closed and gets no thread: a task accepted before the destroy
 * may park with a sleep or a timed wait while the destroy waits for it,
 * and its timer record is then released cancelled at once, as on a wheel
 * the cancel closed. A thread started then would never be joined: the
 * cancel, which joins it, has run, and the pool's end would free the
 * wheel under it (the soak's crash in the freed wheel's mutex, and its
 * use of the freed pool state). timer_once orders the two: the cancel
 * sets timer_closed under it, and a start reads it under it. */
static up__timer_wheel *wheel_get(up__wait *ws)
{
    up__timer_wheel *w = up__load_acquire(&ws->wheel);
    if (w)
        return w;
    pthread_mutex_lock(&ws->timer_once);
    w = up__load_acquire(&ws->wheel);
    if (!w) {
        w = calloc(1, sizeof *w);
        if (w && up__parker_init(&w->parker) != 0) {
            free(w);
            w = NULL;
        }
        if (w) {
            pthread_mutex_init(&w->mu, NULL);
            w->ws = ws;
            w->now = up__now_ns() >> TICK_SHIFT;
            w->wake = UINT64_MAX;
            w->closed = ws->timer_closed;
            int rc = 0;
            if (!w->closed) {
                sigset_t old;
                up__os_block_signals(&old, 0); /* the timer thread takes no signal */
                rc = pthread_create(&w->thread, NULL, timer_main, w);
                up__os_restore_signals(&old);
                w->threaded = rc == 0;
            }
            if (rc != 0) {
                up__parker_destroy(&w->parker);
                pthread_mutex_destroy(&w->mu);
                free(w);
                w = NULL;
            } else {
                up__store_release(&ws->wheel, w);
            }
        }
    }
    pthread_mutex_unlock(&ws->timer_once);
    if (!w)
        up__set_error("the pool's timer thread could not be started");
    return w;
}

/* Under mu, after placing a record due at tick e: the thread wakes
 * earlier if it would sleep past e. */
static int needs_post(up__timer_wheel *w, uint64_t e)
{
    if (e >= w->wake)
        return 0;
    w->wake = e;
    return 1;
}

int up__timer_remove(up__wait *ws, up__wrec *r, uint64_t deadline_ns, const void *arg)
{
    up__timer_wheel *w = up__load_acquire(&ws->wheel);
    if (!w)
        return 0;
    int found = 0;
    pthread_mutex_lock(&w->mu);
    /* A record due at tick e sits, at level l, in slot (e >> 6l) & 63
     * (place() puts it where the wheel's position reaches e at that
     * level), or beyond the wheel in the top level's farthest slot: look
     * in those lists only. The tick comes from the caller's deadline, not
     * from r->word: once r has fired (or a destroy took it) it is on the
     * release list, which writes word under its own lock. And r itself is
     * read only once found on the wheel, under mu, where it is the wheel's:
     * off the wheel it may have been freed already and reused for another
     * wait (park_task.c), so a record at r's address counts only if it
     * still holds the caller's arg. */
    uint64_t e = tick_of(deadline_ns);
    for (unsigned l = 0; l < LEVELS && !found && !w->closed; l++) {
        unsigned cand[2] = {(unsigned)((e >> (l * SLOT_BITS)) & (SLOTS - 1)),
                            (unsigned)(((w->now >> (l * SLOT_BITS)) + SLOTS - 1) & (SLOTS - 1))};
        for (unsigned c = 0; c < (l == LEVELS - 1 ? 2u : 1u) && !found; c++) {
            unsigned j = cand[c];
            for (up__wrec **pp = &w->slot[l][j]; *pp; pp = &(*pp)->next) {
                if (*pp == r && r->arg == arg) {
                    *pp = r->next;
                    if (!w->slot[l][j])
                        w->occ[l] &= ~(UINT64_C(1) << j);
                    found = 1;
                    break;
                }
            }
        }
    }
    pthread_mutex_unlock(&w->mu);
    return found;
}

int up__timer_ensure(up__wait *ws) { return wheel_get(ws) ? UP_OK : UP_EAGAIN; }

int up__timer_push(up__wait *ws, up__wrec *r, uint64_t deadline_ns)
{
    up__timer_wheel *w = wheel_get(ws);
    if (!w)
        return UP_EAGAIN;
    r->word = tick_of(deadline_ns);
    pthread_mutex_lock(&w->mu);
    int closed = w->closed, placed = 0, post = 0;
    if (!closed) {
        placed = place(w, r);
        post = placed && needs_post(w, r->word);
    }
    pthread_mutex_unlock(&w->mu);
    if (post)
        up__parker_post(&w->parker);
    if (!placed) {
        r->next = NULL;
        up__wait_release(ws, r, closed);
    }
    return UP_OK;
}

void up__timer_cancel_all(up__wait *ws)
{
    pthread_mutex_lock(&ws->timer_once);
    ws->timer_closed = 1; /* a wheel started from now on is born closed */
    up__timer_wheel *w = up__load_acquire(&ws->wheel);
    pthread_mutex_unlock(&ws->timer_once);
    if (!w)
        return;
    up__wrec *all = NULL;
    pthread_mutex_lock(&w->mu);
    w->closed = 1;
    for (unsigned l = 0; l < LEVELS; l++) {
        for (unsigned j = 0; j < SLOTS; j++) {
            up__wrec *r = w->slot[l][j];
            while (r) {
                up__wrec *next = r->next;
                r->next = all;
                all = r;
                r = next;
            }
            w->slot[l][j] = NULL;
        }
        w->occ[l] = 0;
    }
    pthread_mutex_unlock(&w->mu);
    up__parker_post(&w->parker);
    if (w->threaded)
        pthread_join(w->thread, NULL);
    up__wrec *cancel = NULL;
    while (all) {
        up__wrec *r = all;
        all = r->next;
        if (r->fn == fire_marker) {
            timer_unref(r->arg);
        } else {
            r->next = cancel;
            cancel = r;
        }
    }
    if (cancel)
        up__wait_release(ws, cancel, 1);
}

void up__timer_free(up__wait *ws)
{
    up__timer_wheel *w = up__load_acquire(&ws->wheel);
    if (!w)
        return;
    up__parker_destroy(&w->parker);
    pthread_mutex_destroy(&w->mu);
    free(w);
    up__store_relaxed(&ws->wheel, NULL);
}

int up_submit_after(up_pool *p, uint64_t delay_ns, up_fn fn, void *arg)
{
    if (!p || !fn) {
        up__set_error("submit_after: %s is NULL", !p ? "pool" : "fn");
        return UP_EINVAL;
    }
    up__wait *ws = up__wait_get(p);
    if (!ws)
        return UP_ENOMEM;
    if (delay_ns == 0)
        return up__wait_run_now(p, ws, fn, arg, "submit_after");
    uint64_t deadline = up__deadline_after(delay_ns);
    int rc;
    up__wrec *r = up__wait_record(ws, fn, arg, "submit_after", &rc);
    if (!r)
        return rc;
    rc = up__timer_push(ws, r, deadline);
    if (rc != UP_OK) {
        up__wait_unaccept(ws);
        up__slab_free_chain(&ws->slab, r, r, 1);
    }
    return rc;
}

static void timer_run(void *arg)
{
    up_timer *t = arg;
    /* Only fire sets INFLIGHT, for this run, and only this run clears it. */
    up__assert_internal(
        (up__load_relaxed(&t->state) & ~(unsigned)(TIMER_STOPPED | TIMER_INFLIGHT)) == 0);
    up__assert_internal(up__load_relaxed(&t->state) & TIMER_INFLIGHT);
    if (!(up__load_acquire(&t->state) & TIMER_STOPPED)) {
        up_timer *saved = up__tls_task.timer;
        up__tls_task.timer = t;
        t->fn(t->arg);
        up__task_tls_here()->timer = saved; /* fn may have parked: see group.c */
    } else {
        up__fetch_add_relaxed(&t->skipped, 1); /* queued, then stopped: its deadline was reached */
    }
    up__fetch_and_acq_rel(&t->state, ~(unsigned)TIMER_INFLIGHT);
    up__event_notify_all(&t->done);
    timer_unref(t);
}

int up_timer_start(up_timer **out, up_pool *p, uint64_t first_ns, uint64_t period_ns, up_fn fn,
                   void *arg)
{
    if (!out || !p || !fn) {
        up__set_error("timer_start: %s is NULL", !out ? "out" : !p ? "pool" : "fn");
        if (out)
            *out = NULL;
        return UP_EINVAL;
    }
    *out = NULL;
    up__wait *ws = up__wait_get(p);
    if (!ws)
        return UP_ENOMEM;
    if (up__load_seqcst(&p->stopping)) {
        up__set_error("timer_start: the pool is stopped");
        return UP_ESTOPPED;
    }
    up__timer_wheel *w = wheel_get(ws);
    if (!w)
        return UP_EAGAIN;
    up_timer *t = calloc(1, sizeof *t);
    if (!t || up__event_init(&t->done) != 0) {
        free(t);
        up__set_error("out of memory for a timer");
        return UP_ENOMEM;
    }
    t->ws = ws;
    t->fn = fn;
    t->arg = arg;
    t->period_ns = period_ns;
    t->next_ns = up__deadline_after(first_ns);
    atomic_init(&t->refs, 2); /* the user's and the wheel's */
    t->wheel_rec.fn = fire_marker;
    t->wheel_rec.arg = t;
    t->wheel_rec.word = tick_of(t->next_ns);
    /* Before the timer can fire: a run may read *out (to stop itself). */
    *out = t;
    pthread_mutex_lock(&w->mu);
    int closed = w->closed, post = 0;
    if (!closed) {
        if (!place(w, &t->wheel_rec)) {
            t->wheel_rec.word = w->now + 1; /* due already: at the next tick */
            place(w, &t->wheel_rec);
        }
        post = needs_post(w, t->wheel_rec.word);
    }
    pthread_mutex_unlock(&w->mu);
    if (post)
        up__parker_post(&w->parker);
    if (closed)
        timer_unref(t); /* the wheel's: it will never fire */
    return UP_OK;
}

int up_timer_stop(up_timer *t)
{
    if (!t) {
        up__set_error("timer_stop: timer is NULL");
        return UP_EINVAL;
    }
    up__fetch_or_seqcst(&t->state, TIMER_STOPPED);
    if (up__tls_task.timer == t) {
        timer_unref(t); /* the user's; the run in progress holds its own */
        up__set_error("timer_stop: called from the timer's own run");
        return UP_EDEADLK;
    }
    for (;;) {
        uint32_t key = up__event_key(&t->done);
        if (!(up__load_acquire(&t->state) & TIMER_INFLIGHT))
            break;
        up__event_wait(&t->done, key, UINT64_MAX);
    }
    timer_unref(t);
    return UP_OK;
}

uint64_t up_timer_skipped(const up_timer *t)
{
    return t ? up__load_relaxed(&((up_timer *)t)->skipped) : 0;
}
