/* up_mpi_for and up_mpi_reduce: the distributed farm (mpi.h).
 *
 * On each rank two kinds of thread cooperate under one mutex:
 *   - the calling thread, the coordinator: makes every MPI call (chunk
 *     grabs, heartbeats, the final exchange) and sleeps on `wake` between;
 *   - the lanes, pool tasks: split the rank's current chunk among
 *     themselves and run the body outside the lock.
 * A rank has at most two chunks to hand out: `cur`, being split, and
 * `pre`, taken in advance once cur is half used, so lanes rarely wait for
 * the network; bodies may still run pieces of earlier chunks.
 * The mutex is taken once per lane sub-chunk, which is a share of a chunk,
 * not per index. */
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ultrapool/mpi.h>

#include "ledger.h"
#include "up_layer.h"

#define UP_MPI_MAX_N     (UINT64_C(1) << 62)
#define UP_MPI_MAX_LANES 4096u

typedef struct range {
    uint64_t begin, end;
} range;

/* What a lane's body runs: its piece and the chunk the piece came from. */
typedef struct body_span {
    range piece, chunk;
} body_span;

typedef struct farm {
    /* (ro) set before the lanes start */
    up_mpi_schedule schedule;
    uint64_t n, min_chunk, max_chunk;
    unsigned lanes;
    up_mpi_body body;
    up_mpi_reduce_body rbody;
    void *ctx;
    unsigned char *accs; /* lanes * size bytes, reduce only */
    size_t size;
    range statics; /* UP_MPI_STATIC: this rank's block */

    pthread_mutex_t lock;
    pthread_cond_t wake; /* coordinator: a chunk is wanted, a lane ended, a failure */
    pthread_cond_t have; /* lanes: a chunk arrived, or the farm is over */
    /* (lock) */
    range cur, pre;
    uint64_t cur_len;
    bool need;      /* a lane wants pre filled */
    bool exhausted; /* the counter passed n: no more chunks */
    bool stopping;  /* failure or timeout: lanes start nothing new */
    unsigned lanes_live, next_lane;
    uint64_t next_part; /* UP_MPI_STATIC: the next of the lanes' parts */
    body_span *running; /* each lane's body's, empty between bodies; NULL
                           when it could not be had (the reports then name
                           less exactly what the rank held) */
    bool failed;
    int body_code;
    range failed_chunk;
    uint64_t items;
} farm;

static uint64_t guided_share(uint64_t left, uint64_t parts, uint64_t min)
{
    uint64_t s = left / (2 * parts);
    return s < min ? min : s;
}

/* Under the lock: the next sub-chunk for a lane and in *chunk the chunk
 * it comes from, or an empty range when the lane should wait (`*wait`) or
 * stop. */
static range take_locked(farm *f, bool *wait, range *chunk)
{
    *wait = false;
    if (f->stopping)
        return (range){0, 0};
    if (f->cur.begin == f->cur.end && f->pre.begin != f->pre.end) {
        f->cur = f->pre;
        f->cur_len = f->cur.end - f->cur.begin;
        f->pre = (range){0, 0};
    }
    uint64_t left = f->cur.end - f->cur.begin;
    if (left == 0) {
        *wait = !f->exhausted;
        f->need = f->need || !f->exhausted;
        return (range){0, 0};
    }
    uint64_t take =
        f->schedule == UP_MPI_DYNAMIC ? f->min_chunk : guided_share(left, f->lanes, f->min_chunk);
    if (take > left)
        take = left;
    range r = {f->cur.begin, f->cur.begin + take};
    *chunk = (range){f->cur.end - f->cur_len, f->cur.end};
    f->cur.begin += take;
    if (!f->exhausted && f->pre.begin == f->pre.end && (f->cur.end - f->cur.begin) * 2 < f->cur_len)
        f->need = true;
    /* A lane's share lies in [0, n) and in the chunk it came from. */
    up__assert_internal(r.begin < r.end && r.end <= f->cur.begin && f->cur.begin <= f->cur.end &&
                        f->cur.end <= f->n && f->cur.end - f->cur.begin <= f->cur_len);
    return r;
}

/* Runs the body on r, a piece of chunk, the lock released meanwhile, with
 * both marked as the lane's. */
static int run_body_locked(farm *f, unsigned lane, range r, range chunk)
{
    if (f->running)
        f->running[lane] = (body_span){r, chunk};
    pthread_mutex_unlock(&f->lock);
    int rc = f->rbody ? f->rbody(r.begin, r.end, f->accs + (size_t)lane * f->size, f->ctx)
                      : f->body(r.begin, r.end, f->ctx);
    pthread_mutex_lock(&f->lock);
    if (f->running)
        f->running[lane] = (body_span){{0, 0}, {0, 0}};
    return rc;
}

/* Under the lock: the running range that began first, empty when no body
 * runs. */
static range oldest_running_locked(const farm *f)
{
    range best = {0, 0};
    for (unsigned i = 0; f->running && i < f->lanes; i++) {
        range r = f->running[i].piece;
        if (r.begin != r.end && (best.begin == best.end || r.begin < best.begin))
            best = r;
    }
    return best;
}

