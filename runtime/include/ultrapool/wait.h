/** @file
 * ultrapool: tasks that wait without holding a thread.
 *
 * Stackless waiting (the massive case): a task is queued on an event
 * (up_submit_on) or a timer (up_submit_after, up_timer_start) as a
 * continuation. While it waits it costs one 32-byte record from the pool's
 * slabs (no allocation per task once the slabs are warm), never a queue
 * slot and never a thread, so a pool holds as many as memory allows (1e8
 * take 3.2 GB) with default queue sizes. When its event is set or its
 * time comes it runs on one of the pool's workers, exactly once, like a
 * submitted task (it counts in up_stats.submitted and executed then).
 *
 * Stackful waiting (the convenient case): up_sleep_ns, up_event_wait and
 * up_yield inside a pool task park the task, not the thread: the worker
 * runs other tasks and the task resumes later, on any worker of the pool
 * (see "When a call parks" below); elsewhere they block the calling
 * thread, with the same results.
 *
 * Stop and destroy with tasks still waiting: see the rules at the end of
 * this file. */
#ifndef ULTRAPOOL_WAIT_H
#define ULTRAPOOL_WAIT_H

#include <stdint.h>

#include <ultrapool/pool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** An event: a flag of one pool, unset when created. up_event_set releases
 * every task waiting on it, and it stays set (tasks queued on a set event
 * run at once) until up_event_reset. Any thread may set, reset, test or
 * wait on it, concurrently. */
typedef struct up_event up_event;

/** Creates an unset event of pool p and stores it in *out (NULL on failure).
 * UP_EINVAL for a NULL out or pool, UP_ENOMEM. An event may be created on
 * a stopped pool (it then works as a flag only). */
UP_API int up_event_create(up_event **out, up_pool *p);
/** Releases every task waiting on ev: each runs once on the pool, in no
 * particular order. The setter only detaches the list (one atomic
 * exchange) and hands it to the pool, so setting costs the same for one
 * waiter or 1e8; workers drain the released tasks in batches. Threads
 * blocked in up_event_wait return. UP_OK; setting a set event does
 * nothing. UP_EINVAL for NULL. */
UP_API int up_event_set(up_event *ev);
/** Makes a set event unset again; tasks already released are not affected
 * and an unset event stays as it is. UP_OK, UP_EINVAL for NULL. */
UP_API int up_event_reset(up_event *ev);
/** 1 when set, 0 when not (and for NULL). */
UP_API int up_event_is_set(const up_event *ev);
/** Frees the event. Tasks still waiting on it are released first and run
 * once with up_cancelled() true. No thread may be blocked in, or call
 * anything on, ev during or after the call. May be called after its pool
 * was destroyed. NULL is a no-op. UP_OK. */
UP_API int up_event_destroy(up_event *ev);

/** Stackless: fn(arg) runs on p once ev is set: at once (as up_submit)
 * when it already is. p must be the event's pool (UP_EINVAL otherwise, or
 * for a NULL p, ev or fn). UP_ESTOPPED after up_pool_stop, UP_ENOMEM when
 * no record can be had. Never UP_EOVERLOAD: a task due now that finds
 * every queue full is handed to the workers as a released task. Safe from
 * any thread, inside or outside the pool's tasks. */
UP_API int up_submit_on(up_pool *p, up_event *ev, up_fn fn, void *arg);
/** Stackless: fn(arg) runs on p once delay_ns have passed (0: at once, as
 * up_submit), never earlier (measured on CLOCK_MONOTONIC); the timer's
 * resolution is 2^20 ns (about 1 ms), so it may run up to about a
 * millisecond later plus the time a worker needs to take it. UINT64_MAX
 * means never (the task waits until destroy cancels it). Errors as for
 * up_submit_on; UP_EAGAIN when the pool's timer thread cannot be started.
 * The first timer of a pool starts that thread (one per pool, sleeping
 * until the next deadline: no CPU while no timer is due). */
UP_API int up_submit_after(up_pool *p, uint64_t delay_ns, up_fn fn, void *arg);

/** A periodic timer, started by up_timer_start() and freed by up_timer_stop(). */
typedef struct up_timer up_timer;

