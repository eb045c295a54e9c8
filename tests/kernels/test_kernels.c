/* Every benchmark kernel agrees with its independent check: CRC32 with a
 * bitwise CRC, SHA-256 with a plain implementation and the FIPS vector,
 * AES-CBC by decryption and by recomputing the first block, the byte sum
 * with its closed form, the mutex counter under four threads, sleeps with
 * the clock, and the mix of the two modes with its 1-in-5 ratio. */
#include <stdio.h>

#include "aes_cbc.h"
#include "bytesum.h"
#include "check.h"
#include "crc32.h"
#include "mixed.h"
#include "mutex.h"
#include "sha256.h"
#include "sleep.h"

int main(void)
{
    CHECK_EQ(up_k_crc32_verify(), 0);
    CHECK_EQ(up_k_sha256_verify(), 0);
    CHECK_EQ(up_k_aes_cbc_verify(), 0);
    CHECK_EQ(up_k_bytesum_verify(), 0);
    CHECK_EQ(up_k_mutex_verify(), 0);
    CHECK_EQ(up_k_sleep_verify(), 0);
    CHECK_EQ(up_k_mixed_verify(), 0);
    /* The task forms return what the checks established. */
    CHECK_EQ(up_k_aes_cbc(8192), up_k_aes_cbc_expected_len(8192));
    CHECK_EQ(up_k_aes_cbc_expected_len(8192), 16 + 8192 + 16);
    CHECK_EQ(up_k_bytesum_4k(), 4096 / 256 * (255 * 256 / 2));
    up_k_mutex_reset();
    for (int i = 0; i < 1000; i++)
        up_k_mutex_inc();
    CHECK_EQ(up_k_mutex_count(), 1000);
    printf("kernels: 7 verifiers passed\n");
    return 0;
}
