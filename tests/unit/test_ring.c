/* The ring core of runtime/src/ring.h on its own, in the shapes its users
 * pass and a few more: capacities 1, 3 and 8 with positions doubled in the
 * sequence words (the channels' shape: modulo and mask indexing), 8 with
 * positions counted (the task queue's), an odd element size copied with
 * no alignment assumed, and an empty element. Each runs from position 0,
 * across 2^62 (where doubled marks pass 2^63) and up to the last position
 * below 2^63 (where the last lap's free marks wrap past 2^64), through
 * full and empty, batches larger than
 * the ring, and close; then one producer and one consumer thread pass
 * numbered elements through it, and each must arrive once, in order and
 * whole. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ring.h"

/* An element whose three words check one another, so a torn copy shows. */
typedef struct item {
    uint64_t n;
    uint64_t inv; /* ~n */
    uint64_t mix; /* n * K + 1 */
} item;

#define K UINT64_C(0x9e3779b97f4a7c15)

static item item_of(uint64_t n) { return (item){n, ~n, n * K + 1}; }

/* The bytes of element n for shapes of other sizes. */
static void bytes_of(uint64_t n, unsigned char *b, size_t size)
{
    for (size_t i = 0; i < size; i++)
        b[i] = (unsigned char)(n * 31 + i * 7 + 1);
}

typedef struct kind {
    const char *name;
    uint64_t cap;
    up__ring_shape sh;
} kind;

#define SHAPE(stride_, size_, align_, shift_, wrap_)                                               \
    {                                                                                              \
        .stride = (stride_), .elem_off = 8, .elem_size = (size_), .align = (align_),               \
        .seq_shift = (shift_), .wrap = (wrap_)                                                     \
    }

static const kind kinds[] = {
    {"cap 1, doubled", 1, SHAPE(64, sizeof(item), 8, 1, UP__RING_WRAP_ANY)},
    {"cap 3, doubled", 3, SHAPE(64, sizeof(item), 8, 1, UP__RING_WRAP_ANY)},
    {"cap 8, doubled", 8, SHAPE(64, sizeof(item), 8, 1, UP__RING_WRAP_ANY)},
    {"cap 8, counted", 8, SHAPE(32, sizeof(item), 8, 0, UP__RING_WRAP_MASK)},
    {"cap 3, 5 bytes", 3, SHAPE(16, 5, 1, 1, UP__RING_WRAP_ANY)},
    {"cap 2, empty elements", 2, SHAPE(8, 0, 1, 0, UP__RING_WRAP_MASK)},
};
enum { NKINDS = sizeof kinds / sizeof kinds[0] };

/* The largest element above, and what a batch may hold. */
enum { ELEM_MAX = sizeof(item), BATCH_MAX = 64 };

static void *alloc_slots(const kind *k)
{
    size_t bytes = (size_t)k->cap * k->sh.stride;
    bytes = (bytes + UP_CACHE_LINE - 1) / UP_CACHE_LINE * UP_CACHE_LINE;
    void *p = aligned_alloc(UP_CACHE_LINE, bytes);
    CHECK(p);
    return p;
}

/* The element of number n in the kind's size. */
static void make(const kind *k, uint64_t n, unsigned char *b)
{
    if (k->sh.elem_size == sizeof(item)) {
        item it = item_of(n);
        memcpy(b, &it, sizeof it);
    } else {
        bytes_of(n, b, k->sh.elem_size);
    }
}

static void check_elem(const kind *k, uint64_t n, const unsigned char *b)
{
    unsigned char want[ELEM_MAX];
    make(k, n, want);
    CHECK(memcmp(b, want, k->sh.elem_size) == 0);
}

/* The non-inlined calls the test makes, one per operation, with the
 * kind's shape as a run-time value (as a channel passes it). */
static int push(up__ring *r, const kind *k, uint64_t n)
{
    _Alignas(8) unsigned char b[ELEM_MAX];
    make(k, n, b);
    return up__ring_try_push(r, k->sh, b);
}

