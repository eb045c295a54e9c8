/* The work map: which shards may have work, for pools with many shards.
 *
 * An idle worker looks at its own shard and the UP__NEAR_SHARDS - 1
 * nearest ones directly (in its steal order), as every worker of a small
 * pool looks at all of them. Beyond that it would cost each spin of each
 * idle worker a probe of every shard, so a pool with more shards keeps a
 * map: one bit per shard ("its queue or one of its workers' deques may
 * hold a task"), in 64-bit words, and a top word with one bit per word
 * that may be non-zero. nshards <= 4096 = 64 x 64, so two levels suffice
 * and a look at the map costs one load when the pool is idle, whatever
 * the shard count.
 *
 * Invariant. Whenever shard s holds a task, bit s is set (and so is its
 * word's top bit), except while a thread that cleared the bit is between
 * its clear and its second look at s, after which it sets the bit again
 * if s holds a task. The map may also say "may have work" of an empty
 * shard, and the top word of an empty word; whoever probes such a shard,
 * or finds such a word, clears its bit the same way (clear, look again).
 * Stale bits cost only a probe, but must not stay: a worker at stop waits
 * for an empty map, and a parking worker's last look reads the top word.
 *
 * Why it holds (all accesses below are sequentially consistent, and so is
 * a task's publication: the queue's tail CAS; the deque's bottom store is
 * a release, see below). A publisher, after publishing into s, loads bit s
 * and sets it if clear (up__work_mark). A clearer clears bit s, then looks
 * at s again (up__work_recheck). In the single total order either the
 * publisher's load comes after the clear (it sees the bit clear and sets
 * it), or before it: then the publication comes before the clear and the
 * clearer's second look sees the task and sets the bit again. The top
 * word follows the same pattern one level up: a marker sets its word's
 * bit and then loads the top bit; a clearer that emptied a word clears the
 * top bit and then loads the word again.
 *
 * The idle protocol (idle.c) stays as it is with the map standing in for
 * the queues: a parking worker's last look reads the top word after
 * counting itself parked, and a submitter marks the map before it reads
 * the idle word, so either the last look sees the mark or the submitter
 * sees the worker parked (tests/model/workmap.pml checks this with the
 * clearing searchers). A deque push publishes with a release store, not a
 * sequentially consistent one, so a thief may miss a fresh nested task in
 * its last look, as it may in a small pool: that task is never stranded,
 * since its owner pops it when its current task returns.
 *
 * Cost on the submit path: one load of a word that stays set while its
 * shards are busy, and an RMW only when a shard turns from idle to busy.
 * Small pools (nshards <= UP__NEAR_SHARDS) keep no map at all. */
#ifndef UP_WORKMAP_H
#define UP_WORKMAP_H

#include "pool_internal.h"

static inline int up__shard_has_work(up__shard *s)
{
    if (up__mpmc_nonempty(&s->q))
        return 1;
    unsigned used = up__load_acquire(&s->slots_used);
    for (unsigned k = 0; k < used; k++) {
        up__worker *v = up__slot_worker(s, k);
        if (v && up__deque_nonempty(&v->dq))
            return 1;
    }
    return 0;
}

/* After publishing a task in shard s (its queue or a deque of one of its
 * workers): makes sure the map says so. */
static inline void up__work_mark(up_pool *p, unsigned s)
{
    _Atomic uint64_t *word = &p->work_bits[s >> 6].bits;
    uint64_t bit = UINT64_C(1) << (s & 63);
    if (!(up__load_seqcst(word) & bit))
        up__fetch_or_seqcst(word, bit);
    uint64_t top = UINT64_C(1) << (s >> 6);
    if (!(up__load_seqcst(&p->work_top) & top))
        up__fetch_or_seqcst(&p->work_top, top);
}

/* A bit set back by a clearer is a publish like a submitter's: the
 * submitter that set the bit first may have read the idle word while a
 * worker was still searching and woken nobody, and that worker may have
 * parked after its last look saw the bit cleared. So the clearer, after
 * its seq_cst RMW on the map, reads the idle word and wakes a parked
 * worker when nobody is searching (a searching clearer counts itself and
 * finds the task on its next look). Set-backs are rare, so is this. */
static inline void up__work_set_back_wake(up_pool *p, unsigned shard)
{
    uint64_t idle = up__load_seqcst(&p->idle);
    if (UP__IDLE_SPINNING(idle) == 0 && UP__IDLE_PARKED(idle) != 0)
        up__wake_one(p, shard);
}

/* Word wi was found empty: clears its top bit, then looks at the word
 * again and sets the bit back if a marker filled it meanwhile. A top bit
 * can outlive its word's bits (a marker sets it just after a clearer
 * emptied the word), so whoever finds such a word clears it this way. */
static inline void up__work_recheck_word(up_pool *p, unsigned wi)
{
    uint64_t top = UINT64_C(1) << wi;
    up__fetch_and_seqcst(&p->work_top, ~top);
    uint64_t bits = up__load_seqcst(&p->work_bits[wi].bits);
    if (bits != 0) {
        up__fetch_or_seqcst(&p->work_top, top);
        up__work_set_back_wake(p, wi * 64 + (unsigned)__builtin_ctzll(bits));
    }
}

/* Shard s was probed and found empty: clears its bit, then looks again.
 * Returns 1 when s holds a task after all (its bit is set again). */
static inline int up__work_recheck(up_pool *p, up__shard *s)
{
    unsigned i = s->index;
    _Atomic uint64_t *word = &p->work_bits[i >> 6].bits;
    uint64_t bit = UINT64_C(1) << (i & 63);
    uint64_t old = up__fetch_and_seqcst(word, ~bit);
    if ((old & ~bit) == 0)
        up__work_recheck_word(p, i >> 6);
    if (!up__shard_has_work(s))
        return 0;
    up__work_mark(p, i);
    up__work_set_back_wake(p, i);
    return 1;
}

/* May any shard hold a task? One load; see the invariant above. */
static inline int up__work_maybe(up_pool *p) { return up__load_seqcst(&p->work_top) != 0; }

#endif
