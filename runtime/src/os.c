/* The OS layer (os.h). Everything here that differs by system sits in one
 * small #if block with a portable fallback; the rest is plain POSIX. */
#include "os.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/resource.h>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "clock.h"

size_t up__os_default_stack_size(void)
{
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return 0;
    size_t size = 0;
    pthread_attr_getstacksize(&attr, &size);
    pthread_attr_destroy(&attr);
    return size;
}

size_t up__os_stack_size(void)
{
#if defined(__APPLE__)
    return pthread_get_stacksize_np(pthread_self());
#elif defined(__linux__)
    if (getpid() == (pid_t)syscall(SYS_gettid)) {
        /* The main thread's stack grows up to the soft limit. */
        struct rlimit rl;
        if (getrlimit(RLIMIT_STACK, &rl) != 0)
            return 0;
        return rl.rlim_cur == RLIM_INFINITY ? SIZE_MAX : (size_t)rl.rlim_cur;
    }
    return up__os_default_stack_size();
#else
    return 0;
#endif
}

int up__os_current_cpu(void)
{
#if defined(__linux__)
    return sched_getcpu(); /* vDSO on x86-64 and AArch64: a few ns */
#else
    return -1; /* macOS has no public call for it */
#endif
}

uint64_t up__os_process_cpu_ns(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
           (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u;
}

void up__os_block_signals(sigset_t *old, int keep_faults)
{
    sigset_t set;
    sigfillset(&set);
    if (keep_faults) {
        sigdelset(&set, SIGSEGV);
        sigdelset(&set, SIGBUS);
        sigdelset(&set, SIGFPE);
        sigdelset(&set, SIGILL);
    }
    pthread_sigmask(SIG_SETMASK, &set, old);
}

void up__os_restore_signals(const sigset_t *old) { pthread_sigmask(SIG_SETMASK, old, NULL); }

#if defined(__linux__)
void up__os_futex_wait(_Atomic uint32_t *addr, uint32_t expected, uint64_t timeout_ns)
{
    /* FUTEX_WAIT takes a relative timeout; private: the words are never
     * shared with another process. */
    struct timespec ts, *tsp = NULL;
    if (timeout_ns != UINT64_MAX) {
        ts = up__timespec_from_ns(timeout_ns);
        tsp = &ts;
    }
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, expected, tsp, NULL, 0);
}

void up__os_futex_wake(_Atomic uint32_t *addr, int n)
{
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}
#endif
