/* A thread outside the pool that waits on a group helps only while a CPU
 * is free of busy workers (group.c), but it must still make progress when
 * the busy workers are all blocked where the pool cannot see it and the
 * pool may not grow: here every worker of a capped pool blocks in read()
 * on a pipe, and the only task that writes to the pipe is queued behind
 * them in a group. The waiter runs it once the queue has not moved for
 * the stall time (100 ms); without that, this test hangs (a watchdog
 * fails it after 20 s). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <ultrapool/group.h>
#include <ultrapool/pool.h>

#include "check.h"
#include "pool_helpers.h"

static int fds[2];
static _Atomic unsigned readers_in, readers_done;
static unsigned nworkers;

static void reader(void *arg)
{
    (void)arg;
    atomic_fetch_add(&readers_in, 1);
    char c;
    CHECK_EQ(read(fds[0], &c, 1), 1);
    atomic_fetch_add(&readers_done, 1);
}

static int writer(void *arg)
{
    (void)arg;
    char bytes[64] = {0};
    CHECK_EQ(write(fds[1], bytes, nworkers), (ssize_t)nworkers);
    return 0;
}

static void *watchdog(void *arg)
{
    (void)arg;
    struct timespec ts = {20, 0};
    nanosleep(&ts, NULL);
    fprintf(stderr, "test_group_waiter: the group wait did not return in 20 s\n");
    abort();
}

int main(void)
{
    CHECK_EQ(pipe(fds), 0);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    nworkers = cpus > 0 && cpus < 32 ? (unsigned)cpus : 2;
    up_pool *p = test_fixed_pool(nworkers); /* the pool may not grow past them */
    up_pool_reserve(p, nworkers);
    for (unsigned i = 0; i < nworkers; i++)
        CHECK_EQ(up_submit(p, reader, NULL), UP_OK);
    WAIT_UNTIL(atomic_load(&readers_in) == nworkers, 10000);
    pthread_t dog;
    CHECK_EQ(pthread_create(&dog, NULL, watchdog, NULL), 0);
    up_group *g;
    CHECK_EQ(up_group_create(&g, p, 0), UP_OK);
    CHECK_EQ(up_group_go(g, writer, NULL), UP_OK);
    CHECK_EQ(up_group_wait(g), 0);
    CHECK_EQ(up_group_destroy(g), UP_OK);
    CHECK_EQ(up_pool_stop_and_wait(p), UP_OK);
    CHECK_EQ(atomic_load(&readers_done), nworkers);
    CHECK_EQ(up_pool_destroy(p), UP_OK);
    printf("test_group_waiter: %u blocked workers released by the waiter's help\n", nworkers);
    return 0;
}
