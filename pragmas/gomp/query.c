/* The omp_ query and timing calls. */
#include "gomp.h"

GOMP_API int omp_get_thread_num(void)
{
    par_thread *th = par_tls;
    return th && th->c.team ? (int)th->c.member : 0;
}

GOMP_API int omp_get_num_threads(void)
{
    par_thread *th = par_tls;
    return th && th->c.team ? (int)th->c.size : 1;
}

GOMP_API int omp_get_max_threads(void) { return (int)gomp_icv_get()->nthreads; }

GOMP_API int omp_in_parallel(void)
{
    par_thread *th = par_tls;
    return th && th->c.team && th->c.team->active > 0;
}

GOMP_API void omp_set_num_threads(int n)
{
    if (n > 0)
        gomp_icv_get()->nthreads = (unsigned)n;
}

GOMP_API void omp_set_dynamic(int on) { gomp_icv_get()->dynamic = on != 0; }
GOMP_API int omp_get_dynamic(void) { return gomp_icv_get()->dynamic; }

GOMP_API double omp_get_wtime(void) { return (double)up__now_ns() * 1e-9; }
GOMP_API double omp_get_wtick(void) { return 1e-9; }
