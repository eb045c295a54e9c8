/* The runner for the peers that need nothing but C and their library:
 * ultrapool, GLib's GThreadPool, a thread per task, a thread per task under
 * a counting semaphore, the textbook mutex+condvar pool, and the
 * single-thread loop. See harness.h for the command line. GLib's peer is
 * built only where GLib was found (UP_HAVE_GLIB). */
#if defined(UP_HAVE_GLIB)
#include <glib.h>
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <ultrapool/pool.h>
#include <ultrapool/wait.h>

#include "harness.h"
#include "portable.h"
#include "textbook_pool.h"
#include "workloads.h"

/* ---- ultrapool: its defaults, as a user gets them ------------------------ */

static up_pool *up;

/* The -wait workloads sleep through the runtime's own wait, which parks
 * the task rather than its worker where the task runs on a task stack. */
static void up_wait(uint64_t ns)
{
    if (up_sleep_ns(ns) != UP_OK)
        abort();
}

static int up_init(unsigned submitters, unsigned cores)
{
    (void)submitters;
    (void)cores;
    workload_set_wait(up_wait);
    int rc = up_pool_create(&up, NULL);
    if (rc != UP_OK)
        fprintf(stderr, "up_pool_create: %s (%s)\n", up_strerror(rc), up_last_error());
    return rc;
}

static void up_submit_one(harness_fn fn, void *arg)
{
    if (up_submit_wait(up, fn, arg) != UP_OK)
        abort();
}

/* Before the pool goes: a line the driver merges into the run's record,
 * saying whether the tasks slept through up_sleep_ns and how many parked
 * tasks resumed (since the pool was created: warm-up included), which
 * tells a wait that parked its task from one that held its thread. */
static void up_fini(void)
{
    up_stats st;
    up_pool_stats(up, &st);
    printf("PEERSTATS {\"wait\":\"%s\",\"tasks_resumed\":%llu}\n",
           workload_waited() ? "up_sleep_ns" : "", (unsigned long long)st.tasks_resumed);
    up_pool_destroy(up);
}

/* The warm-up's books balanced: every accepted task (and resumption) has
 * been counted executed. Gives up after a second: the SDE check then says
 * what did not match. */