/* Under the lock: the chunks whose indexes a body may still run or start
 * (those of running bodies, cur unless drained, pre, and `extra`, a chunk
 * about to be installed), as the ledger publishes them: the first and the
 * last (chunks are taken in increasing order), and whether others lie
 * between. Without the running spans, cur counts while its bodies may
 * run. */
static up__ledger_held held_locked(const farm *f, range extra)
{
    range cand[3] = {f->cur, f->pre, extra};
    if (cand[0].begin != cand[0].end || !f->running)
        cand[0] = (range){f->cur.end - f->cur_len, f->cur.end};
    range first = {0, 0}, last = {0, 0};
    unsigned count = 0;
    for (unsigned i = 0; i < 3 + (f->running ? f->lanes : 0); i++) {
        range r = i < 3 ? cand[i] : f->running[i - 3].chunk;
        if (r.begin == r.end)
            continue;
        if (first.begin == first.end || r.begin < first.begin)
            first = r;
        if (last.begin == last.end || r.begin > last.begin)
            last = r;
        count++;
    }
    up__ledger_held h = {first.begin, first.end, last.begin, last.end, 0};
    for (unsigned i = 0; count > 2 && !h.between && i < 3 + (f->running ? f->lanes : 0); i++) {
        range r = i < 3 ? cand[i] : f->running[i - 3].chunk;
        h.between = r.begin != r.end && r.begin > first.begin && r.begin < last.begin;
    }
    return h;
}

/* Under the lock, after a body ran r: counts it, or keeps the first
 * failure. Returns whether it succeeded. */
static bool ran_locked(farm *f, range r, int rc)
{
    if (rc == 0) {
        f->items += r.end - r.begin;
        up__assert_internal(r.begin < r.end && f->items <= f->n); /* each index runs once */
        return true;
    }
    if (!f->failed) {
        f->failed = true;
        f->body_code = rc;
        f->failed_chunk = r;
    }
    return false;
}

static void lane_main(void *arg)
{
    farm *f = arg;
    pthread_mutex_lock(&f->lock);
    unsigned lane = f->next_lane++;
    if (f->schedule == UP_MPI_STATIC) {
        /* The rank's block in f->lanes equal parts, taken in turn: parts
         * of lanes that could not be started run on the others. */
        uint64_t len = f->statics.end - f->statics.begin, L = f->lanes;
        while (!f->failed && !f->stopping && f->next_part < L) {
            uint64_t k = f->next_part++;
            range r = {f->statics.begin + len / L * k + (k < len % L ? k : len % L), 0};
            r.end = r.begin + len / L + (k < len % L);
            if (r.begin == r.end)
                continue;
            int rc = run_body_locked(f, lane, r, f->statics);
            if (!ran_locked(f, r, rc))
                pthread_cond_signal(&f->wake);
        }
    } else {
        for (;;) {
            bool wait;
            range chunk = {0, 0};
            range r = take_locked(f, &wait, &chunk);
            if (f->need)
                pthread_cond_signal(&f->wake);
            if (r.begin == r.end) {
                if (!wait)
                    break;
                pthread_cond_wait(&f->have, &f->lock);
                continue;
            }
            int rc = run_body_locked(f, lane, r, chunk);
            if (!ran_locked(f, r, rc)) {
                f->stopping = true;
                pthread_cond_broadcast(&f->have);
                /* The coordinator tells the other ranks now, not at its
                 * next tick. */
                pthread_cond_signal(&f->wake);
                break;
            }
        }
    }
    up__assert_internal(f->lanes_live >= 1 && f->lanes_live <= f->lanes &&
                        f->next_lane <= f->lanes);
    if (--f->lanes_live == 0)
        pthread_cond_signal(&f->wake);
    pthread_mutex_unlock(&f->lock);
}

/* The rank's record in the final exchange, sent as RECORD_WORDS
 * MPI_UINT64_T (so nodes of either byte order read it alike). */
typedef struct record {
    uint64_t failed, body_code, begin, end, items, chunks, timed_out;
    uint64_t local_rc;   /* UP_ESTOPPED, UP_ENOMEM, UP_EOVERLOAD: this rank ran no lanes */
    uint64_t mpi_failed; /* an MPI call of this rank's farm failed */
} record;
#define RECORD_WORDS (sizeof(record) / sizeof(uint64_t))

typedef struct coord {
    farm *f;
    up__ledger *l;
    uint64_t deadline, grace_deadline;
    uint64_t chunks;
    uint64_t seen; /* the counter's value after our last grab: what is left, as far as we know */
    uint64_t next_progress_ns; /* rank 0: when to enter MPI next (ledger.h) */
    bool timed_out, stop_sent;
    int mpi_rc; /* the first failed MPI call's code (its text in up_last_error) */
} coord;

