/* massive --mode stackless|stackful: the waiting tasks on ultrapool.
 *
 * stackless: each task is a continuation queued on the event with
 * up_submit_on; it waits from the moment it is accepted and costs one
 * record, no stack and no thread.
 * stackful: each task is submitted normally and calls up_event_wait; on a
 * pool whose tasks run on task stacks it parks, so the worker goes on
 * with the next one.
 *
 * The ticker is a periodic timer of the same pool (up_timer_start), so
 * its lateness says how long a due task waits behind the others. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ultrapool/pool.h>
#include <ultrapool/wait.h>

#include "massive.h"
#include "os/stack_pool.h"

static massive_run *the_run;
static up_pool *pool;
static up_event *ev;
static up_timer *timer;

static void on_tick(void *arg) { massive_tick(arg); }

static int setup(massive_run *run, char *why, size_t why_size)
{
    the_run = run;
    /* The launching thread only sleeps when the queue is full: a
     * submitter that helps would run a stackful task itself, and that
     * task's up_event_wait would block the launcher, which is the thread
     * that later sets the event (wait.h: such a call blocks its thread). */
    up_config cfg;
    int rc = up_config_init(&cfg);
    cfg.submit_help = 0;
    if (rc == UP_OK)
        rc = up_pool_create(&pool, &cfg);
    if (rc == UP_OK)
        rc = up_event_create(&ev, pool);
    if (rc == UP_OK) {
        massive_ticker_start(run);
        rc = up_timer_start(&timer, pool, run->ticker_ns, run->ticker_ns, on_tick, run);
    }
    if (rc != UP_OK)
        snprintf(why, why_size, "cannot set up the pool, its event and its ticker: %s",
                 up_strerror(rc));
    return rc == UP_OK ? 0 : -1;
}

/* What a task does once released: a cancelled run would mean the pool let
 * it go without its event, which this experiment never asks for. */
static void finish(uintptr_t i, int wait_rc)
{
    if (wait_rc != UP_OK || up_cancelled())
        atomic_fetch_add(&the_run->panicked, 1);
    atomic_fetch_add_explicit(&the_run->hits[i], 1, memory_order_relaxed);
    bench_done_add(&the_run->exited);
}

static void stackless_task(void *arg) { finish((uintptr_t)arg, UP_OK); }

static uint64_t stackless_launch(massive_run *run, char *why, size_t why_size)
{
    uint64_t i;
    run->started_is_launched = 1;
    for (i = 0; i < run->n; i++) {
        if ((i & 65535) == 0 && massive_memory_low(run, why, why_size))
            break;
        int rc = up_submit_on(pool, ev, stackless_task, (void *)(uintptr_t)i);
        if (rc != UP_OK) {
            snprintf(why, why_size, "up_submit_on: %s", up_strerror(rc));
            break;
        }
        atomic_store_explicit(&run->launched, i + 1, memory_order_relaxed);
    }
    return i;
}

static void stackful_task(void *arg)
{
    bench_done_add(&the_run->started);
    int rc = up_event_wait(ev);
    finish((uintptr_t)arg, rc);
}

/* Parked tasks that this process can hold: each keeps a guarded stack,
 * one or two kernel mappings, and the pool maps at most
 * (vm.max_map_count - 4096) / (1 or 2) of them (<ultrapool/wait.h>; its
 * own count, up__stack_guarded_budget), less one spare per worker and a
 * few for the ticker's runs. Tasks launched beyond it could only wait
 * in the queue for stacks that none of them gives back before the
 * release, so the launch stops there and says what to set. UINT64_MAX
 * where the limit cannot be read. */
static uint64_t stack_budget(void)
{
    size_t n = up__stack_guarded_budget(); /* the pool's own, os/stack_pool.c */
    if (n == SIZE_MAX)
        return UINT64_MAX;
    return n > 256 ? (uint64_t)(n - 256) : 0;
}

