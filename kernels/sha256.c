#include "sha256.h"

#include <openssl/sha.h>
#include <pthread.h>
#include <string.h>

static unsigned char input[UP_K_SHA256_LEN];
static pthread_once_t filled = PTHREAD_ONCE_INIT;

static void fill(void) { memset(input, 'a', sizeof input); }

const unsigned char *up_k_sha256_input(void)
{
    pthread_once(&filled, fill);
    return input;
}

void up_k_sha256_1k(unsigned char digest[32])
{
    SHA256(up_k_sha256_input(), UP_K_SHA256_LEN, digest);
}

/* A plain, slow SHA-256 written from the FIPS 180-4 definition, only for
 * checking OpenSSL: one block at a time, no tricks. */
static const uint32_t round_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

static void compress(uint32_t h[8], const unsigned char block[64])
{
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)block[4 * t] << 24 | (uint32_t)block[4 * t + 1] << 16 |
               (uint32_t)block[4 * t + 2] << 8 | block[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t v[8];
    memcpy(v, h, sizeof v);
    for (int t = 0; t < 64; t++) {
        uint32_t e = v[4], a = v[0];
        uint32_t t1 = v[7] + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & v[5]) ^ (~e & v[6])) +
                      round_k[t] + w[t];
        uint32_t t2 =
            (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & v[1]) ^ (a & v[2]) ^ (v[1] & v[2]));
        memmove(&v[1], &v[0], 7 * sizeof v[0]);
        v[4] += t1;
        v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; i++)
        h[i] += v[i];
}

static void reference_sha256(const unsigned char *msg, size_t n, unsigned char out[32])
{
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    size_t full = n / 64;
    for (size_t b = 0; b < full; b++)
        compress(h, msg + 64 * b);
    /* The tail, the 0x80 marker and the 64-bit bit length fill one or two
     * final blocks. */
    unsigned char last[128] = {0};
    size_t rest = n - 64 * full;
    memcpy(last, msg + 64 * full, rest);
    last[rest] = 0x80;
    size_t tail = rest < 56 ? 64 : 128;
    uint64_t bits = (uint64_t)n * 8;
    for (int i = 0; i < 8; i++)
        last[tail - 1 - i] = (unsigned char)(bits >> (8 * i));
    for (size_t off = 0; off < tail; off += 64)
        compress(h, last + off);
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < 4; k++)
            out[4 * i + k] = (unsigned char)(h[i] >> (24 - 8 * k));
}

int up_k_sha256_verify(void)
{
    /* FIPS 180-2, appendix B.1: SHA-256("abc"). */
    static const unsigned char abc_digest[32] = {0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea,
                                                 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
                                                 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c,
                                                 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
    unsigned char mine[32], theirs[32];
    reference_sha256((const unsigned char *)"abc", 3, mine);
    SHA256((const unsigned char *)"abc", 3, theirs);
    if (memcmp(mine, abc_digest, 32) || memcmp(theirs, abc_digest, 32))
        return -1;
    reference_sha256(up_k_sha256_input(), UP_K_SHA256_LEN, mine);
    up_k_sha256_1k(theirs);
    return memcmp(mine, theirs, 32) ? -1 : 0;
}
