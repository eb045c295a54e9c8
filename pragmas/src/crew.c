/* Docking: the members of a top-level region stay with its master for the
 * next one, as OpenMP's threads stay with their team.
 *
 * Why. GCC keeps threadprivate variables in thread-local storage, and
 * OpenMP says their values persist from one region to the next when both
 * are top-level and of the same size with dynamic adjustment off: member i
 * must be the same thread every time. And the next region starts sooner
 * when its threads are waiting for it than when they must be found in the
 * pool's queue again.
 *
 * How. A team opened with exactly its size (PAR_TEAM_FULL: the GOMP ABI
 * with dynamic adjustment off) at the top level by a thread outside the
 * pool is a docking team (t->dock). Each member that runs its part straight
 * from a worker's loop docks when it leaves: it sets its dock word to
 * PAR_DOCK_WAIT before its arrival in the team's left count, and marks its
 * slot. The master, once every member has left, records each docked
 * thread in its crew under its member number. A docked thread spins for
 * the pool's budget (par_spin), then parks. The master's next docking
 * region posts itself to the crew's threads of numbers below its size,
 * having filled a slot of the team for each with its old number as its
 * wish: a posted thread skips the gathering's CAS and handshake and only
 * waits for the start. The queue's member tasks are only for the rest. A region smaller than the
 * crew leaves the others docked. A release (the master's thread ends, or the OpenMP pool is paused)
 * posts PAR_DOCK_FREE: the thread goes back to the pool's loop.
 *
 * The dock word. Its owner (the docked thread) moves it NONE -> WAIT when
 * it docks, WAIT -> SLEEP (a seq_cst CAS) before it parks, and back to
 * NONE once it has read a post. A poster (the master, or a release under
 * the crew's lock) moves WAIT or SLEEP to the post (a team, or FREE) with
 * a CAS. Invariant: a thread in the crew is docked (its word is WAIT or
 * SLEEP), and exactly one post ends each docking: the crew entry is
 * cleared by the poster whose CAS succeeded, under the crew's lock. A CAS
 * from SLEEP owes the sleeper one wake-up: the poster gives it its token
 * (up__waiter_wake), and the sleeper, whose own CAS to SLEEP succeeded,
 * parks until it has that token, so no token is left on the worker's
 * parker. A docked thread is inside a pool task (its member task), so a
 * pool's destroy waits for it: the OpenMP pool's pause releases every crew
 * on it first (par_crews_release). */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

#include "par_internal.h"

struct par_crew {
    pthread_mutex_t lock;
    up_pool *pool;   /* (lock) the pool its threads work for */
    par_thread **th; /* (lock) th[i]: docked as member i, or NULL; th[0] unused */
    unsigned cap;    /* (lock) entries in th */
    par_crew *next;  /* (crews_lock) every crew, for a pause */
};

static pthread_mutex_t crews_lock = PTHREAD_MUTEX_INITIALIZER;
static par_crew *crews;

int par_dock_allowed(const par_team *outer, unsigned level, par_team_mode mode)
{
    /* A master inside a pool task has no lasting thread (the task may
     * move), and a nested team's members belong to their enclosing one. */
    return mode == PAR_TEAM_FULL && level == 1 && !outer && !up_current_pool();
}

/* Posts p to th, docked: 1 if th took it, 0 if th was not docked. */
static int post(par_thread *th, uintptr_t p)
{
    uintptr_t w = up__load_seqcst(&th->dock);
    while (w == PAR_DOCK_WAIT || w == PAR_DOCK_SLEEP) {
        if (up__cas_strong_seqcst(&th->dock, &w, p)) {
            if (w == PAR_DOCK_SLEEP)
                up__waiter_wake(th->pk);
            return 1;
        }
    }
    return 0;
}

unsigned par_crew_post(par_thread *master, par_team *t, unsigned n)
{
    par_crew *c = master->crew;
    if (!c)
        return 0;
    unsigned posted = 0;
    pthread_mutex_lock(&c->lock);
    /* A stopped pool (a pause under way) has released its crews: nothing
     * docked is left to post. */
    if (c->pool == t->pool && !up__pool_stopped(t->pool)) {
        for (unsigned i = 1; i < n && i < c->cap; i++) {
            par_thread *th = c->th[i];
            if (!th)
                continue;
            c->th[i] = NULL;
            /* Docked (the invariant): only posters, under this lock, end
             * a docking, so the state holds until the CAS. */
            uintptr_t d = up__load_acquire(&th->dock);
            up__assert_internal(d == PAR_DOCK_WAIT || d == PAR_DOCK_SLEEP);
            if (d != PAR_DOCK_WAIT && d != PAR_DOCK_SLEEP)
                continue;
            /* th's slot, filled here: it joins without the gathering's
             * CAS and handshake, as member i again (number_members). Read
             * by th after the post's CAS. */
            unsigned slot = 1 + posted;
            par_slot_take(&t->members[slot], t, th);
            up__store_relaxed(&t->members[slot].pref, i + 2);
            th->dock_slot = slot;
            up__fetch_add_relaxed(&t->refs, 1);
            if (post(th, (uintptr_t)t))
                posted++;
            else
                up__fetch_sub_relaxed(&t->refs, 1);
        }
    }
    pthread_mutex_unlock(&c->lock);
    return posted;
}

