/* The plain-C ways to bound parallelism, as a C programmer writes them
 * with pthreads and nothing else (the C counterparts of the four Go
 * patterns in the bounded-parallelism article):
 *   sem+thread       a counting semaphore taken by the submitting loop and
 *                    released by each task's own thread (POSIX sem_t;
 *                    on macOS, which has none, portable.h's);
 *   fixed-pool       `limit` threads reading tasks from a bounded ring
 *                    (BP_RING slots) behind a mutex and two condition
 *                    variables;
 *   group+thread     an error group: one mutex and condition variable
 *                    count the active tasks, a thread per task;
 *   weighted+thread  a first-come-first-served weighted semaphore (mutex,
 *                    condition variable, tickets), a thread per task.
 * Threads per task are detached and counted down by a wait group, like
 * goroutines and sync.WaitGroup. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "bounded_patterns.h"
#include "portable.h"
#include "textbook_pool.h"

/* ---- a wait group --------------------------------------------------------- */

typedef struct waitgroup {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned n;
} waitgroup;

static void wg_init(waitgroup *wg)
{
    pthread_mutex_init(&wg->mu, NULL);
    pthread_cond_init(&wg->cv, NULL);
    wg->n = 0;
}

static void wg_add(waitgroup *wg)
{
    pthread_mutex_lock(&wg->mu);
    wg->n++;
    pthread_mutex_unlock(&wg->mu);
}

static void wg_done(waitgroup *wg)
{
    pthread_mutex_lock(&wg->mu);
    if (--wg->n == 0)
        pthread_cond_broadcast(&wg->cv);
    pthread_mutex_unlock(&wg->mu);
}

static void wg_wait_destroy(waitgroup *wg)
{
    pthread_mutex_lock(&wg->mu);
    while (wg->n)
        pthread_cond_wait(&wg->cv, &wg->mu);
    pthread_mutex_unlock(&wg->mu);
    pthread_cond_destroy(&wg->cv);
    pthread_mutex_destroy(&wg->mu);
}

