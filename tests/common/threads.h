/* The process's thread count, for tests that check that threads come back
 * or go away. Linux: the Threads line of /proc/self/status (one read,
 * which qemu-user also answers); -1 where it cannot be read. Test code,
 * header-only. */
#ifndef UP_TEST_THREADS_H
#define UP_TEST_THREADS_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
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

/* Calls fn(tid, name, arg) for every thread of the process (Linux:
 * /proc/self/task/TID/comm, the name without its newline). Returns how
 * many it saw, or -1 where the list cannot be read. */
static inline int test_threads_each(void (*fn)(int tid, const char *name, void *arg), void *arg)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], comm[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue; /* the thread ended meanwhile */
        if (fgets(comm, sizeof comm, f))
            comm[strcspn(comm, "\n")] = 0;
        fclose(f);
        fn(atoi(e->d_name), comm, arg);
        n++;
    }
    closedir(d);
    return n;
}

static inline void test_threads_print_one(int tid, const char *name, void *out)
{
    fprintf((FILE *)out, " [%d] %s", tid, name);
}

/* Prints the name of every thread of the process on one line, for a test
 * that found more or fewer threads than it expected to say which. Prints
 * nothing where it cannot read them. */
static inline void test_threads_print(FILE *out, const char *what)
{
    fprintf(out, "%s:", what);
    test_threads_each(test_threads_print_one, out);
    fputc('\n', out);
}

#endif
