/* SHA-256 over 1 kB with OpenSSL: the short hashing task of the benchmarks.
 * Kernels are plain C and know nothing of any runtime. */
#ifndef UP_KERNEL_SHA256_H
#define UP_KERNEL_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define UP_K_SHA256_LEN 1024

/* The benchmark input: UP_K_SHA256_LEN bytes of 'a', as in the Go tables. */
const unsigned char *up_k_sha256_input(void);
/* One task: the digest of the input (OpenSSL's one-shot SHA256()). */
void up_k_sha256_1k(unsigned char digest[32]);
/* Returns 0 when OpenSSL agrees with an independent implementation on the
 * FIPS 180-2 "abc" vector and on the benchmark input. */
int up_k_sha256_verify(void);

#endif
