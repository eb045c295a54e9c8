#include "aes_cbc.h"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { BLOCK = 16 };

static const unsigned char key[BLOCK] = {'0', '1', '2', '3', '4', '5', '6', '7',
                                         '8', '9', 'A', 'B', 'C', 'D', 'E', 'F'};
static unsigned char input[UP_K_AES_MAX_LEN];
/* The cipher is looked up once (OpenSSL 3 otherwise repeats the provider
 * lookup on every init); the key schedule is still built on every call. */
static EVP_CIPHER *cbc;
static pthread_once_t ready = PTHREAD_ONCE_INIT;

static void init(void)
{
    memset(input, 'a', sizeof input);
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    cbc = EVP_CIPHER_fetch(NULL, "AES-128-CBC", NULL);
#else
    cbc = (EVP_CIPHER *)EVP_aes_128_cbc();
#endif
}

const unsigned char *up_k_aes_key(void) { return key; }

const unsigned char *up_k_aes_input(void)
{
    pthread_once(&ready, init);
    return input;
}

size_t up_k_aes_cbc_expected_len(size_t len) { return BLOCK + (len / BLOCK + 1) * BLOCK; }

unsigned char *up_k_aes_cbc_encrypt(const unsigned char *in, size_t len, size_t *out_len)
{
    pthread_once(&ready, init);
    if (!cbc || len > UP_K_AES_MAX_LEN)
        return NULL;
    unsigned char *out = malloc(up_k_aes_cbc_expected_len(len));
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int n1 = 0, n2 = 0;
    int ok = out && ctx && RAND_bytes(out, BLOCK) == 1 &&
             EVP_EncryptInit_ex(ctx, cbc, NULL, key, out) == 1 &&
             EVP_EncryptUpdate(ctx, out + BLOCK, &n1, in, (int)len) == 1 &&
             EVP_EncryptFinal_ex(ctx, out + BLOCK + n1, &n2) == 1;
    EVP_CIPHER_CTX_free(ctx);
    if (!ok) {
        free(out);
        return NULL;
    }
    *out_len = BLOCK + (size_t)n1 + (size_t)n2;
    return out;
}

size_t up_k_aes_cbc(size_t len)
{
    size_t n = 0;
    unsigned char *c = up_k_aes_cbc_encrypt(up_k_aes_input(), len, &n);
    free(c);
    return c ? n : 0;
}

/* Decrypts with padding checks on; returns the plaintext length or -1. */
static int decrypt(const unsigned char *c, size_t n, unsigned char *plain)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int n1 = 0, n2 = 0;
    int ok = ctx && EVP_DecryptInit_ex(ctx, EVP_aes_128_cbc(), NULL, key, c) == 1 &&
             EVP_DecryptUpdate(ctx, plain, &n1, c + BLOCK, (int)(n - BLOCK)) == 1 &&
             EVP_DecryptFinal_ex(ctx, plain + n1, &n2) == 1;
    EVP_CIPHER_CTX_free(ctx);
    return ok ? n1 + n2 : -1;
}

/* AES-ECB of one block: the raw block cipher, to recompute CBC's first
 * block by its definition. */
static int ecb_block(const unsigned char in[BLOCK], unsigned char out[BLOCK])
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    int n = 0;
    int ok = ctx && EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), NULL, key, NULL) == 1 &&
             EVP_CIPHER_CTX_set_padding(ctx, 0) == 1 &&
             EVP_EncryptUpdate(ctx, out, &n, in, BLOCK) == 1 && n == BLOCK;
    EVP_CIPHER_CTX_free(ctx);
    return ok ? 0 : -1;
}

int up_k_aes_cbc_verify(void)
{
    static const size_t lens[] = {1024, UP_K_AES_MAX_LEN, 100};
    static unsigned char plain[UP_K_AES_MAX_LEN + BLOCK];
    unsigned char first_iv[BLOCK];
    for (unsigned i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        size_t n = 0, len = lens[i];
        unsigned char *c = up_k_aes_cbc_encrypt(up_k_aes_input(), len, &n);
        if (!c)
            return -1;
        int ok = n == up_k_aes_cbc_expected_len(len) && decrypt(c, n, plain) == (int)len &&
                 memcmp(plain, up_k_aes_input(), len) == 0;
        unsigned char x[BLOCK], y[BLOCK];
        for (int k = 0; k < BLOCK; k++)
            x[k] = up_k_aes_input()[k] ^ c[k];
        ok = ok && ecb_block(x, y) == 0 && memcmp(y, c + BLOCK, BLOCK) == 0;
        if (i == 0)
            memcpy(first_iv, c, BLOCK);
        else if (i == 1)
            ok = ok && memcmp(first_iv, c, BLOCK) != 0;
        free(c);
        if (!ok)
            return -1;
    }
    return up_k_aes_cbc(1024) == up_k_aes_cbc_expected_len(1024) ? 0 : -1;
}
