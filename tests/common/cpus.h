/* The CPUs this process may run on: its affinity mask where the system
 * has one, else the CPUs online. What a region of nthreads 0 gets on
 * ultrapool's scheduler, and what OpenMP takes as its default team.
 * Test code, header-only. */
#ifndef UP_TEST_CPUS_H
#define UP_TEST_CPUS_H

#include <sched.h>
#include <unistd.h>

static inline unsigned test_cpus(void)
{
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        return (unsigned)CPU_COUNT(&set);
#endif
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (unsigned)online : 1;
}

#endif
