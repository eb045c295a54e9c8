#include "textbook_pool.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct tb_task {
    void (*fn)(void *);
    void *arg;
} tb_task;

struct tb_pool {
    pthread_mutex_t mu;
    pthread_cond_t not_empty, not_full;
    tb_task *ring;
    unsigned cap, head, count;
    int stop;
    unsigned nworkers;
    pthread_t *workers;
};

static void *tb_worker(void *arg)
{
    tb_pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->count == 0 && !p->stop)
            pthread_cond_wait(&p->not_empty, &p->mu);
        if (p->count == 0) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        tb_task t = p->ring[p->head];
        p->head = (p->head + 1) % p->cap;
        p->count--;
        pthread_cond_signal(&p->not_full);
        pthread_mutex_unlock(&p->mu);
        t.fn(t.arg);
    }
}

tb_pool *tb_pool_create(unsigned workers, unsigned capacity)
{
    tb_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->ring = calloc(capacity, sizeof *p->ring);
    p->workers = calloc(workers, sizeof *p->workers);
    if (!p->ring || !p->workers) {
        free(p->ring);
        free(p->workers);
        free(p);
        return NULL;
    }
    p->cap = capacity;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->not_empty, NULL);
    pthread_cond_init(&p->not_full, NULL);
    for (unsigned i = 0; i < workers; i++)
        if (pthread_create(&p->workers[i], NULL, tb_worker, p) == 0)
            p->nworkers++;
    return p;
}

void tb_submit(tb_pool *p, void (*fn)(void *), void *arg)
{
    pthread_mutex_lock(&p->mu);
    while (p->count == p->cap)
        pthread_cond_wait(&p->not_full, &p->mu);
    p->ring[(p->head + p->count) % p->cap] = (tb_task){fn, arg};
    p->count++;
    pthread_cond_signal(&p->not_empty);
    pthread_mutex_unlock(&p->mu);
}

void tb_pool_destroy(tb_pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->not_empty);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->nworkers; i++)
        pthread_join(p->workers[i], NULL);
    pthread_cond_destroy(&p->not_full);
    pthread_cond_destroy(&p->not_empty);
    pthread_mutex_destroy(&p->mu);
    free(p->workers);
    free(p->ring);
    free(p);
}
