/* Explicit tasks: creation, execution with a frame (on the stack for
 * parallel.h's tasks, from a free list for the GOMP ABI's, which may
 * outlive their body), waiting for children while running other tasks,
 * taskgroups and cancellation.
 *
 * The fast path of a task is to run it at once (up_task, when its thread
 * already has a few queued): a frame on the stack and a call, no atomic
 * read-modify-write and no fence. A queued task is public from its push
 * on, for the other members to steal; taking it back costs the owner the
 * Chase-Lev fence (runtime/src/deque.h). Completing a child that another
 * thread stole is one atomic add on the parent frame, and a look at
 * whether the frame's owner is parked (wait.c). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "par_env.h" /* whether cancellation is enabled */
#include "par_internal.h"
#include "up_layer.h" /* up__set_error */

#define DEQUE_CAPACITY 8192

_Thread_local par_thread *par_tls UP__TLS_IE;
static pthread_key_t thread_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void thread_exit(void *arg)
{
    par_thread *th = arg;
    par_crew_drop(th); /* its docked members go back to the pool */
    par_team_spare_drop(th);
    for (int i = 0; i < PAR_MAX_LEVELS; i++)
        if (th->dqs[i]) {
            up__deque_free(th->dqs[i]);
            free(th->dqs[i]);
        }
    par_deps_thread_exit(th);
    while (th->free_frames) {
        par_frame *f = th->free_frames;
        th->free_frames = f->parent;
        free(f);
    }
    free(th);
    par_tls = NULL; /* a later destructor's region starts afresh */
}

static void make_key(void) { pthread_key_create(&thread_key, thread_exit); }

par_thread *par_self(void)
{
    par_thread *th = par_tls;
    if (th)
        return th;
    /* On cache lines of its own: the owner writes it on every task. */
    size_t size = (sizeof *th + PAR_LINE - 1) / PAR_LINE * PAR_LINE;
    th = aligned_alloc(PAR_LINE, size);
    if (!th)
        return NULL;
    memset(th, 0, size);
    static _Atomic uint32_t seq;
    th->rng = up__rng_seed(up__fetch_add_seqcst(&seq, 1), 0x7061u); /* the one PRNG (rng.h) */
    th->pk = up__self_parker(); /* NULL: its waits spin and sleep instead */
    pthread_once(&key_once, make_key);
    pthread_setspecific(thread_key, th);
    par_tls = th;
    return th;
}

/* The deque of the thread's current nesting level, made on first use. */
up__deque *par_level_deque(par_thread *th, unsigned level)
{
    if (level >= PAR_MAX_LEVELS)
        return NULL;
    if (!th->dqs[level]) {
        up__deque *d = aligned_alloc(UP_CACHE_LINE, sizeof *d);
        if (!d)
            return NULL;
        if (up__deque_init_records(d, DEQUE_CAPACITY, PAR_TASK_HDR) != 0) {
            free(d);
            return NULL;
        }
        th->dqs[level] = d;
    }
    return th->dqs[level];
}

/* Frames that outlive their body. OpenMP completes a task when its body
 * returns, children or not (the GOMP ABI's tasks here); its children still
 * count on its frame, which then lives on until they are done. Such a
 * frame comes from the thread's free list (frame_get), not the stack; a
 * parallel.h task's frame is on the stack and its end waits, as its
 * header says, for its children.
 *
 * The counts. Modulo 2^64, a frame's remote_done is
 *     R + PAR_HOLD * H  (+ PAR_ORPHAN - T once the frame is orphaned)
 * R: its children completed elsewhere (or after its body returned); H:
 * its child frames that outlived their body and are not yet released;
 * T: spawned - local_done when its body returned with children left, the
 * completions it then still had to count remotely, R included (so R <= T,
 * and T - R < 2^32: fewer than 2^32 children outstanding and 2^30 holds at
 * a time; the sums are exact modulo 2^64, whatever the lifetime totals).
 * So a frame not orphaned has a word below 2^62, and an orphan's lies in
 * [PAR_ORPHAN - 2^32, 2^64): bit 63 tells the two apart.
 * - A taskwait waits for local_done + R == spawned, compared modulo 2^32
 *   (children_done): holds do not concern it.
 * - The frame is idle when local_done + remote_done == spawned modulo
 *   2^64: every child done and no hold. A taskgroup's end, a barrier (for
 *   the implicit task's root frame) and a parallel.h task's end wait for
 *   that (par_join_all): every descendant is done then, since each frame
 *   holds its parent from its orphaning to its release.
 * - Orphaning (frame_end, by the owner, when the body returned with
 *   children left): owner := NULL, so that from then on the owner thread
 *   counts remotely too and local_done is frozen; then a hold on the
 *   parent, before the task's completion is counted there (the parent
 *   never looks idle in between); then one RMW adds PAR_ORPHAN - T.
 * - Release: remote_done equals PAR_ORPHAN exactly when the frame is
 *   orphaned, R == T and H == 0; an orphan always has bit 63 set, a
 *   frame not orphaned never. Whoever's RMW brings it to PAR_ORPHAN (the
 *   orphaning, a child's completion, a child frame's release: "the last
 *   one frees") is the last to touch the frame: it drops the dependency
 *   table, keeps the frame on its own free list or frees it (frame_adopt)
 *   and drops the hold on the parent, which may release that one in turn
 *   (frame_release). An RMW that leaves bit 63 set wakes nobody: nobody
 *   waits for an orphaned frame.
 * - Lifetimes: a frame holds its parent from its orphaning to its
 *   release, and before that its task is not complete, which keeps the
 *   parent too. So every frame on the parent chain of a live frame or of a
 *   task not yet complete is allocated, its parent field unchanged: the
 *   task scheduling constraint's walk (descends) reads it as before.
 * - Orderings: completions and releases are seq_cst RMWs followed by a
 *   look at the owner's slot (wait.c's publish-then-check, for an owner
 *   waiting for its children or for idle); the hold and the orphaning are
 *   acq_rel. Every access of a counting thread to a frame precedes its RMW
 *   and the RMWs on remote_done form one release sequence, so the thread
 *   whose RMW finds PAR_ORPHAN happens after every other use.
 * Cost: a GOMP ABI task takes its frame from the free list and puts it
 * back (loads and stores, no atomic); one whose body returns with children
 * left pays three RMWs (orphaning, hold, release), and each child
 * completing after that one RMW, as a completion on another thread does.
 * A parallel.h task's frame stays on the stack, and a completion on the
 * frame's thread still reads owner with a plain (relaxed) load. */
