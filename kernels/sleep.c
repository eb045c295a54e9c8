#include "sleep.h"

#include <errno.h>
#include <time.h>

void up_k_sleep_ns(uint64_t ns)
{
    struct timespec now, until;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t t = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec + ns;
    until.tv_sec = (time_t)(t / 1000000000u);
    until.tv_nsec = (long)(t % 1000000000u);
    /* An absolute deadline, so a signal that interrupts the sleep does not
     * stretch or shorten it when it is resumed. */
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
        ;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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
