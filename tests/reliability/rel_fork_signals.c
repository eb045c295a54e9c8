/* Reliability 13: fork and signals. A process forks while its pool is busy
 * and while it is idle; the child (one thread, whatever the parent's pool
 * was doing) creates and uses a new pool within a bound, or gets an error,
 * and never hangs (the parent kills it after the bound and fails). Then a
 * workload runs with SIGALRM delivered every 100 us to the process: no
 * call fails, no task is lost. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ultrapool/pool.h>

#include "check.h"
#include "counted.h"

/* ThreadSanitizer's runtime (clang 14 and GCC 12 here) can deadlock on
 * itself when a signal lands on a thread inside pthread_join: glibc frees
 * the joined thread's TLS from inside the intercepted join, the signal is
 * handled synchronously there while the free holds TSan's slot lock, and
 * the handler takes the same lock (google/sanitizers#1540; this test hung
 * once in a CI run with exactly that stack). Under TSan, then, the timer's
 * signals go only to the submitter threads, which never join: the main
 * thread blocks SIGALRM while it joins and stops the pool, and the pool
 * does not retire workers (a spawn into a retired worker's slot joins the
 * old thread, and a submitter can spawn). Other builds signal every thread
 * that does not block it, the main thread's joins included. */
#if defined(UP_TSAN_BUILD) /* set by cmake/Sanitize.cmake */
#define UNDER_TSAN 1
#else
#define UNDER_TSAN 0
#endif

static int fork_and_use(void)
{
    pid_t pid = fork();
    CHECK_GE(pid, 0);
    if (pid == 0) {
        up_pool *p;
        int rc = up_pool_create(&p, NULL);
        if (rc != UP_OK)
            _exit(10); /* an error is an acceptable answer */
        atomic_store(&counted_ran, 0);
        for (int i = 0; i < 1000; i++)
            if (up_submit_wait(p, counted_task, NULL) != UP_OK)
                _exit(2);
        if (up_pool_destroy(p) != UP_OK || atomic_load(&counted_ran) != 1000)
            _exit(3);
        _exit(0);
    }
    uint64_t deadline = test_now_ns() + 10000000000ull; /* 10 s */
    int status = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            break;
        CHECK_EQ(r, 0);
        if (test_now_ns() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            fprintf(stderr, "child hung after fork\n");
            CHECK(0);
        }
        test_sleep_ms(2);
    }
    CHECK(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static _Atomic uint64_t signals;
static void on_alarm(int sig)
{
    (void)sig;
    atomic_fetch_add(&signals, 1);
}

static void *submitter(void *arg)
{
    up_pool *p = arg;
    for (int i = 0; i < 20000; i++) {
        int rc = up_submit_wait(p, i % 100 ? counted_task : counted_slow_task, NULL);
        CHECK_EQ(rc, UP_OK);
    }
    return NULL;
}

int main(void)
{
    up_pool *p;
    CHECK_EQ(up_pool_create(&p, NULL), UP_OK);
    int forks = (int)test_size("UP_TEST_FORKS", 20), ok = 0, errors = 0, busy = 0;
    pthread_t th[2];
#if !defined(UP_SANITIZER_BUILD)
    /* Busy: submitters keep the pool working while we fork. (Skipped in
     * sanitizer builds: ThreadSanitizer refuses to start threads in the
     * child of a multithreaded fork, and clang 14's AddressSanitizer
     * allocator can be left locked in such a child.) The idle forks below
     * run everywhere. */
    busy = 1;
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, submitter, p);
    for (int f = 0; f < forks; f++) {
        int rc = fork_and_use();
        CHECK(rc == 0 || rc == 10);
        rc == 0 ? ok++ : errors++;
    }
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
#endif
    /* Idle: stopped, and then with no pool at all. */
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    for (int f = 0; f < forks; f++) {
        int rc = fork_and_use();
        CHECK(rc == 0 || rc == 10);
        rc == 0 ? ok++ : errors++;
    }

    /* Signals every 100 us through a whole workload. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART: interrupted calls see EINTR */
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 100}, {0, 100}};
    setitimer(ITIMER_REAL, &it, NULL);
    up_config cfg;
    CHECK_EQ(up_config_init(&cfg), UP_OK);
    if (UNDER_TSAN)
        cfg.idle_timeout_ns = 3600ull * 1000000000ull; /* no retirement: see the top */
    CHECK_EQ(up_pool_create(&p, &cfg), UP_OK);
    atomic_store(&counted_ran, 0);
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, submitter, p);
    sigset_t alarm_only, old_mask;
    sigemptyset(&alarm_only);
    sigaddset(&alarm_only, SIGALRM);
    if (UNDER_TSAN) /* after the submitters started: they inherit an open mask */
        pthread_sigmask(SIG_BLOCK, &alarm_only, &old_mask);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    if (UNDER_TSAN)
        pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    CHECK_EQ(atomic_load(&counted_ran), 40000);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    printf("figure: %d forks (%s): %d children used a new pool, %d got an error, hangs 0; "
           "%llu signals during 40000 tasks (%s), lost 0\n",
           ok + errors, busy ? "busy and idle" : "sanitizer build: idle only", ok, errors,
           (unsigned long long)atomic_load(&signals),
           UNDER_TSAN ? "ThreadSanitizer: to the submitters only"
                      : "to the main and submitter threads");
    CHECK_GT(atomic_load(&signals), 10);
    return 0;
}
