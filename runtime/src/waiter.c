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
static _Thread_local up__parker *tls_parker;

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
