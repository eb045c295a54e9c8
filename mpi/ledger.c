/* The farm's window: chunk counter, stop word, heartbeats (ledger.h), and
 * the three ways a dead rank gets reported: by its watcher when its
 * heartbeat stops, from the SIGTERM a launcher sends when it ends the job
 * first, or by the watchdog of a rank whose own calls it keeps from
 * returning. */
#include "ledger.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "up_layer.h" /* up__set_error, up__now_ns */

enum {
    COUNTER = 0,
    STOP = 1,
    BEAT = 2,
    STATE = 3,
    HELD = 4, /* up__ledger_held, word by word */
    WORDS = HELD + sizeof(up__ledger_held) / sizeof(uint64_t)
};
enum { WATCHED_WORDS = WORDS - BEAT };
_Static_assert(sizeof(up__ledger_held) == 5 * sizeof(uint64_t), "held chunks are five words");

int up__mpi_error(const char *what, int code)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", code);
    up__set_error("%s: %s", what, text);
    return UP_EINVAL;
}

/* What the SIGTERM handler prints: the last view of the watched rank,
 * kept in lock-free atomics because a handler may run on any thread at
 * any point. active is 0 outside a farm. */
static struct {
    atomic_int active;
    atomic_int rank, watched;
    atomic_uint_fast64_t heard_ns, n;
    atomic_uint_fast64_t held[5]; /* its held chunks' words, as last read */
} view;
static struct sigaction previous_term;
static int handler_users; /* (handler_lock) */
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
/* The handler reads 64-bit atomics: only lock-free ones are safe there. */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "the SIGTERM report needs lock-free 64-bit atomics");

