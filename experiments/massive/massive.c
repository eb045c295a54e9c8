/* massive: how many tasks can wait at once, and what each costs.
 *
 * Launches N tasks from one thread that all wait on one event, holds them,
 * releases them all and waits until every one has run, printing a status
 * line every second, an EXECUTION DELAY line whenever a 1 s ticker runs
 * more than 10 ms late, and the RSS each waiting task costs. Then it checks
 * that every task ran exactly once. The modes:
 *
 *   stackless  ultrapool continuations (up_submit_on): a record per task,
 *              no stack, no thread
 *   stackful   ultrapool tasks that call up_event_wait (they park on task
 *              stacks where the runtime supports it; the program says when
 *              they would block their thread instead, and skips)
 *   pthread    one thread per waiting task on a small stack, blocked on a
 *              condition variable; stops at the first pthread_create
 *              failure and says which kernel limit it met
 *
 * experiments/massive/massive.go is the same program with goroutines.
 * The last line, RESULT, carries the figures for the driver
 * (experiments/massive/massive_run.py). Exit status: 0 when every launched
 * task ran exactly once, 1 when one was lost, duplicated or cancelled,
 * 2 for bad options or too little memory, 77 when the mode cannot run in
 * this build. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "massive.h"

static const massive_mode *const modes[] = {&massive_stackless, &massive_stackful,
                                            &massive_pthread};

/* --- numbers as people read them ------------------------------------- */

/* 12345678 -> "12,345,678" (buf holds at least 32 bytes). */
static const char *count_str(char *buf, uint64_t v)
{
    char tmp[32];
    int len = snprintf(tmp, sizeof tmp, "%" PRIu64, v), o = 0;
    for (int i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = tmp[i];
    }
    buf[o] = 0;
    return buf;
}

static const char *bytes_str(char *buf, double b)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        u++;
    }
    snprintf(buf, 32, u ? "%.1f %s" : "%.0f %s", b, unit[u]);
    return buf;
}

/* Seconds as "12.3s" or "1m19s", like a stopwatch. */
static const char *secs_str(char *buf, double s)
{
    if (s < 60)
        snprintf(buf, 32, "%.1fs", s);
    else if (s < 3600)
        snprintf(buf, 32, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, 32, "%dh%02dm%02ds", (int)(s / 3600), (int)fmod(s / 60, 60),
                 (int)fmod(s, 60));
    return buf;
}

double massive_elapsed(const massive_run *run) { return (bench_now_ns() - run->t0) / 1e9; }

long long massive_read_number(const char *path)
{
    FILE *f = fopen(path, "r");
    long long v = -1;
    if (f) {
        if (fscanf(f, "%lld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

/* Lines from several threads (main, status, ticker) must not interleave. */
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

static void say(const massive_run *run, const char *fmt, ...)
{
    char when[32], text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&print_lock);
    printf("%8s %s\n", secs_str(when, massive_elapsed(run)), text);
    fflush(stdout);
    pthread_mutex_unlock(&print_lock);
}

/* --- memory ----------------------------------------------------------- */

static uint64_t rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, resident = 0;
    if (!f)
        return 0;
    if (fscanf(f, "%lu %lu", &size, &resident) != 2)
        resident = 0;
    fclose(f);
    return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* A field of /proc/meminfo in bytes, 0 when absent. */
static uint64_t meminfo(const char *field)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    size_t len = strlen(field);
    uint64_t kib = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, len) == 0 && line[len] == ':') {
            kib = strtoull(line + len + 1, NULL, 10);
            break;
        }
    fclose(f);
    return kib * 1024;
}

/* What the kernel spends on threads outside the process's RSS: their
 * kernel stacks and page tables (system-wide, so other processes add
 * noise). */
static uint64_t kernel_bytes(void) { return meminfo("KernelStack") + meminfo("PageTables"); }

int massive_memory_low(const massive_run *run, char *why, size_t why_size)
{
    uint64_t avail = meminfo("MemAvailable");
    char a[32], f[32];
    if (avail == 0 || avail >= run->mem_floor)
        return 0;
    snprintf(why, why_size, "memory: MemAvailable fell to %s, below the %s reserve",
             bytes_str(a, (double)avail), bytes_str(f, (double)run->mem_floor));
    return 1;
}

