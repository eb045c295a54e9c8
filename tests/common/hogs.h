/* CPU hogs: busy child processes that take the machine's CPUs, for tests
 * that need a thread to wait for one (a worker the scheduler leaves
 * behind). Processes, not threads, so they add nothing to the test's
 * thread count or its pool's statistics. Linux only (a hog dies with its
 * parent, PR_SET_PDEATHSIG, so a failed CHECK leaves none behind). Test
 * code, header-only; needs check.h. */
#ifndef UP_TEST_HOGS_H
#define UP_TEST_HOGS_H

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define TEST_HOGS_MAX 1024

typedef struct test_hogs {
    pid_t pid[TEST_HOGS_MAX];
    unsigned n;
} test_hogs;

/* Starts n hogs (at most TEST_HOGS_MAX). */
static inline void test_hogs_start(test_hogs *h, unsigned n)
{
    for (h->n = 0; h->n < n && h->n < TEST_HOGS_MAX; h->n++) {
        pid_t pid = fork();
        CHECK_GE(pid, 0);
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() == 1)
                _exit(0); /* the parent died before the prctl */
            for (;;)
                test_spin(1000000);
        }
        h->pid[h->n] = pid;
    }
}

static inline void test_hogs_stop(test_hogs *h)
{
    for (unsigned i = 0; i < h->n; i++) {
        kill(h->pid[i], SIGKILL);
        waitpid(h->pid[i], NULL, 0);
    }
    h->n = 0;
}

#endif