/* Async-signal-safe decimal formatting for the handler. */
static size_t put_u64(char *out, uint64_t v)
{
    char digits[20];
    size_t k = 0, i;
    do {
        digits[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (i = 0; i < k; i++)
        out[i] = digits[k - 1 - i];
    return k;
}

static size_t put_str(char *out, const char *s)
{
    size_t k = strlen(s);
    memcpy(out, s, k);
    return k;
}

static size_t put_range(char *out, uint64_t begin, uint64_t end)
{
    size_t k = put_str(out, "[");
    k += put_u64(out + k, begin);
    k += put_str(out + k, ", ");
    k += put_u64(out + k, end);
    return k + put_str(out + k, ")");
}

/* "holding no chunk", "holding chunk [a, b)", "holding chunks [a, b) and
 * [c, d)" or "holding several chunks, the first [a, b) and the last
 * [c, d)", then " of [0, n)": what a rank's held words (up__ledger_held)
 * say; an empty or torn range names nothing. Async-signal-safe, for every
 * report; out needs HELD_TEXT_MAX bytes. */
enum { HELD_TEXT_MAX = 200 }; /* the longest form with 20-digit numbers is 169 bytes */
static size_t held_text(char *out, const uint64_t held[5], uint64_t n)
{
    size_t k = put_str(out, "holding ");
    bool first = held[0] < held[1], last = held[2] < held[3];
    if (first && last && held[0] == held[2])
        last = false;
    if (!first && !last)
        k += put_str(out + k, "no chunk");
    else if (first != last)
        k += put_str(out + k, "chunk ");
    else
        k += put_str(out + k, held[4] ? "several chunks, the first " : "chunks ");
    if (first)
        k += put_range(out + k, held[0], held[1]);
    if (first && last)
        k += put_str(out + k, held[4] ? " and the last " : " and ");
    if (last)
        k += put_range(out + k, held[2], held[3]);
    if (first && last && held[4])
        k += put_str(out + k, ",");
    k += put_str(out + k, " of [0, ");
    k += put_u64(out + k, n);
    k += put_str(out + k, ")");
    out[k] = '\0';
    return k;
}

/* The view's chunks, copied word by word. */
static void view_held(uint64_t held[5])
{
    for (int i = 0; i < 5; i++)
        held[i] = up__load_seqcst(&view.held[i]);
}

static void on_term(int sig)
{
    int saved_errno = errno;
    char buf[160 + HELD_TEXT_MAX]; /* 150 bytes before the chunks at most */
    size_t k = 0;
    if (up__load_seqcst(&view.active)) {
        k += put_str(buf + k, "ultrapool mpi: rank ");
        k += put_u64(buf + k, (uint64_t)up__load_seqcst(&view.rank));
        k += put_str(buf + k, " terminated by the launcher during a farm");
        int w = up__load_seqcst(&view.watched);
        if (w >= 0) {
            uint64_t quiet_ms = (up__now_ns() - up__load_seqcst(&view.heard_ns)) / 1000000u;
            k += put_str(buf + k, "; rank ");
            k += put_u64(buf + k, (uint64_t)w);
            k += put_str(buf + k, " last heard ");
            k += put_u64(buf + k, quiet_ms);
            k += put_str(buf + k, " ms ago, ");
            uint64_t held[5];
            view_held(held);
            k += held_text(buf + k, held, up__load_seqcst(&view.n));
        }
        k += put_str(buf + k, "\n");
        ssize_t ignored = write(2, buf, k);
        (void)ignored;
    }
    /* Then what would have happened without us. */
    sigaction(SIGTERM, &previous_term, NULL);
    raise(sig);
    errno = saved_errno;
}

/* Installed while any farm of the process runs (farms on different
 * communicators may overlap; the report then describes the one opened
 * last), under a lock so that an install racing the last remove never
 * saves on_term itself as the previous handler. */
static void handler_install(void)
{
    pthread_mutex_lock(&handler_lock);
    if (handler_users++ == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_term;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, &previous_term);
    }
    pthread_mutex_unlock(&handler_lock);
}

static void handler_remove(void)
{
    pthread_mutex_lock(&handler_lock);
    if (--handler_users == 0) {
        up__store_seqcst(&view.active, 0);
        sigaction(SIGTERM, &previous_term, NULL);
    }
    pthread_mutex_unlock(&handler_lock);
}

/* Set by the first report of the process (claim_report); never cleared:
 * the job is ending. */
static atomic_int reported;

int up__ledger_claim_report(void) { return up__exchange_seqcst(&reported, 1) == 0; }

/* Ends the job after a report. The SIGTERM report is switched off first:
 * the launcher's SIGTERM that follows would otherwise add a line saying
 * the launcher ended this rank. An MPI may return from MPI_Abort: then
 * this rank ends on its own, which its launcher treats as a failed job. */
void up__ledger_abort(up__ledger *l, int code)
{
    up__store_seqcst(&view.active, 0);
    MPI_Abort(l->comm, code);
    _exit(code);
}

/* The watchdog. A rank's calls on the window can depend on another rank
 * being alive: Open MPI's one-sided components (osc/sm, osc/rdma) guard
 * each rank's words with a spin lock held during every atomic operation on
 * them, and software RMA (osc/pt2pt) needs the target inside MPI. A rank stopped
 * while it holds such a lock (SIGSTOP, a debugger, a frozen node) keeps it,
 * and the next call of every other rank on those words never returns:
 * grabs spin on rank 0's counter, so no tick comes, no heartbeat is read
 * and the watcher reports nothing. So each rank's farm has a thread that
 * makes no MPI call while the farm runs: it times the calling thread's
 * ledger calls, and one that has lasted the silence limit is reported,
 * with the rank's last view of the rank it watches, and the job aborted.
 * That MPI_Abort comes from a thread other than the funneled one, the
 * single call made outside the thread level: the job is lost either way,
 * and Open MPI ends it from any thread. */
static void call_begin(up__ledger *l)
{
    uint64_t now = up__now_ns();
    up__store_relaxed(&l->call_since_ns, now ? now : 1);
}

static void call_end(up__ledger *l) { up__store_relaxed(&l->call_since_ns, 0); }

static void report_stuck(up__ledger *l, uint64_t stuck_ns)
{
    if (!up__ledger_claim_report())
        return;
    char watch[96 + HELD_TEXT_MAX] = "", held[HELD_TEXT_MAX];
    int w = up__load_seqcst(&view.watched);
    if (w >= 0 && up__load_seqcst(&view.rank) == l->rank) {
        uint64_t chunks[5];
        view_held(chunks);
        held_text(held, chunks, l->n);
        snprintf(watch, sizeof watch,
                 "; it can no longer watch rank %d, last heard %llu ms ago, %s", w,
                 (unsigned long long)((up__now_ns() - up__load_seqcst(&view.heard_ns)) / 1000000u),
                 held);
    }
    fprintf(stderr,
            "ultrapool mpi: rank %d: a call on the farm's window has not returned for %.1f s "
            "(another rank may be stopped inside one, holding a lock it needs)%s; rank %d "
            "aborts the job\n",
            l->rank, (double)stuck_ns / 1e9, watch, l->rank);
    fflush(stderr);
    up__ledger_abort(l, 70);
}

static int send_beat(up__ledger *l);

/* Before the calling thread stops beating to end the job: its watcher
 * must not report that silence as a second death. */
static void publish_aborting(up__ledger *l)
{
    l->noted[0] = UP__LEDGER_ABORTING;
    call_begin(l);
    if (send_beat(l) == MPI_SUCCESS)
        MPI_Win_flush(l->rank, l->win);
    call_end(l);
}

/* The watched rank's process has ended (its pid is gone from this node).
 * Open MPI's mpirun ends the whole job about a second after one rank
 * dies, with a SIGTERM that a loaded rank may not get to handle before the
 * SIGKILL that follows it, and the heartbeat takes as long. So the death
 * is reported at the watcher's next tick after the launcher reaps the
 * process, with the chunks that tick read (a rank publishes a chunk
 * before its lanes may start it), while every survivor still runs; by the
 * watchdog when the calling thread is stuck in a call, with the chunks
 * its last tick read, which the report then says ("last seen holding"):
 * the dead rank may have taken others since. */
static void report_gone(up__ledger *l, bool calling_thread)
{
    if (!up__ledger_claim_report())
        return;
    if (calling_thread)
        publish_aborting(l);
    char last[64 + HELD_TEXT_MAX] = "", held[HELD_TEXT_MAX];
    if (up__load_seqcst(&view.rank) == l->rank) {
        uint64_t chunks[5];
        view_held(chunks);
        held_text(held, chunks, l->n);
        snprintf(last, sizeof last, ", last heard %llu ms ago, %s%s",
                 (unsigned long long)((up__now_ns() - up__load_seqcst(&view.heard_ns)) / 1000000u),
                 calling_thread ? "" : "last seen ", held);
    }
    fprintf(stderr,
            "ultrapool mpi: rank %d died during a farm (its process %ld on this node has "
            "ended)%s; rank %d aborts the job\n",
            l->watched, (long)l->watched_pid, last, l->rank);
    fflush(stderr);
    up__ledger_abort(l, 70);
}

/* Whether the watched rank's process has ended: no such pid, or (Linux)
 * a zombie that its launcher has not reaped yet, which on a loaded
 * machine can take longer than the launcher's whole teardown. */
static bool watched_gone(const up__ledger *l)
{
    if (l->watched_pid <= 0)
        return false;
    if (kill(l->watched_pid, 0) != 0)
        return errno == ESRCH;
#if defined(__linux__)
    char path[64], stat[256];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)l->watched_pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t got = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[got] = '\0';
    /* "pid (comm) S ...": the state follows the last ')'. */
    const char *paren = strrchr(stat, ')');
    return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
#else
    return false;
#endif
}

