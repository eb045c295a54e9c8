/* Channel throughput: P producer threads send N 16-byte elements in all
 * through a channel of capacity CAP to C consumer threads, for ultrapool's
 * lock-free channel and for the textbook mutex channel (a ring behind one
 * mutex and two condition variables). Each round runs every cell once in a
 * random order; the table gives the median ns per element and the ratio.
 * This is the measurement behind the channel's design.
 *
 * usage: chan_bench [--rounds R] [--elements N] [--cap C] [--pairs 1,2,4] [--seed S] */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ultrapool/chan.h>

#include "bench_stats.h"
#include "bench_util.h"

typedef struct elem {
    uint64_t a, b;
} elem;

/* ---- the textbook mutex channel -------------------------------------------- */

typedef struct mchan {
    pthread_mutex_t mu;
    pthread_cond_t not_empty, not_full;
    elem *ring;
    unsigned cap, head, count;
    int closed;
} mchan;

static mchan *mchan_create(unsigned cap)
{
    mchan *c = calloc(1, sizeof *c);
    c->ring = calloc(cap, sizeof *c->ring);
    c->cap = cap;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->not_empty, NULL);
    pthread_cond_init(&c->not_full, NULL);
    return c;
}

static void mchan_send(mchan *c, const elem *e)
{
    pthread_mutex_lock(&c->mu);
    while (c->count == c->cap)
        pthread_cond_wait(&c->not_full, &c->mu);
    c->ring[(c->head + c->count) % c->cap] = *e;
    c->count++;
    pthread_cond_signal(&c->not_empty);
    pthread_mutex_unlock(&c->mu);
}

static int mchan_recv(mchan *c, elem *out)
{
    pthread_mutex_lock(&c->mu);
    while (c->count == 0 && !c->closed)
        pthread_cond_wait(&c->not_empty, &c->mu);
    if (c->count == 0) {
        pthread_mutex_unlock(&c->mu);
        return -1;
    }
    *out = c->ring[c->head];
    c->head = (c->head + 1) % c->cap;
    c->count--;
    pthread_cond_signal(&c->not_full);
    pthread_mutex_unlock(&c->mu);
    return 0;
}

static void mchan_close(mchan *c)
{
    pthread_mutex_lock(&c->mu);
    c->closed = 1;
    pthread_cond_broadcast(&c->not_empty);
    pthread_mutex_unlock(&c->mu);
}

static void mchan_destroy(mchan *c)
{
    pthread_cond_destroy(&c->not_full);
    pthread_cond_destroy(&c->not_empty);
    pthread_mutex_destroy(&c->mu);
    free(c->ring);
    free(c);
}

/* ---- one run ------------------------------------------------------------------ */

enum { PEER_UP, PEER_MUTEX, NPEERS };
static const char *peer_names[] = {"up_chan (lock-free)", "mutex+condvar ring"};

typedef struct run {
    int peer;
    up_chan *uc;
    mchan *mc;
    uint64_t per_producer;
    _Atomic uint64_t received, sum;
} run;

static void *producer(void *arg)
{
    run *r = arg;
    for (uint64_t i = 0; i < r->per_producer; i++) {
        elem e = {i, i * 3};
        if (r->peer == PEER_UP) {
            if (up_chan_send(r->uc, &e) != UP_OK)
                abort();
        } else {
            mchan_send(r->mc, &e);
        }
    }
    return NULL;
}

static void *consumer(void *arg)
{
    run *r = arg;
    elem e;
    uint64_t n = 0, sum = 0;
    if (r->peer == PEER_UP)
        while (up_chan_recv(r->uc, &e) == UP_OK)
            n++, sum += e.b - e.a;
    else
        while (mchan_recv(r->mc, &e) == 0)
            n++, sum += e.b - e.a;
    atomic_fetch_add(&r->received, n);
    atomic_fetch_add(&r->sum, sum);
    return NULL;
}

