/* Parallel regions: gathering a team from the pool, running the region on
 * every member, barriers, single, master and critical sections.
 *
 * Gathering. The master submits one member task per wanted thread to the
 * pool (and asks the pool for more workers only if its own do not take
 * them within a grace period), then waits a bounded time for them to
 * join. A member joins by a CAS on the team's state word while it is
 * open; the master closes it with a CAS that sets the closed bit, and the
 * number joined at that moment is the team size.
 * A member task that runs after the close finds the bit set and returns.
 * Nothing waits for a thread that may never come, so regions nested inside
 * busy pools cannot deadlock: they run with fewer members. The team lives
 * on the heap with a reference per member task, freed by the last one. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "par_env.h"      /* team sizes, the thread limit and active levels */
#include "par_internal.h" /* with up_layer.h: up__submit_copy_nogrow, up__now_ns ... */

#define CLOSED (UINT32_C(1) << 31)
/* How long a top-level region waits for the pool's workers to take its
 * member tasks before it asks the pool to start more (recruit.h). */
#define GATHER_GRACE_NS 1000000u

unsigned par_cpus(void)
{
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return (unsigned)CPU_COUNT(&set);
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

/* The default team size: the CPUs the process may use, counted at the
 * first region that asks (a system call each time would cost a region
 * more than its start does); as OpenMP's nthreads-var, set once, a later
 * change of the affinity mask does not move it. A race of two first
 * regions stores the same count twice. */
static unsigned default_team(void)
{
    static _Atomic unsigned cpus;
    unsigned n = up__load_relaxed(&cpus);
    if (n == 0) {
        n = par_cpus();
        up__store_relaxed(&cpus, n);
    }
    return n;
}

static void drop_ref(par_team *t)
{
    if (up__fetch_sub_acq_rel(&t->refs, 1) == 1) {
        pthread_mutex_destroy(&t->urgent_lock);
        par_ws_free(t);
        free(t->members);
        free(t);
    }
}

void par_team_hold(par_team *t) { up__fetch_add_relaxed(&t->refs, 1); }

void par_team_release(par_team *t) { drop_ref(t); }

/* Conditions of the team's waits, read with seq_cst loads: each is also
 * the last look before a member parks (wait.c). */
static int all_left(par_thread *th, void *arg)
{
    (void)th;
    par_team *t = arg;
    return up__load_seqcst(&t->left) >= up__load_relaxed(&t->size);
}

static int started(par_thread *th, void *arg)
{
    (void)th;
    return up__load_seqcst(&((par_team *)arg)->running) != 0;
}

/* The master's wait for its members: enough joined (the deadline is the
 * wait's own). */
typedef struct gather {
    par_team *t;
    unsigned want;
} gather;

static int gathered(par_thread *th, void *arg)
{
    (void)th;
    gather *g = arg;
    return (up__load_seqcst(&g->t->state) & ~CLOSED) >= g->want;
}

/* Enters the team in slot on this thread, as the member number the master
 * gave that slot, with root as its implicit task's frame; saved and
 * saved_level keep what the thread was doing, for member_leave. */
static void member_enter(par_thread *th, par_team *t, unsigned slot, par_frame *root,
                         par_ctx *saved, unsigned saved_level[2])
{
    unsigned idx = t->members[slot].index;
    *saved = th->c;
    saved_level[0] = th->level;
    saved_level[1] = th->depth;
    th->level = t->level;
    th->depth = t->depth;
    memset(root, 0, sizeof *root);
    atomic_init(&root->owner, th);
    th->c.team = t;
    th->c.member = idx;
    th->c.slot = &t->members[slot];
    root->slot = th->c.slot;
    th->c.size = up__load_relaxed(&t->size);
    th->c.frame = root;
    th->c.dq = par_level_deque(th, t->depth - 1); /* made before joining */
    th->c.ws_count = th->c.single_count = th->c.reduce_count = 0;
    memset(&th->c.ws_it, 0, sizeof th->c.ws_it);
    root->mark = th->c.dq ? up__deque_bottom(th->c.dq) : 0;
    up__store_release(&t->members[slot].dq, th->c.dq);
}

/* The closing barrier of th's part of the region, then back to what the
 * thread was doing (saved may be in t: it is read before t can go). */
static void member_leave(par_thread *th, par_team *t, par_frame *root, const par_ctx *saved,
                         const unsigned saved_level[2])
{
    par_barrier(th);
    par_join_all(th, root); /* the barrier waited; this drops the dependency table */
    if (t->leave)
        t->leave(t->ctx);
    /* A member that left the barrier may still be in a steal attempt on
     * another member's deque. Nobody reuses its deque (in its next region)
     * before every member has said it stopped looking; so each waits for
     * the others' arrivals here. A docking member need not: its deque is
     * used again only in a region its master posts, or after a release
     * from its master's crew, and both come after the master's own wait
     * for every arrival (crew.c). */
    unsigned size = up__load_relaxed(&t->size);
    par_member *slot = th->c.slot;
    par_dock_mark(th, t, slot); /* published by the arrival */
    up__store_release(&slot->dq, NULL);
    int docks = slot->docks;
    if (up__fetch_add_seqcst(&t->left, 1) == size - 1) {
        par_wake_team(t, slot); /* publish, then wake (wait.c) */
    } else if (!docks) {
        unsigned spins = 0;
        while (up__load_acquire(&t->left) < size)
            par_idle(th, slot, &spins, all_left, t, 0, UINT64_MAX);
    }
    th->c = *saved;
    th->level = saved_level[0];
    th->depth = saved_level[1];
}

/* A member other than the master: its whole part of the region. */
static void run_member(par_thread *th, par_team *t, unsigned slot)
{
    par_ctx saved;
    unsigned saved_level[2];
    par_frame root;
    member_enter(th, t, slot, &root, &saved, saved_level);
    t->fn(t->ctx);
    member_leave(th, t, &root, &saved, saved_level);
}

/* A joined member in its slot: waits for the start, runs its part. */
static void member_run_slot(par_thread *th, par_team *t, unsigned slot)
{
    unsigned spins = 0;
    while (!up__load_acquire(&t->running))
        par_idle(th, &t->members[slot], &spins, started, t, 0, UINT64_MAX);
    if (!up__load_relaxed(&t->abandoned))
        run_member(th, t, slot);
}

void par_member_run(par_thread *th, par_team *t, unsigned pref)
{
    uint32_t st = up__load_acquire(&t->state);
    while (!(st & CLOSED)) {
        /* A seq_cst CAS, then the look at whether the master parked
         * waiting for it (wait.c). */
        if (up__cas_weak_seqcst(&t->state, &st, st + 1)) {
            par_slot_take(&t->members[st], t, th);
            up__store_release(&t->members[st].pref, pref);
            par_wake_slot(&t->members[0]);
            member_run_slot(th, t, st);
            break;
        }
    }
    drop_ref(t);
}

void par_member_start(par_thread *th, par_team *t, unsigned slot)
{
    member_run_slot(th, t, slot);
    drop_ref(t);
}

static void member_task(void *arg)
{
    par_team *t = *(par_team **)arg;
    /* First: its gatherer needs no worker for this task any more. */
    up__fetch_add_relaxed(&t->taken, 1);
    /* Everything a member needs is made before it joins: once counted in
     * the team, the others wait for it at every barrier. */
    par_thread *th = par_self();
    if (!th || !par_level_deque(th, t->depth - 1)) {
        drop_ref(t);
        return;
    }
    /* Only a part run straight from a worker's loop may dock at its end
     * (crew.c); a nested member task keeps the flag of the part it is
     * nested in. */
    int outer_ok = th->dock_ok;
    th->dock_ok = t->dock && up__worker_at_loop(t->pool);
    par_member_run(th, t, PAR_PREF_NONE);
    if (up__load_relaxed(&th->dock) != PAR_DOCK_NONE)
        par_dock_serve(th);
    th->dock_ok = outer_ok;
}

/* A region on an OpenMP backend: the pool is only checked; the OpenMP
 * runtime's threads form the team. */
static int parallel_omp(const up_omp_ops *omp, up_pool *pool, unsigned nthreads, up_fn fn,
                        void *ctx, int exact, const char *who)
{
    int rc = par_backend_error(omp, who);
    if (rc != UP_OK)
        return rc;
    if (up__pool_stopped(pool)) {
        up__set_error("%s: the pool is stopped", who);
        return UP_ESTOPPED;
    }
    /* UP_NUM_THREADS wins over OMP_NUM_THREADS; the OpenMP runtime reads
     * OMP_NUM_THREADS itself. */
    const par_env *env = par_env_get();
    if (nthreads == 0 && env->num_threads_from.name &&
        !strcmp(env->num_threads_from.name, "UP_NUM_THREADS"))
        nthreads = par_env_threads(env, omp->level() + 1);
    rc = omp->parallel(nthreads, exact, fn, ctx);
    if (rc == UP_EAGAIN && omp->active_level() >= omp->max_active_levels())
        up__set_error("%s: %u threads, but %u active regions enclose it and %s allows no "
                      "further active level (OMP_MAX_ACTIVE_LEVELS=%u)",
                      who, nthreads, omp->active_level(), omp->runtime, omp->max_active_levels());
    else if (rc == UP_EAGAIN)
        up__set_error("%s: %s would give fewer than %u threads", who, omp->runtime, nthreads);
    else if (rc == UP_EINVAL) /* as on ultrapool: a team above the thread limit */
        up__set_error("%s: %u threads, above %s's thread limit (OMP_THREAD_LIMIT)", who, nthreads,
                      omp->runtime);
    return rc;
}

/* The thread limit (UP_THREAD_LIMIT, OMP_THREAD_LIMIT) counts OpenMP's
 * contention group: a top-level region and every region nested in it.
 * Invariant: while a limit is set, the group's count never exceeds it. A
 * nested region adds k threads only by a CAS from u to u + k <= limit,
 * and gives back exactly what it added (those that did not join when its
 * team closes, the rest when it ends); the top-level team's own members
 * are in the count from its start. Relaxed: the count only bounds team
 * sizes, nothing is published through it. */
static unsigned group_take(_Atomic unsigned *cg, unsigned limit, unsigned want)
{
    unsigned used = up__load_relaxed(cg), take;
    do {
        take = used < limit ? limit - used : 0;
        if (take > want)
            take = want;
        if (take == 0)
            return 0;
    } while (!up__cas_weak_relaxed(cg, &used, used + take));
    return take;
}

static void group_give(_Atomic unsigned *cg, unsigned n)
{
    if (cg && n)
        up__fetch_sub_relaxed(cg, n);
}

/* *nthreads within the thread limit: the top-level team gets at most the
 * limit, a nested one the threads its group has left (*extra: those taken
 * beyond the caller, who is counted already). up_parallel_exact fails
 * instead of running fewer: UP_EINVAL above the limit, UP_EAGAIN when the
 * group's threads are in use. */
static int limit_team(const par_env *env, unsigned limit, par_team *outer, unsigned *nthreads,
                      int exact, const char *who, unsigned *extra)
{
    unsigned n = *nthreads;
    const char *from =
        env->thread_limit_from.name ? env->thread_limit_from.name : "thread-limit-var";
    *extra = 0;
    if (exact && n > limit) {
        up__set_error("%s: %u threads, above the thread limit (%s=%u)", who, n, from, limit);
        return UP_EINVAL;
    }
    if (!outer) {
        *nthreads = n < limit ? n : limit;
        return UP_OK;
    }
    if (n < 2)
        return UP_OK;
    *extra = group_take(outer->cg, limit, n - 1);
    if (exact && *extra < n - 1) {
        up__set_error("%s: %u threads, but the enclosing regions leave %u of the thread limit "
                      "(%s=%u)",
                      who, n, 1 + *extra, from, limit);
        group_give(outer->cg, *extra);
        *extra = 0;
        return UP_EAGAIN;
    }
    *nthreads = 1 + *extra;
    return UP_OK;
}

/* up_parallel_exact where its region could only be a team of one: nothing
 * runs, and the message names the limit that stands in the way. */
static int refuse_inactive(const par_env *env, unsigned max_active, const char *who,
                           unsigned nthreads, unsigned level, unsigned active)
{
    if (level > PAR_MAX_LEVELS) {
        up__set_error("%s: %u threads, but a region nested %u deep runs on a team of one "
                      "(at most %u levels)",
                      who, nthreads, level, PAR_MAX_LEVELS);
        return UP_EAGAIN;
    }
    if (active >= max_active) {
        up__set_error("%s: %u threads, but %u active regions enclose it and no further active "
                      "level is allowed (%s=%u)",
                      who, nthreads, active,
                      env->max_active_from.name ? env->max_active_from.name
                                                : "UP_MAX_ACTIVE_LEVELS",
                      max_active);
        return UP_EAGAIN;
    }
    up__set_error("%s: out of memory for the task deque of level %u", who, level);
    return UP_ENOMEM;
}

/* Asks the pool for n workers for queued member tasks. Docked threads
 * (crew.c) count as busy: when the caps leave the pool short, as many go
 * back to the pool as it lacks, so a region never waits for threads that
 * a dock holds. */
static void want_workers(up_pool *pool, unsigned n)
{
    unsigned got = up_pool_reserve(pool, n);
    if (got < n)
        par_crews_release(pool, n - got);
}

/* How many of a gathering team's submitted member tasks still wait in
 * the pool's queues, at most missing. Only those need workers: a posted
 * thread is docked and on its way, and so is a worker that took a member
 * task but has not joined yet (the pool counts it busy, and a loaded
 * machine can hold it there for a time slice). taken counts the member
 * tasks that started; one taken from the queue that has not started yet
 * (its worker held off the CPU between the take and the count) is no
 * longer in the pool's queues, which bound the count. With none left
 * there, the gatherer looks again after the next grace instead of
 * starting a thread. */
static unsigned still_queued(par_team *t, up_pool *pool, unsigned missing, unsigned submitted)
{
    unsigned taken = up__load_relaxed(&t->taken);
    unsigned queued = taken < submitted ? submitted - taken : 0;
    if (queued > missing)
        queued = missing;
    return queued ? up__pool_queued(pool, queued) : 0;
}

/* Member numbers, given by the master once the team is closed, before
 * running is published (which publishes them). Slots are in join order;
 * the master is slot and member 0. In a docking team each member posted
 * from the crew asks for the number it had (crew.c) and gets it, the
 * others the free numbers in order; so every docked thread is the same
 * member again. */
static void number_members(par_team *t, unsigned size)
{
    par_member *m = t->members;
    m[0].index = 0;
    if (!t->dock) {
        for (unsigned s = 1; s < size; s++)
            m[s].index = s;
        return;
    }
    unsigned char small[64];
    unsigned char *taken = size <= sizeof small ? small : malloc(size);
    if (!taken) { /* no stability without memory: join order, still a valid team */
        for (unsigned s = 1; s < size; s++)
            m[s].index = s;
        return;
    }
    memset(taken, 0, size);
    taken[0] = 1;
    for (unsigned s = 1; s < size; s++) {
        /* A joiner says its wish right after its CAS: wait for it. */
        unsigned spins = 0, p;
        while ((p = up__load_acquire(&m[s].pref)) == 0)
            par_relax(&spins);
        m[s].index = 0;
        if (p != PAR_PREF_NONE && p - 2 < size && !taken[p - 2]) {
            m[s].index = p - 2;
            taken[p - 2] = 1;
        }
    }
    unsigned next = 1;
    for (unsigned s = 1; s < size; s++) {
        if (m[s].index)
            continue;
        while (taken[next])
            next++;
        m[s].index = next;
        taken[next] = 1;
    }
    if (taken != small)
        free(taken);
}

/* Team storage. A master keeps its last two teams, with its reference,
 * for its next regions (th->spare). Once that reference is the only one
 * left, no member, member task, docked thread or event fulfiller can look
 * at the team any more (each holds a reference while it may), so a new
 * region resets it in place. That saves an allocation and a free per
 * region, and above all the free by a member thread, which takes the lock
 * of the master's malloc arena while the master allocates its next team.
 * Two, because the members of the region just ended may still be on
 * their way out of it when the next one starts: the one before is idle
 * by then. A team pushed out of the pair is dropped, and freed by its
 * last holder, as any other. */
static void team_keep(par_thread *th, par_team *t)
{
    if (th->spare[1])
        drop_ref(th->spare[1]);
    th->spare[1] = th->spare[0];
    th->spare[0] = t;
}

void par_team_spare_drop(par_thread *th)
{
    for (int i = 0; i < 2; i++) {
        if (th->spare[i])
            drop_ref(th->spare[i]);
        th->spare[i] = NULL;
    }
}

/* A kept team of at least n slots that nobody else holds, taken out of
 * th->spare; NULL if none. */
static par_team *spare_take(par_thread *th, unsigned n)
{
    for (int i = 1; i >= 0; i--) { /* the older first: more likely idle */
        par_team *t = th->spare[i];
        /* refs read 1 with acquire: every holder's accesses happened
         * before (the drops are one release sequence). */
        if (t && t->cap >= n && up__load_acquire(&t->refs) == 1 && !t->urgent_more) {
            if (i == 0)
                th->spare[0] = th->spare[1];
            th->spare[1] = NULL;
            return t;
        }
    }
    return NULL;
}

/* An idle team of at least n slots, zeroed but for its lock and the
 * result slots of reductions (each member writes its own before any
 * reads it); NULL without memory. */
static par_team *team_get(par_thread *th, unsigned n)
{
    par_team *t = spare_take(th, n);
    if (t) {
        /* A region's end leaves its urgent queue empty (its tasks all
         * ran): urgent_more is NULL, as spare_take checked. */
        par_ws_free(t);
        par_member *members = t->members;
        unsigned cap = t->cap;
        memset(t, 0, offsetof(par_team, urgent_lock));
        atomic_init(&t->urgent_n, 0);
        for (unsigned i = 0; i < n; i++)
            memset(&members[i], 0, offsetof(par_member, reduce));
        t->members = members;
        t->cap = cap;
        return t;
    }
    t = aligned_alloc(PAR_LINE, sizeof *t);
    par_member *members = aligned_alloc(PAR_LINE, n * sizeof *members);
    if (!t || !members) {
        free(t);
        free(members);
        return NULL;
    }
    memset(t, 0, sizeof *t);
    memset(members, 0, n * sizeof *members);
    pthread_mutex_init(&t->urgent_lock, NULL);
    t->members = members;
    t->cap = n;
    return t;
}

/* Gathers the team and enters it as member 0 (par_parallel_enter): *out
 * is the team, or NULL when an OpenMP backend ran the whole region
 * (possible only when !split). */
static int region_enter(up_pool *pool, unsigned nthreads, up_fn fn, up_fn leave, void *ctx,
                        par_team_mode mode, const char *who, int split, par_team **out)
{
    *out = NULL;
    int exact = mode == PAR_TEAM_EXACT;
    if (!pool || !fn || nthreads > PAR_MAX_TEAM) {
        if (!pool || !fn)
            up__set_error("%s: %s is NULL", who, !pool ? "pool" : "region function");
        else
            up__set_error("%s: %u threads, above the most a team has (%u)", who, nthreads,
                          PAR_MAX_TEAM);
        return UP_EINVAL;
    }
    /* The layer's environment (env.c): a malformed variable fails every
     * region, on every backend, so that none runs with settings nobody
     * asked for. */
    const par_env *env = par_env_get();
    if (env->bad) {
        up__set_error("%s: %s", who, env->error);
        return UP_EINVAL;
    }
    const up_omp_ops *omp = par_omp();
    if (omp && mode != PAR_TEAM_FULL && (split || leave)) {
        up__set_error("%s: a region whose master runs outside the call, or whose members "
                      "run a leave hook, needs ultrapool's own teams, not the %s backend",
                      who, omp->runtime);
        return UP_EINVAL;
    }
    if (omp && mode != PAR_TEAM_FULL)
        return parallel_omp(omp, pool, nthreads, fn, ctx, exact, who);
    par_thread *th = par_self();
    if (!th) {
        up__set_error("%s: out of memory for the thread's state", who);
        return UP_ENOMEM;
    }
    unsigned level = th->level + 1;
    if (nthreads == 0 && (nthreads = par_env_threads(env, level)) == 0)
        nthreads = default_team();
    /* Too deep, past the active levels allowed (OpenMP makes such a
     * region inactive), or no memory for a deque: a team of one, which
     * up_parallel_exact refuses (all or nothing, as on the OpenMP
     * backends) rather than run fewer than it asked for. */
    par_team *outer = th->c.team;
    unsigned active = outer ? outer->active : 0;
    /* The opener's limits: set at run time through an ABI's ICVs, else
     * the environment's. */
    unsigned max_active = th->limits ? th->limits->max_active : env->max_active;
    unsigned thread_limit = th->limits ? th->limits->thread_limit : env->thread_limit;
    unsigned depth = th->depth + 1;
    if (depth > PAR_MAX_LEVELS || active >= max_active || !par_level_deque(th, depth - 1)) {
        if (exact && nthreads > 1)
            return refuse_inactive(env, max_active, who, nthreads, depth, active);
        nthreads = 1;
    }
    unsigned extra = 0; /* threads taken from the enclosing group's count */
    _Atomic unsigned *cg = outer ? outer->cg : NULL;
    if (thread_limit) {
        int rc = limit_team(env, thread_limit, outer, &nthreads, exact, who, &extra);
        if (rc != UP_OK)
            return rc;
    }
    /* A stopped pool runs no region, whatever its size. A region with
     * members learns it from its first member task, which the pool
     * refuses (below); a region of one, which submits none, asks. */
    if (nthreads == 1 && up__pool_stopped(pool)) {
        up__set_error("%s: the pool is stopped", who);
        return UP_ESTOPPED;
    }

    par_team *t = team_get(th, nthreads);
    if (!t) {
        group_give(cg, extra);
        up__set_error("%s: out of memory for a team of %u", who, nthreads);
        return UP_ENOMEM;
    }
    t->pool = pool;
    t->fn = fn;
    t->leave = leave;
    t->ctx = ctx;
    t->requested = nthreads;
    t->level = level; /* any depth: only the deque cache stops at PAR_MAX_LEVELS */
    t->depth = depth;
    t->spin = up__pool_spin(pool);
    t->outer = outer;
    t->outer_member = outer ? th->c.member : 0;
    t->mode = mode;
    t->master = th;
    t->dock = nthreads > 1 && par_dock_allowed(outer, level, mode);
    t->cg = cg ? cg : &t->cg_used; /* a top-level team counts its group */
    atomic_init(&t->cg_used, nthreads);
    par_member *members = t->members;
    for (unsigned i = 0; i < nthreads; i++)
        members[i].team = t;
    /* Before any member task exists: a joiner wakes the master there. */
    par_slot_take(&members[0], t, th);
    for (unsigned i = 0; i < PAR_WS_SLOTS; i++)
        atomic_init(&t->ws[i].gen, i);
    atomic_init(&t->state, 1); /* the master is member 0 */
    atomic_init(&t->taken, 0);
    atomic_init(&t->refs, 1);

    /* A top-level region queues its member tasks without growing the pool
     * and gives the workers it has GATHER_GRACE_NS to take them (those of
     * the previous region are on their way back); only then, or at once
     * if the pool has too few workers, does it ask for more (recruit.h).
     * A nested region submits as any task does and waits only briefly. */
    /* The master's docked threads first, each to its old number; the
     * queue's member tasks are for the rest. */
    unsigned posted = t->dock ? par_crew_post(th, t, nthreads) : 0;
    /* They hold slots 1 .. posted already: joiners from the queue take
     * the next ones (no member task exists yet to race this store). */
    up__store_relaxed(&t->state, 1 + posted);
    unsigned submitted = 0;
    for (unsigned i = 1 + posted; i < nthreads; i++) {
        up__fetch_add_relaxed(&t->refs, 1);
        int rc = level == 1 ? up__submit_copy_nogrow(pool, member_task, &t, sizeof t)
                            : up_submit_copy(pool, member_task, &t, sizeof t);
        if (rc != UP_OK) {
            up__fetch_sub_relaxed(&t->refs, 1);
            if (rc == UP_ESTOPPED && submitted == 0 && posted == 0) {
                drop_ref(t);
                group_give(cg, extra);
                up__set_error("%s: the pool is stopped", who);
                return UP_ESTOPPED;
            }
            break;
        }
        submitted++;
    }
    int asked = level != 1 || submitted == 0;
    if (!asked && up__pool_workers(pool) < submitted + posted) {
        want_workers(pool, submitted);
        asked = 1;
    }
    /* Wait for the members: long for a top-level region, whose threads the
     * pool was asked for; briefly for a nested one; for a full team, until
     * every member came, asking the pool again each grace period while
     * member tasks are still queued (its workers may be busy in other
     * regions, which never wait for this one, so reserving more always
     * makes progress; a task already taken needs nobody). */
    unsigned spins = 0;
    gather g = {t, 1 + posted + submitted};
    /* Without member tasks (a team all of docked threads, each counted
     * when posted) the team is complete already: no clock to read. */
    uint64_t start = submitted ? up__now_ns() : 0;
    uint64_t deadline =
        mode == PAR_TEAM_FULL ? UINT64_MAX : start + (level == 1 ? 200000000u : 200000u);
    while (submitted) {
        unsigned joined = up__load_acquire(&t->state) & ~CLOSED;
        if (joined >= 1 + posted + submitted)
            break;
        /* The clock costs about what a look does: it is read at every
         * 32nd spin step of par_idle, and after a park (spins 0). */
        if ((spins & 31) == 0) {
            uint64_t now = up__now_ns();
            if (now >= deadline)
                break;
            if ((!asked || mode == PAR_TEAM_FULL) && now - start >= GATHER_GRACE_NS) {
                unsigned queued = still_queued(t, pool, 1 + posted + submitted - joined, submitted);
                if (queued) {
                    want_workers(pool, queued);
                    asked = 1;
                }
                start = now;
            }
        }
        /* Parked, woken by each join, or at the grace's end to ask. */
        par_idle(th, &members[0], &spins, gathered, &g, 0,
                 asked && mode != PAR_TEAM_FULL ? deadline : start + GATHER_GRACE_NS);
    }
    uint32_t st = up__fetch_or_acq_rel(&t->state, CLOSED);
    up__store_relaxed(&t->size, st & ~CLOSED);
    /* The group counts the members that came: a nested region gives back
     * the threads that did not join; a top-level one counts its size.
     * Both before running is published, which nested regions follow. */
    unsigned size = st & ~CLOSED;
    if (cg && extra > size - 1) {
        group_give(cg, extra - (size - 1));
        extra = size - 1;
    } else if (!cg)
        up__store_relaxed(&t->cg_used, size);
    t->active = (outer ? outer->active : 0) + (size > 1);
    if (exact && (st & ~CLOSED) < nthreads) {
        /* All or nothing: release the members that came, run nothing. */
        up__store_relaxed(&t->abandoned, 1);
        up__fetch_or_seqcst(&t->running, 1);
        par_wake_team(t, &members[0]);
        drop_ref(t);
        group_give(cg, extra);
        up__set_error("%s: %u of %u threads gathered in time", who, st & ~CLOSED, nthreads);
        return UP_EAGAIN;
    }
    number_members(t, size);
    /* Publish, then wake the members parked waiting for it (wait.c). */
    up__fetch_or_seqcst(&t->running, 1);
    par_wake_team(t, &members[0]);

    t->master_extra = extra;
    member_enter(th, t, 0, &t->master_root, &t->master_saved, t->master_level);
    *out = t;
    return UP_OK;
}

/* The master's leaving: the closing barrier, then the team goes. */
static void region_leave(par_thread *th, par_team *t)
{
    unsigned extra = t->master_extra;
    _Atomic unsigned *cg = t->outer ? t->cg : NULL;
    member_leave(th, t, &t->master_root, &t->master_saved, t->master_level);
    if (t->dock) /* every member has left: the docked ones are in their docks */
        par_crew_update(th, t);
    team_keep(th, t);
    group_give(cg, extra);
}

int par_parallel_hooked(up_pool *pool, unsigned nthreads, up_fn fn, up_fn leave, void *ctx,
                        par_team_mode mode, const char *who)
{
    par_team *t;
    int rc = region_enter(pool, nthreads, fn, leave, ctx, mode, who, 0, &t);
    if (rc != UP_OK || !t)
        return rc;
    fn(ctx);
    region_leave(par_tls, t);
    return UP_OK;
}

int par_parallel(up_pool *pool, unsigned nthreads, up_fn fn, void *ctx, par_team_mode mode,
                 const char *who)
{
    return par_parallel_hooked(pool, nthreads, fn, NULL, ctx, mode, who);
}

int par_parallel_enter(up_pool *pool, unsigned nthreads, up_fn fn, up_fn leave, void *ctx,
                       par_team_mode mode, const char *who)
{
    par_team *t;
    return region_enter(pool, nthreads, fn, leave, ctx, mode, who, 1, &t);
}

int par_parallel_leave(const char *who)
{
    par_thread *th = par_tls;
    par_team *t = th ? th->c.team : NULL;
    if (!t || t->master != th || th->c.member != 0 || th->c.frame != &t->master_root) {
        up__set_error("%s: the calling thread is not the master of an entered region at its "
                      "top level",
                      who);
        return UP_EINVAL;
    }
    region_leave(th, t);
    return UP_OK;
}

int up_parallel(up_pool *pool, unsigned nthreads, up_fn fn, void *ctx)
{
    return par_parallel(pool, nthreads, fn, ctx, PAR_TEAM_UPTO, "up_parallel");
}

int up_parallel_exact(up_pool *pool, unsigned nthreads, up_fn fn, void *ctx)
{
    return par_parallel(pool, nthreads, fn, ctx, PAR_TEAM_EXACT, "up_parallel_exact");
}

unsigned up_thread_num(void)
{
    const up_omp_ops *omp = par_omp();
    if (omp)
        return omp->thread_num();
    par_thread *th = par_tls;
    return th && th->c.team ? th->c.member : 0;
}

unsigned up_num_threads(void)
{
    const up_omp_ops *omp = par_omp();
    if (omp)
        return omp->num_threads();
    par_thread *th = par_tls;
    return th && th->c.team ? up__load_relaxed(&th->c.team->size) : 1;
}

unsigned up_level(void)
{
    const up_omp_ops *omp = par_omp();
    if (omp)
        return omp->level();
    par_thread *th = par_tls;
    return th ? th->level : 0;
}

/* A barrier is also a task scheduling point: a member first waits until
 * its implicit task's frame is idle (running tasks meanwhile), then
 * arrives and runs other members' tasks until the last one arrives. A
 * frame is idle when its children are done and no child frame that
 * outlived its body (a GOMP ABI task that returned with children left)
 * still holds it, and such a frame holds its parent until its own
 * children are done and it holds nothing (tasks.c). Since every task is a
 * descendant of some member's implicit task, all the team's tasks are
 * done when the last member arrives. */
typedef struct bar_wait {
    par_team *t;
    unsigned gen;
} bar_wait;

static int bar_moved(par_thread *th, void *arg)
{
    (void)th;
    bar_wait *w = arg;
    return up__load_seqcst(&w->t->bar_gen) != w->gen;
}

void par_barrier(par_thread *th)
{
    par_team *t = th->c.team;
    par_frame *f = th->c.frame;
    if (f)
        par_join_all(th, f);
    unsigned size = t ? up__load_relaxed(&t->size) : 1;
    if (size < 2)
        return;
    unsigned gen = up__load_acquire(&t->bar_gen);
    if (up__fetch_add_acq_rel(&t->bar_count, 1) == size - 1) {
        up__store_relaxed(&t->bar_count, 0);
        /* Publish with a seq_cst RMW, then wake the parked (wait.c). */
        up__fetch_add_seqcst(&t->bar_gen, 1);
        par_wake_team(t, th->c.slot);
        return;
    }
    unsigned spins = 0;
    par_task task;
    bar_wait w = {t, gen};
    while (up__load_acquire(&t->bar_gen) == gen) {
        int found = par_find_task(th, &task, f ? f->mark : 0);
        if (found) {
            par_run_found(th, &task, found);
            spins = 0;
            continue;
        }
        par_idle(th, th->c.slot, &spins, bar_moved, &w, 1, UINT64_MAX);
    }
}

void up_barrier(void)
{
    const up_omp_ops *omp = par_omp();
    if (omp) {
        omp->barrier();
        return;
    }
    par_thread *th = par_tls;
    if (th)
        par_barrier(th);
}

int up_single(void)
{
    const up_omp_ops *omp = par_omp();
    if (omp)
        return omp->single();
    par_thread *th = par_tls;
    if (!th || !th->c.team || up__load_relaxed(&th->c.team->size) < 2)
        return 1;
    /* The c-th single of every member: the first CAS from c - 1 to c wins. */
    uint64_t c = ++th->c.single_count, expected = c - 1;
    return up__cas_strong_seqcst(&th->c.team->single_next, &expected, c);
}

int up_master(void) { return up_thread_num() == 0; }

/* Critical sections: names hash onto a fixed set of locks; two names on
 * one lock only serialize more than needed, never less. */
#define NCRIT 64
static pthread_mutex_t crit[NCRIT] = {
#define M PTHREAD_MUTEX_INITIALIZER
    M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
    M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
    M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M
#undef M
};

static unsigned crit_index(const char *name)
{
    if (!name)
        return 0;
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 16777619u;
    return 1 + h % (NCRIT - 1);
}

void up_critical_begin(const char *name) { pthread_mutex_lock(&crit[crit_index(name)]); }
void up_critical_end(const char *name) { pthread_mutex_unlock(&crit[crit_index(name)]); }
