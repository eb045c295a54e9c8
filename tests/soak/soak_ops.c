/* The soak run's operations on the layers above the pool: parallel
 * regions (loops, tasks, taskgroups, reductions), groups with limits and
 * failing tasks, the weighted semaphore and channels. Each checks its own
 * result at once; task ids go through the round's accounting (soak.h). */
#include "soak.h"

#include <sched.h>
#include <stdlib.h>

/* ---- Regions --------------------------------------------------------- */

enum { REG_FOR, REG_TASKLOOP, REG_TASKS, REG_TASKGROUP, REG_REDUCE, REG_PARALLEL_FOR, REG_KINDS };

typedef struct reg {
    int kind;
    int64_t n;
    up_for_opts fo;
    up_taskloop_opts lo;
    _Atomic unsigned char *hits;
    _Atomic uint64_t members, made, ran;
    uint64_t in_critical; /* touched only inside the critical section */
    unsigned cancel_at;
} reg;

typedef struct reg_child {
    reg *g;
    int depth;
} reg_child;

static void reg_range(int64_t lo, int64_t hi, void *ctx)
{
    reg *g = ctx;
    if (lo < 0 || hi > g->n || lo >= hi)
        soak_fail("a loop got the range [%" PRId64 ", %" PRId64 ") of [0, %" PRId64 ")", lo, hi,
                  g->n);
    for (int64_t i = lo; i < hi; i++)
        if (atomic_fetch_add_explicit(&g->hits[i], 1, memory_order_relaxed))
            soak_fail("loop iteration %" PRId64 " of %" PRId64 " ran twice", i, g->n);
}

/* A layer task: counts itself and makes up to two children. */
static void reg_task(void *arg)
{
    reg_child c = *(reg_child *)arg;
    atomic_fetch_add(&c.g->ran, 1);
    if (c.depth > 0) {
        reg_child k = {c.g, c.depth - 1};
        for (int i = 0; i < 2; i++) {
            up_task_opts o = UP_TASK_OPTS(.undeferred = i == 1 && c.depth == 1);
            atomic_fetch_add(&c.g->made, 1);
            if (up_task_copy(reg_task, &k, sizeof k, &o) != UP_OK)
                soak_fail("up_task_copy failed: %s", up_last_error());
        }
    }
}

static void reg_group_fn(void *ctx)
{
    reg *g = ctx;
    reg_child c = {g, 1};
    for (unsigned i = 0; i < 16; i++) {
        atomic_fetch_add(&g->made, 1);
        if (up_task_copy(reg_task, &c, sizeof c, NULL) != UP_OK)
            soak_fail("up_task_copy in a taskgroup failed: %s", up_last_error());
        if (i == g->cancel_at)
            up_cancel_taskgroup();
    }
}

static void reg_body(void *ctx)
{
    reg *g = ctx;
    atomic_fetch_add(&g->members, 1);
    if (up_master() != (up_thread_num() == 0) || up_thread_num() >= up_num_threads())
        soak_fail("member %u of %u, master %d", up_thread_num(), up_num_threads(), up_master());
    int rc = UP_OK;
    switch (g->kind) {
    case REG_FOR:
        rc = up_for(0, g->n, &g->fo, reg_range, g);
        break;
    case REG_TASKLOOP:
        if (up_single())
            rc = up_taskloop(0, g->n, &g->lo, reg_range, g);
        up_barrier();
        break;
    case REG_TASKS:
        if (up_single()) {
            reg_child c = {g, 2};
            for (int i = 0; i < 8; i++) {
                up_task_opts o = UP_TASK_OPTS(.priority = i & 1, .final = i == 7);
                atomic_fetch_add(&g->made, 1);
                if ((rc = up_task_copy(reg_task, &c, sizeof c, &o)) != UP_OK)
                    break;
            }
            up_taskwait();
        }
        up_barrier();
        break;
    case REG_TASKGROUP:
        if (up_single()) {
            rc = up_taskgroup(reg_group_fn, g);
            if (rc == UP_ECANCELED)
                rc = UP_OK;
        }
        up_barrier();
        break;
    default: { /* REG_REDUCE */
        int64_t v = (int64_t)up_thread_num() + 1, t = (int64_t)up_num_threads();
        if ((rc = up_reduce(&v, UP_RED_SUM, UP_RED_INT64)) == UP_OK && v != t * (t + 1) / 2)
            soak_fail("a reduction over %" PRId64 " members gave %" PRId64, t, v);
        up_critical_begin("soak");
        g->in_critical++;
        up_critical_end("soak");
        break;
    }
    }
    if (rc != UP_OK)
        soak_fail("region kind %d: %s (%s)", g->kind, up_strerror(rc), up_last_error());
}

