#include "mixed.h"

#include "aes_cbc.h"
#include "crc32.h"

/* splitmix64: one add and three multiply-xorshift steps per draw. */
static uint64_t draw(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int up_k_mixed(uint64_t *rng)
{
    if (draw(rng) % 5 == 0)
        return up_k_aes_cbc(1024) == up_k_aes_cbc_expected_len(1024) ? 1 : -1;
    return up_k_crc32_64() == up_k_crc32_expected() ? 0 : -1;
}

int up_k_mixed_verify(void)
{
    if (up_k_crc32_verify() != 0 || up_k_aes_cbc_verify() != 0)
        return -1;
    uint64_t rng = 12345;
    unsigned aes = 0, n = 100000;
    for (unsigned i = 0; i < n; i++)
        if (draw(&rng) % 5 == 0)
            aes++;
    if (aes < n * 18 / 100 || aes > n * 22 / 100)
        return -1;
    int ones = 0;
    for (int i = 0; i < 50; i++) {
        int r = up_k_mixed(&rng);
        if (r < 0)
            return -1;
        ones += r;
    }
    return ones > 0 && ones < 50 ? 0 : -1;
}