/** Starts a periodic timer of p and stores it in *out (NULL on failure):
 * fn(arg) runs on p first after first_ns, then every period_ns
 * (period_ns 0: once), until up_timer_stop or up_pool_stop.
 * Periods are counted from the first deadline, not from the runs, so a
 * ticker does not drift: its deadlines are D_k = start + first_ns +
 * k * period_ns (start: the call's CLOCK_MONOTONIC time), k = 0, 1, ...
 * The pool's timer thread reaches them in order, each once, never before
 * its time: a deadline reached while the previous run has not finished
 * (or not started), or while the pool is stopping or out of memory, is
 * skipped; so is every further deadline that has also passed when the
 * thread comes to the timer late (a stalled machine, or a period below
 * the wheel's tick of 2^20 ns), and a run queued but not started when
 * up_timer_stop is called. A ticker never piles up, and every deadline
 * reached is either run or counted in up_timer_skipped(), never both: once
 * the timer no longer fires (after up_pool_stop_and_wait, say), the runs
 * of fn plus up_timer_skipped() equal the number of deadlines D_0 .. D_j
 * up to the last one reached, D_j being the last that had passed when
 * the timer thread last handled the timer. Runs are not counted in
 * up_stats.waiting between periods. *out is
 * stored before the first run can start, so a run may read it (to stop
 * its own timer). UP_EINVAL
 * (NULL out, p or fn), UP_ESTOPPED, UP_ENOMEM, UP_EAGAIN (no timer
 * thread). */
UP_API int up_timer_start(up_timer **out, up_pool *p, uint64_t first_ns, uint64_t period_ns,
                          up_fn fn, void *arg);
/** Stops the timer, waits for a run in progress to return, and frees it:
 * no run of the timer starts after this returns. Every started timer must
 * be stopped once (after up_pool_stop or up_pool_destroy too: the timer
 * no longer fires then, but it is freed only here). From inside the
 * timer's own run: the timer stops, is freed when that run returns, and
 * the call returns UP_EDEADLK. UP_EINVAL for NULL. */
UP_API int up_timer_stop(up_timer *t);
/** Runs of t skipped so far (see up_timer_start). 0 for NULL. */
UP_API uint64_t up_timer_skipped(const up_timer *t);

/* Stackful calls.
 *
 * When a call parks. A call parks the calling task (the worker goes on
 * with other tasks; the task resumes on any worker of the pool once its
 * event is set, its time comes or, for up_yield, after the tasks already
 * released or queued) when all of these hold:
 *   - it is made from a task of a pool, run by one of that pool's workers
 *     (each worker runs its loop, and so its tasks, on a pooled stack of
 *     the workers' stack size, up_config.stack_size);
 *   - the task is not running inside a helping wait (up_group_wait,
 *     up_submit_wait facing a full queue ...) of another task;
 *   - for up_event_wait, the event belongs to that same pool;
 *   - a stack for the worker's next loop can be had. Guarded stacks count
 *     against the kernel's map count (see vm.max_map_count): one mapping
 *     each on Linux 6.13 and later (lightweight guard regions), two
 *     elsewhere (a PROT_NONE guard page), so the process maps at most
 *     (max_map_count - 4096) / 1 or / 2 of them: about 61,400 or 30,700
 *     at the default of 65,530 (raise it to N + 4096 or 2 * N + 4096 for
 *     N parked tasks; the first time the limit is met, one line on stderr
 *     says so and which). Once a pool's tasks have parked, a
 *     worker starts a queued task only when it holds a spare stack for
 *     it; while parked tasks hold every stack, workers resume parked
 *     tasks (whose ends give stacks back) and leave the queued ones
 *     waiting, so submits wait for room rather than tasks blocking.
 *     Only when no stack has come back for 250 ms of a worker's looking
 *     (the parked tasks wait for an event that a queued task would set,
 *     say; time a worker spends off its CPU does not count) do workers
 *     start queued tasks anyway, and those calls then block; memory
 *     running out does the same;
 *   - the task is not using the parallel layer (<ultrapool/parallel.h>)
 *     on this thread: it is not a region member (nor inside an
 *     up_parallel it called) and not a task of the layer (up_task and
 *     its kinds, inside a region), whose per-thread state would not
 *     follow it. A plain pool task in a program that also uses the layer
 *     parks.
 * Otherwise (a plain thread, a region member, a task run by a blocked
 * submitter or a group waiter, the conditions above) the call blocks the
 * calling thread, as the corresponding system call would; no call
 * deadlocks by itself, but a pool task that blocks holds its worker (the
 * monitor adds workers for blocked ones). Submitters that help (a
 * waiting submit facing a full queue runs queued tasks itself, and one
 * facing a backlog of short tasks runs its own, UP_SUBMIT_HELP) run none
 * while the shard's tasks call these waits: a worker that runs such a
 * call marks the shard until 32 tasks in a row have returned without
 * one, and a submit then waits for room instead. The mark is a hint, not
 * a promise: before the first such call on a shard, when tasks that wait
 * are mixed among many that do not, or when a task of the submitter's
 * shard waits on another shard's worker, a helping submitter may still
 * run a task that waits and be blocked by it. A thread that submits
 * waiting tasks with up_submit_wait and later sets their event itself
 * should use submit_help 0 (UP_SUBMIT_HELP=0), or up_submit_on, which
 * never runs a task on the caller.
 *
 * A parked task may resume on another thread: code around these calls
 * must not keep a thread-local variable's address (or a value such as
 * pthread_self(), which compilers may cache) across them; up_worker_local()
 * and up_current_pool() give the new worker's values after the call. A
 * parked task costs the stack pages its frames touched (a few KiB for a
 * shallow task) and counts in up_stats.tasks_parked while parked and in
 * tasks_resumed once resumed. A destroy resumes each parked task once with
 * up_cancelled() true: up_event_wait returns UP_ECANCELED, up_sleep_ns
 * returns early. */