void soak_op_region(uint64_t *rng)
{
    reg g = {.kind = (int)(test_rand(rng) % REG_KINDS),
             .n = (int64_t)(test_rand(rng) % 3000),
             .fo = UP_FOR_OPTS(),
             .lo = UP_TASKLOOP_OPTS()};
    g.fo.schedule = (up_schedule)(test_rand(rng) % 4);
    g.fo.chunk = (int64_t)(test_rand(rng) % 64);
    g.fo.nowait = (int)(test_rand(rng) & 1);
    g.lo.grainsize = test_rand(rng) & 1 ? (int64_t)(test_rand(rng) % 100) : 0;
    g.lo.num_tasks = (int64_t)(test_rand(rng) % 20);
    g.lo.nogroup = (int)(test_rand(rng) & 1);
    g.cancel_at = (unsigned)(test_rand(rng) % 32);
    g.hits = calloc((size_t)g.n + 1, 1);
    CHECK(g.hits);
    unsigned nt = (unsigned)(test_rand(rng) % 5);
    int exact = g.kind != REG_PARALLEL_FOR && test_rand(rng) % 4 == 0, rc;
    if (exact && nt == 0)
        nt = 1;
    if (g.kind == REG_PARALLEL_FOR)
        rc = up_parallel_for(R.pool, 0, g.n, &g.fo, reg_range, &g);
    else if (exact)
        rc = up_parallel_exact(R.pool, nt, reg_body, &g);
    else
        rc = up_parallel(R.pool, nt, reg_body, &g);
    uint64_t members = atomic_load(&g.members);
    if (rc == UP_OK) {
        if (g.kind == REG_FOR || g.kind == REG_TASKLOOP || g.kind == REG_PARALLEL_FOR)
            for (int64_t i = 0; i < g.n; i++)
                if (atomic_load(&g.hits[i]) != 1)
                    soak_fail("region kind %d: iteration %" PRId64 " of %" PRId64 " ran %u times",
                              g.kind, i, g.n, (unsigned)atomic_load(&g.hits[i]));
        if (g.kind == REG_TASKS && atomic_load(&g.ran) != atomic_load(&g.made))
            soak_fail("region tasks: %" PRIu64 " made, %" PRIu64 " ran", atomic_load(&g.made),
                      atomic_load(&g.ran));
        if (g.kind == REG_TASKGROUP && atomic_load(&g.ran) > atomic_load(&g.made))
            soak_fail("taskgroup: %" PRIu64 " made, %" PRIu64 " ran", atomic_load(&g.made),
                      atomic_load(&g.ran));
        if (g.kind == REG_REDUCE && g.in_critical != members)
            soak_fail("critical sections: %" PRIu64 " of %" PRIu64 " members", g.in_critical,
                      members);
        if (exact && members != nt)
            soak_fail("up_parallel_exact(%u) ran %" PRIu64 " members", nt, members);
    } else if ((rc == UP_ESTOPPED && atomic_load(&R.stop_begun)) || (rc == UP_EAGAIN && exact)) {
        if (members || atomic_load(&g.ran))
            soak_fail("a region that returned %s ran %" PRIu64 " members", up_strerror(rc),
                      members);
    } else {
        soak_fail("region kind %d (%u threads%s) returned %s (%s)", g.kind, nt,
                  exact ? ", exact" : "", up_strerror(rc), up_last_error());
    }
    free((void *)g.hits);
}

/* ---- Groups ---------------------------------------------------------- */

#define GROUP_FAIL_CODE 7

