/* Blocking regions (up_blocking_begin/end, pool.h): a task that knows it
 * is about to block says so, in the manner of Go's entersyscall. The
 * worker then counts as blocked for the monitor (monitor.c), and, since
 * the task's CPU is about to idle, the queued work it leaves behind gets
 * another worker right away: a parked one, or a new one beyond one per
 * CPU. Only the region's outermost begin does that. */
#include "pool_internal.h"
#include "workmap.h"

/* Another worker for shard s's queued work while this one blocks: the
 * step a submit takes after publishing (submit.c), except that the new
 * worker may go beyond one per CPU, since this one leaves its CPU. */
static void hand_off(up_pool *p, up__shard *s)
{
    if (up__load_acquire(&p->stopping) || !up__shard_has_work(s))
        return;
    uint64_t idle = up__load_seqcst(&p->idle);
    if (UP__IDLE_SPINNING(idle) != 0)
        return; /* a searcher will take it */
    if (UP__IDLE_PARKED(idle) != 0 && up__wake_one(p, s->index))
        return;
    if (up__spawn(p, s, 1) != UP_OK)
        up__monitor_poke(p);
}

int up__region_spawn(up_pool *p, up__shard *s)
{
    unsigned inside = up__load_seqcst(&s->in_region);
    if (inside == 0 || up__load_relaxed(&s->nworkers) >= up__shard_cpus(s) + inside)
        return 0;
    return up__spawn(p, s, 1) == UP_OK;
}

void up__region_close(up__worker *w)
{
    if (up__load_relaxed(&w->blocking) == 0)
        return;
    up__store_relaxed(&w->blocking, 0);
    up__fetch_sub_relaxed(&w->pool->shards[w->shard].in_region, 1);
}

int up_blocking_begin(void)
{
    up__worker *w = up__tls_worker;
    if (!w || up__tls_running != w->pool)
        return UP_OK;
    unsigned depth = up__load_relaxed(&w->blocking);
    up__store_relaxed(&w->blocking, depth + 1);
    if (depth == 0) {
        up__shard *s = &w->pool->shards[w->shard];
        /* Counted before the look for work: a submit that publishes after
         * the look sees the count (up__region_spawn) and starts a worker
         * itself. Both sides are sequentially consistent RMW then load. */
        up__fetch_add_seqcst(&s->in_region, 1);
        hand_off(w->pool, s);
    }
    return UP_OK;
}

int up_blocking_end(void)
{
    up__worker *w = up__tls_worker;
    if (!w || up__tls_running != w->pool)
        return UP_OK;
    unsigned depth = up__load_relaxed(&w->blocking);
    if (depth == 0) {
        up__set_error("up_blocking_end: no up_blocking_begin open on this worker");
        return UP_EINVAL;
    }
    up__store_relaxed(&w->blocking, depth - 1);
    if (depth == 1)
        up__fetch_sub_relaxed(&w->pool->shards[w->shard].in_region, 1);
    return UP_OK;
}
