/* The OS layer (os.h). Everything here that differs by system sits in one
 * small #if block with a portable fallback; the rest is plain POSIX. */
#include "os/os.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#if defined(__linux__)
#include <fcntl.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#elif defined(__APPLE__)
#include <crt_externs.h>
#include <mach/mach.h>
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
#if defined(CLOCK_PROCESS_CPUTIME_ID)
    /* Finer than getrusage; still, Linux brings other running threads'
     * times up to date only at their ticks, so short windows are noise. */
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u +
           (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u;
}

void up__os_thread_self(up__os_thread *t)
{
    uint32_t id = 0;
#if defined(__linux__)
    id = (uint32_t)syscall(SYS_gettid);
#elif defined(__APPLE__)
    id = (uint32_t)pthread_mach_thread_np(pthread_self());
#endif
    up__store_release(&t->id, id);
}

void up__os_name_self(const char *name)
{
#if defined(__linux__)
    char short_name[16];
    snprintf(short_name, sizeof short_name, "%s", name); /* Linux keeps 15 */
    pthread_setname_np(pthread_self(), short_name);
#elif defined(__APPLE__)
    pthread_setname_np(name);
#else
    (void)name;
#endif
}

#if defined(__linux__)
/* Reads /proc/self/task/TID/<file> of thread t into buf (NUL-terminated);
 * the length read, or -1 (no id yet, no such file). */
static ssize_t read_task_file(const up__os_thread *t, const char *file, char *buf, size_t size)
{
    uint32_t id = up__load_acquire(&t->id);
    if (id == 0)
        return -1;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%u/%s", (unsigned)id, file);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    return n;
}
#endif

int up__os_thread_blocked(const up__os_thread *t)
{
#if defined(__linux__)
    char buf[256];
    if (read_task_file(t, "stat", buf, sizeof buf) < 0)
        return -1;
    /* "tid (comm) S ...": the name may hold spaces and parentheses, so the
     * state is the letter after the last ')'. */
    const char *close_paren = strrchr(buf, ')');
    if (!close_paren || close_paren[1] != ' ')
        return -1;
    switch (close_paren[2]) {
    case 'R':
        return 0;
    case 'S': /* interruptible sleep: futex, nanosleep, poll, pipe read */
    case 'D': /* uninterruptible: disk, some network file systems */
        return 1;
    default: /* stopped, traced, exiting: no reason for another worker */
        return -1;
    }
#elif defined(__APPLE__)
    uint32_t id = up__load_acquire(&t->id);
    if (id == 0)
        return -1;
    thread_basic_info_data_t info;
    mach_msg_type_number_t count = THREAD_BASIC_INFO_COUNT;
    if (thread_info((thread_act_t)id, THREAD_BASIC_INFO, (thread_info_t)&info, &count) !=
        KERN_SUCCESS)
        return -1;
    if (info.run_state == TH_STATE_RUNNING)
        return 0;
    return info.run_state == TH_STATE_WAITING || info.run_state == TH_STATE_UNINTERRUPTIBLE ? 1
                                                                                            : -1;
#else
    (void)t;
    return -1;
#endif
}

#if defined(__linux__)
/* The system calls whose wait is, most likely, for this process's own
 * threads: the futex, and the memory-map calls that take the
 * address-space lock (munmap and mprotect to write, madvise to read,
 * behind a writer). Each number only where the architecture has it. */
static int contended_syscall(long nr)
{
    switch (nr) {
#if defined(SYS_futex)
    case SYS_futex:
#endif
#if defined(SYS_futex_time64)
    case SYS_futex_time64:
#endif
#if defined(SYS_futex_waitv)
    case SYS_futex_waitv:
#endif
#if defined(SYS_mmap)
    case SYS_mmap:
#endif
#if defined(SYS_mmap2)
    case SYS_mmap2:
#endif
#if defined(SYS_munmap)
    case SYS_munmap:
#endif
#if defined(SYS_mprotect)
    case SYS_mprotect:
#endif
#if defined(SYS_madvise)
    case SYS_madvise:
#endif
#if defined(SYS_brk)
    case SYS_brk:
#endif
#if defined(SYS_mremap)
    case SYS_mremap:
#endif
        return 1;
    default:
        return 0;
    }
}
#endif

int up__os_thread_contended(const up__os_thread *t)
{
#if defined(__linux__)
    char buf[128];
    if (read_task_file(t, "syscall", buf, sizeof buf) < 0)
        return 0;
    /* "running", "-1 sp pc" (blocked outside a system call: a page fault,
     * which may wait for a disk as well as for a lock, so not counted), or
     * "nr args... sp pc". */
    if (strncmp(buf, "running", 7) == 0)
        return -1;
    if (buf[0] < '0' || buf[0] > '9')
        return 0;
    return contended_syscall(strtol(buf, NULL, 10));
#else
    (void)t;
    return 0;
#endif
}

int up__os_thread_times(const up__os_thread *t, uint64_t *run, uint64_t *wait)
{
#if defined(__linux__)
    char buf[96];
    if (read_task_file(t, "schedstat", buf, sizeof buf) < 0)
        return -1;
    unsigned long long r, w;
    if (sscanf(buf, "%llu %llu", &r, &w) != 2)
        return -1;
    *run = r;
    *wait = w;
    return 0;
#else
    (void)t;
    (void)run;
    (void)wait;
    return -1;
#endif
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

void *up__os_map(size_t bytes)
{
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return m == MAP_FAILED ? NULL : m;
}

void up__os_unmap(void *addr, size_t bytes) { munmap(addr, bytes); }

#if defined(__APPLE__)
char **up__os_environ(void) { return *_NSGetEnviron(); }
#else
extern char **environ;
char **up__os_environ(void) { return environ; }
#endif
