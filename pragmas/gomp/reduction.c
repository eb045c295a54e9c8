/* Task reductions (task_reduction, in_reduction, reduction with the task
 * modifier on parallel and worksharing constructs) in GCC's layout.
 *
 * GCC describes the reduction variables of a construct in an array of
 * words (libgomp's task.c documents it): d[0] their count, d[1] the bytes
 * of one thread's copies, d[2] their alignment (on return the copies'
 * base), d[3] the allocator, d[4] the next descriptor, d[5] and d[6] the
 * runtime's (here: d[5] nonzero on the last descriptor of one
 * registration, d[6] the end of the copies), then per variable its
 * address, its offset in a thread's block, and a word for the runtime
 * (the descriptor). The runtime allocates one zeroed block per team
 * member; GCC's code initializes and combines them. A task finds its
 * thread's copy with GOMP_task_reduction_remap, by the team member index,
 * which is stable: a team's tasks run only on that team's members. The
 * registration hangs on the innermost taskgroup (par_group.data) and
 * chains the enclosing taskgroup's, as in-reduction may name either. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gomp_tasks.h"

static void reduction_register(uintptr_t *data, uintptr_t *old, uintptr_t *orig, unsigned nthreads)
{
    uintptr_t *d = data;
    for (;;) {
        if (orig) { /* another member already allocated (worksharing) */
            d[2] = orig[2];
            d[6] = orig[6];
            orig = (uintptr_t *)orig[4];
        } else {
            size_t align = d[2] > sizeof(void *) ? d[2] : sizeof(void *);
            size_t size = (d[1] * nthreads + align - 1) / align * align;
            void *p = aligned_alloc(align, size ? size : align);
            if (!p)
                gomp_fatal("task reductions: out of memory for %zu bytes", size);
            memset(p, 0, size);
            d[2] = (uintptr_t)p;
            d[6] = d[2] + d[1] * nthreads;
        }
        d[5] = 0;
        for (size_t j = 0; j < d[0]; j++)
            d[7 + 3 * j + 2] = (uintptr_t)d;
        if (d[4] == 0) {
            d[4] = (uintptr_t)old;
            d[5] = 1; /* the last of this registration */
            return;
        }
        d = (uintptr_t *)d[4];
    }
}

/* The reductions visible from the current task: the innermost taskgroup
 * that has some. */
static uintptr_t *current_reductions(par_thread *th)
{
    for (par_group *g = th && th->c.frame ? th->c.frame->group : NULL; g; g = g->outer)
        if (g->data)
            return g->data;
    return NULL;
}

static unsigned team_size(par_thread *th) { return th->c.team && th->c.size ? th->c.size : 1; }

GOMP_API void GOMP_taskgroup_reduction_register(uintptr_t *data)
{
    par_thread *th = gomp_thread_state("GOMP_taskgroup_reduction_register");
    par_group *g = th->c.frame ? th->c.frame->group : NULL;
    if (!g)
        gomp_fatal("GOMP_taskgroup_reduction_register: not inside a taskgroup");
    reduction_register(data, current_reductions(th), NULL, team_size(th));
    g->data = data;
}

GOMP_API void GOMP_taskgroup_reduction_unregister(uintptr_t *data)
{
    uintptr_t *d = data;
    for (;;) {
        free((void *)d[2]);
        if (d[5])
            break;
        d = (uintptr_t *)d[4];
    }
}

GOMP_API void GOMP_task_reduction_remap(size_t cnt, size_t cntorig, void **ptrs)
{
    par_thread *th = gomp_thread_state("GOMP_task_reduction_remap");
    uintptr_t *data = current_reductions(th);
    uintptr_t id = th->c.team ? th->c.member : 0;
    for (size_t i = 0; i < cnt; i++) {
        uintptr_t p = (uintptr_t)ptrs[i], *hit = NULL, *ent = NULL;
        /* The original variable's address ... */
        for (uintptr_t *d = data; d && !hit; d = (uintptr_t *)d[4])
            for (size_t j = 0; j < d[0]; j++)
                if (d[7 + 3 * j] == p) {
                    hit = d;
                    ent = d + 7 + 3 * j;
                    break;
                }
        if (!hit) {
            /* ... or an address inside some thread's copies. */
            for (uintptr_t *d = data; d; d = (uintptr_t *)d[4])
                if (p >= d[2] && p < d[6]) {
                    hit = d;
                    break;
                }
            if (!hit)
                gomp_fatal("couldn't find matching task_reduction or reduction with task "
                           "modifier for %p",
                           ptrs[i]);
            uintptr_t off = (p - hit[2]) % hit[1];
            for (size_t j = 0; j < hit[0]; j++)
                if (hit[7 + 3 * j + 1] == off)
                    ent = hit + 7 + 3 * j;
            if (!ent && i < cntorig)
                gomp_fatal("couldn't find matching task_reduction or reduction with task "
                           "modifier for %p",
                           ptrs[i]);
            ptrs[i] = (void *)(hit[2] + id * hit[1] + off);
            if (i < cntorig)
                ptrs[cnt + i] = (void *)ent[0];
            continue;
        }
        ptrs[i] = (void *)(hit[2] + id * hit[1] + ent[1]);
        if (i < cntorig)
            ptrs[cnt + i] = (void *)ent[0];
    }
}

