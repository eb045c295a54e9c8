/* AES-128-CBC encryption with OpenSSL EVP, shaped like the Go benchmark's
 * task: a fresh cipher context and key schedule per call, a random IV,
 * PKCS#7 padding, and the result (IV first) in a newly allocated buffer.
 * Kernels are plain C and know nothing of any runtime. */
#ifndef UP_KERNEL_AES_CBC_H
#define UP_KERNEL_AES_CBC_H

#include <stddef.h>

#define UP_K_AES_MAX_LEN 8192

/* The fixed 16-byte key and the input: up to UP_K_AES_MAX_LEN bytes of 'a'. */
const unsigned char *up_k_aes_key(void);
const unsigned char *up_k_aes_input(void);
/* Encrypts in[0..len) into a new buffer of 16 + padded length (the IV,
 * then the ciphertext); *out_len gets that length. NULL on failure. The
 * caller frees the buffer. */
unsigned char *up_k_aes_cbc_encrypt(const unsigned char *in, size_t len, size_t *out_len);
/* One task: encrypts the first len input bytes and frees the result.
 * Returns the ciphertext length (IV included), or 0 on failure. */
size_t up_k_aes_cbc(size_t len);
/* The length a correct up_k_aes_cbc(len) returns. */
size_t up_k_aes_cbc_expected_len(size_t len);
/* Returns 0 when a ciphertext decrypts back to the input with valid
 * padding, its first block equals AES-ECB(key, P0 xor IV) computed
 * separately, and two calls draw different IVs. */
int up_k_aes_cbc_verify(void);

#endif
