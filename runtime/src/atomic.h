/* The only place the libraries touch C11 atomics: the sources under
 * runtime/ (the pool, the MPI mode, the layer interface, the tools) and
 * pragmas/ (the parallel layer, its OpenMP ABI and backends) call the
 * macros below, never an operation of <stdatomic.h> or an __atomic or
 * __sync builtin; test_raw_atomics (tests/unit/check_raw_atomics.sh) fails
 * on one that does. They take the atomic types from <stdatomic.h>, and
 * atomic_init stays a plain call: it initialises an object no other
 * thread can see yet, which is no atomic access and has no order to name.
 * Tests, benchmarks and experiments stand outside the libraries and use
 * <stdatomic.h> directly.
 *
 * Every name carries its memory order so the order is visible at each call
 * site; there is no volatile. Standalone fences are avoided where an
 * ordered operation can carry the ordering, because ThreadSanitizer
 * understands the latter and not the former. */
#ifndef UP_ATOMIC_H
#define UP_ATOMIC_H

#include <stdatomic.h>
#include <stdint.h>

#define UP_CACHE_LINE   64
#define UP_ALIGNED_LINE _Alignas(UP_CACHE_LINE)

#define up__load_relaxed(p) atomic_load_explicit((p), memory_order_relaxed)
#define up__load_acquire(p) atomic_load_explicit((p), memory_order_acquire)
#define up__load_seqcst(p)  atomic_load_explicit((p), memory_order_seq_cst)

#define up__store_relaxed(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)
#define up__store_release(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define up__store_seqcst(p, v)  atomic_store_explicit((p), (v), memory_order_seq_cst)

#define up__fetch_add_relaxed(p, v) atomic_fetch_add_explicit((p), (v), memory_order_relaxed)
#define up__fetch_add_acq_rel(p, v) atomic_fetch_add_explicit((p), (v), memory_order_acq_rel)
#define up__fetch_add_seqcst(p, v)  atomic_fetch_add_explicit((p), (v), memory_order_seq_cst)
#define up__fetch_sub_relaxed(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_relaxed)
#define up__fetch_sub_acq_rel(p, v) atomic_fetch_sub_explicit((p), (v), memory_order_acq_rel)
#define up__fetch_sub_seqcst(p, v)  atomic_fetch_sub_explicit((p), (v), memory_order_seq_cst)
#define up__fetch_or_seqcst(p, v)   atomic_fetch_or_explicit((p), (v), memory_order_seq_cst)
#define up__exchange_relaxed(p, v)  atomic_exchange_explicit((p), (v), memory_order_relaxed)
#define up__exchange_acquire(p, v)  atomic_exchange_explicit((p), (v), memory_order_acquire)
#define up__exchange_release(p, v)  atomic_exchange_explicit((p), (v), memory_order_release)
#define up__exchange_acq_rel(p, v)  atomic_exchange_explicit((p), (v), memory_order_acq_rel)
#define up__exchange_seqcst(p, v)   atomic_exchange_explicit((p), (v), memory_order_seq_cst)
#define up__fetch_or_acq_rel(p, v)  atomic_fetch_or_explicit((p), (v), memory_order_acq_rel)
#define up__fetch_and_acq_rel(p, v) atomic_fetch_and_explicit((p), (v), memory_order_acq_rel)
#define up__fetch_and_seqcst(p, v)  atomic_fetch_and_explicit((p), (v), memory_order_seq_cst)

/* Compare-and-swap; on failure *expected receives the current value. A
 * name with one order gives the order of success; failure, a load, takes
 * the load's part of it (acquire for acq_rel, relaxed for release). A
 * name with two orders gives both, success first. */
#define up__cas_weak_relaxed(p, e, d)                                                              \
    atomic_compare_exchange_weak_explicit((p), (e), (d), memory_order_relaxed, memory_order_relaxed)
#define up__cas_weak_acq_rel(p, e, d)                                                              \
    atomic_compare_exchange_weak_explicit((p), (e), (d), memory_order_acq_rel, memory_order_acquire)
#define up__cas_weak_seqcst(p, e, d)                                                               \
    atomic_compare_exchange_weak_explicit((p), (e), (d), memory_order_seq_cst, memory_order_seq_cst)
#define up__cas_strong_seqcst(p, e, d)                                                             \
    atomic_compare_exchange_strong_explicit((p), (e), (d), memory_order_seq_cst,                   \
                                            memory_order_seq_cst)
#define up__cas_strong_acq_rel(p, e, d)                                                            \
    atomic_compare_exchange_strong_explicit((p), (e), (d), memory_order_acq_rel,                   \
                                            memory_order_acquire)
#define up__cas_strong_acquire_relaxed(p, e, d)                                                    \
    atomic_compare_exchange_strong_explicit((p), (e), (d), memory_order_acquire,                   \
                                            memory_order_relaxed)
#define up__cas_strong_release_acquire(p, e, d)                                                    \
    atomic_compare_exchange_strong_explicit((p), (e), (d), memory_order_release,                   \
                                            memory_order_acquire)
#define up__cas_weak_release_acquire(p, e, d)                                                      \
    atomic_compare_exchange_weak_explicit((p), (e), (d), memory_order_release, memory_order_acquire)

/* Store buffering (Dekker's step): a thread stores one word and must then
 * see the other thread's store to a second word, or be seen by it. Two
 * formulations are correct C11: seq_cst stores and loads, or a seq_cst
 * fence between relaxed (or acquire) accesses. The fence is the one used:
 * under qemu-user an AArch64 stlr;ldar pair runs on an x86-64 host as a
 * store and a load that the host may reorder, while a fence becomes a full
 * host fence (see deque.c). ThreadSanitizer does not model fences (GCC
 * refuses to compile them under -fsanitize=thread), so its builds use the
 * seq_cst accesses instead, which it does model.
 *   up__store_sb(p, v);
 *   up__fence_sb();
 *   x = up__load_sb(q);
 * The other side of the pattern uses a seq_cst access (an RMW, or seq_cst
 * loads), which pairs with the fence under the C11/C++20 rules. */
#if defined(__SANITIZE_THREAD__)
#define UP__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UP__TSAN 1
#endif
#endif
#if defined(UP__TSAN)
#define UP__SB_STORE   memory_order_seq_cst
#define UP__SB_LOAD    memory_order_seq_cst
#define up__fence_sb() ((void)0)
#else
#define UP__SB_STORE   memory_order_relaxed
#define UP__SB_LOAD    memory_order_relaxed
#define up__fence_sb() atomic_thread_fence(memory_order_seq_cst)
#endif
#define up__store_sb(p, v) atomic_store_explicit((p), (v), UP__SB_STORE)
#define up__load_sb(p)     atomic_load_explicit((p), UP__SB_LOAD)

/* A hint to the CPU that this thread is spinning. */
static inline void up__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    atomic_signal_fence(memory_order_seq_cst);
#endif
}

#endif
