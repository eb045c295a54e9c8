/* Cancellation: GOMP_cancel, GOMP_cancellation_point and the cancellable
 * barrier, on the team's cancel word (par_team.cancel, par_internal.h) and
 * the taskgroups' flags. With cancel-var off every call is a no-op that
 * says "not cancelled", as OpenMP requires.
 *
 * What a cancelled region does: its tasks not yet started are skipped
 * (tasks.c's run_body), GOMP_task creates none, and every member leaves
 * at its next cancellation point or cancellable barrier for the region's
 * end, whose barrier is the plain one. A cancelled loop or sections
 * construct is the team's cancel_ws (loops.c: gomp_ws_cancel), which
 * names the construct and so never needs clearing. */
#include "gomp_tasks.h"
#include "par_env.h"

int gomp_cancel_var(void)
{
    const par_env *e = par_env_get();
    /* The layer's default (cancel when unset) is not OpenMP's: here only
     * a variable that says true turns cancellation on. */
    return e->cancellation && e->cancellation_from.name && !e->cancellation_from.ignored &&
           !e->cancellation_from.bad;
}

static par_group *cancel_group(par_thread *th)
{
    par_group *g = th && th->c.frame ? th->c.frame->group : NULL;
    /* A worksharing construct's own group (task reductions) stands for the
     * taskgroup around it. */
    if (g && g->workshare && g->outer)
        g = g->outer;
    return g;
}

GOMP_API bool GOMP_cancellation_point(int which)
{
    if (!gomp_cancel_var())
        return false;
    par_thread *th = par_tls;
    par_team *t = th ? th->c.team : NULL;
    unsigned word = t ? up__load_acquire(&t->cancel) : 0;
    if (which & (GOMP_CANCEL_LOOP | GOMP_CANCEL_SECTIONS))
        return gomp_ws_cancelled();
    if (which & GOMP_CANCEL_TASKGROUP) {
        par_group *g = cancel_group(th);
        if (g && up__load_acquire(&g->cancelled))
            return true;
        /* cancel parallel cancels the explicit tasks too */
    }
    return (word & PAR_CANCEL_PARALLEL) != 0;
}

GOMP_API bool GOMP_cancel(int which, bool do_cancel)
{
    if (!gomp_cancel_var())
        return false;
    if (!do_cancel) /* cancel ... if (false): a cancellation point */
        return GOMP_cancellation_point(which);
    par_thread *th = par_tls;
    par_team *t = th ? th->c.team : NULL;
    if (which & (GOMP_CANCEL_LOOP | GOMP_CANCEL_SECTIONS)) {
        /* Orphaned (no team): only this thread's construct, which the
         * caller leaves at once. */
        gomp_ws_cancel();
        return true;
    }
    if (which & GOMP_CANCEL_TASKGROUP) {
        par_group *g = cancel_group(th);
        if (g)
            up__store_release(&g->cancelled, 1);
        return true;
    }
    if (t) {
        /* Publish with a seq_cst RMW, then wake (wait.c): members waiting
         * in a cancellable barrier leave it. */
        up__fetch_or_seqcst(&t->cancel, PAR_CANCEL_PARALLEL);
        par_wake_team(t, th->c.slot);
    }
    return true;
}

/* The cancellable barrier. cbar = generation << 32 | arrivals. The last
 * arrival (arrivals reaching size - 1 before its add) moves the generation
 * and clears the arrivals in one CAS; a member that finds the region
 * cancelled while waiting takes its arrival back with a CAS on the same
 * generation, so a barrier either completes with every member in it or
 * loses the leaver's count, never both. */
typedef struct cbar_wait {
    par_team *t;
    uint32_t gen;
} cbar_wait;

static int cbar_moved(par_thread *th, void *arg)
{
    (void)th;
    cbar_wait *w = arg;
    return (uint32_t)(up__load_seqcst(&w->t->cbar) >> 32) != w->gen ||
           (up__load_seqcst(&w->t->cancel) & PAR_CANCEL_PARALLEL);
}

bool gomp_barrier_cancel(par_thread *th)
{
    par_team *t = th ? th->c.team : NULL;
    if (!t)
        return false;
    if (up__load_acquire(&t->cancel) & PAR_CANCEL_PARALLEL)
        return true;
    par_frame *f = th->c.frame;
    if (f)
        par_join_all(th, f); /* this member's tasks, as par_barrier */
    unsigned size = up__load_relaxed(&t->size);
    if (size < 2)
        return (up__load_acquire(&t->cancel) & PAR_CANCEL_PARALLEL) != 0;
    uint64_t w = up__load_acquire(&t->cbar);
    for (;;) {
        uint64_t next = (uint32_t)w + 1 == size ? ((w >> 32) + 1) << 32 : w + 1;
        if (up__cas_weak_seqcst(&t->cbar, &w, next))
            break;
    }
    uint32_t gen = (uint32_t)(w >> 32);
    if ((uint32_t)w + 1 == size) {
        par_wake_team(t, th->c.slot); /* publish (the CAS), then wake (wait.c) */
        return (up__load_acquire(&t->cancel) & PAR_CANCEL_PARALLEL) != 0;
    }
    cbar_wait cw = {t, gen};
    unsigned spins = 0;
    par_task task;
    for (;;) {
        uint64_t now = up__load_acquire(&t->cbar);
        if ((uint32_t)(now >> 32) != gen)
            return (up__load_acquire(&t->cancel) & PAR_CANCEL_PARALLEL) != 0;
        if (up__load_acquire(&t->cancel) & PAR_CANCEL_PARALLEL) {
            /* Take the arrival back, unless the barrier completed meanwhile. */
            while ((uint32_t)(now >> 32) == gen) {
                if (up__cas_weak_seqcst(&t->cbar, &now, now - 1))
                    return true;
            }
            return true;
        }
        int found = par_find_task(th, &task, f ? f->mark : 0);
        if (found) {
            par_run_found(th, &task, found);
            spins = 0;
            continue;
        }
        par_idle(th, th->c.slot, &spins, cbar_moved, &cw, 1, UINT64_MAX);
    }
}

GOMP_API bool GOMP_barrier_cancel(void) { return gomp_barrier_cancel(par_tls); }