/* --- the ticker ------------------------------------------------------- */

/* The phases of a run; the status lines and the ticker read it. */
enum { PH_LAUNCH, PH_HOLD, PH_DRAIN, PH_DONE };
static _Atomic int phase = PH_LAUNCH;

/* The worst lateness is kept apart for the launch and hold (the pool has
 * nothing else to run) and for the drain (the tick waits behind released
 * tasks). */
static _Atomic uint64_t tick_prev_ns, tick_count, tick_late, tick_worst_ns[2];

void massive_ticker_start(massive_run *run)
{
    (void)run;
    atomic_store(&tick_prev_ns, bench_now_ns());
}

void massive_tick(massive_run *run)
{
    uint64_t now = bench_now_ns();
    uint64_t gap = now - atomic_exchange(&tick_prev_ns, now);
    atomic_fetch_add(&tick_count, 1);
    if (gap <= run->ticker_ns)
        return;
    int draining = atomic_load(&phase) >= PH_DRAIN;
    _Atomic uint64_t *w = &tick_worst_ns[draining];
    uint64_t late = gap - run->ticker_ns, worst = atomic_load(w);
    while (late > worst && !atomic_compare_exchange_weak(w, &worst, late)) {
    }
    if (late > 10 * 1000000u) {
        atomic_fetch_add(&tick_late, 1);
        say(run, "EXECUTION DELAY: %.3f s between ticks, expected %.3f s (%.0f ms late, %s)",
            gap / 1e9, run->ticker_ns / 1e9, late / 1e6, draining ? "drain" : "launch");
    }
}

/* --- status lines ----------------------------------------------------- */

/* Maxima: written by the status thread while it runs, by main after. */
static struct {
    uint64_t rss, waiting;
    double launch_rate, start_rate, exit_rate;
} peak;

static uint64_t started_now(massive_run *run)
{
    return run->started_is_launched ? atomic_load_explicit(&run->launched, memory_order_relaxed)
                                    : bench_done_sum(&run->started);
}

static void *status_main(void *arg)
{
    massive_run *run = arg;
    uint64_t next = run->t0 + run->status_ns, prev_t = run->t0;
    uint64_t prev_l = 0, prev_s = 0, prev_e = 0;
    char a[32], b[32], c[32], d[32], e[32], f[32];
    while (atomic_load(&phase) != PH_DONE) {
        uint64_t now = bench_now_ns();
        if (now < next) {
            uint64_t left = next - now;
            bench_sleep_ns(left < 20000000u ? left : 20000000u);
            continue;
        }
        next += run->status_ns;
        uint64_t l = atomic_load_explicit(&run->launched, memory_order_relaxed);
        uint64_t s = started_now(run), x = bench_done_sum(&run->exited), rss = rss_bytes();
        double dt = (now - prev_t) / 1e9;
        double lr = (l - prev_l) / dt, sr = (s - prev_s) / dt, xr = (x - prev_e) / dt;
        uint64_t waiting = s > x ? s - x : 0;
        peak.rss = rss > peak.rss ? rss : peak.rss;
        peak.waiting = waiting > peak.waiting ? waiting : peak.waiting;
        peak.launch_rate = fmax(peak.launch_rate, lr);
        peak.start_rate = fmax(peak.start_rate, sr);
        peak.exit_rate = fmax(peak.exit_rate, xr);
        if (atomic_load(&phase) == PH_DRAIN)
            say(run, "waiting: %s exited: %s exit-rate: %s/s rss: %s",
                count_str(a, l > x ? l - x : 0), count_str(b, x), count_str(c, (uint64_t)xr),
                bytes_str(d, (double)rss));
        else
            say(run,
                "waiting: %s launched: %s launch-rate: %s/s started: %s start-rate: %s/s rss: %s",
                count_str(a, waiting), count_str(b, l), count_str(c, (uint64_t)lr), count_str(d, s),
                count_str(e, (uint64_t)sr), bytes_str(f, (double)rss));
        prev_t = now;
        prev_l = l;
        prev_s = s;
        prev_e = x;
    }
    return NULL;
}

/* Polls until count() reaches target. Gives up when it has not moved for
 * stall_ns; returns the time it got there, or 0 when it gave up. */
