/* Workers short of task stacks still start queued tasks in the end. The
 * program's own mmap stands in for the C library's and refuses every
 * chunk of task stacks after the first (os/stack_pool.c maps them in
 * chunks), so that a few parked tasks hold every stack. Then:
 *
 * 1. Twelve tasks wait on an event that only a queued task sets: the
 *    workers, holding no spare stack, leave the queue, and after a while
 *    without a stack they start the setter anyway (wait.h).
 * 2. The same with a task that polls (sleeps in a loop, resuming again and
 *    again without giving its stack back): the setter runs all the same.
 *    Before the fallback counted time without a stack rather than time
 *    without a resume, the poller kept the setter queued for good.
 *
 * Linux only (the stand-in relies on the shared library calling the
 * program's mmap); skipped (77) elsewhere and under sanitizers, which
 * intercept mmap themselves. */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <ultrapool/wait.h>

#include "check.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UP_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UP_TEST_SANITIZED 1
#endif

#if defined(__linux__) && !defined(UP_TEST_SANITIZED)
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static _Atomic int stack_chunks;

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if ((flags & MAP_STACK) && (flags & MAP_NORESERVE) && atomic_fetch_add(&stack_chunks, 1) >= 1)
        return MAP_FAILED;
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

#define MS UINT64_C(1000000)
static _Atomic int go, setter_ran, holders_done, polls;
static up_event *ev;

static void poller(void *arg)
{
    (void)arg;
    while (!atomic_load(&go)) {
        CHECK_EQ(up_sleep_ns(20 * MS), UP_OK);
        atomic_fetch_add(&polls, 1);
    }
}

static void holder(void *arg)
{
    (void)arg;
    CHECK_EQ(up_event_wait(ev), UP_OK);
    atomic_fetch_add(&holders_done, 1);
}

static void setter(void *arg)
{
    (void)arg;
    atomic_store(&setter_ran, 1);
    atomic_store(&go, 1);
    CHECK_EQ(up_event_set(ev), UP_OK);
}

static void run(int with_poller)
{
    atomic_store(&stack_chunks, 0); /* this pool's first chunk */
    atomic_store(&go, 0);
    atomic_store(&setter_ran, 0);
    atomic_store(&holders_done, 0);
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = 1;
    cfg.shard_min_workers = 1;
    cfg.stack_size = 64 * 1024;
    up_pool *p;
    CHECK_EQ(up_pool_create(&p, &cfg), UP_OK);
    CHECK_EQ(up_event_create(&ev, p), UP_OK);
    if (with_poller) {
        CHECK_EQ(up_submit(p, poller, NULL), UP_OK);
        test_sleep_ms(50);
    }
    for (int i = 0; i < 12; i++)
        CHECK_EQ(up_submit(p, holder, NULL), UP_OK);
    CHECK_EQ(up_submit(p, setter, NULL), UP_OK);
    uint64_t t0 = test_now_ns();
    WAIT_UNTIL(atomic_load(&holders_done) == 12, 30000);
    up_stats st;
    up_pool_stats(p, &st);
    printf("%s: the setter ran after %.0f ms, %d of 12 waiters done, %d polls, "
           "%llu resumes\n",
           with_poller ? "with a poller" : "no poller", (double)(test_now_ns() - t0) / 1e6,
           atomic_load(&holders_done), atomic_load(&polls), (unsigned long long)st.tasks_resumed);
    CHECK_EQ(atomic_load(&setter_ran), 1);
    CHECK_EQ(atomic_load(&holders_done), 12);
    /* Some waiters parked (the stacks ran short, which is the case here). */
    CHECK_GE(st.tasks_resumed, 2);
    up_pool_stop_and_wait(p);
    up_event_destroy(ev);
    up_pool_destroy(p);
}

int main(void)
{
    run(0);
    run(1);
    return 0;
}
#else
int main(void)
{
    printf("needs Linux and a build without sanitizers\n");
    return TEST_SKIP;
}
#endif
