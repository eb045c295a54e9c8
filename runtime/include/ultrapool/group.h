/** @file
 * Task groups: run many tasks on a pool with at most `limit` of them active
 * at once, wait for all, get the first error, cancel the rest.
 *
 *     up_group *g;
 *     up_group_create(&g, pool, 8);              // at most 8 active
 *     for (int i = 0; i < n; i++)
 *         if (up_group_go(g, process, &items[i]) != UP_OK)
 *             break;                             // cancelled: a task failed
 *     int rc = up_group_wait(g);                 // first non-zero result, or 0
 *     up_group_destroy(g);
 *
 * up_group_go blocks while `limit` tasks of the group are active (queued or
 * running), which paces the submitting loop. A task returns 0 for success;
 * the first non-zero result (the first to be returned, not the first task
 * submitted) cancels the group: tasks that have not started
 * are skipped (counted by up_group_skipped), running ones can poll
 * up_group_cancelled, and later up_group_go calls return UP_ECANCELED.
 *
 * Nothing is allocated per task: the task record travels in the pool's
 * queue slot. A thread that waits (in up_group_go at the limit, or in
 * up_group_wait) runs queued tasks of the pool meanwhile, so a group may be
 * used from inside the pool's own tasks, even on a pool of one worker. (A
 * pool with an on_worker_start hook is the exception: its tasks run only on
 * its workers, and other threads sleep while they wait.) The task a waiter
 * picks may be any task of the pool, long ones included, and the waiter
 * returns only after it: hold no lock a task needs while calling in, and
 * expect a cancelled up_group_go to return once that task is done. */
#ifndef ULTRAPOOL_GROUP_H
#define ULTRAPOOL_GROUP_H

#include <ultrapool/pool.h>
#include <ultrapool/export.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct up_group up_group; /**< opaque */
/** A task of a group: returns 0 on success; anything else fails and cancels
 * the group. */
typedef int (*up_group_fn)(void *arg);

/** Creates a group running its tasks on pool. limit: most tasks active at
 * once, 1 to 2^31 - 1, or 0 for no limit; UP_EINVAL above. */
UP_API int up_group_create(up_group **out, up_pool *pool, unsigned limit);

/** Submits fn(arg) to the group's pool, first waiting while `limit` tasks
 * of the group are active. UP_ECANCELED once the group is cancelled (the
 * task is not run); the pool's submit errors (UP_ESTOPPED) likewise.
 * UP_EDEADLK when the caller is itself one of the group's tasks and every
 * slot is held by tasks further down its own stack. */
UP_API int up_group_go(up_group *g, up_group_fn fn, void *arg);

/** Waits until every task submitted to the group has finished or been
 * skipped. Returns the first non-zero result of a task; else UP_ECANCELED
 * if up_group_cancel was called; else 0. Once it returns no task touches
 * the group any more, so it may be destroyed at once. UP_EDEADLK when
 * called from a task of the group (or with one further down the calling
 * thread's stack: a task run while waiting waits on an enclosing group).
 * A group may be used again after a wait; its error and cancellation stay. */
UP_API int up_group_wait(up_group *g);

/** Cancels the group: queued tasks are skipped, later up_group_go calls
 * return UP_ECANCELED, threads blocked in up_group_go return. */
UP_API void up_group_cancel(up_group *g);
/** 1 once the group is cancelled (by up_group_cancel or a failed task). */
UP_API int up_group_cancelled(const up_group *g);
/** Tasks skipped because the group was cancelled before they started. */
UP_API uint64_t up_group_skipped(const up_group *g);
/** Inside a task of a group: that group; NULL elsewhere. */
UP_API up_group *up_group_current(void);

/** Waits for the group's tasks if any are left, then frees it.
 * UP_EDEADLK (nothing freed) from inside one of its tasks. */
UP_API int up_group_destroy(up_group *g);

#ifdef __cplusplus
}
#endif
#endif