/* A call counts as stuck only for the time this thread saw pass while it
 * woke every period: a rank that was itself stopped (SIGSTOP, a debugger)
 * or starved of CPU for longer than half the silence finds, on waking, a
 * call that merely could not run, and starts counting again. */
static void *watchdog(void *arg)
{
    up__ledger *l = arg;
    uint64_t last = up__now_ns(), awake_since = last, alive_at = last;
    pthread_mutex_lock(&l->dog_lock);
    while (!l->dog_quit) {
        struct timespec ts = up__realtime_after(l->period_ns);
        pthread_cond_timedwait(&l->dog_wake, &l->dog_lock, &ts);
        uint64_t since = up__load_relaxed(&l->call_since_ns);
        uint64_t now = up__now_ns();
        if (now - last > l->period_ns + l->silence_ns / 2)
            awake_since = now;
        last = now;
        if (since != 0 && since < awake_since)
            since = awake_since;
        /* The calling thread reports a death at its tick, unless it is
         * stuck in a call that began after the watched rank was last seen
         * alive (on a lock the dead rank held). A rank that ends after
         * this one's call got stuck is more likely ending the job after
         * the same hang: the stuck call is reported instead. */
        bool gone = l->watched_pid > 0 && watched_gone(l);
        if (!gone)
            alive_at = now;
        else if (!l->dog_quit && since != 0 && since >= alive_at && now - since >= l->period_ns)
            report_gone(l, false);
        if (!l->dog_quit && since != 0 && now > since && now - since >= l->silence_ns)
            report_stuck(l, now - since);
    }
    pthread_mutex_unlock(&l->dog_lock);
    return NULL;
}

