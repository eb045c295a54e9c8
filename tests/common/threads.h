/* The process's thread count, for tests that check that threads come back
 * or go away. Linux: the Threads line of /proc/self/status (one read,
 * which qemu-user also answers); -1 where it cannot be read. Test code,
 * header-only. */
#ifndef UP_TEST_THREADS_H
#define UP_TEST_THREADS_H

#include <stdio.h>

#include "check.h"

static inline int test_threads(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    fclose(f);
    return n;
}

/* The count once it has held still for 100 ms: a thread that ended leaves
 * the list a little after its last instruction (under qemu-user, later
 * still). Gives up after 2 s (times the sanitizers' factor) and returns
 * the last count. */
static inline int test_threads_settled(void)
{
    int last = test_threads();
    for (uint64_t t0 = test_now_ns(); test_now_ns() - t0 < 2000000000ull * test_time_factor();) {
        test_sleep_ms(100);
        int now = test_threads();
        if (now == last)
            break;
        last = now;
    }
    return last;
}

#endif
