#include "bytesum.h"

#include <pthread.h>

/* Filled at run time (byte i is i mod 256) so the compiler cannot fold the
 * sum into a constant. */
static unsigned char input[UP_K_BYTESUM_LEN];
static pthread_once_t filled = PTHREAD_ONCE_INIT;

static void fill(void)
{
    for (unsigned i = 0; i < UP_K_BYTESUM_LEN; i++)
        input[i] = (unsigned char)i;
}

uint64_t up_k_bytesum_4k(void)
{
    pthread_once(&filled, fill);
    uint64_t s = 0;
    for (unsigned i = 0; i < UP_K_BYTESUM_LEN; i++)
        s += input[i];
    return s;
}

/* Each run of 256 bytes holds 0..255 once: 255 * 256 / 2 per run. */
uint64_t up_k_bytesum_expected(void)
{
    return (uint64_t)(UP_K_BYTESUM_LEN / 256) * (255 * 256 / 2);
}

int up_k_bytesum_verify(void) { return up_k_bytesum_4k() == up_k_bytesum_expected() ? 0 : -1; }
