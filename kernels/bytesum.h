/* A memory scan: the sum of the bytes of a 4 kB buffer, the Go benchmark's
 * "MemScan 4 kB". Kernels are plain C and know nothing of any runtime. */
#ifndef UP_KERNEL_BYTESUM_H
#define UP_KERNEL_BYTESUM_H

#include <stdint.h>

#define UP_K_BYTESUM_LEN 4096

/* One task: the sum of the UP_K_BYTESUM_LEN input bytes. */
uint64_t up_k_bytesum_4k(void);
/* The sum the input must give, from a closed form. */
uint64_t up_k_bytesum_expected(void);
/* Returns 0 when up_k_bytesum_4k() matches the closed form. */
int up_k_bytesum_verify(void);

#endif