/* Starts a detached thread; 0 or -1. */
static int spawn_detached(void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t th;
    int rc = pthread_create(&th, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    if (rc != 0)
        fprintf(stderr, "bounded: pthread_create failed (%d)\n", rc);
    return rc == 0 ? 0 : -1;
}

/* ---- 1. counting semaphore + thread per task ------------------------------ */

typedef struct sem_run {
    bp_task task;
    void *arg;
    bench_sem sem;
    waitgroup wg;
} sem_run;

static void *sem_thread(void *p)
{
    sem_run *r = p;
    r->task(r->arg);
    bench_sem_post(&r->sem);
    wg_done(&r->wg);
    return NULL;
}

static int run_sem_thread(unsigned n, unsigned limit, bp_task task, void *arg)
{
    sem_run r = {.task = task, .arg = arg};
    if (bench_sem_init(&r.sem, limit) != 0)
        return -1;
    wg_init(&r.wg);
    int rc = 0;
    for (unsigned i = 0; i < n && rc == 0; i++) {
        bench_sem_wait(&r.sem);
        wg_add(&r.wg);
        rc = spawn_detached(sem_thread, &r);
        if (rc != 0)
            wg_done(&r.wg);
    }
    wg_wait_destroy(&r.wg);
    bench_sem_destroy(&r.sem);
    return rc;
}

/* ---- 2. fixed pool of `limit` threads over a mutex-protected ring --------- */

typedef struct call {
    bp_task task;
    void *arg;
} call;

static void call_task(void *p)
{
    call *c = p;
    c->task(c->arg);
}

static int run_fixed_pool(unsigned n, unsigned limit, bp_task task, void *arg)
{
    tb_pool *p = tb_pool_create(limit, BP_RING);
    if (!p)
        return -1;
    call c = {task, arg};
    for (unsigned i = 0; i < n; i++)
        tb_submit(p, call_task, &c);
    tb_pool_destroy(p); /* runs what is queued, then joins */
    return 0;
}

/* ---- 3. error group: counted tasks, a thread per task ---------------------- */

typedef struct plain_group {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned active, limit;
    int first_error;
    bp_task task;
    void *arg;
} plain_group;

static void *group_thread(void *p)
{
    plain_group *g = p;
    int rc = g->task(g->arg);
    pthread_mutex_lock(&g->mu);
    if (rc && !g->first_error)
        g->first_error = rc;
    g->active--;
    pthread_cond_broadcast(&g->cv); /* a blocked go, or the wait */
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

static int run_group_thread(unsigned n, unsigned limit, bp_task task, void *arg)
{
    plain_group g = {.limit = limit, .task = task, .arg = arg};
    pthread_mutex_init(&g.mu, NULL);
    pthread_cond_init(&g.cv, NULL);
    int rc = 0;
    for (unsigned i = 0; i < n && rc == 0; i++) {
        pthread_mutex_lock(&g.mu);
        while (g.active == g.limit)
            pthread_cond_wait(&g.cv, &g.mu);
        g.active++;
        pthread_mutex_unlock(&g.mu);
        rc = spawn_detached(group_thread, &g);
        if (rc != 0) {
            pthread_mutex_lock(&g.mu);
            g.active--;
            pthread_mutex_unlock(&g.mu);
        }
    }
    pthread_mutex_lock(&g.mu);
    while (g.active)
        pthread_cond_wait(&g.cv, &g.mu);
    pthread_mutex_unlock(&g.mu);
    pthread_cond_destroy(&g.cv);
    pthread_mutex_destroy(&g.mu);
    return rc ? rc : g.first_error;
}

/* ---- 4. weighted semaphore (FIFO by tickets) + thread per task ------------ */

typedef struct weighted {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t capacity, held;
    uint64_t next_ticket, serving; /* first come, first served */
} weighted;

static void weighted_acquire(weighted *w, uint64_t n)
{
    pthread_mutex_lock(&w->mu);
    uint64_t ticket = w->next_ticket++;
    while (ticket != w->serving || w->held + n > w->capacity)
        pthread_cond_wait(&w->cv, &w->mu);
    w->held += n;
    w->serving++;
    pthread_cond_broadcast(&w->cv); /* the next in line may fit as well */
    pthread_mutex_unlock(&w->mu);
}

static void weighted_release(weighted *w, uint64_t n)
{
    pthread_mutex_lock(&w->mu);
    w->held -= n;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

typedef struct weighted_run {
    weighted sem;
    waitgroup wg;
    bp_task task;
    void *arg;
} weighted_run;

static void *weighted_thread(void *p)
{
    weighted_run *r = p;
    r->task(r->arg);
    weighted_release(&r->sem, 1);
    wg_done(&r->wg);
    return NULL;
}

static int run_weighted_thread(unsigned n, unsigned limit, bp_task task, void *arg)
{
    weighted_run r = {.sem = {.capacity = limit}, .task = task, .arg = arg};
    pthread_mutex_init(&r.sem.mu, NULL);
    pthread_cond_init(&r.sem.cv, NULL);
    wg_init(&r.wg);
    int rc = 0;
    for (unsigned i = 0; i < n && rc == 0; i++) {
        weighted_acquire(&r.sem, 1);
        wg_add(&r.wg);
        rc = spawn_detached(weighted_thread, &r);
        if (rc != 0) {
            weighted_release(&r.sem, 1);
            wg_done(&r.wg);
        }
    }
    wg_wait_destroy(&r.wg);
    pthread_cond_destroy(&r.sem.cv);
    pthread_mutex_destroy(&r.sem.mu);
    return rc;
}

const bp_pattern bp_plain_patterns[] = {
    {"sem+thread", "plain C", "counting semaphore (sem_t) + a thread per task", run_sem_thread},
    {"fixed-pool", "plain C", "`limit` threads reading a mutex+condvar ring", run_fixed_pool},
    {"group+thread", "plain C", "error group (mutex+condvar count) + a thread per task",
     run_group_thread},
    {"weighted+thread", "plain C", "FIFO weighted semaphore (mutex+condvar) + a thread per task",
     run_weighted_thread},
};
const int bp_plain_count = sizeof bp_plain_patterns / sizeof bp_plain_patterns[0];