typedef struct gop {
    _Atomic uint64_t ran, failed;
} gop;
typedef struct gslot {
    gop *op;
    uint64_t id;
} gslot;

static int group_task(void *arg)
{
    gslot *s = arg;
    soak_task_body(s->id);
    atomic_fetch_add(&s->op->ran, 1);
    if (soak_mix(R.seed ^ s->id ^ 0xfa11) % 16 == 0) {
        atomic_fetch_add(&s->op->failed, 1);
        return GROUP_FAIL_CODE;
    }
    return 0;
}

void soak_op_group(uint64_t *rng)
{
    unsigned n = 1 + (unsigned)(test_rand(rng) % 64), limit = (unsigned)(test_rand(rng) % 9);
    unsigned cancel_at = test_rand(rng) % 8 == 0 ? (unsigned)(test_rand(rng) % n) : n;
    gop op = {0};
    gslot *slots = calloc(n, sizeof *slots);
    CHECK(slots);
    up_group *g;
    int rc = up_group_create(&g, R.pool, limit);
    if (rc != UP_OK)
        soak_fail("up_group_create(%u) returned %s", limit, up_strerror(rc));
    uint64_t accepted = 0;
    int stop_seen = 0;
    for (unsigned i = 0; i < n; i++) {
        if (i == cancel_at)
            up_group_cancel(g);
        uint64_t id = soak_new_id();
        if (id == SOAK_NO_ID)
            break;
        slots[i] = (gslot){&op, id};
        int stopped = atomic_load(&R.stop_returned);
        rc = up_group_go(g, group_task, &slots[i]);
        soak_expect[id] = rc == UP_OK ? EXPECT_AT_MOST_ONCE : EXPECT_NEVER;
        if (rc == UP_OK) {
            if (stopped)
                soak_fail("up_group_go accepted task %" PRIu64 " after a stop had returned", id);
            accepted++;
        } else if (rc == UP_ESTOPPED && atomic_load(&R.stop_begun)) {
            stop_seen = 1;
        } else if (!(rc == UP_ECANCELED && up_group_cancelled(g))) {
            soak_fail("up_group_go returned %s (%s)", up_strerror(rc), up_last_error());
        }
    }
    rc = up_group_wait(g);
    uint64_t ran = atomic_load(&op.ran), failed = atomic_load(&op.failed);
    uint64_t skipped = up_group_skipped(g);
    if (ran + skipped != accepted)
        soak_fail("group: %" PRIu64 " accepted, %" PRIu64 " ran, %" PRIu64 " skipped", accepted,
                  ran, skipped);
    int ok = failed ? rc == GROUP_FAIL_CODE
                    : rc == UP_OK || (rc == UP_ECANCELED && cancel_at < n) ||
                          (rc == UP_ESTOPPED && stop_seen);
    if (!ok)
        soak_fail("group wait returned %d with %" PRIu64 " failed tasks, cancel %s", rc, failed,
                  cancel_at < n ? "called" : "not called");
    if ((rc = up_group_destroy(g)) != UP_OK)
        soak_fail("up_group_destroy returned %s", up_strerror(rc));
    atomic_fetch_add(&soak_group_accepted, accepted);
    atomic_fetch_add(&soak_group_ran, ran);
    atomic_fetch_add(&soak_group_skipped, skipped);
    free(slots);
}

/* ---- Semaphores ------------------------------------------------------ */

void soak_op_sem(uint64_t *rng)
{
    uint64_t w = 1 + test_rand(rng) % R.sem_cap;
    int rc;
    switch (test_rand(rng) % 4) {
    case 0:
        rc = up_sem_acquire(R.sem, w);
        break;
    case 1:
        rc = up_sem_acquire_timeout(R.sem, w, test_rand(rng) % 3000000);
        break;
    case 2:
        rc = up_sem_try_acquire(R.sem, w);
        break;
    default: /* refusals: more than the capacity, more than is held */
        if (up_sem_acquire(R.sem, R.sem_cap + 1) != UP_EINVAL)
            soak_fail("up_sem_acquire above the capacity was not refused");
        if (up_sem_release(R.sem, R.sem_cap + 1) != UP_EINVAL)
            soak_fail("up_sem_release of more than is held was not refused");
        return;
    }
    if (rc == UP_ETIMEDOUT || rc == UP_EAGAIN)
        return;
    if (rc != UP_OK)
        soak_fail("acquiring %" PRIu64 " of %" PRIu64 " units: %s", w, R.sem_cap, up_strerror(rc));
    if (atomic_fetch_add(&R.sem_units, w) + w > R.sem_cap)
        soak_fail("semaphore over its capacity %" PRIu64, R.sem_cap);
    test_sleep_ms((unsigned)(test_rand(rng) % 3));
    atomic_fetch_sub(&R.sem_units, w);
    if (up_sem_release(R.sem, w) != UP_OK)
        soak_fail("up_sem_release(%" PRIu64 ") refused", w);
}

