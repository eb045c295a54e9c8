/* Slabs of waiting records: a pool maps chunks of 4 MiB and carves them
 * into 32-byte records, so 1e8 waiting tasks cost 3.2 GB and no malloc.
 *
 * The common path costs no atomic operation: each thread keeps a cache of
 * one slab's records (a free list and an uncarved range) and refills it
 * under the slab's lock once per batch of BATCH records. Freed records come
 * back as whole chains (a worker frees the records of the batch it took in
 * one call), so the lock is taken once per batch on that side too.
 *
 * A thread's cache belongs to one slab at a time. Before it serves another
 * pool, or when the thread exits, it gives its records back, but only to a
 * slab still alive: live slabs are on a registry (a process-wide list
 * under a mutex), each with an id no other slab ever had, and a cache
 * whose slab is gone (its pool destroyed, its chunks unmapped) is dropped
 * without being touched. Pool addresses can repeat; ids cannot. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "os/os.h"
#include "wait_internal.h"

#define CHUNK_BYTES (4u << 20)
#define BATCH       256u

static pthread_mutex_t registry = PTHREAD_MUTEX_INITIALIZER;
static up__slab *live_slabs; /* (lock registry) */
static uint64_t next_id = 1; /* (lock registry) */

typedef struct tcache {
    up__slab *slab; /* NULL: empty */
    uint64_t id;
    up__wrec *free; /* linked by next */
    char *bump, *end;
} tcache;

static _Thread_local tcache tc;
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static int exit_key_ok;

static void thread_exit(void *unused)
{
    (void)unused;
    up__slab_flush_thread();
}

static void make_exit_key(void) { exit_key_ok = pthread_key_create(&exit_key, thread_exit) == 0; }

int up__slab_init(up__slab *s)
{
    memset(s, 0, sizeof *s);
    if (pthread_mutex_init(&s->mu, NULL) != 0)
        return UP_ENOMEM;
    pthread_mutex_lock(&registry);
    s->id = next_id++;
    s->reg_next = live_slabs;
    live_slabs = s;
    pthread_mutex_unlock(&registry);
    return UP_OK;
}

void up__slab_destroy(up__slab *s)
{
    pthread_mutex_lock(&registry);
    for (up__slab **pp = &live_slabs; *pp; pp = &(*pp)->reg_next)
        if (*pp == s) {
            *pp = s->reg_next;
            break;
        }
    pthread_mutex_unlock(&registry);
    if (tc.slab == s && tc.id == s->id)
        memset(&tc, 0, sizeof tc);
    for (size_t i = 0; i < s->nchunks; i++)
        up__os_unmap(s->chunks[i], CHUNK_BYTES);
    free(s->chunks);
    pthread_mutex_destroy(&s->mu);
}

/* Under s->mu: pushes a batch of n records on the free batches. */
static void push_batch(up__slab *s, up__wrec *first, uint64_t n)
{
    first->arg = s->batches;
    first->word = n;
    s->batches = first;
}

void up__slab_free_chain(up__slab *s, up__wrec *first, up__wrec *last, uint64_t n)
{
    if (!first)
        return;
    last->next = NULL;
    pthread_mutex_lock(&s->mu);
    push_batch(s, first, n);
    pthread_mutex_unlock(&s->mu);
}

/* Gives the calling thread's cache back to its slab if that slab lives. */
void up__slab_flush_thread(void)
{
    if (!tc.slab)
        return;
    pthread_mutex_lock(&registry);
    up__slab *s = live_slabs;
    while (s && !(s == tc.slab && s->id == tc.id))
        s = s->reg_next;
    if (s) {
        /* The uncarved range becomes a linked batch: it touches at most
         * BATCH records, which the thread had reserved anyway. */
        uint64_t n = 0;
        up__wrec *first = tc.free, *last = NULL;
        for (up__wrec *r = tc.free; r; r = r->next) {
            last = r;
            n++;
        }
        while (tc.bump < tc.end) {
            up__wrec *r = (up__wrec *)(void *)tc.bump;
            tc.bump += sizeof *r;
            r->next = first;
            if (!first)
                last = r;
            first = r;
            n++;
        }
        if (first) {
            pthread_mutex_lock(&s->mu);
            last->next = NULL;
            push_batch(s, first, n);
            pthread_mutex_unlock(&s->mu);
        }
    }
    pthread_mutex_unlock(&registry);
    memset(&tc, 0, sizeof tc);
}

/* Under s->mu: a new chunk; 0 when the system refuses. */
static int map_chunk(up__slab *s)
{
    if (s->nchunks == s->cap) {
        size_t ncap = s->cap ? 2 * s->cap : 16;
        void **n = realloc(s->chunks, ncap * sizeof *n);
        if (!n)
            return 0;
        s->chunks = n;
        s->cap = ncap;
    }
    void *c = up__os_map(CHUNK_BYTES);
    if (!c)
        return 0;
    s->chunks[s->nchunks++] = c;
    s->bump = c;
    s->end = (char *)c + CHUNK_BYTES;
    up__fetch_add_relaxed(&s->bytes, CHUNK_BYTES);
    return 1;
}

/* Refills the empty cache from s: a free batch, else a fresh range. */
static int refill(up__slab *s)
{
    if (tc.slab != s || tc.id != s->id) {
        up__slab_flush_thread();
        pthread_once(&exit_once, make_exit_key);
        if (exit_key_ok)
            pthread_setspecific(exit_key, (void *)1);
        tc.slab = s;
        tc.id = s->id;
    }
    pthread_mutex_lock(&s->mu);
    if (s->batches) {
        up__wrec *b = s->batches;
        s->batches = b->arg;
        tc.free = b;
    } else {
        size_t want = BATCH * sizeof(up__wrec);
        if ((size_t)(s->end - s->bump) < want && !map_chunk(s)) {
            pthread_mutex_unlock(&s->mu);
            return 0;
        }
        tc.bump = s->bump;
        tc.end = s->bump + want;
        s->bump += want;
    }
    pthread_mutex_unlock(&s->mu);
    return 1;
}

up__wrec *up__slab_alloc(up__slab *s)
{
    for (;;) {
        if (tc.slab == s && tc.id == s->id) {
            up__wrec *r = tc.free;
            if (r) {
                tc.free = r->next;
                return r;
            }
            if (tc.bump < tc.end) {
                r = (up__wrec *)(void *)tc.bump;
                tc.bump += sizeof *r;
                return r;
            }
        }
        if (!refill(s))
            return NULL;
    }
}