static uint64_t wait_count(massive_run *run, int exited, uint64_t target, uint64_t stall_ns)
{
    uint64_t last = exited ? bench_done_sum(&run->exited) : started_now(run);
    uint64_t moved = bench_now_ns();
    for (;;) {
        uint64_t c = exited ? bench_done_sum(&run->exited) : started_now(run);
        uint64_t now = bench_now_ns();
        if (c >= target)
            return now;
        if (c != last) {
            last = c;
            moved = now;
        } else if (now - moved > stall_ns) {
            return 0;
        }
        bench_sleep_ns(200000);
    }
}

/* --- options ---------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: massive [--n N] [--mode stackless|stackful|pthread] [--ticker-ms MS]\n"
        "               [--status-ms MS] [--hold-ms MS] [--stall-s S] [--stack-kib K]\n"
        "               [--guard-kib K] [--pid-reserve N] [--reserve-mib M] [--probe] [--force]\n"
        "  --n N          tasks that wait, 1e7 or 10000000 [1e7; pthread: 1e5]\n"
        "  --mode M       stackless (up_submit_on), stackful (up_event_wait in a task), or\n"
        "                 pthread (a thread per task) [stackless]\n"
        "  --ticker-ms    period of the ticker task [1000]\n"
        "  --status-ms    period of the status lines [1000]\n"
        "  --hold-ms      how long the launched tasks are held before the release [1500]\n"
        "  --stall-s      give up when no task starts or exits for this long [60]\n"
        "  --stack-kib    pthread: stack of each thread [16, at least PTHREAD_STACK_MIN]\n"
        "  --guard-kib    pthread: guard area of each thread [the system's, one page]\n"
        "  --pid-reserve  pthread: thread ids left free for the rest of the machine, since\n"
        "                 kernel.pid_max, threads-max and RLIMIT_NPROC are shared by every\n"
        "                 process [the larger of 4096 and a quarter of the smallest; 0: run\n"
        "                 into the kernel's limit, on a machine of your own only]\n"
        "  --reserve-mib  stop launching when MemAvailable falls below this\n"
        "                 [the larger of 1 GiB and a tenth of MemTotal]\n"
        "  --probe        only say whether up_event_wait parks a task in this build\n"
        "  --force        run the stackful mode even where its calls block: each waiting\n"
        "                 task then holds a worker thread, so keep N below the worker caps\n");
}

static int bad(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "massive: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(massive --help lists the options)\n");
    return 2;
}

/* A whole number >= 1 written plainly or in scientific notation (1e8,
 * 2.5e6); at most 2^53, where doubles stop being exact. */
