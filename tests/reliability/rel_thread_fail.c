/* Reliability 9: thread creation fails. pthread_create is wrapped at link
 * time (-Wl,--wrap=pthread_create) so it can fail at its k-th call after
 * arming, for k = 1..K, or always. The pool keeps working while at least
 * one worker lives, refuses to be created (UP_EAGAIN) when none can start,
 * never hangs, and stop always completes. Then the same through the
 * kernel: a child process, made an unprivileged user when run as root
 * (root ignores the limit), runs under RLIMIT_NPROC. */
#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ultrapool/pool.h>

#include "check.h"
#include "counted.h"

int __real_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static _Atomic int armed, fail_at, fail_always, calls, failures;

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
    if (atomic_load(&armed)) {
        int n = atomic_fetch_add(&calls, 1) + 1;
        if (atomic_load(&fail_always) || n == atomic_load(&fail_at)) {
            atomic_fetch_add(&failures, 1);
            return EAGAIN;
        }
    }
    return __real_pthread_create(t, a, fn, arg);
}

static void arm(int k, int always)
{
    atomic_store(&calls, 0);
    atomic_store(&fail_at, k);
    atomic_store(&fail_always, always);
    atomic_store(&armed, 1);
}

/* Creates a pool, runs n tasks through it, stops it. Returns create's rc. */
static int exercise(int n, unsigned *workers_out)
{
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = 2;
    cfg.shard_min_workers = 2;
    cfg.shard_max_workers = 4;
    up_pool *p;
    int rc = up_pool_create(&p, &cfg);
    if (rc != UP_OK)
        return rc;
    atomic_store(&counted_ran, 0);
    for (int i = 0; i < n; i++)
        CHECK_EQ(up_submit_wait(p, counted_task, NULL), UP_OK);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    CHECK_EQ(atomic_load(&counted_ran), n);
    up_stats st;
    up_pool_stats(p, &st);
    *workers_out = (unsigned)st.spawned;
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    return UP_OK;
}

/* In a child: limit the process count, then try. Exit 0 on the expected
 * outcome. */
static int limited_child(rlim_t limit, int expect_ok)
{
    pid_t pid = fork();
    CHECK_GE(pid, 0);
    if (pid == 0) {
        alarm(60); /* a hang kills the child, and the parent sees it */
        atomic_store(&armed, 0);
        if (geteuid() == 0) {
            struct passwd *pw = getpwnam("nobody");
            uid_t uid = pw ? pw->pw_uid : 65534;
            gid_t gid = pw ? pw->pw_gid : 65534;
            if (setgid(gid) != 0 || setuid(uid) != 0)
                _exit(3);
        }
        struct rlimit rl = {limit, limit};
        if (setrlimit(RLIMIT_NPROC, &rl) != 0)
            _exit(4);
        unsigned workers = 0;
        int rc = exercise(200, &workers);
        if (expect_ok)
            _exit(rc == UP_OK ? 0 : 5);
        _exit(rc == UP_EAGAIN ? 0 : 6);
    }
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status));
    return WEXITSTATUS(status);
}

int main(void)
{
    int K = (int)test_size("UP_TEST_FAIL_K", 12);
    int degraded = 0;
    for (int k = 1; k <= K; k++) {
        arm(k, 0);
        unsigned workers = 0;
        int rc = exercise(500, &workers);
        atomic_store(&armed, 0);
        CHECK_EQ(rc, UP_OK); /* one failure among several threads: degraded, working */
        if (k <= atomic_load(&calls))
            degraded++;
    }
    arm(0, 1);
    unsigned w = 0;
    int always = exercise(10, &w);
    atomic_store(&armed, 0);
    CHECK_EQ(always, UP_EAGAIN); /* nobody can start: refused, no hang */
    /* A floor of zero needs no thread to be created, but a submit then
     * does: refused with UP_EAGAIN, not accepted and left to rot. */
    up_config cfg;
    up_config_init(&cfg);
    cfg.shard_min_workers = 0;
    up_pool *p;
    arm(0, 1);
    CHECK_EQ(up_pool_create(&p, &cfg), UP_OK);
    CHECK_EQ(up_submit(p, counted_task, NULL), UP_EAGAIN);
    CHECK_EQ(up_submit_wait(p, counted_task, NULL), UP_EAGAIN);
    atomic_store(&armed, 0);
    CHECK_EQ(up_submit_wait(p, counted_task, NULL), UP_OK); /* threads again: works */
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    int injected = atomic_load(&failures);

    /* The kernel's thread limit, as an unprivileged user. A child process
     * with a limit of 1 has no room for a thread; with a few it degrades. */
    int rc_none = limited_child(1, 0);
    int rc_some = limited_child(4, 1);
    printf("figure: pthread_create failed at call k for k = 1..%d (%d runs degraded, all tasks "
           "ran) and always (create refused with UP_EAGAIN); %d failures injected; "
           "RLIMIT_NPROC 1 -> refused (exit %d), 4 -> degraded and working (exit %d); hangs 0\n",
           K, degraded, injected, rc_none, rc_some);
    CHECK_GT(degraded, 0);
    CHECK_EQ(rc_none, 0);
    CHECK_EQ(rc_some, 0);
    return 0;
}
