/* What the task, taskloop, cancellation and task reduction entry points
 * of pragmas/gomp share (tasks.c, taskloop.c, cancel.c, reduction.c). */
#ifndef UP_GOMP_TASKS_H
#define UP_GOMP_TASKS_H

#include <stdint.h>

#include "gomp.h"

/* GCC's task flags (gomp-constants.h, GCC 12). */
#define GOMP_TASK_FLAG_UNTIED    (1u << 0)
#define GOMP_TASK_FLAG_FINAL     (1u << 1)
#define GOMP_TASK_FLAG_MERGEABLE (1u << 2)
#define GOMP_TASK_FLAG_DEPEND    (1u << 3)
#define GOMP_TASK_FLAG_PRIORITY  (1u << 4)
#define GOMP_TASK_FLAG_UP        (1u << 8)
#define GOMP_TASK_FLAG_GRAINSIZE (1u << 9)
#define GOMP_TASK_FLAG_IF        (1u << 10)
#define GOMP_TASK_FLAG_NOGROUP   (1u << 11)
#define GOMP_TASK_FLAG_REDUCTION (1u << 12)
#define GOMP_TASK_FLAG_DETACH    (1u << 13)
#define GOMP_TASK_FLAG_STRICT    (1u << 14)

/* GCC's cancel kinds: the same values as PAR_CANCEL_* plus the taskgroup. */
#define GOMP_CANCEL_PARALLEL  1
#define GOMP_CANCEL_LOOP      2
#define GOMP_CANCEL_SECTIONS  4
#define GOMP_CANCEL_TASKGROUP 8

/* The thread's layer state, made on first use (fatal when it cannot be). */
par_thread *gomp_thread_state(const char *who);
/* par_task_create with GCC's depend array (NULL: none). */
int gomp_task_create(const char *who, up_fn fn, const par_task *proto, const up_task_opts *opts,
                     void **depend);
/* A task of GCC's function fn on a copy of its block (tasks.c says where
 * the copy lives); detach: the detach variable, NULL for none; bounds: a
 * taskloop chunk's [start, end) written over the copy's first two words. */
void gomp_task_spawn(const char *who, void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
                     long arg_size, long arg_align, const up_task_opts *opts, void **depend,
                     void *detach, const uint64_t *bounds);
size_t gomp_deps_count(void **depend);
void gomp_deps_convert(void **depend, up_dep *out);
/* cancel-var (OMP_CANCELLATION, else UP_CANCELLATION; false when unset,
 * as OpenMP says): off, every cancel is ignored. */
int gomp_cancel_var(void);
/* GOMP_barrier_cancel on th: true when the region was cancelled. */
bool gomp_barrier_cancel(par_thread *th);
/* GOMP_taskgroup_reduction_register (reduction.c). */
GOMP_API void GOMP_taskgroup_reduction_register(uintptr_t *data);
GOMP_API void GOMP_taskgroup_start(void);
GOMP_API void GOMP_taskgroup_end(void);
GOMP_API void GOMP_barrier(void);
/* For the worksharing entry points with task reductions (loops and
 * sections): the construct's taskgroup, and its registration (orig: the
 * registration of the member that came first, whose copies the others
 * share; NULL for that first member). GOMP_workshare_task_reduction_unregister
 * ends both. */
void gomp_workshare_taskgroup_start(void);
void gomp_workshare_task_reduction_register(uintptr_t *data, uintptr_t *orig);
/* The current region or taskgroup is cancelled: no new task starts. */
int gomp_cancelled_here(par_thread *th);
/* The taskgroup whose frame is current (fatal when none). */
par_taskgroup *gomp_current_taskgroup(par_thread *th, const char *who);

#endif