static int parse_count(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !(v >= 1) || v > 9007199254740992.0 || v != floor(v))
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int main(int argc, char **argv)
{
    static massive_run the_run;
    massive_run *run = &the_run;
    const massive_mode *mode = &massive_stackless;
    uint64_t ticker_ms = 1000, status_ms = 1000, hold_ms = 1500, stall_s = 60, stack_kib = 16;
    uint64_t guard_kib = 0, reserve_mib = 0, v = 0;
    int n_given = 0, guard_given = 0, pid_reserve_given = 0, probe_only = 0, force = 0;
    char a[32], b[32], c[32], d[32], why[768] = "";
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(o, "--probe")) {
            probe_only = 1;
            continue;
        }
        if (!strcmp(o, "--force")) {
            force = 1;
            continue;
        }
        if (i + 1 >= argc)
            return bad("%s needs a value", o);
        const char *val = argv[++i];
        if (!strcmp(o, "--mode")) {
            mode = NULL;
            for (size_t k = 0; k < sizeof modes / sizeof *modes; k++)
                if (!strcmp(val, modes[k]->name))
                    mode = modes[k];
            if (!mode)
                return bad("unknown mode '%s' (known: stackless, stackful, pthread)", val);
            continue;
        }
        /* Zero means something for these three: no guard, no reserve, no hold. */
        int zero_ok =
            !strcmp(o, "--guard-kib") || !strcmp(o, "--pid-reserve") || !strcmp(o, "--hold-ms");
        if (zero_ok && !strcmp(val, "0"))
            v = 0;
        else if (parse_count(val, &v))
            return bad("%s: a whole number >= %d (1e7 and 10000000 both work), not '%s'", o,
                       !zero_ok, val);
        if (!strcmp(o, "--n")) {
            run->n = v;
            n_given = 1;
        } else if (!strcmp(o, "--ticker-ms"))
            ticker_ms = v;
        else if (!strcmp(o, "--status-ms"))
            status_ms = v;
        else if (!strcmp(o, "--hold-ms"))
            hold_ms = v;
        else if (!strcmp(o, "--stall-s"))
            stall_s = v;
        else if (!strcmp(o, "--stack-kib"))
            stack_kib = v;
        else if (!strcmp(o, "--guard-kib")) {
            guard_kib = v;
            guard_given = 1;
        } else if (!strcmp(o, "--pid-reserve")) {
            run->pid_reserve = v;
            pid_reserve_given = 1;
        } else if (!strcmp(o, "--reserve-mib"))
            reserve_mib = v;
        else
            return bad("unknown option '%s'", o);
    }
    if (probe_only) {
        int parks = massive_stackful_parks(why, sizeof why);
        printf("stackful: %s: %s\n", parks ? "parks" : "blocks", why);
        return 0;
    }
    if (ticker_ms > 3600000 || status_ms > 3600000 || hold_ms > 3600000 || stall_s > 86400)
        return bad("a period above an hour (or --stall-s above a day) is surely a mistake");
    if (stack_kib > 1048576 || guard_kib > 1048576)
        return bad("--stack-kib and --guard-kib: at most 1048576 (1 GiB)");
    /* A thread per task is costly: without --n the pthread mode stops at
     * 100,000 threads, which already meets this VM's limits. */
    if (!n_given)
        run->n = mode == &massive_pthread ? 100000 : 10000000;
    run->ticker_ns = ticker_ms * 1000000u;
    run->status_ns = status_ms * 1000000u;
    run->hold_ns = hold_ms * 1000000u;
    long stack_min = sysconf(_SC_THREAD_STACK_MIN);
    run->stack_bytes = stack_kib * 1024;
    if (stack_min > 0 && run->stack_bytes < (size_t)stack_min)
        run->stack_bytes = (size_t)stack_min;
    run->guard_bytes = guard_given ? guard_kib * 1024 : (size_t)sysconf(_SC_PAGESIZE);
    if (!pid_reserve_given)
        run->pid_reserve = UINT64_MAX; /* the pthread mode's default */

    printf("massive %s: %s tasks waiting on one event, launched from one thread; "
           "ticker %" PRIu64 " ms, status every %" PRIu64 " ms\n",
           mode->name, count_str(a, run->n), ticker_ms, status_ms);
    if (!mode->available) {
        printf("massive %s: skipped: this build of ultrapool has no waiting tasks (up_event)\n",
               mode->name);
        printf("RESULT mode=%s n=%" PRIu64 " skipped=1 stop=\"this build has no up_event\"\n",
               mode->name, run->n);
        return 77;
    }
    if (mode != &massive_pthread) {
        int parks = massive_stackful_parks(why, sizeof why);
        printf("stackful calls %s: %s\n", parks ? "park" : "block", why);
        if (mode == &massive_stackful && !parks && !force) {
            printf("massive stackful: skipped: a waiting task would hold a thread each\n");
            printf("RESULT mode=stackful n=%" PRIu64 " skipped=1 stop=\"stackful calls block\"\n",
                   run->n);
            return 77;
        }
    }
    /* Refuse a run that cannot fit: N tasks at the mode's expected cost,
     * plus the one-byte check slot each, against what the machine has
     * available less the reserve that launching keeps anyway. */
    uint64_t total = meminfo("MemTotal"), avail = meminfo("MemAvailable");
    run->mem_floor = reserve_mib ? reserve_mib << 20 : total / 10;
    if (!reserve_mib && run->mem_floor < (1ull << 30))
        run->mem_floor = 1ull << 30;
    double per = mode->expected_bytes + 1;
    if (mode == &massive_pthread)
        per += (double)run->stack_bytes;
    double budget = avail > run->mem_floor ? (double)(avail - run->mem_floor) : 0;
    if (avail && run->n * per > budget) {
        double fit = budget / per, mag = fit >= 1 ? pow(10, floor(log10(fit))) : 1;
        fprintf(stderr,
                "massive: --n %s in mode %s needs about %s (%.0f bytes per task), more than the\n"
                "%s this machine can give (MemAvailable %s less a reserve of %s).\n"
                "Try --n %.0fe%.0f or less.\n",
                count_str(a, run->n), mode->name, bytes_str(b, run->n * per), per,
                bytes_str(c, budget), bytes_str(d, (double)avail),
                bytes_str(why, (double)run->mem_floor), floor(fit / mag), log10(mag));
        return 2;
    }
    /* The check array is touched now so that its pages are in the RSS
     * before the baseline is read, and do not count as the tasks' cost. */
    run->hits = malloc(run->n);
    if (!run->hits) {
        fprintf(stderr, "massive: no memory for the %s-byte check array\n", count_str(a, run->n));
        return 2;
    }
    memset((void *)run->hits, 0, run->n);
    bench_done_reset(&run->started);
    bench_done_reset(&run->exited);

    fflush(stdout);
    /* The clock of the status lines starts here, after the probe and the
     * check array, as the work does. */
    run->t0 = bench_now_ns();
    if (mode->setup(run, why, sizeof why) != 0) {
        fprintf(stderr, "massive %s: %s\n", mode->name, why);
        free((void *)run->hits);
        return 2;
    }
    pthread_t status;
    if (pthread_create(&status, NULL, status_main, run) != 0) {
        fprintf(stderr, "massive: cannot start the status thread\n");
        return 2;
    }
    say(run, "Launching %s tasks...", count_str(a, run->n));
    uint64_t rss0 = rss_bytes(), kern0 = kernel_bytes();
    uint64_t t_launch = bench_now_ns();
    why[0] = 0;
    uint64_t launched = mode->launch(run, why, sizeof why);
    uint64_t t_launched = bench_now_ns();
    uint64_t stall_ns = stall_s * 1000000000u, t_started = 0, t_set = 0, t_drained = 0;
    int ok = launched > 0;
    if (launched < run->n)
        say(run, "Launch stopped at %s of %s tasks: %s", count_str(a, launched),
            count_str(b, run->n), why[0] ? why : "no reason given");
    if (ok) {
        t_started = wait_count(run, 0, launched, stall_ns);
        if (!t_started) {
            say(run, "Gave up: no task reached its wait for %" PRIu64 " s", stall_s);
            ok = 0;
        }
    }
    uint64_t rss1 = rss_bytes(), kern1 = kernel_bytes();
    double per_task = launched ? ((double)rss1 - (double)rss0) / launched : 0;
    double kern_task = launched ? ((double)kern1 - (double)kern0) / launched : 0;
    double launch_s = (t_launched - t_launch) / 1e9;
    double start_s = t_started ? (t_started - t_launch) / 1e9 : 0;
    say(run, "Launch complete: %s tasks in %.3f s; all waiting after %.3f s",
        count_str(a, launched), launch_s, start_s);
    say(run,
        "Memory: RSS %s -> %s, %.1f bytes per waiting task (kernel stacks and page tables: "
        "%.1f bytes per task, system-wide)",
        bytes_str(b, (double)rss0), bytes_str(c, (double)rss1), per_task, kern_task);
    if (ok) {
        atomic_store(&phase, PH_HOLD);
        say(run, "Holding them for %.1f s (ticker events)", run->hold_ns / 1e9);
        bench_sleep_ns(run->hold_ns);
    }
    atomic_store(&phase, PH_DRAIN);
    say(run, "Releasing...");
    uint64_t t_release = bench_now_ns();
    mode->release(run);
    t_set = bench_now_ns();
    if (ok) {
        t_drained = wait_count(run, 1, launched, stall_ns);
        if (!t_drained)
            say(run, "Gave up: no task exited for %" PRIu64 " s", stall_s);
    }
    double release_s = (t_set - t_release) / 1e9;
    double drain_s = t_drained ? (t_drained - t_release) / 1e9 : 0;
    uint64_t exited = bench_done_sum(&run->exited);
    if (t_drained)
        say(run, "Drain complete: %s exited in %.3f s (the release call took %.3f s)",
            count_str(a, exited), drain_s, release_s);
    /* Tasks that never ran are counted now, before a teardown that may
     * release them as cancelled. */
    uint64_t lost = 0, dup = 0;
    if (!t_drained)
        for (uint64_t i = 0; i < launched; i++)
            lost += atomic_load_explicit(&run->hits[i], memory_order_relaxed) == 0;
    atomic_store(&phase, PH_DONE);
    pthread_join(status, NULL);
    mode->teardown(run);
    for (uint64_t i = 0; i < launched; i++) {
        unsigned h = atomic_load_explicit(&run->hits[i], memory_order_relaxed);
        if (t_drained)
            lost += h == 0;
        dup += h > 1;
    }
    /* Tasks beyond the launch count must not have run at all. */
    for (uint64_t i = launched; i < run->n; i++)
        dup += atomic_load_explicit(&run->hits[i], memory_order_relaxed) != 0;
    uint64_t panicked = atomic_load(&run->panicked);

    double launch_rate = launch_s > 0 ? launched / launch_s : 0;
    double start_rate = start_s > 0 ? launched / start_s : 0;
    double exit_rate = drain_s > 0 ? exited / drain_s : 0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    uint64_t maxrss = (uint64_t)ru.ru_maxrss * 1024;
    peak.rss = maxrss > peak.rss ? maxrss : peak.rss;
    peak.waiting = launched > peak.waiting && t_started ? launched : peak.waiting;
    peak.launch_rate = fmax(peak.launch_rate, launch_rate);
    peak.start_rate = fmax(peak.start_rate, start_rate);
    peak.exit_rate = fmax(peak.exit_rate, exit_rate);
    double worst_launch_ms = atomic_load(&tick_worst_ns[0]) / 1e6;
    double worst_drain_ms = atomic_load(&tick_worst_ns[1]) / 1e6;
    double worst_ms = fmax(worst_launch_ms, worst_drain_ms), total_s = massive_elapsed(run);
    char e[32], f[32];
    say(run,
        "Maxima observed: rss %s, waiting %s, launch-rate %s/s, start-rate %s/s, "
        "exit-rate %s/s, ticker late %.1f ms (launch and hold %.1f ms, drain %.1f ms)",
        bytes_str(a, (double)peak.rss), count_str(b, peak.waiting),
        count_str(c, (uint64_t)peak.launch_rate), count_str(d, (uint64_t)peak.start_rate),
        count_str(e, (uint64_t)peak.exit_rate), worst_ms, worst_launch_ms, worst_drain_ms);
    say(run,
        "launched: %s exited: %s ticks: %" PRIu64 " (%" PRIu64 " late) lost: %" PRIu64
        " duplicated: %" PRIu64 " panicked: %" PRIu64,
        count_str(a, launched), count_str(f, exited), atomic_load(&tick_count),
        atomic_load(&tick_late), lost, dup, panicked);
    free((void *)run->hits);
    int fail = lost || dup || panicked || !ok || !t_drained;
    say(run, "massive %s %s", mode->name, fail ? "FAILED" : "completed successfully");
    for (char *p = why; *p; p++)
        if (*p == '"')
            *p = '\'';
    printf("RESULT mode=%s n=%" PRIu64 " launched=%" PRIu64
           " bytes_per_task=%.1f kernel_bytes_per_task=%.1f launch_per_s=%.0f start_per_s=%.0f"
           " exit_per_s=%.0f launch_s=%.4f release_s=%.4f drain_s=%.4f worst_tick_ms=%.2f"
           " worst_tick_launch_ms=%.2f worst_tick_drain_ms=%.2f ticks=%" PRIu64
           " total_s=%.3f lost=%" PRIu64 " duplicated=%" PRIu64 " panicked=%" PRIu64
           " peak_rss_bytes=%" PRIu64 " stop=\"%s\"\n",
           mode->name, run->n, launched, per_task, kern_task, launch_rate, start_rate, exit_rate,
           launch_s, release_s, drain_s, worst_ms, worst_launch_ms, worst_drain_ms,
           atomic_load(&tick_count), total_s, lost, dup, panicked, peak.rss,
           launched < run->n ? why : "");
    return fail ? 1 : 0;
}