/** Sleeps at least ns (CLOCK_MONOTONIC); 0 returns at once. UP_OK (also
 * when a destroy ends a parked sleep early). A parked sleep of 50 us or
 * more waits on the pool's timer wheel, whose tick is about 1 ms, so it
 * ends up to a tick late; a shorter one parks in naps instead (released
 * at once, resumed in its turn among the released tasks, again until its
 * time has passed), so it ends microseconds late on a busy pool, and a
 * lone short sleeper keeps its worker cycling that long. */
UP_API int up_sleep_ns(uint64_t ns);
/** Waits until ev is set: returns at once when it is, and also when it was
 * set and reset again while this call waited. UP_OK, UP_EINVAL for NULL,
 * UP_ECANCELED when a destroy (of the pool or the event) ended a parked
 * wait. */
UP_API int up_event_wait(up_event *ev);
/** The same with a limit: UP_OK when set within timeout_ns, UP_ETIMEDOUT
 * otherwise (UINT64_MAX: no limit). */
UP_API int up_event_wait_timeout(up_event *ev, uint64_t timeout_ns);
/** Lets other tasks run: a parked caller resumes after the tasks already
 * queued or released on its pool (except while parked tasks hold every
 * task stack, when workers run released tasks only, this one included);
 * a blocking caller lets other threads run (sched_yield). UP_OK. */
UP_API int up_yield(void);

/** 1 inside a task that a destroy released (up_event_destroy, or
 * up_pool_destroy with tasks still waiting) rather than its event or
 * timer, and, with the parallel layer (<ultrapool/parallel.h>), inside a
 * task of a cancelled taskgroup; 0 otherwise, and outside tasks. */
UP_API int up_cancelled(void);

/* Stop and destroy with tasks still waiting (stackless and parked ones).
 * Every accepted waiting task runs exactly once:
 *   up_pool_stop: no new waits (up_submit_on, up_submit_after and
 *     up_timer_start return UP_ESTOPPED); periodic timers stop firing;
 *     tasks already waiting stay waiting until their event is set or
 *     their time comes, and then run (a worker is started for them if
 *     none is left). A task accepted before the stop (queued or running)
 *     that calls up_sleep_ns, up_event_wait or up_yield after it parks
 *     as it would have without the stop, holding no thread.
 *   up_pool_stop_and_wait: waits for them too, so an event that is never
 *     set makes it wait for ever: use up_pool_stop_timeout, which returns
 *     UP_ETIMEDOUT with up_stats.waiting + tasks_parked telling how many
 *     are left.
 *   up_pool_destroy: releases every task still waiting (on events, on
 *     timers), each runs once with up_cancelled() true, waits for them,
 *     then frees the pool; a sleep or event wait that parks once the
 *     destroy has begun ends at once, cancelled, the same way. Events of
 *     the pool stay valid as flags until up_event_destroy (nothing can
 *     wait on them any more: the pool they would submit to is gone);
 *     timers until up_timer_stop.
 * Counters (up_stats, defined in pool.h): waiting, stackless tasks
 * waiting now (including released ones no worker has taken yet);
 * released, stackless tasks taken to run after their event or timer
 * released them; cancelled, those a destroy released; tasks_parked and
 * tasks_resumed, the stackful ones. A waiting task counts in submitted
 * when a worker takes it. */

#ifdef __cplusplus
}
#endif

#endif
