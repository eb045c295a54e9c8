/* Runs a function in a child process with its stderr on a pipe: for tests
 * of what aborts (a fiber's guard page, a failed internal assertion) and
 * of what a process prints. Test code, header-only; needs check.h. */
#ifndef UP_TEST_CHILD_H
#define UP_TEST_CHILD_H

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* Runs body(arg) in a child (which then exits 0); returns its wait status
 * and its stderr in out (cap bytes with the terminating NUL). */
static inline int child_stderr(void (*body)(void *), void *arg, char *out, size_t cap)
{
    int fds[2];
    CHECK_EQ(pipe(fds), 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK_GE(pid, 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        body(arg);
        _exit(0);
    }
    close(fds[1]);
    size_t len = 0;
    ssize_t r;
    while (len + 1 < cap && (r = read(fds[0], out + len, cap - 1 - len)) > 0)
        len += (size_t)r;
    out[len] = '\0';
    close(fds[0]);
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    return status;
}

#endif