/* The chunks held (held_locked), `extra` among them, and the state, sent
 * at once (a local atomic write and flush): a rank that dies before its
 * next heartbeat is still reported with the chunks it held. */
static void publish_locked(coord *c, uint64_t state, range extra)
{
    up__ledger_held held = held_locked(c->f, extra);
    pthread_mutex_unlock(&c->f->lock);
    up__ledger_publish(c->l, state, &held);
    pthread_mutex_lock(&c->f->lock);
}

static void stop_locked(farm *f)
{
    f->stopping = true;
    pthread_cond_broadcast(&f->have);
}

/* One grab, lock released around the MPI call. */
static int grab_locked(coord *c)
{
    farm *f = c->f;
    uint64_t ranks = (uint64_t)c->l->size;
    uint64_t left = f->n > c->seen ? f->n - c->seen : 0;
    uint64_t want =
        f->schedule == UP_MPI_DYNAMIC ? f->min_chunk : guided_share(left, ranks, f->min_chunk);
    if (f->max_chunk && want > f->max_chunk)
        want = f->max_chunk;
    /* At most n / ranks + 1 a grab: every rank's last grab passes n, and
     * with this bound the counter stays below n + 2n + ranks < 2^64. */
    if (want > f->n / ranks + 1)
        want = f->n / ranks + 1;
    f->need = false;
    pthread_mutex_unlock(&f->lock);
    uint64_t start = 0;
    int stop = 0;
    int rc = up__ledger_grab(c->l, want, &start, &stop);
    pthread_mutex_lock(&f->lock);
    if (rc != UP_OK)
        return rc;
    c->seen = start + want;
    if (stop) {
        /* Another rank failed or timed out: this chunk never starts. */
        stop_locked(f);
    } else if (start >= f->n) {
        f->exhausted = true;
    } else {
        range r = {start, f->n - start < want ? f->n : start + want};
        /* A rank holds at most two chunks: the grab runs only with pre
         * empty, and the lanes never fill it. */
        up__assert_internal(r.begin < r.end && r.end <= f->n && f->pre.begin == f->pre.end);
        c->chunks++;
        /* Published before a lane can see it: a rank that dies in its
         * body is reported with the chunk it died in. Where it goes holds
         * with the lock released meanwhile: lanes only drain cur, and move
         * pre (empty here) into it. */
        bool into_cur = f->cur.begin == f->cur.end;
        publish_locked(c, UP__LEDGER_RUNNING, r);
        up__assert_internal(f->pre.begin == f->pre.end &&
                            (!into_cur || f->cur.begin == f->cur.end));
        if (into_cur) {
            f->cur = r;
            f->cur_len = r.end - r.begin;
        } else {
            f->pre = r;
        }
        pthread_cond_broadcast(&f->have);
        return UP_OK;
    }
    pthread_cond_broadcast(&f->have);
    publish_locked(c, UP__LEDGER_RUNNING, (range){0, 0});
    return UP_OK;
}

static int tick_locked(coord *c, uint64_t now)
{
    farm *f = c->f;
    int stop = 0;
    /* The heartbeat sends the chunks held now: those finished drop out. */
    up__ledger_held held = held_locked(f, (range){0, 0});
    up__ledger_note_held(c->l, &held);
    pthread_mutex_unlock(&f->lock);
    int rc = up__ledger_tick(c->l, now, &stop);
    pthread_mutex_lock(&f->lock);
    if (stop)
        stop_locked(f);
    if (rc != UP_OK && c->mpi_rc == UP_OK) {
        /* Without heartbeats no death would be seen: stop instead. */
        c->mpi_rc = rc;
        stop_locked(f);
    }
    if (c->timed_out && now >= c->grace_deadline && f->lanes_live && up__ledger_claim_report()) {
        range stuck = oldest_running_locked(f);
        if (stuck.begin != stuck.end)
            fprintf(stderr,
                    "ultrapool mpi: rank %d: a body still runs chunk [%llu, %llu) past the "
                    "farm's timeout and its grace; aborting the job\n",
                    c->l->rank, (unsigned long long)stuck.begin, (unsigned long long)stuck.end);
        else /* lanes still queued behind busy workers, or no memory to track them */
            fprintf(stderr,
                    "ultrapool mpi: rank %d: a lane has not ended past the farm's timeout and "
                    "its grace; aborting the job\n",
                    c->l->rank);
        fflush(stderr);
        up__ledger_abort(c->l, 71);
    }
    return rc;
}

/* The coordinator's loop: runs until every lane has returned and a
 * failure or timeout of this rank has been told to the others. A failing
 * rank's lanes may all be over before the coordinator wakes (one lane, or
 * each seeing `stopping` at once): the stop must still be sent, or the
 * other ranks would run the whole space. */
