/* The environment registry (env_registry.h): one table of every variable
 * the libraries read and every name reserved for the tools, and the one
 * function through which the libraries read them.
 *
 * What is in it: ultrapool's own UP_* variables; the OpenMP variables
 * that ultrapool interprets (OMP_* standing in for unset UP_* ones, and
 * the OMP_* and GOMP_* variables its libgomp.so.1 reads as libgomp does);
 * the variables of hwloc and likwid that change what the pool plans.
 * What is not: variables that ultrapool only passes on or edits without
 * interpreting them, such as LD_LIBRARY_PATH, to which the ultrapool-omp
 * launcher (a program, not a library) prepends its folder for the dynamic
 * linker; and variables that hwloc or MPI read for themselves. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debug.h"
#include "env_registry.h"

#define POOL UP__ENV_POOL
#define PAR  UP__ENV_PARALLEL
#define OMP  UP__ENV_OPENMP
#define MPI  UP__ENV_MPI
#define SUG  UP__ENV_SUGGEST
#define PFX  UP__ENV_PREFIX

/* The entries marked SUG keep the order of the names the unknown-name
 * warning compared before this table existed (the pool's options in the
 * order of up_config, UP_PRINT_CONFIG, the parallel layer's), so that a
 * tie between two near names still picks the same one. */
