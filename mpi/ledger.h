/* The farm's shared state across ranks: one MPI window of a few words per
 * rank, opened for the length of one farm.
 *
 *   rank 0's COUNTER   the next unassigned index; grabs add to it
 *   rank 0's STOP      non-zero once a rank failed (read at each grab and tick)
 *   each rank's BEAT   its heartbeat, bumped every tick by its own rank
 *   each rank's STATE, HELD_*: what it is doing and the chunks it holds,
 *                      for reports
 *
 * Every access is an atomic RMA operation in one passive epoch
 * (MPI_Win_lock_all): grabs are MPI_Fetch_and_op(MPI_SUM) on COUNTER, the
 * owner writes its words with MPI_Accumulate(MPI_REPLACE), readers use
 * MPI_Get_accumulate(MPI_NO_OP). Each word sees one operation plus
 * MPI_NO_OP, which is what the window's default accumulate_ops hint
 * (same_op_no_op) allows. Only the farm's calling thread makes MPI calls
 * on the ledger; the watchdog thread (ledger.c) only times them, and
 * calls MPI_Abort when one never returns. */
#ifndef UP_MPI_LEDGER_H
#define UP_MPI_LEDGER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include <mpi.h>

/* A rank's STATE word. ABORTING: this rank has reported a death or a hang
 * and is ending the job; its watcher must not call its silence a second
 * death (MPI_Abort can take longer than a short heartbeat timeout). */
enum {
    UP__LEDGER_RUNNING = 1,
    UP__LEDGER_DONE = 2,
    UP__LEDGER_FAILED = 3,
    UP__LEDGER_ABORTING = 4
};

typedef struct up__ledger {
    MPI_Comm comm; /* the farm's duplicate, MPI_ERRORS_RETURN */
    MPI_Win win;
    uint64_t *base;
    int rank, size;
    uint64_t n;                /* the index space, for reports */
    uint64_t beat;             /* this rank's heartbeat */
    uint64_t period_ns;        /* between ticks */
    uint64_t silence_ns;       /* a watched rank this quiet is dead */
    int watched;               /* the next rank, -1 alone */
    pid_t watched_pid;         /* its process, when on this node and visible; else 0 */
    uint64_t watched_beat;     /* its last heartbeat seen */
    uint64_t watched_since_ns; /* when that value was first seen */
    uint64_t next_tick_ns;
    uint64_t noted[6]; /* state, then the held chunks: what each heartbeat sends again */
    /* The watchdog (ledger.c): a thread that times the calling thread's
     * ledger calls. call_since_ns: when the call under way began, 0
     * between calls. */
    _Atomic uint64_t call_since_ns;
    pthread_t dog;
    pthread_mutex_t dog_lock;
    pthread_cond_t dog_wake;
    int dog_running, dog_quit; /* (dog_lock) for dog_quit */
} up__ledger;

/* Collective: opens the window on comm (already duplicated), and with more
 * than one rank starts the watchdog. */
int up__ledger_open(up__ledger *l, MPI_Comm comm, uint64_t n, uint64_t silence_ns);
/* Collective: closes the window. */
void up__ledger_close(up__ledger *l);

/* Takes `want` indexes from the counter; *start is where they begin (at or
 * past n: the space is used up), and *stop is set when a rank asked the
 * farm to stop (the chunk must then not run). Two remote atomics (the
 * counter, STOP) and one flush. */
int up__ledger_grab(up__ledger *l, uint64_t want, uint64_t *start, int *stop);
/* Tells every rank to stop taking chunks (they see it at their next grab
 * or tick). */
int up__ledger_stop(up__ledger *l);

/* The chunks whose indexes a rank's bodies may run or start, as its words
 * hold them: the first and the last (a rank takes chunks in increasing
 * order; they are the same when it holds one, empty when none), and
 * whether it holds others between them. Four words cannot list them all:
 * a rank with many lanes may hold as many chunks. */
typedef struct up__ledger_held {
    uint64_t first_begin, first_end, last_begin, last_end;
    uint64_t between;
} up__ledger_held;

/* This rank's state and the chunks it holds, for the reports of others:
 * written at once, and again with every heartbeat. */
int up__ledger_publish(up__ledger *l, uint64_t state, const up__ledger_held *held);
/* The chunks the next heartbeat sends, without sending them now. */
void up__ledger_note_held(up__ledger *l, const up__ledger_held *held);

/* Once per period: bumps the heartbeat and sends it with the noted state,
 * reads STOP (*stop set to 1 when a rank asked), and checks the watched
 * rank. A watched rank silent for
 * silence_ns is reported on stderr and the job is aborted (MPI_Abort);
 * this does not return then. Returns UP_OK or UP_EINVAL on an MPI error. */
int up__ledger_tick(up__ledger *l, uint64_t now_ns, int *stop);

/* One report per process: the first of its reporters (the watcher, the
 * watchdog, a body stuck past the timeout) to claim it prints its report
 * and then calls up__ledger_abort; the others say nothing. Afterwards this
 * rank's heartbeats carry UP__LEDGER_ABORTING. */
int up__ledger_claim_report(void);
/* Ends the job with `code` after a claimed report (MPI_Abort; _exit if it
 * returns). */
void up__ledger_abort(up__ledger *l, int code);

/* Rank 0 holds the counter: where MPI implements one-sided operations in
 * software (Open MPI's osc/pt2pt, osc/ucx without hardware atomics), a
 * grab from another rank completes only while rank 0 is inside MPI. Rank
 * 0's coordinator therefore enters MPI this often while its lanes work,
 * which bounds such a grab's wait; with shared-memory or hardware atomics
 * the call finds nothing to do. */
#define UP__LEDGER_PROGRESS_NS 1000000u
/* Lets MPI progress pending operations that target this rank. */
void up__ledger_progress(up__ledger *l);

/* Tests req until it completes (UP_OK) or the deadline passes
 * (UP_ETIMEDOUT; UINT64_MAX: never), calling between(arg) after each
 * failed test when given, and yielding, then sleeping in growing steps up
 * to 100 us (wait.c). An MPI error: UP_EINVAL, its text after `who`. */
int up__mpi_test_until(MPI_Request *req, MPI_Status *status, uint64_t deadline,
                       void (*between)(void *), void *arg, const char *who);

/* Text of an MPI error code into up_last_error(), prefixed by what. */
int up__mpi_error(const char *what, int code);

#endif