static int coordinate(coord *c)
{
    farm *f = c->f;
    int rc = UP_OK;
    pthread_mutex_lock(&f->lock);
    while (f->lanes_live > 0 || ((f->failed || c->timed_out) && !c->stop_sent)) {
        /* The clock first: a stream of grabs must not starve the
         * heartbeat or the timeout. */
        uint64_t now = up__now_ns();
        if (now >= c->deadline && !c->timed_out) {
            c->timed_out = true;
            stop_locked(f);
        }
        if (now >= c->l->next_tick_ns) {
            tick_locked(c, now);
            continue;
        }
        if ((f->failed || c->timed_out) && !c->stop_sent) {
            c->stop_sent = true;
            pthread_mutex_unlock(&f->lock);
            int stop_rc = up__ledger_stop(c->l);
            pthread_mutex_lock(&f->lock);
            if (stop_rc != UP_OK && c->mpi_rc == UP_OK)
                c->mpi_rc = stop_rc;
            continue;
        }
        if (f->need && !f->exhausted && !f->stopping && f->pre.begin == f->pre.end &&
            f->schedule != UP_MPI_STATIC) {
            if ((rc = grab_locked(c)) != UP_OK) {
                if (c->mpi_rc == UP_OK)
                    c->mpi_rc = rc;
                stop_locked(f);
                f->exhausted = true;
            }
            continue;
        }
        uint64_t until = c->l->next_tick_ns;
        if (!c->timed_out && c->deadline < until)
            until = c->deadline;
        if (c->l->rank == 0 && c->l->size > 1) {
            if (now >= c->next_progress_ns) {
                pthread_mutex_unlock(&f->lock);
                up__ledger_progress(c->l);
                pthread_mutex_lock(&f->lock);
                c->next_progress_ns = now + UP__LEDGER_PROGRESS_NS;
                continue;
            }
            if (c->next_progress_ns < until)
                until = c->next_progress_ns;
        }
        struct timespec ts = up__realtime_after(until > now ? until - now : 0);
        pthread_cond_timedwait(&f->wake, &f->lock, &ts);
    }
    pthread_mutex_unlock(&f->lock);
    return c->mpi_rc;
}

static void beat_if_due(void *arg)
{
    up__ledger *l = arg;
    uint64_t now = up__now_ns();
    int stop = 0;
    if (now >= l->next_tick_ns)
        up__ledger_tick(l, now, &stop);
}

/* Waits for every rank to finish its lanes, beating and watching
 * meanwhile, so a rank that dies now is still reported. */
static int wait_for_all(coord *c)
{
    MPI_Request req;
    int rc = MPI_Ibarrier(c->l->comm, &req);
    if (rc != MPI_SUCCESS)
        return up__mpi_error("up_mpi_for: MPI_Ibarrier", rc);
    return up__mpi_test_until(&req, MPI_STATUS_IGNORE, UINT64_MAX, beat_if_due, c->l,
                              "up_mpi_for: MPI_Test");
}

/* Thread-local context of the user operation inside MPI_Allreduce. */
typedef struct reduce_ctx {
    up_mpi_combine combine;
    void *ctx;
    size_t size;
} reduce_ctx;
static _Thread_local reduce_ctx *current_reduce;

static void mpi_combine(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    reduce_ctx *r = current_reduce;
    for (int i = 0; i < *len; i++)
        r->combine((unsigned char *)inout + (size_t)i * r->size,
                   (const unsigned char *)in + (size_t)i * r->size, r->ctx);
}

/* The structs of a farm as this library reads and writes them: 1.0's
 * layouts end at report and at items_all, names that never change
 * (abi_struct.h). */
static const up__struct_kind opts_kind = UP__STRUCT_KIND(up_mpi_opts, report, "up_mpi_opts_init()");
static const up__struct_kind report_kind =
    UP__STRUCT_KIND(up_mpi_report, items_all, "UP_MPI_REPORT()");

/* The defaults, in this library's layout. */
static void opts_defaults(up_mpi_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->schedule = UP_MPI_GUIDED;
    o->min_chunk = 1;
}

int up_mpi_opts_init_sized(up_mpi_opts *opts, size_t size)
{
    if (!opts) {
        up__set_error("up_mpi_opts_init: opts is NULL");
        return UP_EINVAL;
    }
    up_mpi_opts o;
    opts_defaults(&o);
    return up__struct_init("up_mpi_opts_init", &opts_kind, opts, size, &o);
}

/* The program's options (NULL: the defaults) into o, in this library's
 * layout, and the size of the report they point to into *report_size:
 * UP_OK, or UP_EINVAL with the reason in up_last_error() and o left with
 * the defaults and no report (a refused struct is not read, nor written). */
static int read_opts(const char *who, const up_mpi_opts *in, up_mpi_opts *o, size_t *report_size)
{
    opts_defaults(o);
    *report_size = 0;
    if (!in)
        return UP_OK;
    up_mpi_opts got;
    if (up__struct_in(who, &opts_kind, in, &got) != UP_OK)
        return UP_EINVAL;
    if (got.report && up__struct_size(who, &report_kind, got.report, report_size) != UP_OK)
        return UP_EINVAL;
    *o = got;
    return UP_OK;
}

/* Writes rep, in this library's layout, to the program's report of
 * report_size bytes (abi_struct.h); nothing when there is none. */