static void up_settle(void)
{
    for (int i = 0; i < 50000; i++) {
        up_stats st;
        up_pool_stats(up, &st);
        if (st.executed == st.submitted)
            return;
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
}

static unsigned up_peak(void)
{
    up_stats st;
    up_pool_stats(up, &st);
    return st.workers_peak;
}

static const char *tree_version(void) { return "this tree"; }

static const peer p_ultrapool = {.name = "ultrapool",
                                 .about = "ultrapool, default configuration, up_submit_wait",
                                 .init = up_init,
                                 .submit = up_submit_one,
                                 .fini = up_fini,
                                 .workers_peak = up_peak,
                                 .version = tree_version,
                                 .exports_sde = 1,
                                 .settle = up_settle};

/* ---- GLib's GThreadPool: one exclusive thread per core ------------------ */

#if defined(UP_HAVE_GLIB)

static GThreadPool *gpool;
/* Every submit of a run passes the same function; each submitter stores
 * it, so the stores are atomic (relaxed: the push publishes the task). */
static _Atomic(harness_fn) g_fn;
static char g_null_arg; /* stands for a NULL argument */

static void g_run(gpointer data, gpointer user)
{
    (void)user;
    harness_fn fn = atomic_load_explicit(&g_fn, memory_order_relaxed);
    fn(data == (gpointer)&g_null_arg ? NULL : data);
}

static int g_init(unsigned submitters, unsigned cores)
{
    (void)submitters;
    GError *err = NULL;
    gpool = g_thread_pool_new(g_run, NULL, (gint)cores, TRUE, &err);
    if (!gpool) {
        fprintf(stderr, "g_thread_pool_new: %s\n", err ? err->message : "?");
        return -1;
    }
    return 0;
}

/* GLib refuses NULL as a task's data, so a NULL argument travels as a
 * marker pointer. */
static void g_submit(harness_fn fn, void *arg)
{
    atomic_store_explicit(&g_fn, fn, memory_order_relaxed);
    g_thread_pool_push(gpool, arg ? arg : (gpointer)&g_null_arg, NULL);
}

static void g_fini(void) { g_thread_pool_free(gpool, FALSE, TRUE); }

static const char *g_version(void)
{
    static char v[32];
    snprintf(v, sizeof v, "%u.%u.%u", glib_major_version, glib_minor_version, glib_micro_version);
    return v;
}

static const peer p_glib = {.name = "glib",
                            .about = "GLib GThreadPool, exclusive, one thread per core",
                            .init = g_init,
                            .submit = g_submit,
                            .fini = g_fini,
                            .version = g_version};
#endif

/* ---- a thread per task, and the same under a counting semaphore ---------- */

/* The analogue of `go task()`: a detached thread per task with a small
 * stack. Creation that fails for lack of resources is retried after a
 * short sleep, as a program that must run every task would. */
typedef struct thread_task {
    harness_fn fn;
    void *arg;
} thread_task;

static pthread_attr_t small_stack;
static bench_sem limit;
static int limited;
static unsigned permits;

static void *thread_main(void *p)
{
    thread_task t = *(thread_task *)p;
    free(p);
    t.fn(t.arg);
    if (limited)
        bench_sem_post(&limit);
    return NULL;
}

static int threads_init(unsigned submitters, unsigned cores)
{
    (void)submitters;
    pthread_attr_init(&small_stack);
    pthread_attr_setdetachstate(&small_stack, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&small_stack, 256 * 1024);
    limited = 0;
    (void)cores;
    return 0;
}

static void thread_submit(harness_fn fn, void *arg)
{
    if (limited)
        bench_sem_wait(&limit);
    thread_task *t = malloc(sizeof *t);
    if (!t)
        abort();
    *t = (thread_task){fn, arg};
    pthread_t th;
    while (pthread_create(&th, &small_stack, thread_main, t) != 0) {
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
    }
}

/* Detached threads cannot be joined. Their tasks have all been counted;
 * under the semaphore, taking every permit back also waits for the last
 * sem_post, so the semaphore is not destroyed under a thread using it. */
static void threads_fini(void)
{
    if (limited) {
        for (unsigned i = 0; i < permits; i++)
            bench_sem_wait(&limit);
        bench_sem_destroy(&limit);
        limited = 0;
    }
    pthread_attr_destroy(&small_stack);
}

/* The counting semaphore holds as many permits as there are cores: the
 * limit the article on bounded parallelism recommends for CPU-bound work. */
static int sem_init_peer(unsigned submitters, unsigned cores)
{
    threads_init(submitters, cores);
    if (bench_sem_init(&limit, cores) != 0)
        return -1;
    permits = cores;
    limited = 1;
    return 0;
}

static const char *no_version(void) { return ""; }

static const peer p_thread = {.name = "thread",
                              .about = "a detached pthread per task",
                              .init = threads_init,
                              .submit = thread_submit,
                              .fini = threads_fini,
                              .version = no_version};
static const peer p_thread_sem = {.name = "thread-sem",
                                  .about = "a pthread per task, at most one per core (semaphore)",
                                  .init = sem_init_peer,
                                  .submit = thread_submit,
                                  .fini = threads_fini,
                                  .version = no_version};

/* ---- the textbook pool: one mutex, two condition variables -------------- */

static tb_pool *tb;

static int tb_init(unsigned submitters, unsigned cores)
{
    (void)submitters;
    tb = tb_pool_create(cores, 1024);
    return tb ? 0 : -1;
}

static void tb_submit_one(harness_fn fn, void *arg) { tb_submit(tb, fn, arg); }

static void tb_fini(void) { tb_pool_destroy(tb); }

static const peer p_textbook = {.name = "textbook",
                                .about =
                                    "mutex + 2 condvars around a 1024-slot ring, a worker per core",
                                .init = tb_init,
                                .submit = tb_submit_one,
                                .fini = tb_fini,
                                .version = no_version};

/* ---- the loop: every task on one thread, the limit for CPU-bound work ---- */

static int loop_init(unsigned submitters, unsigned cores)
{
    (void)submitters;
    (void)cores;
    return 0;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void loop_run(uint64_t tasks, unsigned submitters, harness_fn fn, uint64_t *t0)
{
    (void)submitters;
    *t0 = now_ns();
    for (uint64_t i = 0; i < tasks; i++)
        fn(NULL);
}

static void loop_fini(void) {}

static const peer p_loop = {.name = "loop",
                            .about = "every task in a loop on one thread (the limit)",
                            .s_independent = 1,
                            .init = loop_init,
                            .run_all = loop_run,
                            .fini = loop_fini,
                            .version = no_version};

/* ---- inline: each submitter runs its own share, no runtime at all ------- */

/* With S no larger than the CPUs this is the most any scheduler can get
 * from S producing threads: the machine's own parallel limit (two vCPUs
 * that share a core or a host deliver less than twice the loop). */
static int inline_init(unsigned submitters, unsigned cores)
{
    (void)submitters;
    (void)cores;
    return 0;
}

static void inline_submit(harness_fn fn, void *arg) { fn(arg); }

static const peer p_inline = {
    .name = "inline",
    .about = "each submitter runs its own tasks in a loop (the S-thread limit)",
    .init = inline_init,
    .submit = inline_submit,
    .fini = loop_fini,
    .version = no_version};

int main(int argc, char **argv)
{
    static const peer *const peers[] = {
        &p_ultrapool,
#if defined(UP_HAVE_GLIB)
        &p_glib,
#endif
        &p_thread,
        &p_thread_sem,
        &p_textbook,
        &p_loop,
        &p_inline
    };
    return harness_main(argc, argv, "bench_c", peers, sizeof peers / sizeof peers[0]);
}