static int pop_expect(up__ring *r, const kind *k, uint64_t n)
{
    _Alignas(8) unsigned char b[ELEM_MAX];
    memset(b, 0xee, sizeof b);
    int rc = up__ring_try_pop(r, k->sh, b);
    if (rc == UP__RING_OK)
        check_elem(k, n, b);
    return rc;
}

static uint64_t tail_of(up__ring *r) { return atomic_load(&r->tail) & ~UP__RING_CLOSED; }
static uint64_t head_of(up__ring *r) { return atomic_load(&r->head); }

/* One pass of single-threaded operations from position first. Returns
 * the number of pushes it made, which is the same from every start. */
static uint64_t single(const kind *k, uint64_t first, uint64_t seed)
{
    up__ring r;
    void *slots = alloc_slots(k);
    up__ring_init_at(&r, slots, k->cap, k->sh, first);
    CHECK_EQ(head_of(&r), first);
    CHECK_EQ(tail_of(&r), first);
    CHECK_EQ(r.stride, k->sh.stride);
    CHECK_EQ(r.elem_size, k->sh.elem_size);
    uint64_t sent = 0, got = 0; /* element numbers: n is pushed at position first + n */

    /* Empty, then full at exactly the capacity, then drained in order. */
    CHECK_EQ(pop_expect(&r, k, 0), UP__RING_EMPTY);
    _Alignas(8) unsigned char batch[BATCH_MAX * ELEM_MAX];
    CHECK_EQ(up__ring_try_pop_batch(&r, k->sh, batch, 4), 0);
    for (uint64_t i = 0; i < k->cap; i++)
        CHECK_EQ(push(&r, k, sent++), UP__RING_OK);
    CHECK_EQ(push(&r, k, sent), UP__RING_FULL);
    CHECK_EQ(tail_of(&r) - head_of(&r), k->cap);
    for (uint64_t i = 0; i < k->cap; i++)
        CHECK_EQ(pop_expect(&r, k, got++), UP__RING_OK);
    CHECK_EQ(pop_expect(&r, k, got), UP__RING_EMPTY);

    /* Laps at every fill level, the pops single or batched. */
    uint64_t rng = seed;
    for (int round = 0; round < 40; round++) {
        uint64_t fill = 1 + test_rand(&rng) % k->cap;
        for (uint64_t i = 0; i < fill; i++)
            CHECK_EQ(push(&r, k, sent++), UP__RING_OK);
        if (fill == k->cap)
            CHECK_EQ(push(&r, k, sent), UP__RING_FULL);
        while (got < sent) {
            if (round & 1) {
                unsigned max = 1 + (unsigned)(test_rand(&rng) % (2 * k->cap + 1));
                unsigned n = up__ring_try_pop_batch(&r, k->sh, batch, max);
                uint64_t left = sent - got;
                CHECK_EQ(n, max < left ? max : left);
                for (unsigned i = 0; i < n; i++)
                    check_elem(k, got++, batch + (size_t)i * k->sh.elem_size);
            } else {
                CHECK_EQ(pop_expect(&r, k, got++), UP__RING_OK);
            }
        }
        CHECK_EQ(pop_expect(&r, k, got), UP__RING_EMPTY);
        CHECK_EQ(up__ring_try_pop_batch(&r, k->sh, batch, 3), 0);
    }

    /* A batch larger than the ring takes what the ring holds, in order. */
    for (uint64_t i = 0; i < k->cap; i++)
        CHECK_EQ(push(&r, k, sent++), UP__RING_OK);
    unsigned n = up__ring_try_pop_batch(&r, k->sh, batch, BATCH_MAX);
    CHECK_EQ(n, k->cap);
    for (unsigned i = 0; i < n; i++)
        check_elem(k, got++, batch + (size_t)i * k->sh.elem_size);
    CHECK_EQ(up__ring_try_pop_batch(&r, k->sh, batch, BATCH_MAX), 0);

    /* Close: what was pushed stays, nothing more gets in. */
    CHECK_EQ(push(&r, k, sent++), UP__RING_OK);
    uint64_t before = up__ring_close(&r);
    CHECK_EQ(before, first + sent);
    CHECK_EQ(up__ring_close(&r), (first + sent) | UP__RING_CLOSED);
    CHECK_EQ(push(&r, k, sent), UP__RING_CLOSED_ERR);
    CHECK_EQ(pop_expect(&r, k, got++), UP__RING_OK);
    CHECK_EQ(pop_expect(&r, k, got), UP__RING_EMPTY);
    CHECK_EQ(head_of(&r), first + sent);
    CHECK_EQ(got, sent);
    free(slots);
    return sent;
}

