#include "sleep.h"

#include <errno.h>
#include <time.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* An absolute deadline, so a signal that interrupts the sleep does not
 * stretch or shorten it when it is resumed. macOS has no clock_nanosleep:
 * there the remaining time is slept with nanosleep, measured again against
 * the same deadline after every wake-up. UP_PORTABLE_FALLBACKS selects that
 * path on Linux too, so it is compiled and run there. */
void up_k_sleep_ns(uint64_t ns)
{
    uint64_t t = now_ns() + ns;
#if defined(__APPLE__) || defined(UP_PORTABLE_FALLBACKS)
    for (uint64_t now = now_ns(); now < t; now = now_ns()) {
        struct timespec left = {(time_t)((t - now) / 1000000000u), (long)((t - now) % 1000000000u)};
        nanosleep(&left, NULL);
    }
#else
    struct timespec until = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
        ;
#endif
}

int up_k_sleep_verify(void)
{
    static const uint64_t asked[] = {1000, 2000000};
    for (unsigned i = 0; i < sizeof asked / sizeof asked[0]; i++) {
        uint64_t t0 = now_ns();
        up_k_sleep_ns(asked[i]);
        if (now_ns() - t0 < asked[i])
            return -1;
    }
    return 0;
}
