/* The first task of a fresh pool sizes its OpenMP team as a later task on
 * an idle pool would (omp_share.c, docs/interop.md): one thread per CPU of
 * its shard, at most the runtime's default. It used to get a team of one
 * in some new pools, because the floor workers still starting or
 * searching counted as busy.
 *
 * The OpenMP runtime is this program's stand-in: omp_set_num_threads and
 * omp_get_max_threads below, exported from the executable (CMake's
 * ENABLE_EXPORTS), where the pool's dlsym finds them. So the test needs
 * no OpenMP, runs in the sanitizer trees, and reads exactly the team size
 * the worker set for its task.
 *
 * Not a question of timing: each pool runs one task, so no other worker
 * is in a task whatever its state, and the rule gives that one the whole
 * shard. Half of the pools spin long before parking (UP_SPIN's field), so
 * their floor workers are surely searching when the task starts; the other
 * half use the default, the case as users meet it. Exits 77 with one CPU,
 * where every team is one thread anyway. */
#include <pthread.h>
#include <stdio.h>

#include <ultrapool/pool.h>

#include "check.h"
#include "cpus.h"

/* ---- the OpenMP runtime's stand-in ------------------------------------ */

void omp_set_num_threads(int n);
int omp_get_max_threads(void);

static int runtime_default;   /* one per CPU, as OpenMP's default */
static _Thread_local int icv; /* the thread's nthreads-var; 0: unset */

void omp_set_num_threads(int n) { icv = n; }
int omp_get_max_threads(void) { return icv > 0 ? icv : runtime_default; }

/* ---- the test --------------------------------------------------------- */

#define POOLS 20

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int seen; /* (lock) the team size the task saw, 0: not run yet */

static void first_task(void *arg)
{
    (void)arg;
    int n = omp_get_max_threads(); /* what `#pragma omp parallel` would get */
    pthread_mutex_lock(&lock);
    seen = n;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&lock);
}

int main(void)
{
    unsigned ncpus = test_cpus();
    if (ncpus < 2) {
        printf("one CPU: every team is one thread\n");
        return 77;
    }
    runtime_default = (int)ncpus;
    unsigned wrong = 0;
    for (int i = 0; i < POOLS; i++) {
        up_config cfg;
        CHECK_EQ(up_config_init(&cfg), UP_OK);
        cfg.shards = 1;
        cfg.shard_min_workers = ncpus; /* a worker per CPU from the start */
        cfg.omp_share = 1;
        if (i % 2)
            cfg.spin = 1000000; /* searching for a while before parking */
        up_pool *p;
        CHECK_EQ(up_pool_create(&p, &cfg), UP_OK);
        pthread_mutex_lock(&lock);
        seen = 0;
        pthread_mutex_unlock(&lock);
        CHECK_EQ(up_submit(p, first_task, NULL), UP_OK);
        /* Waited for asleep, so that a worker runs it, not this thread. */
        pthread_mutex_lock(&lock);
        while (seen == 0)
            pthread_cond_wait(&cv, &lock);
        int got = seen;
        pthread_mutex_unlock(&lock);
        up_pool_stop_and_wait(p);
        up_pool_destroy(p);
        if (got != (int)ncpus) {
            printf("pool %d (spin %u): the first task's team %d, expected %u (one per CPU)\n", i,
                   cfg.spin, got, ncpus);
            wrong++;
        }
    }
    printf("%d fresh pools on %u CPUs: %u first teams smaller than one per CPU\n", POOLS, ncpus,
           wrong);
    CHECK_EQ(wrong, 0);
    return 0;
}