static void write_report(const up_mpi_opts *o, size_t report_size, const up_mpi_report *rep)
{
    if (o->report)
        up__struct_out(o->report, report_size, rep, sizeof *rep);
}

/* The silence that counts as death: the option, else
 * UP_MPI_HEARTBEAT_TIMEOUT, else 1 s; 10 ms .. 1 h. */
static int heartbeat_timeout(const up_mpi_opts *o, uint64_t *out)
{
    uint64_t ns = o->heartbeat_timeout_ns;
    const char *from = "heartbeat_timeout_ns";
    const char *v = up__env("UP_MPI_HEARTBEAT_TIMEOUT");
    if (ns == 0 && v) {
        from = "UP_MPI_HEARTBEAT_TIMEOUT";
        if (up__parse_duration(v, &ns) != 0) {
            up__set_error("up_mpi_for: UP_MPI_HEARTBEAT_TIMEOUT=\"%s\": not a duration with a "
                          "unit (ns us ms s m h), such as 500ms or 2s",
                          v);
            return UP_EINVAL;
        }
    }
    if (ns == 0 && !v)
        ns = 1000000000u;
    if (ns < 10000000u || ns > UINT64_C(3600000000000)) {
        up__set_error("up_mpi_for: %s %llu ns is outside 10ms .. 1h", from, (unsigned long long)ns);
        return UP_EINVAL;
    }
    *out = ns;
    return UP_OK;
}

/* The local checks, before anything collective. *collective is left 0
 * when the failure forbids even agreeing with the other ranks about it
 * (no MPI, a thread level too low, no communicator). */
static int check_args(MPI_Comm comm, up_pool *pool, uint64_t n, const up_mpi_opts *o, bool body,
                      bool *collective, uint64_t *silence)
{
    *collective = false;
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (!inited || finalized) {
        up__set_error("up_mpi_for: MPI is not initialised (call up_mpi_init or MPI_Init_thread)");
        return UP_EINVAL;
    }
    /* The calling thread's own calls: without them not even the other
     * ranks can be told. */
    int main_thread = 0;
    MPI_Is_thread_main(&main_thread);
    int rc = up_mpi_require(main_thread ? MPI_THREAD_FUNNELED : MPI_THREAD_SERIALIZED);
    if (rc != UP_OK)
        return rc;
    if (comm == MPI_COMM_NULL) {
        up__set_error("up_mpi_for: the communicator is MPI_COMM_NULL");
        return UP_EINVAL;
    }
    *collective = true;
    if (o->body_calls_mpi && (rc = up_mpi_require(MPI_THREAD_MULTIPLE)) != UP_OK)
        return rc;
    if (!pool || !body) {
        up__set_error("up_mpi_for: %s is NULL", !pool ? "pool" : "body");
        return UP_EINVAL;
    }
    if (heartbeat_timeout(o, silence) != UP_OK)
        return UP_EINVAL;
    if (up_current_pool() == pool) {
        up__set_error(
            "up_mpi_for: called from a task of its own pool (its lanes need the workers)");
        return UP_EINVAL;
    }
    if (n > UP_MPI_MAX_N || o->min_chunk == 0 || (o->max_chunk && o->max_chunk < o->min_chunk) ||
        (unsigned)o->schedule > UP_MPI_STATIC || o->lanes > UP_MPI_MAX_LANES) {
        up__set_error("up_mpi_for: n %llu (at most 2^62), min_chunk %llu (at least 1, at most "
                      "max_chunk %llu), lanes %u (at most %u) or schedule %d out of range",
                      (unsigned long long)n, (unsigned long long)o->min_chunk,
                      (unsigned long long)o->max_chunk, o->lanes, UP_MPI_MAX_LANES,
                      (int)o->schedule);
        return UP_EINVAL;
    }
    return UP_OK;
}

/* Collective: the ranks agree on what must be the same everywhere (n,
 * the schedule, the timeout, the reduction's size), take the longest
 * heartbeat timeout of any rank (each judges its neighbour by it), and
 * learn whether some rank's own arguments were bad, so all ranks fail
 * alike. Equality is checked with the maximum of x and of ~x. */
