/* OpenMP's internal control variables (gomp.h), per thread. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gomp.h"
#include "par_env.h"

static _Thread_local gomp_icv icv;
static _Thread_local int icv_ready;

static unsigned cpus_default(void)
{
    /* The team size nothing else sets: one per CPU the pool covers. */
    unsigned n = up_pool_cpus(gomp_pool());
    return n ? n : 1;
}

/* The ICVs of a thread that is in no region yet: the environment's. */
static void icv_initial(gomp_icv *v)
{
    const par_env *env = par_env_get();
    memset(v, 0, sizeof *v);
    v->nthreads = par_env_threads(env, 1);
    if (v->nthreads == 0)
        v->nthreads = cpus_default();
    const char *dyn = getenv("OMP_DYNAMIC");
    v->dynamic = dyn && (!strcasecmp(dyn, "true") || !strcmp(dyn, "1"));
    v->max_active_levels = env->max_active;
    v->level_from_env = 1;
}

gomp_icv *gomp_icv_get(void)
{
    if (!icv_ready) {
        icv_initial(&icv);
        icv_ready = 1;
    }
    return &icv;
}

void gomp_icv_inherit(const gomp_icv *parent)
{
    icv = *parent;
    icv_ready = 1;
    /* OMP_NUM_THREADS=4,2: the list's next value sizes the regions opened
     * one level down; past its end the enclosing value stays. */
    unsigned next = par_env_threads(par_env_get(), parent->level_from_env + 1);
    if (next && parent->level_from_env < par_env_get()->nlevels)
        icv.nthreads = next;
    icv.level_from_env = parent->level_from_env + 1;
}