const up__env_var up__env_vars[] = {
    /* The pool (config.c: one option each, in the order of up_config). */
    {"UP_SHARDS", POOL, SUG, "the number of shards (0: from the topology)"},
    {"UP_SHARD_MIN_WORKERS", POOL, SUG, "the floor of workers per shard"},
    {"UP_SHARD_MAX_WORKERS", POOL, SUG, "the most workers of one shard"},
    {"UP_MAX_WORKERS", POOL, SUG, "the most workers of the whole pool (0: no cap)"},
    {"UP_QUEUE_CAPACITY", POOL, SUG, "the task slots of each shard's queue"},
    {"UP_DEQUE_CAPACITY", POOL, SUG, "the slots of each worker's own deque"},
    {"UP_IDLE_TIMEOUT", POOL | OMP, SUG,
     "how long a worker above the floor idles before it retires"},
    {"UP_EXTRA_IDLE_TIMEOUT", POOL | OMP, SUG,
     "how long a worker beyond its shard's CPUs idles before it retires"},
    {"UP_SPAWN_DELAY", POOL, SUG, "how often the monitor looks at a backlog for blocked workers"},
    {"UP_SPIN", POOL, SUG, "how many polls an idle worker makes before it parks"},
    {"UP_SUBMIT_HELP", POOL, SUG, "what a waiting submit does when the queue is full"},
    {"UP_BIND", POOL, SUG, "whether workers are bound to CPUs: none, shard or core"},
    {"UP_SHARD_MAX_CORES", POOL, SUG, "the most cores of one shard of the topology plan"},
    {"UP_SHARD_CHOICE", POOL, SUG, "which shard a submit from outside tries first"},
    {"UP_STACK_SIZE", POOL | OMP, SUG, "the stack size of each worker thread"},
    {"UP_OMP_SHARE", POOL, SUG, "OpenMP regions in pool tasks get the CPUs the shard has free"},
    {"UP_PRINT_CONFIG", POOL, SUG, "print the configuration when a pool is created"},
    /* The parallel layer (pragmas/src/env.c, backend.c). */
    {"UP_NUM_THREADS", PAR, SUG, "the team size of regions with nthreads 0, by level"},
    {"UP_THREAD_LIMIT", PAR, SUG, "the most threads of a region and the regions nested in it"},
    {"UP_MAX_ACTIVE_LEVELS", PAR, SUG, "the most nested active regions"},
    {"UP_SCHEDULE", PAR, SUG, "the schedule and chunk of UP_SCHED_RUNTIME loops"},
    {"UP_CANCELLATION", PAR, SUG, "whether up_cancel_taskgroup cancels"},
    {"UP_BACKEND", PAR | OMP, 0, "the runtime under parallel.h: ultrapool, gomp or llvm"},
    {"UP_BACKEND_PATH", PAR, 0, "folders searched first for the OpenMP backend modules"},
    /* The MPI mode (mpi/farm.c). */
    {"UP_MPI_HEARTBEAT_TIMEOUT", MPI, 0, "the silence after which a farm's rank counts as dead"},
    /* OpenMP's variables standing in for unset UP_* ones (config_omp.c,
     * pragmas/src/env.c); libgomp.so.1 reads some of them for its own
     * ICVs too (pragmas/gomp/environ.c, places.c). */
    {"OMP_NUM_THREADS", PAR, 0, "stands in for UP_NUM_THREADS"},
    {"OMP_THREAD_LIMIT", PAR, 0, "stands in for UP_THREAD_LIMIT"},
    {"OMP_MAX_ACTIVE_LEVELS", PAR, 0, "stands in for UP_MAX_ACTIVE_LEVELS"},
    {"OMP_NESTED", PAR, 0, "stands in for UP_MAX_ACTIVE_LEVELS without OMP_MAX_ACTIVE_LEVELS"},
    {"OMP_SCHEDULE", PAR, 0, "stands in for UP_SCHEDULE"},
    {"OMP_CANCELLATION", PAR, 0, "stands in for UP_CANCELLATION"},
    {"OMP_PROC_BIND", POOL | OMP, 0, "stands in for UP_BIND; the OpenMP runtime's bind-var"},
    {"OMP_PLACES", POOL | OMP, 0, "stands in for UP_BIND; the OpenMP runtime's place list"},
    {"OMP_STACKSIZE", POOL | OMP, 0, "stands in for UP_STACK_SIZE"},
    {"OMP_WAIT_POLICY", POOL | OMP, 0, "stands in for UP_SPIN; the OpenMP runtime's spin count"},
    {"OMP_DISPLAY_ENV", POOL | OMP, 0, "stands in for UP_PRINT_CONFIG; OpenMP's settings block"},
    /* Read by ultrapool's OpenMP runtime only (pragmas/gomp). */
    {"OMP_DYNAMIC", OMP, 0, "dyn-var: whether teams may be smaller than asked"},
    {"OMP_MAX_TASK_PRIORITY", OMP, 0, "max-task-priority-var"},
    {"OMP_DEFAULT_DEVICE", OMP, 0, "default-device-var"},
    {"OMP_NUM_TEAMS", OMP, 0, "nteams-var: the teams of a teams construct"},
    {"OMP_TEAMS_THREAD_LIMIT", OMP, 0, "teams-thread-limit-var"},
    {"OMP_DISPLAY_AFFINITY", OMP, 0, "print each thread's affinity line at a region's start"},
    {"OMP_AFFINITY_FORMAT", OMP, 0, "the format of the affinity lines"},
    {"OMP_ALLOCATOR", OMP, 0, "the default memory allocator"},
    {"OMP_TARGET_OFFLOAD", OMP, 0, "MANDATORY stops a construct for an absent device"},
    {"GOMP_CPU_AFFINITY", OMP, 0, "libgomp's CPU list, the place list without OMP_PLACES"},
    {"GOMP_STACKSIZE", OMP, 0, "libgomp's older name of OMP_STACKSIZE"},
    {"GOMP_SPINCOUNT", OMP, 0, "libgomp's spin count of a waiting thread"},
    /* Other software's (topo_common.c, os/topo_hwloc.c). */
    {"HWLOC_XMLFILE", POOL, 0, "hwloc's: the plan follows the topology it names, unbound"},
    {"HWLOC_SYNTHETIC", POOL, 0, "hwloc's: the plan follows the topology it describes, unbound"},
    {"LIKWID_PIN", POOL, 0, "set by likwid-pin: the plan covers its CPUs, the pool binds none"},
    /* Reserved: read by no library, and no unknown-name warning. */
    {"UP_TEST_", 0, PFX, "sizes, seeds and knobs of the test programs"},
    {"UP_BENCH_", 0, PFX, "knobs of the benchmark programs and scripts"},
    {"UP_MACHINE", 0, 0, "the machine name scripts/bench-par records"},
    {"UP_FUZZ", 0, 0, "set by ctest for the configuration fuzzer"},
};
const size_t up__env_nvars = sizeof up__env_vars / sizeof up__env_vars[0];

const up__env_var *up__env_lookup(const char *name)
{
    for (size_t i = 0; i < up__env_nvars; i++) {
        const up__env_var *v = &up__env_vars[i];
        if (v->flags & UP__ENV_PREFIX ? !strncmp(name, v->name, strlen(v->name))
                                      : !strcmp(name, v->name))
            return v;
    }
    return NULL;
}

const char *up__env(const char *name)
{
    /* A library reads only what the table lists, and never a name that
     * belongs to the tools. */
    up__assert(up__env_lookup(name) && up__env_lookup(name)->layers != 0);
    return getenv(name);
}

void up__env_layer_names(unsigned layers, char *buf, size_t size)
{
    static const char *const names[] = {"pool", "parallel", "openmp", "mpi"};
    size_t n = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
        if (layers & (1u << i) && n < size)
            n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? "," : "", names[i]);
    if (n == 0)
        snprintf(buf, size, "-");
}