/* One producer, one consumer: every element arrives once, in order,
 * whole. The consumer alternates single pops and batches. */
typedef struct duo {
    const kind *k;
    up__ring r;
    uint64_t count;
} duo;

static void *producer(void *arg)
{
    duo *d = arg;
    for (uint64_t n = 0; n < d->count; n++) {
        unsigned tries = 0;
        while (push(&d->r, d->k, n) != UP__RING_OK)
            if (++tries % 64 == 0)
                sched_yield();
    }
    return NULL;
}

static void consume(duo *d)
{
    _Alignas(8) unsigned char batch[BATCH_MAX * ELEM_MAX];
    uint64_t got = 0, rng = 7, tries = 0;
    while (got < d->count) {
        unsigned n;
        if (got & 1) {
            unsigned max = 1 + (unsigned)(test_rand(&rng) % (2 * d->k->cap + 1));
            n = up__ring_try_pop_batch(&d->r, d->k->sh, batch, max);
            CHECK_LE(n, max);
            for (unsigned i = 0; i < n; i++)
                check_elem(d->k, got++, batch + (size_t)i * d->k->sh.elem_size);
        } else {
            n = pop_expect(&d->r, d->k, got) == UP__RING_OK;
            got += n;
        }
        if (n == 0 && ++tries % 64 == 0)
            sched_yield();
    }
    CHECK_EQ(pop_expect(&d->r, d->k, got), UP__RING_EMPTY);
}

static void two_threads(const kind *k, uint64_t first, uint64_t count)
{
    duo *d = aligned_alloc(UP_CACHE_LINE, sizeof *d);
    CHECK(d);
    d->k = k;
    d->count = count;
    void *slots = alloc_slots(k);
    up__ring_init_at(&d->r, slots, k->cap, k->sh, first);
    pthread_t th;
    CHECK_EQ(pthread_create(&th, NULL, producer, d), 0);
    consume(d);
    CHECK_EQ(pthread_join(th, NULL), 0);
    CHECK_EQ(tail_of(&d->r), first + count);
    CHECK_EQ(head_of(&d->r), first + count);
    free(slots);
    free(d);
}

int main(void)
{
    uint64_t seed = test_seed();
    const uint64_t top = UP__RING_CLOSED; /* 2^63: positions stay below */
    uint64_t count = test_size("UP_TEST_RING_ITEMS", 50000);
    for (int i = 0; i < NKINDS; i++) {
        const kind *k = &kinds[i];
        uint64_t pushes = single(k, 0, seed);
        /* Across 2^62, starting mid-lap; then ending on the last tail
         * below 2^63. */
        CHECK_EQ(single(k, (UINT64_C(1) << 62) - pushes / 2 - 1, seed), pushes);
        CHECK_EQ(single(k, top - 1 - pushes, seed), pushes);
        two_threads(k, 0, count);
        two_threads(k, (UINT64_C(1) << 62) - count / 2, count);
        two_threads(k, top - 1 - count, count);
        printf("ring %s: %" PRIu64 " pushes from 0, 2^62 - %" PRIu64 " and 2^63 - %" PRIu64
               "; %" PRIu64 " elements through two threads from each of three starts, "
               "each once, in order, whole\n",
               k->name, pushes, pushes / 2 + 1, pushes + 1, count);
    }
    return 0;
}
