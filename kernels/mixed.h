/* The bimodal mix: one task in five is AES-CBC over 1 kB, the others are
 * CRC32 over 64 bytes, drawn from a generator the caller owns (one per
 * thread, so drawing costs no shared cache line). Kernels are plain C and
 * know nothing of any runtime. */
#ifndef UP_KERNEL_MIXED_H
#define UP_KERNEL_MIXED_H

#include <stdint.h>

/* One task; *rng is the caller's generator state. Returns 1 when it ran the
 * AES task and that task returned the right length, 0 when it ran the
 * CRC32 task and got the right value, -1 on a wrong result. */
int up_k_mixed(uint64_t *rng);
/* Returns 0 when the kernels of both modes verify and 100,000 draws give
 * AES between 18% and 22% of the time. */
int up_k_mixed_verify(void);

#endif
