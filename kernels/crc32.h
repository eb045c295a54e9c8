/* CRC32 (zlib's) over a small buffer: the short, CPU-bound task of the
 * benchmarks. Kernels are plain C and know nothing of any runtime. */
#ifndef UP_KERNEL_CRC32_H
#define UP_KERNEL_CRC32_H

#include <stddef.h>
#include <stdint.h>

#define UP_K_CRC32_LEN 64

/* The benchmark input: UP_K_CRC32_LEN bytes, the same for every task. */
const unsigned char *up_k_crc32_input(void);
/* One task: CRC32 of the input. */
uint32_t up_k_crc32_64(void);
/* The value up_k_crc32_64() must return, from an independent bitwise
 * CRC32 (computed once, then cached). */
uint32_t up_k_crc32_expected(void);
/* Returns 0 when up_k_crc32_64() matches an independent bitwise CRC32. */
int up_k_crc32_verify(void);

#endif
