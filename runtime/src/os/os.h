/* The runtime's one OS layer: what differs between Linux, macOS and other
 * POSIX systems, behind plain functions (os.c), so the core files carry no
 * #ifdef. Each function says what it returns where the OS offers nothing.
 * None of them is on a per-task path: the CPU id is cached by its caller,
 * the rest run per thread start, per monitor look or per sleep. */
#ifndef UP_OS_H
#define UP_OS_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "atomic.h"

/* Size in bytes of the calling thread's stack, found without allocating
 * (it is asked on the first help of a thread, which may be inside a
 * submit): the main thread's from its resource limit on Linux, another
 * thread's exactly on macOS and as the default size of a new thread on
 * Linux (glibc's pthread_getattr_np allocates, so a thread started with a
 * smaller stack than the default is taken to have the default); 0 when
 * the OS does not say. */
size_t up__os_stack_size(void);

/* The stack size pthread_create gives a thread without attributes, 0 when
 * unknown. */
size_t up__os_default_stack_size(void);

/* The CPU the calling thread runs on now, -1 where the OS cannot say
 * (then callers spread by thread instead). */
int up__os_current_cpu(void);

/* CPU time the whole process has used (user + system), in nanoseconds; 0
 * when unavailable. The monitor compares it with wall time to see whether
 * the process left CPU time unused. */
uint64_t up__os_process_cpu_ns(void);

/* Who a thread is, for asking the OS later whether it is blocked: its
 * kernel thread id on Linux, its Mach port on macOS, nothing elsewhere.
 * Set by the thread itself (up__os_thread_self), read by any thread. */
typedef struct up__os_thread {
    _Atomic uint32_t id; /* 0: unknown */
} up__os_thread;

void up__os_thread_self(up__os_thread *t);

/* Names the calling thread (at most 15 characters are kept), for top,
 * ps -L, gdb and perf; does nothing where threads have no names. */
void up__os_name_self(const char *name);

/* Whether thread t is blocked in the kernel right now (sleeping, waiting
 * on I/O, a lock or a futex): 1 blocked, 0 runnable (running, or ready and
 * waiting for a CPU, as a thread preempted by other load is), -1 when the
 * OS does not say (another system, /proc not mounted, a thread that has
 * exited). Linux reads the state letter of /proc/self/task/TID/stat, a few
 * microseconds; macOS asks thread_info for the thread's run state. */
int up__os_thread_blocked(const up__os_thread *t);

/* Whether thread t, blocked now, waits on something this process holds
 * rather than on the outside world: 1 when it sleeps in a futex (a
 * mutex, a condition variable, a semaphore; one shared with another
 * process counts too, which the OS cannot tell apart) or in a
 * memory-map call that waits for the address-space lock (mmap, munmap,
 * mprotect, madvise, brk, mremap, as malloc makes when it trims); 0 for
 * any other wait (I/O, a sleep, poll, a page fault) and where the OS does
 * not say; -1 when it is not blocked after all (it woke since its state
 * was read). Linux reads /proc/self/task/TID/syscall: a few microseconds,
 * more when the kernel must wait for the thread to leave its CPU (it
 * looks at a thread only while it is off its CPU); elsewhere 0. */
int up__os_thread_contended(const up__os_thread *t);

/* What thread t has done since it started: nanoseconds on a CPU (*run)
 * and runnable but waiting for one (*wait). Over an interval, the time in
 * neither was time blocked. 0, or -1 where the OS does not say (Linux
 * reads /proc/self/task/TID/schedstat, a few microseconds; elsewhere, or
 * without schedstat, -1: then up__os_thread_blocked is all there is). */
int up__os_thread_times(const up__os_thread *t, uint64_t *run, uint64_t *wait);

/* Blocks signals in the calling thread, saving the previous mask in *old:
 * every signal, or with keep_faults, every asynchronous one, leaving the
 * synchronous faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL) deliverable, since
 * blocking those makes a fault kill the process without its handler. A
 * thread created meanwhile inherits the mask: the runtime's threads leave
 * the application's signals to the application's threads. */
void up__os_block_signals(sigset_t *old, int keep_faults);
void up__os_restore_signals(const sigset_t *old);

/* Futex words (Linux only; park.c's park word is their one user, with
 * a condition variable on the other systems). Waits while *addr == expected, at most
 * timeout_ns (UINT64_MAX: no limit); returns early on a wake, a signal or
 * spuriously, so callers re-check in a loop. Wake wakes up to n waiters. */
void up__os_futex_wait(_Atomic uint32_t *addr, uint32_t expected, uint64_t timeout_ns);
void up__os_futex_wake(_Atomic uint32_t *addr, int n);

/* Zero-filled memory straight from the OS, readable and writable, and its
 * return (bytes: the size mapped). NULL when the OS refuses. */
void *up__os_map(size_t bytes);
void up__os_unmap(void *addr, size_t bytes);

/* The process's environment, as `environ` holds it (a shared library on
 * macOS cannot refer to environ itself). */
char **up__os_environ(void);

#endif