static uint64_t stackful_launch(massive_run *run, char *why, size_t why_size)
{
    uint64_t i, budget = stack_budget();
    for (i = 0; i < run->n; i++) {
        if (i == budget) {
            snprintf(why, why_size,
                     "%" PRIu64 " parked tasks use the guarded stacks that vm.max_map_count %lld "
                     "allows; for N set sysctl vm.max_map_count=%sN+4096 or more",
                     budget, massive_read_number("/proc/sys/vm/max_map_count"),
                     up__stack_maps_per_stack() == 1 ? "" : "2*");
            break;
        }
        if ((i & 4095) == 0 && massive_memory_low(run, why, why_size))
            break;
        int rc = up_submit_wait(pool, stackful_task, (void *)(uintptr_t)i);
        if (rc != UP_OK) {
            snprintf(why, why_size, "up_submit_wait: %s", up_strerror(rc));
            break;
        }
        atomic_store_explicit(&run->launched, i + 1, memory_order_relaxed);
    }
    return i;
}

static void release(massive_run *run)
{
    (void)run;
    up_event_set(ev);
}

static void teardown(massive_run *run)
{
    (void)run;
    up_timer_stop(timer);
    up_pool_stop_and_wait(pool);
    up_event_destroy(ev);
    up_pool_destroy(pool);
}

/* The bounds: 64 bytes per continuation, 8 KiB per parked task
 * (the memory check doubles neither; launching also stops at the
 * reserve). */
const massive_mode massive_stackless = {.name = "stackless",
                                        .available = 1,
                                        .expected_bytes = 64,
                                        .setup = setup,
                                        .launch = stackless_launch,
                                        .release = release,
                                        .teardown = teardown};
const massive_mode massive_stackful = {.name = "stackful",
                                       .available = 1,
                                       .expected_bytes = 8 * 1024 + 64,
                                       .setup = setup,
                                       .launch = stackful_launch,
                                       .release = release,
                                       .teardown = teardown};

/* The probe: a one-worker pool runs task A, which waits on an event, and
 * then task B, which sets it. If A parks, the worker runs B and A resumes;
 * if A blocks the thread, B cannot run until the probe sets the event
 * itself after a second. */
static up_event *probe_ev;
static _Atomic int a_started, a_done, a_rc, b_ran;

static void probe_a(void *arg)
{
    (void)arg;
    atomic_store(&a_started, 1);
    atomic_store(&a_rc, up_event_wait(probe_ev));
    atomic_store(&a_done, 1);
}

static void probe_b(void *arg)
{
    (void)arg;
    atomic_store(&b_ran, 1);
    up_event_set(probe_ev);
}

int massive_stackful_parks(char *what, size_t what_size)
{
    up_config cfg;
    up_pool *p;
    up_config_init(&cfg);
    cfg.shards = 1;
    cfg.shard_min_workers = 1;
    cfg.shard_max_workers = 1;
    cfg.max_workers = 1;
    if (up_pool_create(&p, &cfg) != UP_OK || up_event_create(&probe_ev, p) != UP_OK) {
        snprintf(what, what_size, "the probe could not create its pool or event");
        return 0;
    }
    int parks = 0, rc = up_submit(p, probe_a, NULL);
    uint64_t give_up = bench_now_ns() + 1000000000u;
    while (rc == UP_OK && !atomic_load(&a_started) && bench_now_ns() < give_up)
        bench_sleep_ns(100000);
    if (rc == UP_OK && atomic_load(&a_started))
        rc = up_submit(p, probe_b, NULL);
    while (rc == UP_OK && !atomic_load(&a_done) && bench_now_ns() < give_up)
        bench_sleep_ns(100000);
    if (rc != UP_OK || !atomic_load(&a_started)) {
        snprintf(what, what_size, "the probe's tasks did not run (%s)", up_strerror(rc));
    } else if (!atomic_load(&a_done)) {
        snprintf(what, what_size,
                 "a task in up_event_wait kept the only worker of a one-worker pool from running "
                 "the task that sets its event");
        up_event_set(probe_ev);
    } else if (atomic_load(&a_rc) != UP_OK) {
        snprintf(what, what_size, "up_event_wait returned '%s' inside a pool task",
                 up_strerror(atomic_load(&a_rc)));
    } else if (atomic_load(&b_ran)) {
        parks = 1;
        snprintf(what, what_size,
                 "a task in up_event_wait let the only worker of a one-worker pool run the task "
                 "that sets its event");
    } else {
        snprintf(what, what_size, "up_event_wait returned before its event was set");
    }
    up_pool_stop_and_wait(p);
    up_event_destroy(probe_ev);
    up_pool_destroy(p);
    return parks;
}
