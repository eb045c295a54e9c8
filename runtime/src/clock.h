/* Monotonic time in nanoseconds, and sleeping helpers. */
#ifndef UP_CLOCK_H
#define UP_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t up__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* deadline = now + timeout, saturating (UINT64_MAX means never). */
static inline uint64_t up__deadline_after(uint64_t timeout_ns)
{
    uint64_t now = up__now_ns();
    return timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
}

/* Time left until deadline: 0 when passed, UINT64_MAX for never. */
static inline uint64_t up__remaining_ns(uint64_t deadline)
{
    if (deadline == UINT64_MAX)
        return UINT64_MAX;
    uint64_t now = up__now_ns();
    return deadline > now ? deadline - now : 0;
}

static inline struct timespec up__timespec_from_ns(uint64_t ns)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    return ts;
}

/* The CLOCK_REALTIME time ns from now, as pthread_cond_timedwait wants
 * its deadline (condition variables keep the realtime clock by default;
 * callers wait in bounded slices, so a clock step costs one slice). */
static inline struct timespec up__realtime_after(uint64_t ns)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t at = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
    return up__timespec_from_ns(ns > UINT64_MAX - at ? UINT64_MAX : at + ns);
}

#endif
