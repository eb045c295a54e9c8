/* taskloop: GOMP_taskloop (long) and GOMP_taskloop_ull (unsigned long
 * long). The iterations are cut into chunks as OpenMP's grainsize and
 * num_tasks clauses say (with the strict modifier, chunks of exactly the
 * grainsize and one shorter last chunk), and each chunk is a task made by
 * GOMP_task's path (gomp_task_spawn) on a copy of GCC's block whose first
 * two words are the chunk's start and end. Without nogroup the loop is a
 * taskgroup, with its task reductions registered in it. */
#include <stdint.h>
#include <string.h>

#include "gomp_tasks.h"

/* GCC's block for a taskloop with reductions starts with the two bounds
 * and the reduction descriptor. */
static uintptr_t *reduction_data(void *data)
{
    uintptr_t *p;
    memcpy(&p, (char *)data + 2 * sizeof(uint64_t), sizeof p);
    return p;
}

/* The common taskloop goes through the layer's lazy splitting
 * (par_taskloop_offsets, as up_taskloop): a task halves its range of
 * chunks, queuing one half, only while its deque holds few tasks, and
 * runs chunks at once otherwise, so a loop makes a few tasks per thread
 * and thieves take large halves, not one chunk each. Common: a taskgroup
 * (no nogroup, so GCC's block stays put until the loop's end), if(1), not
 * final, no priority, a block GCC copies with memcpy of at most
 * SPLIT_BLOCK_MAX bytes, chunks of balanced sizes (not strict), and the
 * region's ICVs (the creator changed none, so no chunk carries a
 * snapshot). Each chunk runs on its own copy of the block. */
#define SPLIT_BLOCK_MAX 256

typedef struct split_loop {
    void (*fn)(void *);
    const void *data;
    size_t arg_size;
    uint64_t start, step;
} split_loop;

static void split_chunk(int64_t lo, int64_t hi, void *p)
{
    const split_loop *s = p;
    par_thread *th = par_tls;
    if (th && gomp_cancelled_here(th))
        return;
    uint64_t b = (uint64_t)lo - (uint64_t)INT64_MIN, e = (uint64_t)hi - (uint64_t)INT64_MIN;
    _Alignas(16) unsigned char block[SPLIT_BLOCK_MAX];
    memcpy(block, s->data, s->arg_size);
    uint64_t bounds[2] = {s->start + b * s->step, s->start + e * s->step};
    memcpy(block, bounds, sizeof bounds);
    gomp_icv_scope scope;
    gomp_icv_scope_enter(&scope, NULL);
    s->fn(block);
    gomp_icv_scope_leave(&scope);
}

static int splits(const par_thread *th, void (*cpyfn)(void *, void *), long arg_size,
                  long arg_align, unsigned flags, int priority, int strict)
{
    unsigned need = GOMP_TASK_FLAG_IF, refuse = GOMP_TASK_FLAG_NOGROUP | GOMP_TASK_FLAG_FINAL;
    return !cpyfn && arg_size >= (long)(2 * sizeof(uint64_t)) && arg_size <= SPLIT_BLOCK_MAX &&
           arg_align <= 16 && (flags & need) == need && !(flags & refuse) && priority <= 0 &&
           !strict && !gomp_icv_mark && par_defers(th, th->c.frame);
}

/* n iterations from start by step (unsigned arithmetic: both types wrap
 * the same way in 64 bits). */
static void taskloop(const char *who, void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                     long arg_size, long arg_align, unsigned flags, unsigned long num_tasks,
                     int priority, uint64_t start, uint64_t n, uint64_t step)
{
    par_thread *th = gomp_thread_state(who);
    int group = !(flags & GOMP_TASK_FLAG_NOGROUP);
    if (n == 0 || (th->c.team && gomp_cancel_var() &&
                   (up__load_relaxed(&th->c.team->cancel) & PAR_CANCEL_PARALLEL))) {
        /* Tell GCC's code that no reduction was registered. */
        if (group && (flags & GOMP_TASK_FLAG_REDUCTION))
            reduction_data(data)[2] = 0;
        return;
    }
    uint64_t ntasks, grain = 0;
    int strict = 0;
    if (flags & GOMP_TASK_FLAG_GRAINSIZE) {
        grain = num_tasks ? num_tasks : 1;
        if (flags & GOMP_TASK_FLAG_STRICT) {
            ntasks = n / grain + (n % grain != 0);
            strict = 1;
        } else {
            /* Chunks of grain to 2 * grain - 1 iterations. */
            ntasks = n / grain ? n / grain : 1;
            grain = 0;
        }
    } else {
        ntasks = num_tasks ? num_tasks : (th->c.size ? th->c.size : 1);
        if (ntasks > n)
            ntasks = n;
    }
    if (group) {
        GOMP_taskgroup_start();
        if (flags & GOMP_TASK_FLAG_REDUCTION)
            GOMP_taskgroup_reduction_register(reduction_data(data));
    } else if (gomp_cancelled_here(th)) {
        return;
    }
    if (splits(th, cpyfn, arg_size, arg_align, flags, priority, strict)) {
        split_loop s = {fn, data, (size_t)arg_size, start, step};
        par_taskloop_offsets(n, ntasks, split_chunk, &s);
        GOMP_taskgroup_end();
        return;
    }
    up_task_opts opts = UP_TASK_OPTS();
    opts.undeferred = !(flags & GOMP_TASK_FLAG_IF);
    opts.final = (flags & GOMP_TASK_FLAG_FINAL) != 0;
    opts.priority = priority > 0 ? priority : 0;
    uint64_t div = n / ntasks, mod = n % ntasks, at = start;
    for (uint64_t i = 0; i < ntasks; i++) {
        if (gomp_cancelled_here(th))
            break;
        /* strict grainsize: grain each, the last what is left; otherwise
         * an even split, the first n % ntasks one longer. */
        uint64_t count =
            grain ? (i + 1 < ntasks || n % grain == 0 ? grain : n % grain) : div + (i < mod);
        uint64_t bounds[2] = {at, at + count * step};
        at = bounds[1];
        gomp_task_spawn(who, fn, data, cpyfn, arg_size, arg_align, &opts, NULL, NULL, bounds);
    }
    if (group)
        GOMP_taskgroup_end();
}

GOMP_API void GOMP_taskloop(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                            long arg_size, long arg_align, unsigned flags, unsigned long num_tasks,
                            int priority, long start, long end, long step)
{
    uint64_t n = 0;
    if (step > 0 && start < end)
        n = ((uint64_t)end - (uint64_t)start + (uint64_t)step - 1) / (uint64_t)step;
    else if (step < 0 && start > end)
        n = ((uint64_t)start - (uint64_t)end - (uint64_t)step - 1) / (0 - (uint64_t)step);
    taskloop("GOMP_taskloop", fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority,
             (uint64_t)start, n, (uint64_t)step);
}

GOMP_API void GOMP_taskloop_ull(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                                long arg_size, long arg_align, unsigned flags,
                                unsigned long num_tasks, int priority, unsigned long long start,
                                unsigned long long end, unsigned long long step)
{
    uint64_t n = 0;
    if (flags & GOMP_TASK_FLAG_UP) {
        if (start < end)
            n = (end - start + step - 1) / step;
    } else if (start > end) {
        n = (start - end - step - 1) / (0 - step);
    }
    taskloop("GOMP_taskloop_ull", fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority,
             start, n, step);
}