up_fn par_alone_fn, par_alone_icv_fn;

/* Frames a thread makes or adopts before it frees those it releases. */
#define FRAME_CACHE 64

/* Taskwait's condition: the children, not the holds. */
static inline int children_done(par_frame *f)
{
    return (uint32_t)(f->local_done + up__load_acquire(&f->remote_done)) == (uint32_t)f->spawned;
}

/* Every child done and no child frame held: the frame is idle. */
static inline int frame_idle(par_frame *f)
{
    return f->local_done + up__load_acquire(&f->remote_done) == f->spawned;
}

static PAR_ALWAYS_INLINE void frame_init(par_frame *f, par_thread *th, par_frame *parent, int final)
{
    f->parent = parent;
    atomic_init(&f->owner, th);
    f->slot = th->c.slot;
    f->spawned = 0;
    f->local_done = 0;
    atomic_init(&f->remote_done, 0);
    f->mark = th->c.dq ? up__deque_bottom(th->c.dq) : 0;
    f->group = parent ? parent->group : NULL;
    f->deps = NULL;
    f->final = parent ? parent->final | final : final;
    f->taskgroup = 0;
}

/* Runs fn(arg) in frame f on this thread (f current meanwhile). Skipped
 * in a cancelled taskgroup or region (OpenMP discards the tasks of a
 * cancelled taskgroup or parallel region not yet started). */
static PAR_ALWAYS_INLINE int frame_body(par_thread *th, par_frame *f, up_fn fn, void *arg,
                                        int always)
{
    int run =
        always || ((!f->group || !up__load_relaxed(&f->group->cancelled)) &&
                   !(th->c.team && (up__load_relaxed(&th->c.team->cancel) & PAR_CANCEL_PARALLEL)));
    if (run)
        fn(arg);
    return run;
}

/* Runs fn(arg) as a task of the frame parent, on this thread, with its own
 * frame on this stack; returns when the task and its children are done.
 * Forced inline into the two places where nearly every task of a recursive
 * program runs (the drain loop of a waiting frame, and up_task when it runs
 * a task at once): a call and its register saves per task are a good part
 * of a fine-grained task's cost. */
static PAR_ALWAYS_INLINE int run_body(par_thread *th, par_frame *parent, up_fn fn, void *arg,
                                      int final, int always)
{
    par_frame f;
    frame_init(&f, th, parent, final);
    par_frame *saved = th->c.frame;
    th->c.frame = &f;
    int run = frame_body(th, &f, fn, arg, always);
    if (f.spawned || f.deps) /* a leaf task skips the join */
        par_join_all(th, &f);
    th->c.frame = saved;
    return run;
}

static PAR_NOINLINE par_frame *frame_new(par_thread *th)
{
    /* On lines of its own: other threads add to its remote_done while
     * this one runs the body of a frame that would otherwise share them. */
    par_frame *f = aligned_alloc(PAR_LINE, (sizeof *f + PAR_LINE - 1) / PAR_LINE * PAR_LINE);
    if (!f)
        abort(); /* out of memory with a task in hand: it cannot be lost */
    th->nframes++;
    return f;
}

static PAR_ALWAYS_INLINE par_frame *frame_get(par_thread *th)
{
    par_frame *f = th->free_frames;
    if (!f)
        return frame_new(th);
    th->free_frames = f->parent; /* the list's link while free */
    return f;
}

/* A frame this thread took with frame_get goes back to its list: the list
 * holds at most the frames it had in use at once, and those it adopted. */
static PAR_ALWAYS_INLINE void frame_put(par_thread *th, par_frame *f)
{
    f->parent = th->free_frames;
    th->free_frames = f;
}

/* A frame released here (frame_release), which another thread may have
 * taken: kept while this thread has made or adopted fewer than
 * FRAME_CACHE frames, else freed, so that a thread that releases the
 * frames of others does not hoard them. */
static void frame_adopt(par_thread *th, par_frame *f)
{
    if (th->nframes >= FRAME_CACHE) {
        free(f);
        return;
    }
    th->nframes++;
    frame_put(th, f);
}

/* A frame's remote_done after an RMW: below 2^62 while the frame is not
 * orphaned, within 2^32 below PAR_ORPHAN or above it (holds) once it is.
 * A macro: only the internal assertions use it. */
#define FRAME_WORD_OK(w) ((w) < (UINT64_C(1) << 62) || (w) >= PAR_ORPHAN - PAR_HOLD)

/* The last one frees (above): f is orphaned, idle and touched by nobody
 * else. Frees it and drops its hold on its parent, and so on up. */
static PAR_NOINLINE void frame_release(par_thread *th, par_frame *f)
{
    for (;;) {
        par_frame *p = f->parent;
        if (f->deps)
            par_deps_free(th, f);
        frame_adopt(th, f);
        if (!p)
            return;
        par_member *slot = p->slot; /* read first: p may be gone after the RMW */
        uint64_t now = up__fetch_add_seqcst(&p->remote_done, 0 - PAR_HOLD) - PAR_HOLD;
        up__assert_internal(FRAME_WORD_OK(now));
        if (now != PAR_ORPHAN) {
            if (!(now & PAR_ORPHAN) && slot)
                par_wake_slot(slot); /* its owner may wait for it to be idle */
            return;
        }
        f = p;
    }
}

