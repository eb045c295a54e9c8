/* The pool OpenMP regions run on (gomp.h). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "gomp.h"

/* The longest timeout up_config accepts (30 days): never, for a run. */
#define NEVER_NS (30ull * 24 * 3600 * 1000000000ull)

static up_pool *process_pool;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void make_pool(void)
{
    up_config cfg;
    /* A malformed UP_* variable is reported by up_config_init itself; the
     * configuration keeps the fields of the valid ones. */
    up_config_init(&cfg);
    /* GOMP_STACKSIZE, libgomp's older name, where OMP_STACKSIZE (which the
     * pool reads) and UP_STACK_SIZE are unset. */
    if (!getenv("UP_STACK_SIZE") && !getenv("OMP_STACKSIZE") && gomp_env_get()->stacksize)
        cfg.stack_size = gomp_env_get()->stacksize;
    /* OpenMP threads live until exit, as libgomp's do: a worker that held
     * member i of a region must still be there for the next region, whose
     * member i it becomes again, with its threadprivate (TLS) values
     * (team.c). So this pool's workers do not retire, unless the user
     * set the timeouts. */
    if (!getenv("UP_IDLE_TIMEOUT"))
        cfg.idle_timeout_ns = NEVER_NS;
    if (!getenv("UP_EXTRA_IDLE_TIMEOUT"))
        cfg.extra_idle_timeout_ns = NEVER_NS;
    gomp_check_alone("at the first parallel region");
    int rc = up_pool_create(&process_pool, &cfg);
    if (rc != UP_OK)
        gomp_fatal("cannot create the OpenMP pool: %s (%s)", up_strerror(rc), up_last_error());
}

up_pool *gomp_pool(void)
{
    up_pool *mine = up_current_pool();
    if (mine)
        return mine;
    pthread_once(&pool_once, make_pool);
    return process_pool;
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