static int agree(MPI_Comm comm, uint64_t n, const up_mpi_opts *o, size_t size, uint64_t *silence,
                 int local_rc)
{
    enum { SAME = 4 };
    uint64_t same[SAME] = {n, (uint64_t)o->schedule, o->timeout_ns, size};
    uint64_t mine[2 * SAME + 2], all[2 * SAME + 2];
    for (int i = 0; i < SAME; i++) {
        mine[2 * i] = same[i];
        mine[2 * i + 1] = ~same[i];
    }
    mine[2 * SAME] = *silence;
    mine[2 * SAME + 1] = local_rc != 0;
    /* Ranks reach a farm at different times: the early ones wait here
     * sleeping (up__mpi_test_until), not spinning in a blocking collective
     * on the CPU that a late rank of the same node needs. */
    MPI_Request req;
    int rc = MPI_Iallreduce(mine, all, 2 * SAME + 2, MPI_UINT64_T, MPI_MAX, comm, &req);
    if (rc != MPI_SUCCESS)
        return up__mpi_error("up_mpi_for: agreeing on the arguments", rc);
    if ((rc = up__mpi_test_until(&req, MPI_STATUS_IGNORE, UINT64_MAX, NULL, NULL,
                                 "up_mpi_for: agreeing on the arguments")) != UP_OK)
        return rc;
    if (local_rc != 0)
        return local_rc;
    if (all[2 * SAME + 1]) {
        up__set_error("up_mpi_for: another rank's arguments were invalid");
        return UP_EINVAL;
    }
    static const char *const names[SAME] = {"n", "the schedule", "timeout_ns", "the size"};
    for (int i = 0; i < SAME; i++)
        if (all[2 * i] != same[i] || ~all[2 * i + 1] != same[i]) {
            up__set_error("up_mpi_for: the ranks disagree on %s", names[i]);
            return UP_EINVAL;
        }
    *silence = all[2 * SAME];
    return UP_OK;
}

/* Submits the lanes with up_submit only: a waiting submit may run the
 * lane (or other queued tasks) on this thread, which must stay free to
 * take chunks and beat. A full queue keeps the lanes started so far; when
 * none could start, the coordinator retries each millisecond between
 * heartbeats, and gives up (UP_EOVERLOAD) at the farm's deadline, on a
 * stop from another rank, or after a heartbeat timeout of trying. */
static int start_lanes(coord *c, up_pool *pool, unsigned *started)
{
    farm *f = c->f;
    uint64_t give_up = up__deadline_after(c->l->silence_ns);
    while (*started < f->lanes) {
        int rc = up_submit(pool, lane_main, f);
        if (rc == UP_OK) {
            ++*started;
            continue;
        }
        if (*started || rc != UP_EOVERLOAD)
            return *started ? UP_OK : rc; /* UP_ESTOPPED only when no lane runs */
        uint64_t now = up__now_ns();
        int stop = 0;
        if (now >= c->l->next_tick_ns && up__ledger_tick(c->l, now, &stop) != UP_OK)
            return UP_EOVERLOAD;
        if (stop || now >= c->deadline || now >= give_up)
            return UP_EOVERLOAD;
        struct timespec ts = up__timespec_from_ns(1000000u);
        nanosleep(&ts, NULL);
    }
    return UP_OK;
}

/* The final exchange's verdict, the same on every rank. */
typedef struct verdict {
    int status;
    int fail_rank;
    record fail;
    uint64_t items_all;
} verdict;

static verdict judge(const record *all, int ranks, uint64_t n)
{
    verdict v = {UP_OK, -1, {0}, 0};
    bool timed_out = false;
    int idle_rank = -1, mpi_rank = -1;
    for (int r = 0; r < ranks; r++) {
        v.items_all += all[r].items;
        timed_out = timed_out || all[r].timed_out;
        if (all[r].local_rc && idle_rank < 0)
            idle_rank = r;
        if (all[r].mpi_failed && mpi_rank < 0)
            mpi_rank = r;
        if (all[r].failed && v.fail_rank < 0) {
            v.fail_rank = r;
            v.fail = all[r];
        }
    }
    if (mpi_rank >= 0) {
        v.status = UP_EINVAL;
        up__set_error("up_mpi_for: an MPI call of rank %d's farm failed; %llu of %llu indexes ran",
                      mpi_rank, (unsigned long long)v.items_all, (unsigned long long)n);
    } else if (v.fail_rank >= 0) {
        v.status = UP_ECANCELED;
        up__set_error("up_mpi_for: rank %d's body returned %d on [%llu, %llu)", v.fail_rank,
                      (int)(int64_t)v.fail.body_code, (unsigned long long)v.fail.begin,
                      (unsigned long long)v.fail.end);
    } else if (timed_out) {
        v.status = UP_ETIMEDOUT;
        up__set_error("up_mpi_for: the farm's timeout passed with %llu of %llu indexes run",
                      (unsigned long long)v.items_all, (unsigned long long)n);
    } else if (v.items_all != n) {
        /* Some rank ran no lanes and the others could not make up for it
         * (a static split, or no rank with lanes). */
        if (idle_rank < 0)
            abort(); /* the counter lost or repeated indexes: a broken invariant */
        v.status = (int)(int64_t)all[idle_rank].local_rc;
        up__set_error("up_mpi_for: rank %d ran no lanes (%s): %llu of %llu indexes ran", idle_rank,
                      up_strerror(v.status), (unsigned long long)v.items_all,
                      (unsigned long long)n);
    }
    return v;
}

/* The reduction across ranks, once every rank knows the farm succeeded:
 * the lanes' accumulators folded into the first, then MPI_Allreduce in
 * place (a rank without accumulators contributes the identity, *result),
 * and the total into *result only on success. */