/* A child of parent completed on a thread that does not run parent's body
 * (or after the body returned). */
static inline void count_remote(par_thread *th, par_frame *parent)
{
    /* Publish, then check whether the owner parked in its slot (wait.c):
     * a seq_cst RMW, then a seq_cst load. The slot is read first: the
     * frame may be gone after the add. */
    par_member *slot = parent->slot;
    uint64_t now = up__fetch_add_seqcst(&parent->remote_done, 1) + 1;
    up__assert_internal(FRAME_WORD_OK(now));
    if (now == PAR_ORPHAN)
        frame_release(th, parent);
    else if (!(now & PAR_ORPHAN) && slot)
        par_wake_slot(slot);
}

/* Orphans f, whose body returned with children left (above). */
static PAR_NOINLINE void frame_orphan(par_thread *th, par_frame *f)
{
    up__store_relaxed(&f->owner, NULL);
    uint64_t owed = f->spawned - f->local_done;
    if (f->parent)
        up__fetch_add_acq_rel(&f->parent->remote_done, PAR_HOLD);
    if (up__fetch_add_acq_rel(&f->remote_done, PAR_ORPHAN - owed) ==
        owed) /* every child completed meanwhile */
        frame_release(th, f);
}

/* The end of a frame from frame_get, its body returned: back to the free
 * list when nothing counts on it any more, else orphaned. */
static PAR_ALWAYS_INLINE void frame_end(par_thread *th, par_frame *f)
{
    if (!f->spawned && !f->deps) { /* a leaf task: nothing can count on the frame */
        frame_put(th, f);
        return;
    }
    if (!frame_idle(f)) {
        frame_orphan(th, f);
        return;
    }
    if (f->deps)
        par_deps_free(th, f);
    frame_put(th, f);
}

/* run_body for a task that completes when its body returns (the GOMP
 * ABI's): its frame from the free list, which may outlive the body. */
static PAR_ALWAYS_INLINE int run_alone_body(par_thread *th, par_frame *parent, up_fn fn, void *arg,
                                            int final, int always)
{
    par_frame *f = frame_get(th);
    frame_init(f, th, parent, final);
    par_frame *saved = th->c.frame;
    th->c.frame = f;
    int run = frame_body(th, f, fn, arg, always);
    th->c.frame = saved;
    frame_end(th, f);
    return run;
}

static void complete_event(par_thread *th, par_event *ev, par_frame *parent, par_node *node);
static PAR_ALWAYS_INLINE void complete_task(par_thread *th, par_task *t);

/* A task whose record is a par_ext (par_internal.h): its handler runs it,
 * or frees its data when the task is skipped; with an event, completion
 * waits for the event too. Out of line: the common tasks pay one compare. */
static PAR_NOINLINE void run_ext(par_thread *th, par_task *t, int final)
{
    par_ext x;
    memcpy(&x, t->words, sizeof x);
    if (!run_alone_body(th, t->parent, par_ext_task, t->words, final, x.always))
        x.handler(x.data, 0);
    if (x.event)
        complete_event(th, x.event, t->parent, t->node);
    else
        complete_task(th, t);
}

/* A task of par_alone_fn or par_alone_icv_fn: complete when its body returns. */
static PAR_ALWAYS_INLINE void run_alone(par_thread *th, par_task *t, int final)
{
    run_alone_body(th, t->parent, t->fn,
                   t->size ? (void *)t->words : (void *)(uintptr_t)t->words[0], final, 0);
    complete_task(th, t);
}

/* A task taken from a deque or a dependency list: run it, then count it
 * done in the frame that created it. final: its descendants run
 * undeferred (a flag of its own frame; the parent's, which other threads
 * read, is never written). */
static PAR_ALWAYS_INLINE void run_task(par_thread *th, par_task *t, int final)
{
    if (t->fn == par_ext_task) {
        run_ext(th, t, final);
        return;
    }
    if (t->fn == par_alone_fn || t->fn == par_alone_icv_fn) {
        run_alone(th, t, final);
        return;
    }
    run_body(th, t->parent, t->fn, t->size ? (void *)t->words : (void *)(uintptr_t)t->words[0],
             final, 0);
    complete_task(th, t);
}

/* A task has run: its dependants may, and its parent counts it done. */
static PAR_ALWAYS_INLINE void complete_task(par_thread *th, par_task *t)
{
    par_frame *parent = t->parent;
    if (t->node)
        par_deps_complete(th, t->node);
    if (parent) {
        if (up__load_relaxed(&parent->owner) == th)
            parent->local_done++;
        else
            count_remote(th, parent);
    }
}

void par_run_task(par_thread *th, par_task *t) { run_task(th, t, 0); }

void par_ext_task(void *words)
{
    par_ext x;
    memcpy(&x, words, sizeof x);
    x.handler(x.data, 1);
}

/* Detach events. state: EV_RAN once the task has run (or was skipped),
 * EV_FULFILLED once omp_fulfill_event came; whoever sets the second bit,
 * with an acq_rel RMW that sees the first, completes the task (its
 * dependants, its parent's count) and, for a deferred task, frees the
 * event. An undeferred task's creator waits for EV_DONE (seq_cst, then a
 * wake of its slot: wait.c's publish-then-check) and frees it. */
enum { EV_RAN = 1, EV_FULFILLED = 2, EV_DONE = 4 };
struct par_event {
    _Atomic unsigned state;
    int undeferred;    /* (ro) */
    par_team *team;    /* (ro) the creator's team, where released tasks go */
    par_frame *parent; /* written before EV_RAN */
    par_node *node;
    par_member *slot; /* (ro) the creator's slot, for an undeferred task */
};