/* parallel reduction(task, ...): every implicit task of the region is in
 * one taskgroup that holds the registration. */
GOMP_API void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags);

typedef struct red_region {
    void (*fn)(void *);
    void *data;
    par_group group;
    _Atomic unsigned size;
} red_region;

static void red_member(void *arg)
{
    red_region *r = arg;
    par_thread *th = gomp_thread_state("GOMP_parallel_reductions");
    par_frame *f = par_current_frame(th);
    /* The member's root frame, before any task of it exists. A member of
     * a real team keeps it (the frame ends with the region, after the
     * barrier that runs its tasks); a team of one ran its tasks at once,
     * and its frame may be the thread's own, which must not keep it. */
    par_group *saved = f->group;
    f->group = &r->group;
    unsigned size = team_size(th);
    if (!th->c.team || th->c.member == 0)
        up__store_relaxed(&r->size, size);
    r->fn(r->data);
    if (size < 2)
        f->group = saved;
}

GOMP_API unsigned GOMP_parallel_reductions(void (*fn)(void *), void *data, unsigned num_threads,
                                           unsigned flags)
{
    unsigned n = num_threads ? num_threads : gomp_icv_get()->nthreads;
    if (n == 0 || n > PAR_MAX_TEAM)
        n = PAR_MAX_TEAM; /* copies enough for any team; the size is returned */
    red_region r;
    r.fn = fn;
    r.data = data;
    memset(&r.group, 0, sizeof r.group);
    atomic_init(&r.group.cancelled, 0);
    atomic_init(&r.size, 1);
    uintptr_t *rdata;
    memcpy(&rdata, data, sizeof rdata);
    reduction_register(rdata, NULL, NULL, n);
    r.group.data = rdata;
    GOMP_parallel(red_member, &r, num_threads, flags);
    /* GCC's code combines the copies of this many members. */
    return up__load_relaxed(&r.size);
}

/* Worksharing constructs with reduction(task, ...) (for the loop and
 * sections entry points): a taskgroup of the construct, marked workshare
 * so that cancel taskgroup means the enclosing one. */
void gomp_workshare_taskgroup_start(void)
{
    GOMP_taskgroup_start();
    par_thread *th = par_tls;
    th->c.frame->group->workshare = 1;
}

void gomp_workshare_task_reduction_register(uintptr_t *data, uintptr_t *orig)
{
    par_thread *th = gomp_thread_state("task reductions");
    par_group *g = th->c.frame->group;
    reduction_register(data, current_reductions(th), orig, team_size(th));
    g->data = data;
}

GOMP_API void GOMP_workshare_task_reduction_unregister(bool cancelled)
{
    par_thread *th = gomp_thread_state("GOMP_workshare_task_reduction_unregister");
    uintptr_t *data = th->c.frame && th->c.frame->group ? th->c.frame->group->data : NULL;
    GOMP_taskgroup_end();
    if (data && (!th->c.team || th->c.member == 0))
        GOMP_taskgroup_reduction_unregister(data);
    if (!cancelled)
        GOMP_barrier();
}

/* The worksharing constructs' task reductions (gomp.h): every member
 * opens the construct's taskgroup; the first registers its array with
 * fresh copies, the others theirs against the first's copies, so that a
 * task of any member finds the same per-member blocks. GCC's code ends
 * the construct with GOMP_workshare_task_reduction_unregister. */
void gomp_ws_task_reductions(uintptr_t *reductions, uintptr_t *first, const char *who)
{
    (void)who;
    gomp_workshare_taskgroup_start();
    gomp_workshare_task_reduction_register(reductions, first);
}
