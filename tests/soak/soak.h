/* The soak program's shared state: one round at a time, its pool, events,
 * semaphore and the per-task accounting that is checked after the round.
 * soak.c drives rounds and the submit, wait, timer and stop operations;
 * soak_ops.c has the operations on regions, groups, semaphores and
 * channels. */
#ifndef UP_SOAK_H
#define UP_SOAK_H

#include <stdatomic.h>
#include <stdint.h>

#include <ultrapool/chan.h>
#include <ultrapool/group.h>
#include <ultrapool/parallel.h>
#include <ultrapool/pool.h>
#include <ultrapool/sem.h>
#include <ultrapool/wait.h>

#include "check.h"

/* Task ids one round may hand out; an operation stops submitting when
 * they run out. */
#define SOAK_IDS   (1u << 20)
#define SOAK_NO_ID UINT64_MAX

/* What the submitter of a task id expects of it, checked after the
 * round: a rejected task never runs, an accepted one runs exactly once, a
 * group task at most once (it is skipped when its group is cancelled; the
 * group's own count covers it). */
enum { EXPECT_NEVER = 0, EXPECT_ONCE = 1, EXPECT_AT_MOST_ONCE = 2 };

/* Operation kinds, counted for the summary. */
enum {
    OP_SUBMIT,
    OP_SUBMIT_WAIT,
    OP_SUBMIT_TIMEOUT,
    OP_SUBMIT_COPY,
    OP_TYPED,
    OP_SUBMIT_ON,
    OP_SUBMIT_AFTER,
    OP_EVENT,
    OP_TIMER,
    OP_REGION,
    OP_GROUP,
    OP_SEM,
    OP_CHAN,
    OP_WAIT_OUTSIDE,
    OP_IDLE,
    OP_STATS,
    OP_KINDS
};
/* What a task does when it runs (chosen from its id). */
enum {
    ACT_NONE,
    ACT_SPIN,
    ACT_SLEEP,
    ACT_YIELD,
    ACT_EVENT_WAIT,
    ACT_NESTED,
    ACT_SEM,
    ACT_DEADLK,
    ACT_KINDS
};

typedef struct soak_round {
    uint64_t seed; /* this round's: every choice of the round follows from it */
    uint64_t index;
    up_pool *pool;
    up_event *ev[2];
    up_sem *sem;
    uint64_t sem_cap;
    _Atomic uint64_t sem_units; /* units held, by our own count */
    int never_ok;               /* the round ends in a destroy: event resets and
                                   waits that never fire are allowed */
    _Atomic int stop_begun;     /* a stop has been called: UP_ESTOPPED allowed */
    _Atomic int stop_returned;  /* a stop has returned: nothing may be accepted */
    _Atomic uint64_t next_id;
} soak_round;

extern soak_round R;
extern _Atomic unsigned char *soak_runs; /* runs per id of the round */
extern unsigned char *soak_expect;       /* EXPECT_* per id, by its submitter */
extern _Atomic uint64_t soak_ops[OP_KINDS], soak_acts[ACT_KINDS];
extern _Atomic uint64_t soak_accepted, soak_rejected, soak_group_accepted, soak_group_ran,
    soak_group_skipped;

/* Prints the violation with the seed and round, and exits 1. */
void soak_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
uint64_t soak_mix(uint64_t x);
uint64_t soak_new_id(void);
/* Records the result rc of submitting task id; stopped: what stop_returned
 * read before the submit. */
void soak_submitted(uint64_t id, int rc, int stopped, const char *what);
/* Counts the run of id and does what the id says (ACT_*). */
void soak_task_body(uint64_t id);
void soak_run_ptr(void *arg);

void soak_op_region(uint64_t *rng);
void soak_op_group(uint64_t *rng);
void soak_op_sem(uint64_t *rng);
void soak_op_chan(uint64_t *rng);

#endif
