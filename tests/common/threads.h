/* The process's thread count, for tests that check that threads come back
 * or go away. Linux: the Threads line of /proc/self/status (one read,
 * which qemu-user also answers); -1 where it cannot be read. Test code,
 * header-only. */
#ifndef UP_TEST_THREADS_H
#define UP_TEST_THREADS_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>

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

/* Prints the name of every thread of the process on one line (Linux:
 * /proc/self/task/TID/comm), for a test that found more or fewer threads
 * than it expected to say which. Prints nothing where it cannot read them. */
static inline void test_threads_print(FILE *out, const char *what)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return;
    fprintf(out, "%s:", what);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], comm[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(comm, sizeof comm, f))
            comm[strcspn(comm, "\n")] = 0;
        fclose(f);
        fprintf(out, " [%s] %s", e->d_name, comm);
    }
    closedir(d);
    fputc('\n', out);
}

#endif
