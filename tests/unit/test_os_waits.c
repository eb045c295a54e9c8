/* The OS layer's reading of what a blocked thread waits for (os/os.h), which
 * the monitor uses to tell waits on the process's own locks from waits on
 * the outside world: a thread blocked in pthread_mutex_lock or in a
 * condition variable reads as contended, one blocked in read() on a pipe
 * or in nanosleep does not, and a running thread reads as not blocked
 * (-1). Where the OS says nothing of thread states (not Linux, /proc
 * missing) or /proc shows another architecture's system call numbers (an
 * emulator such as qemu-user) it exits 77. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "os/os.h"

#if defined(__linux__)
typedef struct probe {
    up__os_thread os;
    atomic_int ready;
    int kind;
} probe;

enum { IN_MUTEX, IN_COND, IN_PIPE, IN_SLEEP, SPINNING };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cond_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int cond_done;
static int pipe_fd[2];
static atomic_int stop_spin;

static void *blocker(void *arg)
{
    probe *pr = arg;
    up__os_thread_self(&pr->os);
    atomic_store(&pr->ready, 1);
    switch (pr->kind) {
    case IN_MUTEX:
        pthread_mutex_lock(&lock);
        pthread_mutex_unlock(&lock);
        break;
    case IN_COND:
        pthread_mutex_lock(&cond_lock);
        while (!cond_done)
            pthread_cond_wait(&cond, &cond_lock);
        pthread_mutex_unlock(&cond_lock);
        break;
    case IN_PIPE: {
        char c;
        CHECK_EQ(read(pipe_fd[0], &c, 1), 1);
        break;
    }
    case IN_SLEEP: {
        struct timespec ts = {0, 200000000};
        nanosleep(&ts, NULL);
        break;
    }
    default:
        while (!atomic_load(&stop_spin))
            test_spin(1000);
    }
    return NULL;
}

/* Starts a probe of this kind and waits until the OS shows it blocked
 * (or, for SPINNING, running); returns what up__os_thread_contended says. */
static int contended_while(int kind, pthread_t *th, probe *pr)
{
    pr->kind = kind;
    atomic_store(&pr->ready, 0);
    CHECK_EQ(pthread_create(th, NULL, blocker, pr), 0);
    while (!atomic_load(&pr->ready))
        sched_yield();
    int want = kind == SPINNING ? 0 : 1;
    WAIT_UNTIL(up__os_thread_blocked(&pr->os) == want, 10000);
    return up__os_thread_contended(&pr->os);
}

/* The system call number /proc shows for thread t, or -1. */
static long shown_syscall(probe *pr)
{
    char path[64], buf[128];
    snprintf(path, sizeof path, "/proc/self/task/%u/syscall", (unsigned)atomic_load(&pr->os.id));
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long nr = -1;
    if (!fgets(buf, sizeof buf, f) || sscanf(buf, "%ld", &nr) != 1)
        nr = -1;
    fclose(f);
    return nr;
}

/* Whether /proc shows this architecture's system call numbers: under an
 * emulator (qemu-user) it shows the host's, which mean other calls. */
static int native_syscall_numbers(void)
{
    pthread_t th;
    probe pr;
    pr.kind = IN_SLEEP;
    atomic_store(&pr.ready, 0);
    CHECK_EQ(pthread_create(&th, NULL, blocker, &pr), 0);
    while (!atomic_load(&pr.ready))
        sched_yield();
    WAIT_UNTIL(up__os_thread_blocked(&pr.os) == 1, 10000);
    long nr = shown_syscall(&pr);
    pthread_join(th, NULL);
    int native = 0;
#if defined(SYS_nanosleep)
    native |= nr == SYS_nanosleep;
#endif
#if defined(SYS_clock_nanosleep)
    native |= nr == SYS_clock_nanosleep;
#endif
    return native;
}
#endif

int main(void)
{
    up__os_thread self;
    up__os_thread_self(&self);
    if (up__os_thread_blocked(&self) != 0) {
        printf("thread states are not visible here: skipped\n");
        return TEST_SKIP;
    }
#if !defined(__linux__)
    printf("only Linux tells the waits apart: skipped\n");
    return TEST_SKIP;
#else
    if (!native_syscall_numbers()) {
        printf("/proc shows system call numbers of another architecture (an emulator): "
               "skipped\n");
        return TEST_SKIP;
    }
    pthread_t th;
    probe pr;

    pthread_mutex_lock(&lock);
    CHECK_EQ(contended_while(IN_MUTEX, &th, &pr), 1);
    pthread_mutex_unlock(&lock);
    pthread_join(th, NULL);

    CHECK_EQ(contended_while(IN_COND, &th, &pr), 1);
    pthread_mutex_lock(&cond_lock);
    cond_done = 1;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&cond_lock);
    pthread_join(th, NULL);

    CHECK_EQ(pipe(pipe_fd), 0);
    CHECK_EQ(contended_while(IN_PIPE, &th, &pr), 0);
    CHECK_EQ(write(pipe_fd[1], "x", 1), 1);
    pthread_join(th, NULL);

    CHECK_EQ(contended_while(IN_SLEEP, &th, &pr), 0);
    pthread_join(th, NULL);

    CHECK_EQ(contended_while(SPINNING, &th, &pr), -1); /* not blocked at all */
    atomic_store(&stop_spin, 1);
    pthread_join(th, NULL);

    printf("mutex and condition variable waits read as the process's own, pipe and sleep "
           "waits do not, a running thread is not blocked\n");
    return 0;
#endif
}