par_event *par_event_new(par_thread *th, int undeferred)
{
    par_event *ev = malloc(sizeof *ev);
    if (!ev)
        return NULL;
    atomic_init(&ev->state, 0);
    ev->undeferred = undeferred;
    ev->team = th->c.team;
    ev->parent = NULL;
    ev->node = NULL;
    ev->slot = th->c.slot;
    return ev;
}

static void finish_event(par_thread *th, par_event *ev)
{
    par_frame *parent = ev->parent;
    if (ev->node) {
        /* The dependants released here go to the team's shared queue, not
         * to this thread's deque: this may be any thread, in another task
         * or in no team at all. */
        par_team *saved = th->release_to;
        th->release_to = ev->team;
        par_deps_complete(th, ev->node);
        th->release_to = saved;
    }
    par_member *slot = parent->slot; /* read while the task still counts */
    int undeferred = ev->undeferred;
    par_member *cslot = ev->slot;
    if (!undeferred)
        free(ev);
    /* The fulfiller may be a thread outside the team (omp_fulfill_event
     * from anywhere): once the completion is published, the region may
     * end and free its team, slots included, before the wake-ups below.
     * A reference taken while the task still counts keeps it. */
    par_team *t = slot ? slot->team : cslot ? cslot->team : NULL;
    if (t)
        par_team_hold(t);
    count_remote(th, parent);
    if (undeferred) {
        up__fetch_or_seqcst(&ev->state, EV_DONE); /* the creator may free it from here on */
        if (cslot)
            par_wake_slot(cslot);
    }
    if (t)
        par_team_release(t);
}

static void complete_event(par_thread *th, par_event *ev, par_frame *parent, par_node *node)
{
    ev->parent = parent;
    ev->node = node;
    if (up__fetch_or_acq_rel(&ev->state, EV_RAN) & EV_FULFILLED)
        finish_event(th, ev);
}

int par_event_fulfill(par_event *ev)
{
    unsigned old = up__fetch_or_acq_rel(&ev->state, EV_FULFILLED);
    if (old & EV_FULFILLED)
        return -1;
    if (old & EV_RAN) {
        par_thread *th = par_tls ? par_tls : par_self();
        if (!th)
            abort(); /* no state for this thread: nothing can be completed */
        finish_event(th, ev);
    }
    return 0;
}

static int event_done(par_thread *th, void *arg)
{
    (void)th;
    return (up__load_seqcst(&((par_event *)arg)->state) & EV_DONE) != 0;
}

int par_in_final(void)
{
    par_thread *th = par_tls;
    return th && th->c.frame && th->c.frame->final;
}

void par_run_undeferred(par_thread *th, up_fn fn, void *arg)
{
    run_body(th, th->c.frame, fn, arg, 0, 0);
}

/* Is t a descendant of frame w? Every frame on t's chain is allocated,
 * its parent field unchanged, even when its task has completed (frames
 * that outlive their body, above): a frame holds its parent until it is
 * released, which is after every task under it. So the walk follows the
 * creation tree: a completed ancestor between t and w still makes t a
 * descendant of w, as OpenMP's task tree does. */
static int descends(const par_task *t, const par_frame *w)
{
    for (const par_frame *f = t->parent; f; f = f->parent)
        if (f == w)
            return 1;
    return 0;
}

/* The team's shared queue: tasks with a priority, tasks a thief took but
 * could not run (par_find_task_within), tasks released by an event's
 * fulfilment. 64 in the team, the rest in an allocated list (rare). */
struct par_urgent {
    struct par_urgent *next;
    int prio;
    par_task t;
};

static int pop_urgent(par_team *team, par_task *out, const par_frame *within)
{
    if (up__load_relaxed(&team->urgent_n) == 0)
        return 0;
    int got = 0;
    pthread_mutex_lock(&team->urgent_lock);
    unsigned n = up__load_relaxed(&team->urgent_n);
    unsigned in = n < 64 ? n : 64;
    int best = -1, best_prio = 0;
    for (unsigned i = 0; i < in; i++)
        if ((best < 0 || team->urgent[i].prio > best_prio) &&
            (!within || descends(&team->urgent[i].t, within))) {
            best = (int)i;
            best_prio = team->urgent[i].prio;
        }
    struct par_urgent **link = NULL;
    int have = best >= 0;
    for (struct par_urgent **l = &team->urgent_more; *l; l = &(*l)->next)
        if ((!have || (*l)->prio > best_prio) && (!within || descends(&(*l)->t, within))) {
            link = l;
            best_prio = (*l)->prio;
            have = 1;
        }
    if (link) {
        struct par_urgent *u = *link;
        *out = u->t;
        *link = u->next;
        free(u);
        got = 1;
    } else if (best >= 0) {
        *out = team->urgent[best].t;
        if (n > 64) { /* refill the array from the list */
            struct par_urgent *u = team->urgent_more;
            team->urgent_more = u->next;
            team->urgent[best].prio = u->prio;
            team->urgent[best].t = u->t;
            free(u);
        } else {
            team->urgent[best] = team->urgent[n - 1];
        }
        got = 1;
    }
    if (got)
        up__store_relaxed(&team->urgent_n, n - 1);
    pthread_mutex_unlock(&team->urgent_lock);
    return got;
}

static int push_urgent(par_team *team, const par_task *t, int prio);

/* One task to run: urgent ones first, then this thread's own deque above
 * mark (the descendants of the waiting frame; what lies below belongs to
 * the frames under it on this stack), then the other members' public
 * parts, from a random one on. A task of the waiting frame's own is the
 * program's recursion, as a plain call would be; any other task runs on
 * top of the wait, one level of helping deeper, so it is taken only while
 * the runtime's one bound on helping (help.h) allows another level, which
 * par_run_found then leaves. Returns 0, PAR_FOUND_OWN or PAR_FOUND_HELP. */
