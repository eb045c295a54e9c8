#include "crc32.h"

#include <pthread.h>
#include <zlib.h>

/* Byte i is i * 7 + 1: fixed, so every task and every run sees the same. */
static const unsigned char input[UP_K_CRC32_LEN] = {
    1,   8,   15,  22,  29,  36,  43,  50,  57,  64,  71,  78,  85,  92,  99,  106,
    113, 120, 127, 134, 141, 148, 155, 162, 169, 176, 183, 190, 197, 204, 211, 218,
    225, 232, 239, 246, 253, 4,   11,  18,  25,  32,  39,  46,  53,  60,  67,  74,
    81,  88,  95,  102, 109, 116, 123, 130, 137, 144, 151, 158, 165, 172, 179, 186,
};

const unsigned char *up_k_crc32_input(void) { return input; }

uint32_t up_k_crc32_64(void) { return (uint32_t)crc32(0L, input, UP_K_CRC32_LEN); }

/* The reflected CRC-32 polynomial, one bit at a time: slow and obviously
 * right, the reference zlib's table-driven code must match. */
static uint32_t crc32_bitwise(const unsigned char *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return c ^ 0xffffffffu;
}

static uint32_t expected;
static pthread_once_t expected_once = PTHREAD_ONCE_INIT;

static void compute_expected(void) { expected = crc32_bitwise(input, UP_K_CRC32_LEN); }

uint32_t up_k_crc32_expected(void)
{
    pthread_once(&expected_once, compute_expected);
    return expected;
}

int up_k_crc32_verify(void) { return up_k_crc32_64() == up_k_crc32_expected() ? 0 : -1; }
