/* The runtime's one pseudo-random generator: xorshift32 (Marsaglia's
 * 13/17/5 triple), for choices that need to be spread, not unpredictable
 * (a thief's first victim, a random shard). Its state is one word the
 * caller keeps per thread or per worker, so drawing touches no shared
 * line. Zero is the generator's only fixed point; a state is never left
 * at zero. */
#ifndef UP_RNG_H
#define UP_RNG_H

#include <stdint.h>

#define UP__RNG_NONZERO 0x9e3779b9u

/* A state from two numbers that tell streams apart (a shard and a slot,
 * a thread's sequence number), never zero. */
static inline uint32_t up__rng_seed(uint32_t a, uint32_t b)
{
    uint32_t s = UP__RNG_NONZERO ^ (a * 0x85ebca6bu) ^ (b * 0xc2b2ae35u);
    return s ? s : UP__RNG_NONZERO;
}

/* The next number of the stream in *s (never zero). */
static inline uint32_t up__rng_next(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x ? x : UP__RNG_NONZERO;
}

/* A number in [0, n), n > 0: the high part of a 32x32 product, which
 * costs a multiply instead of a division. */
static inline unsigned up__rng_below(uint32_t *s, unsigned n)
{
    return (unsigned)(((uint64_t)up__rng_next(s) * n) >> 32);
}

#endif