int par_find_task(par_thread *th, par_task *out, int64_t mark)
{
    return par_find_task_within(th, out, mark, NULL);
}

/* OpenMP 5.1's task scheduling constraint 2: a new tied task may be
 * scheduled on a thread only if it descends from every task region tied
 * to the thread and not suspended in a barrier. Here every task is tied;
 * the frames whose bodies run on this thread's stack above its last
 * barrier are such regions (a task whose body returned is complete, even
 * with its frame still counting children), each a descendant of the ones
 * below (by this rule), so a task that descends from the waiting frame
 * within in the creation tree (descends) is allowed. Own tasks above
 * mark always are (pushed by within or its descendants, complete or not,
 * while within waited on this stack); a stolen one is
 * checked after the steal (the record is only safe to read once it is
 * ours) and, when not allowed, goes to the team's shared queue, where an
 * allowed thread takes it. within NULL: a barrier, any task. */
int par_find_task_within(par_thread *th, par_task *out, int64_t mark, const par_frame *within)
{
    par_team *team = th->c.team;
    if (team && up__load_relaxed(&team->urgent_n) && up__help_enter()) {
        if (pop_urgent(team, out, within))
            return PAR_FOUND_HELP;
        up__help_leave();
    }
    up__deque *dq = th->c.dq;
    if (dq && up__deque_bottom(dq) > mark && par_deque_pop(dq, out) == UP__DEQUE_OK)
        return PAR_FOUND_OWN;
    if (!team)
        return 0;
    unsigned size = up__load_relaxed(&team->size);
    if (size < 2 || !up__help_enter())
        return 0;
    unsigned start = up__rng_below(&th->rng, size);
    for (unsigned k = 0; k < size; k++) {
        unsigned m = (start + k) % size;
        if (&team->members[m] == th->c.slot)
            continue;
        up__deque *v = up__load_acquire(&team->members[m].dq);
        if (!v)
            continue;
        int rc;
        while ((rc = par_deque_steal(v, out)) == UP__DEQUE_LOST)
            up__cpu_relax(); /* not empty: another thief was first */
        if (rc == UP__DEQUE_OK) {
            if (!within || descends(out, within))
                return PAR_FOUND_HELP;
            if (!push_urgent(team, out, INT_MIN))
                abort(); /* out of memory with a task in hand: it cannot be lost */
        }
    }
    up__help_leave();
    return 0;
}

void par_run_found(par_thread *th, par_task *t, int found)
{
    par_run_task(th, t);
    if (found == PAR_FOUND_HELP)
        up__help_leave();
}

/* The last look of a parking join (wait.c): a seq_cst load of the count
 * that completions elsewhere add to. */
static int children_ready(par_thread *th, void *arg)
{
    (void)th;
    par_frame *f = arg;
    return (uint32_t)(f->local_done + up__load_seqcst(&f->remote_done)) == (uint32_t)f->spawned;
}

static int idle_ready(par_thread *th, void *arg)
{
    (void)th;
    par_frame *f = arg;
    return f->local_done + up__load_seqcst(&f->remote_done) == f->spawned;
}

static int hold_ready(par_thread *th, void *arg)
{
    (void)th;
    return up__load_seqcst(&((par_hold *)arg)->ready);
}

/* Runs tasks until ready(th, arg) holds: first the frame f's own children
 * in this thread's deque (newest on top: the common case), then any task
 * par_find_task offers; with none, a spin or a park in the thread's slot.
 * Inlined with a constant ready, so each wait pays no indirect call. */
static PAR_ALWAYS_INLINE void wait_running_tasks(par_thread *th, par_frame *f, par_ready_fn ready,
                                                 void *arg)
{
    unsigned spins = 0;
    up__deque *dq = th->c.dq;
    par_task t;
    for (;;) {
        while (dq && up__deque_bottom(dq) > f->mark) {
            if (par_deque_pop(dq, &t) != UP__DEQUE_OK)
                break;
            run_task(th, &t, 0);
        }
        if (ready(th, arg))
            break;
        int found = par_find_task_within(th, &t, f->mark, f);
        if (found) {
            par_run_found(th, &t, found);
            spins = 0;
            continue;
        }
        if (th->c.slot)
            par_idle(th, th->c.slot, &spins, ready, arg, 1, UINT64_MAX);
        else
            par_relax(&spins);
    }
}

/* After a wait: when the frame is idle, nothing counts on it any more and
 * nobody touches its counts, so they start again from zero, and the
 * task's end skips its join (a task that waited once is then a leaf). With
 * holds left, other threads still drop them: the counts stay. */
static inline void counts_reset(par_frame *f)
{
    if (!frame_idle(f))
        return;
    f->spawned = f->local_done = 0;
    up__store_relaxed(&f->remote_done, 0);
}

/* The waits, out of line: a join that finds the frame done (the common
 * end of a task) pays no register saves for the wait loop. */
static PAR_NOINLINE void wait_children(par_thread *th, par_frame *f)
{
    wait_running_tasks(th, f, children_ready, f);
    counts_reset(f);
}

static PAR_NOINLINE void wait_idle(par_thread *th, par_frame *f)
{
    wait_running_tasks(th, f, idle_ready, f);
    counts_reset(f);
}

/* Waits for the frame's children, then drops its dependency table: every
 * task it knew of is done, so later tasks have nothing to wait for. */
void par_join(par_thread *th, par_frame *f)
{
    if (!children_done(f))
        wait_children(th, f);
    if (f->deps)
        par_deps_free(th, f);
}

void par_join_all(par_thread *th, par_frame *f)
{
    if (!frame_idle(f))
        wait_idle(th, f);
    if (f->deps)
        par_deps_free(th, f);
}

