/* Sharing the CPUs with an OpenMP runtime in the same process (omp.h).
 *
 * Team sizes. OpenMP's nthreads-var, the default size of a region's team,
 * is per thread: omp_set_num_threads() on a worker sets it for regions
 * that worker's tasks open. Before each task a worker sets it to the CPUs
 * of its shard that the other busy workers leave free, when that changed
 * since it last set it. A thread that is not a worker but runs a task
 * (up__run: a waiting submitter, a group waiter) gets the CPUs the
 * busy workers leave, and its own value back after the task. The
 * runtime's functions are looked up once with dlsym, so the library links
 * no OpenMP and a process without one pays a NULL test per task.
 *
 * Lending. lend.count counts the lends in progress. A worker reads it before it
 * looks for a task (after each task, and after each wake); while it is
 * non-zero the worker waits on lend.cv. The last lend to end clears it and
 * broadcasts, both under lend.mu, and a worker checks it again under
 * lend.mu before waiting, so no end is missed. A worker that read zero
 * just before a lend began runs one more task: the lend does not wait for
 * running tasks, it only stops new ones, here and in the other paths that
 * run queued tasks (up__help_once, a submitter's inline run). */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include <ultrapool/omp.h>

#include "pool_internal.h"

typedef void (*omp_set_fn)(int);
typedef int (*omp_get_fn)(void);

/* The runtime's functions and its default team size, looked up at each
 * pool's creation until found (a runtime can be loaded after the first
 * pool, by dlopen with RTLD_GLOBAL), then kept. */
static omp_set_fn found_set;
static omp_get_fn found_get;
static unsigned found_default;
static pthread_mutex_t lookup_lock = PTHREAD_MUTEX_INITIALIZER;

/* Function pointers from dlsym's data pointers, as POSIX allows. The
 * OpenMP runtime may be ultrapool's own (the libgomp.so.1 of pragmas/gomp):
 * its regions run on the pool that opens them, but a region of one thread
 * per CPU from each of N busy workers would still have the pool start
 * threads for their members, so the team size is shared the same way.
 * (The OpenMP pool itself, whose tasks are region members, turns sharing
 * off: pragmas/gomp/pool.c.) */
static void lookup(void)
{
    pthread_mutex_lock(&lookup_lock);
    if (!found_set) {
        void *set = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
        void *get = dlsym(RTLD_DEFAULT, "omp_get_max_threads");
        if (set && get) {
            memcpy(&found_get, &get, sizeof get);
            int d = found_get();
            found_default = d > 0 ? (unsigned)d : 1;
            memcpy(&found_set, &set, sizeof set);
        }
    }
    pthread_mutex_unlock(&lookup_lock);
}

void up__omp_share_init(up_pool *p)
{
    pthread_mutex_init(&p->lend.mu, NULL);
    pthread_cond_init(&p->lend.cv, NULL);
    if (!p->cfg.omp_share)
        return;
    lookup();
    pthread_mutex_lock(&lookup_lock);
    p->omp_set = found_set;
    p->omp_get = found_get;
    pthread_mutex_unlock(&lookup_lock);
}

void up__omp_share_destroy(up_pool *p)
{
    pthread_cond_destroy(&p->lend.cv);
    pthread_mutex_destroy(&p->lend.mu);
}

/* The workers of s inside a task: those whose loop is not looking for
 * work (worker.c). A worker still starting, or searching while nothing is
 * queued, parks without taking a CPU, so it is not counted here, although
 * up__shard_busy counts it: on a fresh pool every floor worker is starting
 * or searching at first, and the first task's region then got a team of
 * one instead of what the same pool gives it once they parked. Stops
 * counting at enough, since more changes nothing. */
static unsigned in_task(up__shard *s, unsigned enough)
{
    unsigned used = up__load_acquire(&s->slots_used), n = 0;
    for (unsigned k = 0; k < used && n < enough; k++) {
        up__worker *w = up__slot_worker(s, k);
        if (w && up__load_acquire(&w->state) == UP__SLOT_RUNNING && !up__load_relaxed(&w->looking))
            n++;
    }
    return n;
}