static int reduce_all(farm *f, MPI_Comm comm, up_mpi_combine combine, void *ctx, void *result)
{
    reduce_ctx rc_ctx = {combine, ctx, f->size};
    void *buf = result;
    if (f->accs) {
        for (unsigned i = 1; i < f->lanes; i++)
            combine(f->accs, f->accs + (size_t)i * f->size, ctx);
        buf = f->accs;
    }
    MPI_Datatype type;
    MPI_Op op;
    MPI_Type_contiguous((int)f->size, MPI_BYTE, &type);
    MPI_Type_commit(&type);
    MPI_Op_create(mpi_combine, 1, &op);
    current_reduce = &rc_ctx;
    int rc = MPI_Allreduce(MPI_IN_PLACE, buf, 1, type, op, comm);
    current_reduce = NULL;
    MPI_Op_free(&op);
    MPI_Type_free(&type);
    if (rc != MPI_SUCCESS)
        return up__mpi_error("up_mpi_reduce: MPI_Allreduce", rc);
    if (buf != result)
        memcpy(result, buf, f->size);
    return UP_OK;
}

/* The report of a farm the ranks refused together (they compared notes,
 * and nothing ran): the status, no failing rank, no work. */
static void fill_refusal(const up_mpi_opts *o, size_t report_size, int status)
{
    up_mpi_report rep;
    memset(&rep, 0, sizeof rep);
    rep.status = status;
    rep.rank = -1;
    write_report(o, report_size, &rep);
}

