/* wait_bench: the cost of stackless waiting tasks in one small run.
 *
 *   wait_bench [--n N] [--workers W]
 *
 * Launches N tasks (default 1e7) from this one thread with up_submit_on on
 * one event and reports the launch rate, the resident memory per waiting
 * task (RSS delta / N, from /proc/self/statm), the time up_event_set takes
 * (it only detaches the list) and the time until every task has run
 * (release and drain), then up_submit_after with a delay of 2 s each: the
 * launch rate and how late the last task ran. A 100 ms ticker (a periodic
 * timer of the same pool) runs throughout and reports its worst delay.
 * Each task counts itself; the run fails if any is lost or doubled. The
 * full experiment with status lines, a ticker and peers is
 * experiments/massive. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ultrapool/wait.h>

static _Atomic uint64_t ran;

static void task(void *arg)
{
    (void)arg;
    atomic_fetch_add_explicit(&ran, 1, memory_order_relaxed);
}

/* A ticker every 100 ms during the whole run: how late its runs start
 * (modulo the period, so a skipped run shows as a skip, not a delay). */
#define TICK_NS 100000000ull
static uint64_t tick_first_ns;
static _Atomic uint64_t tick_worst_ns, ticks;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void on_tick(void *arg)
{
    (void)arg;
    uint64_t late = (now_ns() - tick_first_ns) % TICK_NS;
    if (late > atomic_load(&tick_worst_ns))
        atomic_store(&tick_worst_ns, late);
    atomic_fetch_add(&ticks, 1);
}

/* The ticker's worst delay since the last call, in ms, then reset. */
static double tick_phase_ms(void) { return (double)atomic_exchange(&tick_worst_ns, 0) / 1e6; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return -1;
    unsigned long size, resident;
    int ok = fscanf(f, "%lu %lu", &size, &resident) == 2;
    fclose(f);
    return ok ? (double)resident * (double)sysconf(_SC_PAGESIZE) : -1;
}

static void wait_ran(uint64_t n)
{
    while (atomic_load(&ran) < n) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

int main(int argc, char **argv)
{
    uint64_t n = 10000000;
    unsigned workers = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--n") && i + 1 < argc)
            n = (uint64_t)strtod(argv[++i], NULL);
        else if (!strcmp(argv[i], "--workers") && i + 1 < argc)
            workers = (unsigned)atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--n N] [--workers W]\n", argv[0]);
            return 2;
        }
    }
    up_config cfg;
    up_config_init(&cfg);
    if (workers) {
        cfg.shard_min_workers = workers;
        cfg.shard_max_workers = workers;
    }
    up_pool *p;
    int rc = up_pool_create(&p, &cfg);
    if (rc != UP_OK) {
        fprintf(stderr, "pool: %s\n", up_strerror(rc));
        return 1;
    }
    up_event *ev;
    up_event_create(&ev, p);
    up_timer *ticker;
    tick_first_ns = now_ns() + TICK_NS;
    up_timer_start(&ticker, p, TICK_NS, TICK_NS, on_tick, NULL);

    /* Stackless on one event. */
    double rss0 = rss_bytes(), t0 = now_s();
    for (uint64_t i = 0; i < n; i++)
        if ((rc = up_submit_on(p, ev, task, NULL)) != UP_OK) {
            fprintf(stderr, "submit_on: %s after %llu\n", up_strerror(rc), (unsigned long long)i);
            return 1;
        }
    double t1 = now_s(), rss1 = rss_bytes(), tick_launch = tick_phase_ms();
    up_stats st;
    up_pool_stats(p, &st);
    up_event_set(ev);
    double t2 = now_s();
    wait_ran(n);
    double t3 = now_s();
    printf("submit_on   n=%llu launch %.2f M/s  rss/task %.1f B  waiting %llu  set %.3f ms  "
           "release+drain %.3f s (%.2f M/s)  ticker late %.2f ms launching, %.2f ms draining\n",
           (unsigned long long)n, (double)n / (t1 - t0) / 1e6, (rss1 - rss0) / (double)n,
           (unsigned long long)st.waiting, (t2 - t1) * 1e3, t3 - t2, (double)n / (t3 - t2) / 1e6,
           tick_launch, tick_phase_ms());

    /* Again, with warm slabs: records are reused. */
    up_event_reset(ev);
    t0 = now_s();
    for (uint64_t i = 0; i < n; i++)
        up_submit_on(p, ev, task, NULL);
    t1 = now_s();
    double rss2 = rss_bytes();
    tick_launch = tick_phase_ms();
    up_event_set(ev);
    t2 = now_s();
    wait_ran(2 * n);
    t3 = now_s();
    printf("submit_on   warm      launch %.2f M/s  rss growth/task %.1f B  release+drain %.3f s  "
           "ticker late %.2f ms launching, %.2f ms draining\n",
           (double)n / (t1 - t0) / 1e6, (rss2 - rss1) / (double)n, t3 - t2, tick_launch,
           tick_phase_ms());

    /* Stackless on the timer wheel: each due 2 s after its launch. */
    const double delay = 2.0;
    t0 = now_s();
    for (uint64_t i = 0; i < n; i++)
        up_submit_after(p, (uint64_t)(delay * 1e9), task, NULL);
    t1 = now_s();
    tick_launch = tick_phase_ms();
    wait_ran(3 * n);
    t3 = now_s();
    printf("submit_after n=%llu launch %.2f M/s  the last ran %.3f s after its deadline  "
           "ticker late %.2f ms launching, %.2f ms expiring\n",
           (unsigned long long)n, (double)n / (t1 - t0) / 1e6, t3 - (t1 + delay), tick_launch,
           tick_phase_ms());

    uint64_t skipped = up_timer_skipped(ticker);
    up_timer_stop(ticker);
    printf("ticker (100 ms): %llu runs, %llu skipped\n", (unsigned long long)atomic_load(&ticks),
           (unsigned long long)skipped);
    up_pool_stop_and_wait(p);
    up_pool_stats(p, &st);
    printf("stats: submitted %llu executed %llu released %llu waiting %llu workers_peak %u\n",
           (unsigned long long)st.submitted, (unsigned long long)st.executed,
           (unsigned long long)st.released, (unsigned long long)st.waiting, st.workers_peak);
    int bad = atomic_load(&ran) != 3 * n;
    up_event_destroy(ev);
    up_pool_destroy(p);
    if (bad)
        fprintf(stderr, "LOST OR DUPLICATED: ran %llu of %llu\n",
                (unsigned long long)atomic_load(&ran), (unsigned long long)(3 * n));
    return bad;
}