/* The CPUs of s that the busy workers other than the caller leave free,
 * at least one and at most cap. Busy: running a task (in_task). While
 * tasks are queued, every reserved worker, since the parked ones are
 * being woken for them (a burst of tasks that each open a region would
 * otherwise give the first one every CPU). up__shard_busy bounds the
 * workers in a task from above, so when it leaves the caller alone no
 * slot is read. */
static unsigned free_cpus(up__shard *s, int caller_is_worker, unsigned cap)
{
    unsigned cpus = up__shard_cpus(s);
    unsigned mine = caller_is_worker ? 1 : 0;
    unsigned busy = up__shard_busy(s);
    if (up__mpmc_nonempty(&s->q))
        busy = up__load_relaxed(&s->nworkers);
    else if (busy > mine)
        busy = in_task(s, cpus + mine);
    unsigned others = busy > mine ? busy - mine : 0;
    unsigned want = others >= cpus ? 1 : cpus - others;
    return want < cap ? want : cap;
}

void up__omp_share_update(up__worker *w)
{
    up_pool *p = w->pool;
    if (w->omp_default == 0) {
        /* What this thread's regions would get untouched: the runtime's
         * default, OMP_NUM_THREADS or one per CPU. */
        int d = p->omp_get();
        w->omp_default = d > 0 ? (unsigned)d : 1;
    }
    unsigned want = free_cpus(&p->shards[w->shard], 1, w->omp_default);
    /* Asked of the runtime, not only remembered: a task may have set its
     * own value with omp_set_num_threads, which must not stay for the
     * next one. */
    if (want != w->omp_last || p->omp_get() != (int)want) {
        p->omp_set((int)want);
        w->omp_last = want;
    }
}

/* Before a task of p (up__run). A worker sets its thread's team size.
 * A thread that is not a worker (a waiting submitter, a group waiter, a
 * stopper draining the queues) is the user's, so its own team size comes
 * back after the task: returns 1 and the size to put back in *before when
 * it was changed, 0 otherwise. */
int up__omp_task_begin(up_pool *p, up__worker *w, up__shard *s, int *before)
{
    if (w) {
        up__omp_share_update(w);
        return 0;
    }
    *before = p->omp_get();
    unsigned want = free_cpus(s, 0, *before > 0 ? (unsigned)*before : 1);
    if ((int)want == *before)
        return 0;
    p->omp_set((int)want);
    return 1;
}

void up__lend_wait(up__worker *w)
{
    up_pool *p = w->pool;
    int looking = up__load_relaxed(&w->looking);
    up__store_relaxed(&w->looking, 1); /* not a busy worker to the monitor */
    pthread_mutex_lock(&p->lend.mu);
    while (up__load_acquire(&p->lend.count) != 0)
        pthread_cond_wait(&p->lend.cv, &p->lend.mu);
    pthread_mutex_unlock(&p->lend.mu);
    up__store_relaxed(&w->looking, looking);
}

int up_omp_lend(up_pool *p, up_fn fn, void *ctx)
{
    if (!p || !fn) {
        up__set_error("up_omp_lend: %s is NULL", !p ? "pool" : "fn");
        return UP_EINVAL;
    }
    pthread_mutex_lock(&p->lend.mu);
    up__store_release(&p->lend.count, up__load_relaxed(&p->lend.count) + 1);
    pthread_mutex_unlock(&p->lend.mu);
    /* The lent CPUs are fn's: its regions get OpenMP's default team, not
     * the share the calling thread was given for the task it runs. */
    int before = p->omp_set ? p->omp_get() : 0;
    int want = (int)found_default;
    if (p->omp_set && want > 0 && want != before)
        p->omp_set(want);
    fn(ctx);
    if (p->omp_set && want > 0 && want != before)
        p->omp_set(before);
    pthread_mutex_lock(&p->lend.mu);
    unsigned left = up__load_relaxed(&p->lend.count) - 1;
    up__store_release(&p->lend.count, left);
    if (left == 0)
        pthread_cond_broadcast(&p->lend.cv);
    pthread_mutex_unlock(&p->lend.mu);
    return UP_OK;
}