/* Without a thread for it the farm still runs, saying so on stderr: only
 * this rare hang then goes unreported. */
static void watchdog_start(up__ledger *l)
{
    up__store_relaxed(&l->call_since_ns, 0);
    l->dog_quit = 0;
    l->dog_running = 0;
    if (l->size < 2)
        return;
    pthread_mutex_init(&l->dog_lock, NULL);
    pthread_cond_init(&l->dog_wake, NULL);
    if (pthread_create(&l->dog, NULL, watchdog, l) == 0) {
        l->dog_running = 1;
        return;
    }
    fprintf(stderr,
            "ultrapool mpi: rank %d: no thread for the farm's watchdog; a rank stopped inside "
            "an MPI call would hang this farm instead of ending the job\n",
            l->rank);
    pthread_cond_destroy(&l->dog_wake);
    pthread_mutex_destroy(&l->dog_lock);
}

static void watchdog_stop(up__ledger *l)
{
    if (!l->dog_running)
        return;
    pthread_mutex_lock(&l->dog_lock);
    l->dog_quit = 1;
    pthread_cond_signal(&l->dog_wake);
    pthread_mutex_unlock(&l->dog_lock);
    pthread_join(l->dog, NULL);
    pthread_cond_destroy(&l->dog_wake);
    pthread_mutex_destroy(&l->dog_lock);
    l->dog_running = 0;
}

static int put_word(up__ledger *l, int target, int word, uint64_t value)
{
    return MPI_Accumulate(&value, 1, MPI_UINT64_T, target, word, 1, MPI_UINT64_T, MPI_REPLACE,
                          l->win);
}

/* This process's node: its host name and, on Linux, its PID namespace
 * (containers on one host may share a name, not their pids). */
