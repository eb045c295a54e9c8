/* Waiting in the OpenMP-style layer: one wait loop step (spin, then park)
 * for every wait of a region member (its frame's children, a barrier, its
 * team's gathering, start and end), and the wake-ups of the publishes that
 * concern a parked member. It is the pool's idle protocol (runtime idle.c)
 * applied to a team: the same budget of spins, the same parker (a worker's
 * own), counted in the pool's statistics as parked (up_layer.h).
 *
 * Protocol. A waiter waits for a condition C (children done, the barrier's
 * generation moved, the team gathered, started or left) and, when it
 * helps, for a task in one of its team's deques. After the pool's spin
 * budget it registers: (R2) a seq_cst RMW adds one to team->sleepers,
 * then (R1) a seq_cst RMW sets the claim word of its slot in the team
 * (with PAR_HELPING when it would steal). Then it takes a last look with seq_cst
 * loads: C, and when helping the other members' deques and the urgent
 * queue. Only when all are still false does it park.
 *
 * A publisher (P1) makes C true with a seq_cst RMW (the completion's add
 * to the parent frame's remote_done, or a released child frame's drop of
 * its hold there (tasks.c), the barrier's add to bar_gen, a
 * join's CAS on the team state, the stores of running and left) or pushes
 * a task, storing bottom and then a seq_cst fence (up__deque_publish_sb);
 * then (P2) it loads, seq_cst or after the fence, the claim word of the
 * waiter's slot (or team->sleepers for a push, which any helping member
 * may take). Either the waiter's registration comes first in the total
 * order S, and P2 sees it (the claim word, or the count, after which the
 * push's scan of the claim words comes after the fence and so sees R1
 * too), or P1 comes
 * first, and the last look, after R1 in S, sees the publish. So a waiter
 * never sleeps through the publish that concerns it. This is the pattern
 * of the pool's park (publish, then check; register, then a last look),
 * with the store-buffering helpers of atomic.h. R2 comes before R1 so that
 * sleepers is never below the number of claimable waiters.
 *
 * Claiming. A wake-up is claimed by clearing the claim word with an RMW: a waker's
 * exchange (a targeted wake) or CAS (a push's, on a helping waiter of its
 * team), or the waiter's own exchange when its last look succeeded or its
 * park timed out. Whoever clears it takes one off team->sleepers. A waker
 * that claimed posts the waiter's parker once; a waiter that finds its
 * word already cleared waits for that token. So every post is consumed
 * before the wait returns and the parker, a worker's own between tasks, is
 * left with no token for the pool's idle protocol.
 *
 * Lifetimes. The claim words are in the team's member slots, and a waker
 * is in the team (it holds a reference) or its master: the team outlives
 * every look at them. A waker touches the waiter's thread (its parker)
 * only after its claim succeeded, and a claimed waiter stays in its wait
 * until the post. A frame records its owner's slot, so a completion wakes
 * the owner only while it is parked in that team; parked anywhere else,
 * it is not waiting for this frame and finds the count when it returns. */
#include <sched.h>
#include <time.h>

#include "par_internal.h"

/* A spin-and-sleep step for waits that have no parker to use (a thread
 * whose parker could not be made, and the worksharing ring of loops.c). */
void par_relax(unsigned *spins)
{
    unsigned s = ++*spins;
    if (s < 64) {
        up__cpu_relax();
    } else if (s < 4096) {
        sched_yield();
    } else {
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
    }
}

void par_slot_take(par_member *slot, par_team *t, par_thread *th)
{
    slot->team = t;
    slot->pk = th->pk;
}

/* The last look for a helping waiter: a task it could take from another
 * member's deque or from the urgent queue (seq_cst loads). Its own deque
 * only its own thread fills. */
static int team_work_visible(par_team *t, const par_member *self)
{
    if (up__load_seqcst(&t->urgent_n))
        return 1;
    unsigned size = up__load_relaxed(&t->size);
    for (unsigned m = 0; m < size; m++) {
        if (&t->members[m] == self)
            continue;
        up__deque *d = up__load_acquire(&t->members[m].dq);
        if (d && up__deque_nonempty(d))
            return 1;
    }
    return 0;
}

/* After clearing a slot's claim word: the count, then the one post. */
static void wake_claimed(par_member *s)
{
    up__fetch_sub_acq_rel(&s->team->sleepers, 1);
    up__waiter_wake(s->pk);
}

void par_wake_slot(par_member *s)
{
    if (up__load_seqcst(&s->asleep) && up__exchange_acq_rel(&s->asleep, 0))
        wake_claimed(s);
}