/* ---- Channels -------------------------------------------------------- */

typedef struct cmsg {
    uint64_t slot, id;
} cmsg;
typedef struct cslot {
    up_chan *c;
    _Atomic unsigned *returned;
    uint64_t slot, id;
} cslot;

static void chan_task(void *arg)
{
    cslot *s = arg;
    soak_task_body(s->id);
    cmsg m = {s->slot, s->id};
    int rc = up_chan_send(s->c, &m);
    if (rc != UP_OK)
        soak_fail("up_chan_send of task %" PRIu64 ": %s", s->id, up_strerror(rc));
    atomic_fetch_add(s->returned, 1); /* the last touch: the channel may go now */
}

/* Pool tasks send, this thread receives: the tasks block while the
 * channel is full, and this thread drains it while it submits (it submits
 * with up_submit, which never runs a task here, so it cannot be one of
 * the blocked senders). A sender may still be inside up_chan_send after
 * its element was received, so the channel is destroyed only once every
 * sending task has returned (chan.h). */
void soak_op_chan(uint64_t *rng)
{
    unsigned n = 1 + (unsigned)(test_rand(rng) % 64);
    size_t cap = 1 + test_rand(rng) % n;
    up_chan *c;
    CHECK_EQ(up_chan_create(&c, sizeof(cmsg), cap), UP_OK);
    cslot *slots = calloc(n, sizeof *slots);
    unsigned char *got = calloc(n, 1);
    CHECK(slots && got);
    unsigned accepted = 0, received = 0;
    _Atomic unsigned returned = 0;
    cmsg m;
    for (unsigned i = 0; i < n; i++) {
        uint64_t id = soak_new_id();
        if (id == SOAK_NO_ID)
            break;
        slots[i] = (cslot){c, &returned, i, id};
        int rc, stopped;
        for (;;) {
            stopped = atomic_load(&R.stop_returned);
            rc = up_submit(R.pool, chan_task, &slots[i]);
            if (rc != UP_EOVERLOAD)
                break;
            while (up_chan_try_recv(c, &m) == UP_OK) {
                if (m.slot >= n || slots[m.slot].id != m.id || got[m.slot]++)
                    soak_fail("channel: message %" PRIu64 " (task %" PRIu64 ") wrong or twice",
                              m.slot, m.id);
                received++;
            }
            sched_yield();
        }
        soak_submitted(id, rc, stopped, "up_submit (channel)");
        accepted += rc == UP_OK;
    }
    while (received < accepted) {
        int rc = up_chan_recv_timeout(c, &m, 120000000000ull);
        if (rc != UP_OK)
            soak_fail("channel: %u of %u messages after 120 s: %s", received, accepted,
                      up_strerror(rc));
        if (m.slot >= n || slots[m.slot].id != m.id || got[m.slot]++)
            soak_fail("channel: message %" PRIu64 " (task %" PRIu64 ") wrong or twice", m.slot,
                      m.id);
        received++;
    }
    while (atomic_load(&returned) < accepted)
        sched_yield();
    CHECK_EQ(up_chan_close(c), UP_OK);
    if (up_chan_try_send(c, &m) != UP_ESTOPPED || up_chan_recv(c, &m) != UP_ESTOPPED)
        soak_fail("a closed, drained channel still sends or receives");
    CHECK_EQ(up_chan_destroy(c), UP_OK);
    free(slots);
    free(got);
}
