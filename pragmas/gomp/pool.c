/* The pool OpenMP regions run on (gomp.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>

#include "gomp.h"

/* The longest timeout up_config accepts (30 days): never, for a run. */
#define NEVER_NS (30ull * 24 * 3600 * 1000000000ull)

/* The process's pool: made on first use, and again after a pause
 * (gomp_pool_pause) released it. */
static _Atomic(up_pool *) process_pool;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

static up_pool *make_pool(void)
{
    up_config cfg;
    /* A malformed UP_* variable is reported by up_config_init itself; the
     * configuration keeps the fields of the valid ones. */
    up_config_init(&cfg);
    /* GOMP_STACKSIZE, libgomp's older name, where OMP_STACKSIZE (which the
     * pool reads) and UP_STACK_SIZE are unset. */
    if (!up__env("UP_STACK_SIZE") && !up__env("OMP_STACKSIZE") && gomp_env_get()->stacksize)
        cfg.stack_size = gomp_env_get()->stacksize;
    /* OpenMP threads live until exit, as libgomp's do. Docked members
     * (pragmas/src/crew.c) keep theirs while docked; the others, which a
     * later region's queue takes, would lose their threadprivate (TLS)
     * values by retiring. So this pool's workers do not retire, unless
     * the user set the timeouts. */
    if (!up__env("UP_IDLE_TIMEOUT"))
        cfg.idle_timeout_ns = NEVER_NS;
    if (!up__env("UP_EXTRA_IDLE_TIMEOUT"))
        cfg.extra_idle_timeout_ns = NEVER_NS;
    /* Its tasks are region members, which take their team's ICVs: sizing
     * their threads' default teams (UP_OMP_SHARE, for the regions a user
     * pool's tasks open) would only cost a call per task. */
    cfg.omp_share = 0;
    gomp_check_alone("at the first parallel region");
    up_pool *p;
    int rc = up_pool_create(&p, &cfg);
    if (rc != UP_OK)
        gomp_fatal("cannot create the OpenMP pool: %s (%s)", up_strerror(rc), up_last_error());
    return p;
}

up_pool *gomp_pool(void)
{
    up_pool *mine = up_current_pool();
    if (mine)
        return mine;
    up_pool *p = up__load_acquire(&process_pool);
    if (p)
        return p;
    pthread_mutex_lock(&pool_lock);
    p = up__load_relaxed(&process_pool);
    if (!p) {
        p = make_pool();
        up__store_release(&process_pool, p);
    }
    pthread_mutex_unlock(&pool_lock);
    return p;
}

int gomp_pool_pause(void)
{
    par_thread *th = par_tls;
    if ((th && (th->level > 0 || th->c.team)) || up_current_pool())
        return -1;
    pthread_mutex_lock(&pool_lock);
    up_pool *p = up__exchange_acq_rel(&process_pool, NULL);
    pthread_mutex_unlock(&pool_lock);
    if (p) {
        /* Docked region members are inside pool tasks: released, they go
         * back to the loop and the destroy can end them. The stop comes
         * first, so that a region another thread ends meanwhile docks
         * nobody (crew.c). */
        up_pool_stop(p);
        par_crews_release(p, UINT_MAX);
        int rc = up_pool_destroy(p);
        if (rc != UP_OK)
            gomp_fatal("omp_pause_resource: the OpenMP pool cannot be released: %s (%s)",
                       up_strerror(rc), up_last_error());
    }
    return 0;
}

void gomp_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("ultrapool libgomp: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

/* The marker that the runtime (omp_share.c) and the parallel layer's
 * backends look up with dlsym: OpenMP in this process is ultrapool. */
GOMP_API const char up_gomp_runtime[] = "ultrapool";