static int farm_run(MPI_Comm user_comm, up_pool *pool, uint64_t n, const up_mpi_opts *opts_in,
                    up_mpi_body body, up_mpi_reduce_body rbody, up_mpi_combine combine, void *ctx,
                    void *result, size_t size)
{
    const char *who = rbody ? "up_mpi_reduce" : "up_mpi_for";
    up_mpi_opts o;
    size_t report_size;
    int read_rc = read_opts(who, opts_in, &o, &report_size);
    char read_error[512];
    snprintf(read_error, sizeof read_error, "%s", up_last_error());
    bool collective;
    uint64_t silence = 1000000000u;
    int local = check_args(user_comm, pool, n, &o, body || rbody, &collective, &silence);
    /* A refused struct is this rank's own bad argument, agreed on with the
     * others as the rest are; the checks that forbid talking to them come
     * first. */
    if (collective && local == UP_OK && read_rc != UP_OK) {
        up__set_error("%s", read_error);
        local = read_rc;
    }
    if (local == UP_OK && rbody && (!combine || !result || size == 0 || size > INT_MAX)) {
        up__set_error("up_mpi_reduce: combine or result is NULL, or size %zu is not 1 .. INT_MAX",
                      size);
        local = UP_EINVAL;
    }
    if (!collective)
        return local;

    /* The farm's first collective: waited for asleep, as in agree(). */
    MPI_Comm comm;
    MPI_Request dup_req;
    int rc = MPI_Comm_idup(user_comm, &comm, &dup_req);
    if (rc != MPI_SUCCESS)
        return up__mpi_error("up_mpi_for: MPI_Comm_idup", rc);
    if ((rc = up__mpi_test_until(&dup_req, MPI_STATUS_IGNORE, UINT64_MAX, NULL, NULL,
                                 "up_mpi_for: MPI_Comm_idup")) != UP_OK)
        return rc;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int ranks = 1;
    MPI_Comm_size(comm, &ranks);
    /* Everything whose lack would make this rank skip a collective is had
     * before the agreement, so that its failure is agreed on too. */
    record *all = local == UP_OK ? calloc((size_t)ranks, sizeof *all) : NULL;
    if (local == UP_OK && !all) {
        up__set_error("up_mpi_for: no memory for %d ranks' records", ranks);
        local = UP_ENOMEM;
    }
    if ((rc = agree(comm, n, &o, rbody ? size : 0, &silence, local)) != UP_OK) {
        free(all);
        MPI_Comm_free(&comm);
        fill_refusal(&o, report_size, rc);
        return rc;
    }

    farm f;
    memset(&f, 0, sizeof f);
    f.schedule = o.schedule;
    f.n = n;
    f.min_chunk = o.min_chunk;
    f.max_chunk = o.max_chunk;
    f.body = body;
    f.rbody = rbody;
    f.ctx = ctx;
    f.size = size;
    f.lanes = o.lanes ? o.lanes : up_pool_cpus(pool);
    if (f.lanes == 0)
        f.lanes = 1;
    int local_rc = up__pool_stopped(pool) ? UP_ESTOPPED : UP_OK;
    if (rbody && local_rc == UP_OK) {
        f.accs = malloc((size_t)f.lanes * size);
        if (!f.accs)
            local_rc = UP_ENOMEM;
        for (unsigned i = 0; f.accs && i < f.lanes; i++)
            memcpy(f.accs + (size_t)i * size, result, size);
    }
    f.running = calloc(f.lanes, sizeof *f.running);
    pthread_mutex_init(&f.lock, NULL);
    pthread_cond_init(&f.wake, NULL);
    pthread_cond_init(&f.have, NULL);

    up__ledger l;
    if ((rc = up__ledger_open(&l, comm, n, silence)) != UP_OK) {
        free(all);
        free(f.accs);
        free(f.running);
        MPI_Comm_free(&comm);
        fill_refusal(&o, report_size, rc);
        return rc;
    }
    if (f.schedule == UP_MPI_STATIC) {
        uint64_t P = (uint64_t)l.size, r = (uint64_t)l.rank;
        f.statics.begin = n / P * r + (r < n % P ? r : n % P);
        f.statics.end = f.statics.begin + n / P + (r < n % P);
        f.exhausted = true;
        /* Only for the reports: static lanes split statics themselves. */
        f.cur = f.statics;
        f.cur_len = f.statics.end - f.statics.begin;
    }
    coord c = {.f = &f, .l = &l};
    c.deadline = o.timeout_ns ? up__deadline_after(o.timeout_ns) : UINT64_MAX;
    c.grace_deadline = c.deadline == UINT64_MAX || c.deadline > UINT64_MAX - l.silence_ns
                           ? UINT64_MAX
                           : c.deadline + l.silence_ns;

    /* A static rank grabs nothing, so its block is published once here: a
     * death report then names it, as it names a grabbed chunk. */
    if (f.schedule == UP_MPI_STATIC && local_rc == UP_OK) {
        pthread_mutex_lock(&f.lock);
        publish_locked(&c, UP__LEDGER_RUNNING, (range){0, 0});
        pthread_mutex_unlock(&f.lock);
    }
    /* Lanes (fewer when the queue is full or the pool stops meanwhile). */
    if (local_rc == UP_OK) {
        unsigned started = 0;
        f.need = f.schedule != UP_MPI_STATIC;
        pthread_mutex_lock(&f.lock);
        f.lanes_live = f.lanes;
        pthread_mutex_unlock(&f.lock);
        local_rc = start_lanes(&c, pool, &started);
        pthread_mutex_lock(&f.lock);
        f.lanes_live -= f.lanes - started;
        pthread_mutex_unlock(&f.lock);
    }
    /* From here every rank goes through the same collectives whatever
     * happened to it: an MPI error travels in its record. */
    coordinate(&c);
    pthread_mutex_lock(&f.lock);
    publish_locked(&c, f.failed ? UP__LEDGER_FAILED : UP__LEDGER_DONE, (range){0, 0});
    pthread_mutex_unlock(&f.lock);
    int status = wait_for_all(&c);
    record mine = {f.failed,
                   (uint64_t)(int64_t)f.body_code,
                   f.failed_chunk.begin,
                   f.failed_chunk.end,
                   f.items,
                   c.chunks,
                   c.timed_out,
                   (uint64_t)(int64_t)local_rc,
                   c.mpi_rc != UP_OK};
    verdict v = {UP_OK, -1, {0}, 0};
    if (status == UP_OK) {
        MPI_Request req;
        rc = MPI_Iallgather(&mine, (int)RECORD_WORDS, MPI_UINT64_T, all, (int)RECORD_WORDS,
                            MPI_UINT64_T, comm, &req);
        if (rc != MPI_SUCCESS)
            status = up__mpi_error("up_mpi_for: MPI_Iallgather", rc);
        else
            status = up__mpi_test_until(&req, MPI_STATUS_IGNORE, UINT64_MAX, NULL, NULL,
                                        "up_mpi_for: MPI_Iallgather");
        if (status == UP_OK) {
            v = judge(all, l.size, n);
            status = v.status;
        }
    }
    free(all);
    up__ledger_close(&l);
    if (status == UP_OK && rbody)
        status = reduce_all(&f, comm, combine, ctx, result);
    up_mpi_report rep;
    memset(&rep, 0, sizeof rep);
    rep.status = status;
    rep.rank = v.fail_rank;
    rep.body_code = v.fail_rank >= 0 ? (int)(int64_t)v.fail.body_code : 0;
    rep.begin = v.fail.begin;
    rep.end = v.fail.end;
    rep.items = f.items;
    rep.chunks = c.chunks;
    rep.items_all = v.items_all;
    write_report(&o, report_size, &rep);
    free(f.accs);
    free(f.running);
    pthread_cond_destroy(&f.have);
    pthread_cond_destroy(&f.wake);
    pthread_mutex_destroy(&f.lock);
    MPI_Comm_free(&comm);
    return status;
}

int up_mpi_for(MPI_Comm comm, up_pool *pool, uint64_t n, const up_mpi_opts *opts, up_mpi_body body,
               void *ctx)
{
    return farm_run(comm, pool, n, opts, body, NULL, NULL, ctx, NULL, 0);
}

int up_mpi_reduce(MPI_Comm comm, up_pool *pool, uint64_t n, const up_mpi_opts *opts,
                  up_mpi_reduce_body body, up_mpi_combine combine, void *ctx, void *result,
                  size_t size)
{
    return farm_run(comm, pool, n, opts, NULL, body, combine, ctx, result, size);
}
