/* The same job with ultrapool's tools:
 *   up-group       a task group with the limit on the shared pool;
 *   up-pool        a pool of exactly `limit` workers (submitters do not
 *                  run tasks: submit_help 0), created per batch like the
 *                  plain fixed pool;
 *   up-sem+pool    a weighted semaphore of `limit` units taken by the
 *                  submitting loop, tasks on the shared pool; waiting for
 *                  all is taking every unit back;
 *   up-chan+threads `limit` threads receiving tasks from an ultrapool
 *                  channel of BP_RING slots: the plain fixed pool with the
 *                  lock-free channel in place of the mutex-protected ring. */
#include <pthread.h>
#include <stdio.h>

#include <ultrapool/chan.h>
#include <ultrapool/group.h>
#include <ultrapool/sem.h>

#include "bounded_patterns.h"

static up_pool *shared;

void bp_set_shared_pool(up_pool *p) { shared = p; }

typedef struct call {
    bp_task task;
    void *arg;
} call;

/* ---- group ----------------------------------------------------------------- */

static int run_up_group(unsigned n, unsigned limit, bp_task task, void *arg)
{
    up_group *g;
    if (up_group_create(&g, shared, limit) != UP_OK)
        return -1;
    int rc = UP_OK;
    for (unsigned i = 0; i < n && rc == UP_OK; i++)
        rc = up_group_go(g, task, arg);
    int first = up_group_wait(g);
    up_group_destroy(g);
    if (rc != UP_OK && rc != UP_ECANCELED)
        return -1;
    return first;
}

/* ---- a pool of `limit` workers ---------------------------------------------- */

static void call_task(void *p)
{
    const call *c = p;
    c->task(c->arg);
}

static int run_up_pool(unsigned n, unsigned limit, bp_task task, void *arg)
{
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = 1;
    cfg.shard_min_workers = limit;
    cfg.shard_max_workers = limit;
    cfg.max_workers = limit;
    cfg.submit_help = 0; /* a helping submitter would be worker number limit + 1 */
    up_pool *p;
    if (up_pool_create(&p, &cfg) != UP_OK)
        return -1;
    call c = {task, arg};
    int rc = UP_OK;
    for (unsigned i = 0; i < n && rc == UP_OK; i++)
        rc = up_submit_copy_wait(p, call_task, &c, sizeof c);
    up_pool_destroy(p);
    return rc == UP_OK ? 0 : -1;
}

/* ---- weighted semaphore + the shared pool ---------------------------------- */

typedef struct sem_call {
    bp_task task;
    void *arg;
    up_sem *sem;
} sem_call;

static void sem_task(void *p)
{
    const sem_call *c = p;
    c->task(c->arg);
    up_sem_release(c->sem, 1);
}

static int run_up_sem_pool(unsigned n, unsigned limit, bp_task task, void *arg)
{
    up_sem *s;
    if (up_sem_create(&s, limit) != UP_OK)
        return -1;
    sem_call c = {task, arg, s};
    int rc = UP_OK;
    for (unsigned i = 0; i < n && rc == UP_OK; i++) {
        up_sem_acquire(s, 1);
        rc = up_submit_copy_wait(shared, sem_task, &c, sizeof c);
    }
    up_sem_acquire(s, limit); /* every unit back: every task has finished */
    up_sem_release(s, limit);
    up_sem_destroy(s);
    return rc == UP_OK ? 0 : -1;
}

/* ---- fixed threads over an ultrapool channel -------------------------------- */

typedef struct chan_run {
    up_chan *ch;
} chan_run;

static void *chan_worker(void *p)
{
    chan_run *r = p;
    call c;
    while (up_chan_recv(r->ch, &c) == UP_OK)
        c.task(c.arg);
    return NULL;
}

static int run_up_chan_threads(unsigned n, unsigned limit, bp_task task, void *arg)
{
    chan_run r;
    if (up_chan_create(&r.ch, sizeof(call), BP_RING) != UP_OK)
        return -1;
    pthread_t th[256];
    unsigned started = 0;
    for (; started < limit && started < 256; started++)
        if (pthread_create(&th[started], NULL, chan_worker, &r) != 0)
            break;
    call c = {task, arg};
    int rc = started == limit ? 0 : -1;
    for (unsigned i = 0; i < n && rc == 0; i++)
        rc = up_chan_send(r.ch, &c) == UP_OK ? 0 : -1;
    up_chan_close(r.ch); /* the workers drain what is left, then leave */
    for (unsigned i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    up_chan_destroy(r.ch);
    return rc;
}

const bp_pattern bp_up_patterns[] = {
    {"up-group", "ultrapool", "task group with the limit, on the shared pool", run_up_group},
    {"up-pool", "ultrapool", "a pool of `limit` workers, created per batch", run_up_pool},
    {"up-sem+pool", "ultrapool", "weighted semaphore + tasks on the shared pool", run_up_sem_pool},
    {"up-chan+threads", "ultrapool", "`limit` threads reading an ultrapool channel",
     run_up_chan_threads},
};
const int bp_up_count = sizeof bp_up_patterns / sizeof bp_up_patterns[0];