/* ns per element, or a negative value when an element was lost. */
static double measure(int peer, unsigned pairs, uint64_t elements, unsigned cap)
{
    run r = {.peer = peer, .per_producer = elements / pairs};
    if (peer == PEER_UP)
        up_chan_create(&r.uc, sizeof(elem), cap);
    else
        r.mc = mchan_create(cap);
    pthread_t p[64], c[64];
    uint64_t t0 = bench_now_ns();
    for (unsigned i = 0; i < pairs; i++) {
        pthread_create(&c[i], NULL, consumer, &r);
        pthread_create(&p[i], NULL, producer, &r);
    }
    for (unsigned i = 0; i < pairs; i++)
        pthread_join(p[i], NULL);
    if (peer == PEER_UP)
        up_chan_close(r.uc);
    else
        mchan_close(r.mc);
    for (unsigned i = 0; i < pairs; i++)
        pthread_join(c[i], NULL);
    uint64_t t1 = bench_now_ns();
    if (peer == PEER_UP)
        up_chan_destroy(r.uc);
    else
        mchan_destroy(r.mc);
    uint64_t total = r.per_producer * pairs;
    uint64_t want = pairs * (r.per_producer * (r.per_producer - 1)); /* sum of 2i */
    if (atomic_load(&r.received) != total || atomic_load(&r.sum) != want)
        return -1;
    return (double)(t1 - t0) / (double)total;
}

int main(int argc, char **argv)
{
    unsigned rounds = 5, cap = 64, pairs[8] = {1, 2, 4};
    int npairs = 3;
    uint64_t elements = 400000, seed = bench_now_ns();
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "--rounds"))
            rounds = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--elements"))
            elements = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--cap"))
            cap = (unsigned)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--pairs"))
            npairs = bench_parse_list(v, pairs, 8);
        else if (!strcmp(a, "--seed"))
            seed = strtoull(v, NULL, 10);
        else
            npairs = -1;
    }
    if (argc % 2 == 0 || rounds == 0 || rounds > 100 || cap == 0 || npairs <= 0 ||
        elements < 1000) {
        fprintf(stderr, "usage: chan_bench [--rounds R] [--elements N] [--cap C] "
                        "[--pairs 1,2,4] [--seed S]\n");
        return 2;
    }
    for (int k = 0; k < npairs; k++)
        if (pairs[k] == 0 || pairs[k] > 64)
            return 2;
    unsigned ncells = (unsigned)npairs * NPEERS, order[16];
    static double ns[16][100];
    for (unsigned r = 0; r < rounds; r++) {
        for (unsigned c = 0; c < ncells; c++)
            order[c] = c;
        bench_shuffle(order, ncells, &seed);
        for (unsigned k = 0; k < ncells; k++) {
            unsigned c = order[k];
            double v = measure((int)(c % NPEERS), pairs[c / NPEERS], elements, cap);
            if (v < 0) {
                fprintf(stderr, "chan_bench: %s lost elements\n", peer_names[c % NPEERS]);
                return 1;
            }
            ns[c][r] = v;
        }
    }
    printf("%llu elements of 16 bytes, capacity %u, %u rounds (median ns per element), "
           "%u cores, seed %llu\n\n",
           (unsigned long long)elements, cap, rounds, bench_cpus(), (unsigned long long)seed);
    printf("| producers x consumers | %s | %s | ratio |\n|---:|---:|---:|---:|\n",
           peer_names[PEER_UP], peer_names[PEER_MUTEX]);
    for (int k = 0; k < npairs; k++) {
        double up = bench_median(ns[k * NPEERS + PEER_UP], rounds);
        double mu = bench_median(ns[k * NPEERS + PEER_MUTEX], rounds);
        printf("| %u x %u | %.1f | %.1f | %.2fx |\n", pairs[k], pairs[k], up, mu, mu / up);
    }
    return 0;
}
