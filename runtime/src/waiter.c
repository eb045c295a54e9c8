/* Threads that wait for something other than a queued task: the parallel
 * layer's region members at a barrier, in a join, or while their team
 * gathers (layer/up_layer.h; the protocol itself is pragmas/src/wait.c).
 * The runtime lends them a parker and counts their sleep in the pool's
 * statistics. */
#include <stdlib.h>

#include "../layer/up_layer.h"
#include "pool_internal.h"

unsigned up__pool_spin(const up_pool *p) { return p ? p->cfg.spin : 0; }

/* A thread that is not a worker sleeps on a parker of its own, freed by
 * the key's destructor when the thread exits. */
static pthread_key_t parker_key;
static pthread_once_t parker_once = PTHREAD_ONCE_INIT;
static int parker_key_ok;
static _Thread_local up__parker *tls_parker UP__TLS_IE;

static void free_parker(void *arg)
{
    up__parker_destroy(arg);
    free(arg);
}

static void make_parker_key(void)
{
    parker_key_ok = pthread_key_create(&parker_key, free_parker) == 0;
}

up__parker *up__self_parker(void)
{
    if (up__tls_worker)
        return &up__tls_worker->parker;
    if (tls_parker)
        return tls_parker;
    pthread_once(&parker_once, make_parker_key);
    if (!parker_key_ok)
        return NULL;
    up__parker *pk = malloc(sizeof *pk);
    if (!pk)
        return NULL;
    if (up__parker_init(pk) != 0) {
        free(pk);
        return NULL;
    }
    if (pthread_setspecific(parker_key, pk) != 0) {
        free_parker(pk);
        return NULL;
    }
    tls_parker = pk;
    return pk;
}

int up__waiter_park(up_pool *p, up__parker *pk, uint64_t timeout_ns)
{
    up__fetch_add_relaxed(&p->layer_parks, 1);
    up__fetch_add_relaxed(&p->layer_parked, 1);
    int woken = up__parker_wait(pk, timeout_ns);
    up__fetch_sub_relaxed(&p->layer_parked, 1);
    return woken;
}

void up__waiter_wake(up__parker *pk) { up__parker_post(pk); }

int up__worker_at_loop(const up_pool *p)
{
    up__worker *w = up__tls_worker;
    return w && w->pool == p && up__help_depth() == 0;
}

/* The count is added before the post that releases the worker, so its
 * loop, which takes it back, can never run first and borrow from the
 * searching field. The worker is one of p's workers and runs a task, so
 * it is in none of the idle word's counts: adding it keeps the sum within
 * p->workers (up__idle_sane). */
void up__return_expected(up_pool *p, int n)
{
    up__assert_internal(n == 1 || n == -1);
    if (n > 0)
        up__fetch_add_seqcst(&p->idle, UP__IDLE_START_ONE);
    else
        up__fetch_sub_seqcst(&p->idle, UP__IDLE_START_ONE);
    up__assert_internal(up__idle_sane(p, up__load_relaxed(&p->idle)));
}

void up__return_mark(up_pool *p)
{
    up__worker *w = up__tls_worker;
    up__assert_internal(w && w->pool == p && !w->returning);
    if (w && w->pool == p && up__help_depth() == 0 && !w->returning)
        w->returning = 1; /* worker.c: the loop takes the count back */
    else
        up__return_expected(p, -1); /* no loop will: give it back now */
}