static uint64_t node_id(void)
{
    char name[256] = "";
    gethostname(name, sizeof name - 1);
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (const char *c = name; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211u;
    struct stat st;
    if (stat("/proc/self/ns/pid", &st) == 0)
        h = (h ^ (uint64_t)st.st_ino) * 1099511628211u;
    return h;
}

/* Each rank learns the pid of the rank it watches when that rank runs on
 * its node, and keeps it only if it can see it now (the rank is alive and
 * in the farm): the watchdog then checks that the process still exists.
 * The two messages are received here, before the farm starts. */
static int learn_watched_pid(up__ledger *l)
{
    uint64_t mine[2] = {node_id(), (uint64_t)getpid()}, theirs[2] = {0, 0};
    int watcher = (l->rank + l->size - 1) % l->size;
    int rc = MPI_Sendrecv(mine, 2, MPI_UINT64_T, watcher, 0, theirs, 2, MPI_UINT64_T, l->watched, 0,
                          l->comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        return rc;
    pid_t pid = (pid_t)theirs[1];
    if (theirs[0] == mine[0] && pid > 0 && pid != getpid() && (kill(pid, 0) == 0 || errno == EPERM))
        l->watched_pid = pid;
    return MPI_SUCCESS;
}

int up__ledger_open(up__ledger *l, MPI_Comm comm, uint64_t n, uint64_t silence_ns)
{
    memset(l, 0, sizeof *l);
    l->comm = comm;
    l->n = n;
    l->silence_ns = silence_ns;
    l->period_ns = silence_ns / 4 < 100000000u ? silence_ns / 4 : 100000000u;
    if (l->period_ns < 1000000u)
        l->period_ns = 1000000u;
    MPI_Comm_rank(comm, &l->rank);
    MPI_Comm_size(comm, &l->size);
    int rc = MPI_Win_allocate((MPI_Aint)(WORDS * sizeof(uint64_t)), (int)sizeof(uint64_t),
                              MPI_INFO_NULL, comm, &l->base, &l->win);
    if (rc != MPI_SUCCESS)
        return up__mpi_error("up_mpi_for: MPI_Win_allocate", rc);
    MPI_Win_set_errhandler(l->win, MPI_ERRORS_RETURN);
    /* The words start at zero on every rank before anyone reads them: the
     * local stores, made visible by MPI_Win_sync inside the epoch (outside
     * one some components, osc/ucx among them, refuse it), then the
     * barrier, before any rank's first RMA call. */
    memset(l->base, 0, WORDS * sizeof(uint64_t));
    const char *what = "up_mpi_for: MPI_Win_lock_all";
    rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, l->win);
    bool locked = rc == MPI_SUCCESS;
    if (rc == MPI_SUCCESS) {
        what = "up_mpi_for: MPI_Win_sync";
        rc = MPI_Win_sync(l->win);
    }
    if (rc == MPI_SUCCESS) {
        what = "up_mpi_for: MPI_Barrier";
        rc = MPI_Barrier(comm);
    }
    l->watched = l->size > 1 ? (l->rank + 1) % l->size : -1;
    if (rc == MPI_SUCCESS && l->watched >= 0) {
        what = "up_mpi_for: MPI_Sendrecv";
        rc = learn_watched_pid(l);
    }
    if (rc != MPI_SUCCESS) {
        up__mpi_error(what, rc);
        if (locked)
            MPI_Win_unlock_all(l->win);
        MPI_Win_free(&l->win);
        return UP_EINVAL;
    }
    uint64_t now = up__now_ns();
    l->watched_since_ns = now;
    l->next_tick_ns = now;
    up__store_seqcst(&view.rank, l->rank);
    up__store_seqcst(&view.watched, l->watched);
    up__store_seqcst(&view.heard_ns, now);
    for (int i = 0; i < 5; i++)
        up__store_seqcst(&view.held[i], 0);
    up__store_seqcst(&view.n, n);
    up__store_seqcst(&view.active, 1);
    handler_install();
    watchdog_start(l);
    return UP_OK;
}

void up__ledger_close(up__ledger *l)
{
    watchdog_stop(l);
    handler_remove();
    MPI_Win_unlock_all(l->win);
    MPI_Win_free(&l->win);
}

int up__ledger_grab(up__ledger *l, uint64_t want, uint64_t *start, int *stop)
{
    uint64_t stopword = 0, none = 0;
    call_begin(l);
    int rc = MPI_Fetch_and_op(&want, start, MPI_UINT64_T, 0, COUNTER, MPI_SUM, l->win);
    /* STOP rides along in the same flush: a rank taking chunks sees a
     * failure at its next grab, a call's time after it was published. */
    if (rc == MPI_SUCCESS)
        rc = MPI_Get_accumulate(&none, 0, MPI_UINT64_T, &stopword, 1, MPI_UINT64_T, 0, STOP, 1,
                                MPI_UINT64_T, MPI_NO_OP, l->win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(0, l->win);
    call_end(l);
    *stop = stopword != 0;
    return rc == MPI_SUCCESS ? UP_OK : up__mpi_error("up_mpi_for: taking a chunk", rc);
}

int up__ledger_stop(up__ledger *l)
{
    call_begin(l);
    int rc = put_word(l, 0, STOP, 1);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(0, l->win);
    call_end(l);
    return rc == MPI_SUCCESS ? UP_OK : up__mpi_error("up_mpi_for: stopping the farm", rc);
}

void up__ledger_note_held(up__ledger *l, const up__ledger_held *held)
{
    memcpy(l->noted + 1, held, sizeof *held);
}

/* The heartbeat and the noted state: one accumulate over this rank's
 * words from BEAT on (atomic per word, not as a whole: a reader may
 * see a chunk's begin and end from different writes, which only a report
 * could show). */
static int send_beat(up__ledger *l)
{
    uint64_t words[WATCHED_WORDS];
    words[0] = l->beat;
    memcpy(words + 1, l->noted, sizeof l->noted);
    return MPI_Accumulate(words, WATCHED_WORDS, MPI_UINT64_T, l->rank, BEAT, WATCHED_WORDS,
                          MPI_UINT64_T, MPI_REPLACE, l->win);
}

int up__ledger_publish(up__ledger *l, uint64_t state, const up__ledger_held *held)
{
    l->noted[0] = up__load_seqcst(&reported) ? UP__LEDGER_ABORTING : state;
    up__ledger_note_held(l, held);
    call_begin(l);
    int rc = send_beat(l);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(l->rank, l->win);
    call_end(l);
    return rc == MPI_SUCCESS ? UP_OK : up__mpi_error("up_mpi_for: publishing state", rc);
}

void up__ledger_progress(up__ledger *l)
{
    int flag = 0;
    /* Nothing is sent on the farm's own communicator once the farm runs
     * (the open's exchange of pids is received within it): the probe only
     * drives MPI's progress engine. */
    call_begin(l);
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, l->comm, &flag, MPI_STATUS_IGNORE);
    call_end(l);
}

static void report_silent(up__ledger *l, const uint64_t *w, uint64_t quiet_ns)
{
    if (!up__ledger_claim_report())
        return;
    publish_aborting(l);
    char held[HELD_TEXT_MAX];
    held_text(held, w + HELD - BEAT, l->n);
    fprintf(stderr,
            "ultrapool mpi: rank %d has been silent for %.1f s (no heartbeat) %s, %s; rank %d "
            "aborts the job\n",
            l->watched, (double)quiet_ns / 1e9,
            w[STATE - BEAT] == UP__LEDGER_DONE ? "after finishing its share" : "while running",
            held, l->rank);
    fflush(stderr);
    up__ledger_abort(l, 70);
}

int up__ledger_tick(up__ledger *l, uint64_t now_ns, int *stop)
{
    l->next_tick_ns = now_ns + l->period_ns;
    ++l->beat;
    if (up__load_seqcst(&reported))
        l->noted[0] = UP__LEDGER_ABORTING;
    call_begin(l);
    int rc = send_beat(l);
    uint64_t stopword = 0, w[WATCHED_WORDS], none = 0;
    if (rc == MPI_SUCCESS)
        rc = MPI_Get_accumulate(&none, 0, MPI_UINT64_T, &stopword, 1, MPI_UINT64_T, 0, STOP, 1,
                                MPI_UINT64_T, MPI_NO_OP, l->win);
    if (rc == MPI_SUCCESS && l->watched >= 0)
        rc = MPI_Get_accumulate(&none, 0, MPI_UINT64_T, w, WATCHED_WORDS, MPI_UINT64_T, l->watched,
                                BEAT, WATCHED_WORDS, MPI_UINT64_T, MPI_NO_OP, l->win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush_all(l->win);
    call_end(l);
    if (rc != MPI_SUCCESS && watched_gone(l))
        report_gone(l, true);
    if (rc != MPI_SUCCESS)
        return up__mpi_error("up_mpi_for: heartbeat", rc);
    *stop = stopword != 0;
    if (l->watched < 0)
        return UP_OK;
    uint64_t now = up__now_ns();
    /* The chunks at every read: a rank publishes each (a static rank its
     * block) before its lanes may start it. */
    for (int i = 0; i < 5; i++)
        up__store_seqcst(&view.held[i], w[HELD - BEAT + i]);
    /* A rank that is ending the job after its own report may fall silent
     * for longer than the timeout inside MPI_Abort: not a second death. */
    if (w[0] != l->watched_beat || w[STATE - BEAT] == UP__LEDGER_ABORTING) {
        l->watched_beat = w[0];
        l->watched_since_ns = now;
        up__store_seqcst(&view.heard_ns, now);
    }
    if (w[STATE - BEAT] != UP__LEDGER_ABORTING && watched_gone(l)) {
        report_gone(l, true);
    } else if (now - l->watched_since_ns > l->silence_ns) {
        report_silent(l, w, now - l->watched_since_ns);
    }
    return UP_OK;
}