void par_push_ready(par_thread *th, par_task *t)
{
    if (th->release_to) {
        if (!push_urgent(th->release_to, t, INT_MIN))
            abort(); /* out of memory with a ready task in hand */
        return;
    }
    if (!th->c.team || !th->c.dq || par_deque_push(th, t) != UP__DEQUE_OK) {
        /* No team, or a full deque: run it here (OpenMP allows any task
         * to run immediately). The parent already counted it. */
        par_run_task(th, t);
    }
}

static int push_urgent(par_team *team, const par_task *t, int prio)
{
    int ok = 0;
    pthread_mutex_lock(&team->urgent_lock);
    unsigned n = up__load_relaxed(&team->urgent_n);
    if (n < sizeof team->urgent / sizeof team->urgent[0]) {
        team->urgent[n].prio = prio;
        team->urgent[n].t = *t;
        ok = 1;
    } else {
        struct par_urgent *u = malloc(sizeof *u);
        if (u) {
            u->prio = prio;
            u->t = *t;
            u->next = team->urgent_more;
            team->urgent_more = u;
            ok = 1;
        }
    }
    if (ok)
        up__store_sb(&team->urgent_n, n + 1);
    pthread_mutex_unlock(&team->urgent_lock);
    if (ok) {
        /* Publish, then check for parked members (wait.c). The pusher may
         * be outside the team (an event fulfilled elsewhere): then any
         * member may be woken. */
        up__fence_sb();
        if (up__load_sb(&team->sleepers) > 0) {
            par_thread *th = par_tls;
            if (th && th->c.team == team)
                par_wake_one(team, th->c.slot);
            else
                par_wake_team(team, NULL);
        }
    }
    return ok;
}

/* A task scheduling point after creating a dependent task (OpenMP allows
 * one there). A thread that creates a dependency graph far ahead of its
 * execution runs one ready task before it goes on. Otherwise it spends the
 * region building a graph that the other members drain alone, and the
 * graph's frontier falls out of its cache. */
#define PAR_DEPS_AHEAD 128

static void creation_point(par_thread *th, par_frame *f)
{
    uint64_t done = f->local_done + up__load_relaxed(&f->remote_done);
    if ((uint32_t)(f->spawned - done) <= PAR_DEPS_AHEAD) /* holds do not count */
        return;
    par_task t;
    int found = par_find_task_within(th, &t, f->mark, f);
    if (found)
        par_run_found(th, &t, found);
}

/* The root frame of a thread outside any region: tasks run at once. */
static _Thread_local par_frame outside_frame;

par_frame *par_current_frame(par_thread *th)
{
    if (th->c.frame)
        return th->c.frame;
    atomic_init(&outside_frame.owner, th);
    th->c.frame = &outside_frame;
    return &outside_frame;
}

/* The event of a task run at once that its creator waits for (made
 * undeferred, par_event_new), NULL for none: read before the task runs,
 * since any other event may be freed once it ran and was fulfilled. */
static par_event *waited_event(const par_task *t)
{
    if (t->fn != par_ext_task)
        return NULL;
    par_ext x;
    memcpy(&x, t->words, sizeof x);
    return x.event && x.event->undeferred ? x.event : NULL;
}

/* An undeferred task with a detach event completes when the event is
 * fulfilled: its creator waits for that, running its own descendants. */
static void wait_event(par_thread *th, par_frame *f, par_event *ev)
{
    if (!ev)
        return;
    wait_running_tasks(th, f, event_done, ev);
    free(ev);
}

/* who: the public call, for the error messages. */
int par_task_create(const char *who, up_fn fn, const par_task *proto, const up_task_opts *opts,
                    const up_dep *deps, size_t ndeps)
{
    if (!fn) { /* the other calls check fn before they come here */
        up__set_error("%s: task function is NULL", who);
        return UP_EINVAL;
    }
    const up_omp_ops *omp = par_omp();
    if (omp) {
        int rc = par_backend_error(omp, who);
        if (rc != UP_OK)
            return rc;
        if (proto->size)
            return omp->task(fn, NULL, proto->words, proto->size, deps, ndeps, opts);
        return omp->task(fn, (void *)(uintptr_t)proto->words[0], NULL, 0, deps, ndeps, opts);
    }
    par_thread *th = par_tls ? par_tls : par_self();
    if (!th) {
        up__set_error("tasks: out of memory for the thread's state");
        return UP_ENOMEM;
    }
    par_frame *f = par_current_frame(th);
    par_task t = *proto;
    t.fn = fn;
    t.parent = f;
    t.node = NULL;
    int final = opts && opts->final;
    int deferred = par_defers(th, f) && !(opts && opts->undeferred) && !final;
    if (deps && ndeps) {
        /* An undeferred task still waits for its predecessors, then runs
         * here: held for this thread, which runs other tasks meanwhile. */
        par_hold hold;
        atomic_init(&hold.ready, 0);
        hold.slot = th->c.slot;
        /* Counted first: once registered, a predecessor may push and run it. */
        f->spawned++;
        int rc = par_deps_create(th, &t, deps, ndeps, deferred ? NULL : &hold);
        if (rc < 0) {
            f->spawned--;
            return rc;
        }
        if (!deferred) {
            if (rc == 0)
                wait_running_tasks(th, f, hold_ready, &hold);
            par_event *ev = waited_event(&t);
            run_task(th, &t, final);
            wait_event(th, f, ev);
            return UP_OK;
        }
        if (rc > 0)
            par_push_ready(th, &t);
        /* else it waits for its predecessors; they will push it */
        if (deferred)
            creation_point(th, f);
        return UP_OK;
    }
    int urgent = opts && opts->priority > 0;
    /* A task without dependencies or priority runs at once past the
     * backlog, as up_task's do (PAR_INLINE_BACKLOG, below); a deferred
     * one's detach event is not waited for here, as on a pop. */
    if (!deferred || (!urgent && up__deque_holds(th->c.dq, PAR_INLINE_BACKLOG))) {
        f->spawned++;
        par_event *ev = waited_event(&t);
        run_task(th, &t, final);
        wait_event(th, f, ev);
        return UP_OK;
    }
    f->spawned++;
    if (urgent && push_urgent(th->c.team, &t, opts->priority))
        return UP_OK;
    par_push_ready(th, &t);
    return UP_OK;
}