/* Every member parked on t but self (the barrier's last arrival, the last
 * to leave, the start of the region). */
void par_wake_team(par_team *t, const par_member *self)
{
    /* The caller's publish was a seq_cst RMW; a waiter counts itself in
     * sleepers with one before its last look. So a sleepers of 0 read
     * now means every later waiter's last look sees the publish, and the
     * common case (nobody parked) touches no member's line. */
    if (up__load_seqcst(&t->sleepers) <= 0)
        return;
    unsigned n = up__load_relaxed(&t->size);
    for (unsigned m = 0; m < n; m++)
        if (&t->members[m] != self)
            par_wake_slot(&t->members[m]);
}

/* One helping member parked on t, for a push that saw t->sleepers > 0:
 * the first from self's right, so pushers spread their wake-ups. */
void par_wake_one(par_team *t, const par_member *self)
{
    if (up__load_acquire(&t->sleepers) <= 0)
        return; /* claimed meanwhile */
    unsigned n = up__load_relaxed(&t->size), me = (unsigned)(self - t->members);
    for (unsigned k = 1; k < n; k++) {
        par_member *s = &t->members[(me + k) % n];
        int a = PAR_ASLEEP | PAR_HELPING;
        if (up__load_seqcst(&s->asleep) == a && up__cas_strong_acq_rel(&s->asleep, &a, 0)) {
            wake_claimed(s);
            return;
        }
    }
}

/* Leaves a registration: clears the claim word itself, or finds it
 * claimed and consumes the token that is coming. */
static void unregister(par_thread *th, par_member *slot)
{
    if (up__exchange_acq_rel(&slot->asleep, 0))
        up__fetch_sub_acq_rel(&slot->team->sleepers, 1);
    else
        up__waiter_park(slot->team->pool, th->pk, UINT64_MAX);
}

static void park(par_thread *th, par_member *slot, par_ready_fn ready, void *arg, int helping,
                 uint64_t deadline)
{
    par_team *t = slot->team;
    up__fetch_add_seqcst(&t->sleepers, 1);                                        /* R2 */
    up__fetch_or_seqcst(&slot->asleep, PAR_ASLEEP | (helping ? PAR_HELPING : 0)); /* R1 */
    if (ready(th, arg) || (helping && team_work_visible(t, slot))) {
        unregister(th, slot);
        return;
    }
    uint64_t timeout = UINT64_MAX;
    if (deadline != UINT64_MAX) {
        uint64_t now = up__now_ns();
        timeout = deadline > now ? deadline - now : 0;
    }
    if (!up__waiter_park(t->pool, th->pk, timeout))
        unregister(th, slot); /* timed out: claimed meanwhile, or not */
}

int par_spin(par_thread *th, unsigned *spins, unsigned budget)
{
    /* Spinning lasts the pool's spin budget, and at least PAR_SPIN_NS: a
     * member parked at a barrier costs a wake-up (20-57 us between this
     * VM's CPUs), so spinning about as long as a wake-up costs is never
     * worse than twice the best choice (the classic spin-then-block
     * bound), while a region idle for longer still burns no CPU after
     * it. The step is the pool's idle workers': a pause, every 32nd a
     * yield, so a waiter that shares its CPU with the thread it waits for
     * lets it run; the clock is read only at the yields. UP_SPIN=0 parks
     * at once. On a loaded machine each yield may give the CPU away for
     * milliseconds, so spinning also ends after PAR_SPIN_MAX_NS in all,
     * whatever the count. */
    if (*spins == 0)
        th->spin_since = up__now_ns();
    uint64_t spun = (*spins & 31) == 0 && *spins ? up__now_ns() - th->spin_since : 0;
    if (spun < PAR_SPIN_MAX_NS &&
        (*spins < budget || (budget && ((*spins & 31) != 0 || spun < PAR_SPIN_NS)))) {
        up__spin_step(++*spins, 32);
        return 1;
    }
    return 0;
}

void par_idle(par_thread *th, par_member *slot, unsigned *spins, par_ready_fn ready, void *arg,
              int helping, uint64_t deadline)
{
    if (par_spin(th, spins, slot->team->spin))
        return;
    if (!th->pk) {
        par_relax(spins);
        return;
    }
    *spins = 0;
    /* A waiter at the bound on helping (help.h) steals nothing: a task
     * pushed to the team does not concern it. */
    if (helping && up__help_enter())
        up__help_leave();
    else
        helping = 0;
    park(th, slot, ready, arg, helping, deadline);
}