/* Sends docked th back to its pool's loop. Until it is there it counts
 * as a starting worker (up__return_expected, counted before the post so
 * that its loop cannot take the count back first): a region gathered
 * meanwhile has the pool wait for it instead of starting a thread. */
static void post_free(par_thread *th)
{
    up_pool *pool = th->dock_pool;
    up__return_expected(pool, 1);
    if (!post(th, PAR_DOCK_FREE))
        up__return_expected(pool, -1);
}

/* Releases up to max of c's docked threads; returns how many. */
static unsigned release_locked(par_crew *c, unsigned max)
{
    unsigned n = 0;
    for (unsigned i = c->cap; i-- > 1 && n < max;)
        if (c->th[i]) {
            post_free(c->th[i]);
            c->th[i] = NULL;
            n++;
        }
    return n;
}

static par_crew *crew_of(par_thread *master)
{
    if (master->crew)
        return master->crew;
    par_crew *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_lock(&crews_lock);
    c->next = crews;
    crews = c;
    pthread_mutex_unlock(&crews_lock);
    master->crew = c;
    return c;
}

void par_crew_update(par_thread *master, par_team *t)
{
    unsigned size = up__load_relaxed(&t->size);
    par_crew *c = crew_of(master);
    par_thread **th = NULL; /* the crew's entries, or NULL: no docking */
    if (c) {
        pthread_mutex_lock(&c->lock);
        if (c->pool != t->pool) {
            release_locked(c, UINT_MAX);
            c->pool = t->pool;
        }
        if (c->cap < size) {
            par_thread **more = realloc(c->th, size * sizeof *more);
            if (more) {
                for (unsigned i = c->cap; i < size; i++)
                    more[i] = NULL;
                c->th = more;
                c->cap = size;
            }
        }
        /* A pause under way stops the pool before it releases the crews:
         * a region ending after that release docks nobody, or the pool's
         * destroy would wait for its members. */
        if (c->cap >= size && !up__pool_stopped(t->pool))
            th = c->th;
    }
    for (unsigned s = 1; s < size; s++) {
        par_member *m = &t->members[s];
        if (!m->docks)
            continue;
        if (th) {
            /* An entry still set was not posted: only a region of this
             * size could have, so it cannot be, but a thread left docked
             * with no crew entry would never come back. */
            if (th[m->index])
                post_free(th[m->index]);
            th[m->index] = m->th;
        } else {
            post_free(m->th); /* no crew (memory, a pause): no docking */
        }
    }
    if (c)
        pthread_mutex_unlock(&c->lock);
}

void par_dock_mark(par_thread *th, par_team *t, par_member *slot)
{
    slot->th = th;
    slot->docks = th->dock_ok && t->dock && th->c.member != 0;
    if (slot->docks) {
        th->dock_pool = t->pool;
        up__store_relaxed(&th->dock, PAR_DOCK_WAIT);
    }
}

/* The docked thread's wait for a post. */
static uintptr_t dock_wait(par_thread *th)
{
    unsigned spins = 0;
    for (;;) {
        uintptr_t d = up__load_acquire(&th->dock);
        if (d != PAR_DOCK_WAIT)
            return d;
        if (par_spin(th, &spins, up__pool_spin(th->dock_pool)))
            continue;
        uintptr_t w = PAR_DOCK_WAIT;
        if (!up__cas_strong_seqcst(&th->dock, &w, PAR_DOCK_SLEEP))
            return w; /* posted meanwhile, no wake-up owed */
        /* The poster that moves SLEEP owes one token: wait for it. */
        do
            up__waiter_park(th->dock_pool, th->pk, UINT64_MAX);
        while ((d = up__load_acquire(&th->dock)) == PAR_DOCK_SLEEP);
        return d;
    }
}

void par_dock_serve(par_thread *th)
{
    while (up__load_relaxed(&th->dock) != PAR_DOCK_NONE) {
        uintptr_t d = dock_wait(th);
        up__store_relaxed(&th->dock, PAR_DOCK_NONE);
        if (d == PAR_DOCK_FREE) {
            up__return_mark(th->dock_pool); /* counted by post_free */
            return;
        }
        par_team *t = (par_team *)d;
        /* Still the worker's task at its loop: it may dock again. */
        th->dock_ok = 1;
        par_member_start(th, t, th->dock_slot);
    }
}

void par_crew_drop(par_thread *master)
{
    par_crew *c = master->crew;
    if (!c)
        return;
    pthread_mutex_lock(&crews_lock);
    for (par_crew **p = &crews; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            break;
        }
    pthread_mutex_unlock(&crews_lock);
    pthread_mutex_lock(&c->lock);
    release_locked(c, UINT_MAX);
    pthread_mutex_unlock(&c->lock);
    pthread_mutex_destroy(&c->lock);
    free(c->th);
    free(c);
    master->crew = NULL;
}

unsigned par_crews_release(const up_pool *pool, unsigned max)
{
    unsigned n = 0;
    pthread_mutex_lock(&crews_lock);
    for (par_crew *c = crews; c && n < max; c = c->next) {
        pthread_mutex_lock(&c->lock);
        if (c->pool == pool)
            n += release_locked(c, max - n);
        pthread_mutex_unlock(&c->lock);
    }
    pthread_mutex_unlock(&crews_lock);
    return n;
}