/* up_task_opts as this library reads it: 1.0's layout ends at final, a
 * name that never changes (abi_struct.h). */
static const up__struct_kind task_opts_kind =
    UP__STRUCT_KIND(up_task_opts, final, "UP_TASK_OPTS(...)");

/* The program's options of task call who read into *local, in this
 * library's layout: *use is local, or NULL for no options (NULL).
 * UP_EINVAL, with the reason in up_last_error(), for a struct refused. */
static int task_opts(const char *who, const up_task_opts *opts, up_task_opts *local,
                     const up_task_opts **use)
{
    *use = NULL;
    if (!opts)
        return UP_OK;
    if (up__struct_in(who, &task_opts_kind, opts, local) != UP_OK)
        return UP_EINVAL;
    *use = local;
    return UP_OK;
}

/* Everything but the fast path, kept out of line so that the fast path
 * stays a handful of instructions without a stack frame to set up. */
static PAR_NOINLINE int task_slow(up_fn fn, void *arg, const up_task_opts *in)
{
    up_task_opts local;
    const up_task_opts *opts;
    if (task_opts("up_task", in, &local, &opts) != UP_OK)
        return UP_EINVAL;
    /* On an OpenMP backend, the common case goes straight to its plain
     * task, with no task description built for it. */
    const up_omp_ops *omp = !opts && fn ? par_omp() : NULL;
    if (omp) {
        int rc = omp->task_plain(fn, arg);
        if (rc == UP_OK)
            return UP_OK;
        int why = par_backend_error(omp, "up_task"); /* the module that failed to load */
        return why != UP_OK ? why : rc;
    }
    par_task t;
    t.size = 0;
    t.words[0] = (uint64_t)(uintptr_t)arg;
    return par_task_create("up_task", fn, &t, opts, NULL, 0);
}

/* PAR_INLINE_BACKLOG (par_internal.h): tasks queued in this thread's deque
 * from which on a new task runs at once instead of being queued. OpenMP lets an implementation run
 * any task undeferred, and both OpenMP runtimes do so when their queue is long (libgomp past 64
 * tasks per thread, libomp when a thread's deque is full). The queued tasks are the older, larger
 * ones, which thieves take; the deeper, smaller ones skip the queue: no push, no pop, no count in
 * the parent's frame, since such a task is done when up_task returns. Taking a task from the deque
 * lowers the count, so the next task created is queued again and thieves always find work near the
 * top of the tree. Four: fib at 2 threads took 0.54x the time of always queueing (0.86x with 8, and
 * with 32 its 30-level tree never filled the deque); nqueens, merge sort, sparse LU and Strassen
 * measured level with it.
 *
 * A queued task is visible to thieves from its push on. An earlier deque
 * kept up to 16 newest tasks private until a member said it was hungry,
 * and a hungry member waited for the owner's next task operation, which
 * after a long task (a Strassen leaf of 70 us) was far away; publishing
 * every push took Strassen (1024, tasks down to 128, 2 threads) 0.95x the
 * time, fib 1.07x, and left the other kernels level. */
int up_task(up_fn fn, void *arg, const up_task_opts *opts)
{
    /* The fast paths: ultrapool's scheduler, a thread with a frame (in a
     * region, or outside one after its first task), no options. */
    par_thread *th = par_tls;
    par_frame *f = th ? th->c.frame : NULL;
    if (f && !opts && fn && !par_omp()) {
        if (!par_defers(th, f)) {
            /* No team (outside a region, or a team of one), no deque, or
             * below a final task: run it now. */
            run_body(th, f, fn, arg, 0, 0);
            return UP_OK;
        }
        if (up__deque_holds(th->c.dq, PAR_INLINE_BACKLOG)) {
            run_body(th, f, fn, arg, 0, 0);
            return UP_OK;
        }
        if (par_deque_push_ptr(th, fn, f, arg) == UP__DEQUE_OK) {
            f->spawned++;
            return UP_OK;
        }
    }
    return task_slow(fn, arg, opts);
}

/* A dependency list a task may carry: present when counted, known kinds. */
static int deps_valid(const up_dep *deps, size_t ndeps)
{
    if (ndeps && !deps)
        return 0;
    for (size_t i = 0; i < ndeps; i++)
        if ((unsigned)deps[i].kind > UP_DEP_MUTEXINOUTSET)
            return 0;
    return 1;
}

/* The arguments of task call who: UP_OK, or UP_EINVAL with the reason in
 * up_last_error(). copy: a payload of size bytes is copied. */
static int task_args(const char *who, up_fn fn, int copy, const void *payload, size_t size,
                     const up_dep *deps, size_t ndeps)
{
    if (!fn)
        up__set_error("%s: task function is NULL", who);
    else if (copy && !payload)
        up__set_error("%s: payload is NULL", who);
    else if (copy && (size == 0 || size > UP_PAYLOAD_MAX))
        up__set_error("%s: payload of %zu bytes (1 to %d)", who, size, UP_PAYLOAD_MAX);
    else if (!deps_valid(deps, ndeps))
        up__set_error("%s: %s", who,
                      deps ? "a dependency kind is not an up_dep_kind" : "deps is NULL");
    else
        return UP_OK;
    return UP_EINVAL;
}

/* The checked makers' one body: the arguments of task call who checked,
 * then the task made with its payload copied (copy: size bytes) or with
 * arg, and with its dependencies. */
static int task_checked(const char *who, up_fn fn, void *arg, int copy, const void *payload,
                        size_t size, const up_dep *deps, size_t ndeps, const up_task_opts *in)
{
    up_task_opts local;
    const up_task_opts *opts;
    int rc = task_args(who, fn, copy, payload, size, deps, ndeps);
    if (rc == UP_OK)
        rc = task_opts(who, in, &local, &opts);
    if (rc != UP_OK)
        return rc;
    par_task t;
    if (copy) {
        memset(t.words, 0, sizeof t.words);
        memcpy(t.words, payload, size);
        t.size = size;
    } else {
        t.size = 0;
        t.words[0] = (uint64_t)(uintptr_t)arg;
    }
    return par_task_create(who, fn, &t, opts, deps, ndeps);
}

int up_task_copy(up_fn fn, const void *payload, size_t size, const up_task_opts *in)
{
    return task_checked("up_task_copy", fn, NULL, 1, payload, size, NULL, 0, in);
}

int up_task_deps(up_fn fn, void *arg, const up_dep *deps, size_t ndeps, const up_task_opts *in)
{
    return task_checked("up_task_deps", fn, arg, 0, NULL, 0, deps, ndeps, in);
}

int up_task_deps_copy(up_fn fn, const void *payload, size_t size, const up_dep *deps, size_t ndeps,
                      const up_task_opts *in)
{
    return task_checked("up_task_deps_copy", fn, NULL, 1, payload, size, deps, ndeps, in);
}

void up_taskwait(void)
{
    const up_omp_ops *omp = par_omp();
    if (omp) {
        omp->taskwait();
        return;
    }
    par_thread *th = par_tls;
    par_frame *f = th ? th->c.frame : NULL;
    if (f)
        par_join(th, f);
}

void up_taskyield(void)
{
    const up_omp_ops *omp = par_omp();
    if (omp) {
        omp->taskyield();
        return;
    }
    par_thread *th = par_tls;
    if (!th || !th->c.team)
        return;
    par_task t;
    par_frame *f = th->c.frame;
    int found = f ? par_find_task_within(th, &t, f->mark, f) : par_find_task(th, &t, 0);
    if (found)
        par_run_found(th, &t, found);
}

unsigned up_task_depth(void)
{
    const up_omp_ops *omp = par_omp();
    if (omp)
        return omp->task_depth();
    par_thread *th = par_tls;
    unsigned d = 0;
    for (par_frame *f = th ? th->c.frame : NULL; f; f = f->parent)
        d++;
    return d;
}

int up_taskgroup(up_fn fn, void *ctx)
{
    if (!fn) {
        up__set_error("up_taskgroup: function is NULL");
        return UP_EINVAL;
    }
    const up_omp_ops *omp = par_omp();
    if (omp) {
        int rc = par_backend_error(omp, "up_taskgroup");
        if (rc == UP_OK && (rc = omp->taskgroup(fn, ctx)) == UP_ECANCELED)
            up__set_error("up_taskgroup: the group was cancelled");
        return rc;
    }
    par_thread *th = par_self();
    if (!th) {
        up__set_error("up_taskgroup: out of memory for the thread's state");
        return UP_ENOMEM;
    }
    par_taskgroup tg;
    par_taskgroup_begin(th, &tg);
    fn(ctx);
    if (par_taskgroup_end(th, &tg)) {
        up__set_error("up_taskgroup: the group was cancelled");
        return UP_ECANCELED;
    }
    return UP_OK;
}

void par_taskgroup_begin(par_thread *th, par_taskgroup *tg)
{
    par_frame *outer = par_current_frame(th);
    atomic_init(&tg->g.cancelled, 0);
    tg->g.outer = outer->group;
    tg->g.data = NULL;
    tg->g.workshare = 0;
    tg->outer = outer;
    par_frame *f = &tg->f;
    frame_init(f, th, outer, 0);
    f->group = &tg->g;
    f->taskgroup = 1;
    th->c.frame = f;
}

int par_taskgroup_end(par_thread *th, par_taskgroup *tg)
{
    par_join_all(th, &tg->f); /* every task created in it, and their descendants */
    th->c.frame = tg->outer;
    return up__load_seqcst(&tg->g.cancelled) != 0;
}

void up_cancel_taskgroup(void)
{
    const up_omp_ops *omp = par_omp();
    if (omp) {
        if (par_env_get()->cancellation) /* the same switch on every backend */
            omp->cancel_taskgroup();
        return;
    }
    par_thread *th = par_tls;
    /* UP_CANCELLATION / OMP_CANCELLATION false: cancel is ignored, as in
     * OpenMP (env.c). */
    if (th && th->c.frame && th->c.frame->group && par_env_get()->cancellation)
        up__store_seqcst(&th->c.frame->group->cancelled, 1);
}

/* The taskgroup half of up_cancelled(), which the runtime defines (one
 * function for both kinds of cancellation): handed to it when this
 * library is loaded. */
static int group_cancelled(void)
{
    /* Not par_omp(): a pool task asking must not load a backend. Before
     * the backend is resolved, no call of this layer has run. */
    int s = up__load_acquire(&par_backend_state);
    if (s != PAR_BACKEND_OWN)
        return s == PAR_BACKEND_FOREIGN && up__load_relaxed(&par_foreign_ops)->cancelled();
    par_thread *th = par_tls;
    return th && th->c.frame && th->c.frame->group &&
           up__load_relaxed(&th->c.frame->group->cancelled);
}

/* The pool's question before a task parks (up_layer.h): this thread is a
 * region member, or runs a task of the layer whose frame (and the counts
 * of its children) lives on this stack. The frame of a thread outside any
 * region runs its tasks at once and keeps nothing pending, so it does not
 * pin the thread. */
static int thread_pinned(void)
{
    par_thread *th = par_tls;
    return th && (th->c.team || (th->c.frame && th->c.frame != &outside_frame));
}

__attribute__((constructor)) static void register_hooks(void)
{
    up__set_cancel_hook(group_cancelled);
    up__set_pinned_hook(thread_pinned);
}
