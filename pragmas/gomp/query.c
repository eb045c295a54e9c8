/* The omp_ query and timing calls: where the calling thread is (its team,
 * level, ancestors), the host as the only device, and the clock. */

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

GOMP_API int omp_in_parallel(void)
{
    par_thread *th = par_tls;
    return th && th->c.team && th->c.team->active > 0;
}

/* OpenMP's nesting level: the regions enclosing t, up to the initial
 * thread (a target region's, whose teams have no outer one: the layer's
 * level, which keeps counting there for its deques, does not say it). */
static unsigned level_of(const par_team *t)
{
    unsigned n = 0;
    for (; t; t = t->outer)
        n++;
    return n;
}

unsigned gomp_level(void)
{
    par_thread *th = par_tls;
    return th ? level_of(th->c.team) : 0;
}

GOMP_API int omp_get_level(void) { return (int)gomp_level(); }

GOMP_API int omp_get_active_level(void)
{
    par_thread *th = par_tls;
    return th && th->c.team ? (int)th->c.team->active : 0;
}

/* The team of the region at level (1 = outermost) that encloses the
 * calling thread, and the number there of the thread it descends from;
 * NULL for level 0 or past the current level. */
static par_team *ancestor(int level, unsigned *member)
{
    par_thread *th = par_tls;
    par_team *t = th ? th->c.team : NULL;
    unsigned cur = level_of(t);
    if (!t || level < 1 || (unsigned)level > cur)
        return NULL;
    *member = th->c.member;
    for (; cur > (unsigned)level; cur--) {
        *member = t->outer_member;
        t = t->outer;
    }
    return t;
}

GOMP_API int omp_get_ancestor_thread_num(int level)
{
    unsigned member;
    if (level == 0)
        return 0;
    return ancestor(level, &member) ? (int)member : -1;
}

GOMP_API int omp_get_team_size(int level)
{
    unsigned member;
    if (level == 0)
        return 1;
    par_team *t = ancestor(level, &member);
    return t ? (int)up__load_relaxed(&t->size) : -1;
}

GOMP_API int omp_get_num_procs(void) { return (int)par_cpus(); }

/* The host is the only device: no offloading devices, and every query
 * answers as the initial device (libgomp's host values). */
GOMP_API int omp_get_num_devices(void) { return 0; }
GOMP_API int omp_get_initial_device(void) { return omp_get_num_devices(); }
GOMP_API int omp_get_device_num(void) { return omp_get_initial_device(); }
GOMP_API int omp_is_initial_device(void) { return 1; }

/* A pause, soft or hard, ends the OpenMP pool's threads (gomp_pool_pause);
 * -1 for any device but the initial one, as libgomp answers. */
GOMP_API int omp_pause_resource(int kind, int device)
{
    (void)kind;
    return device == omp_get_initial_device() ? gomp_pool_pause() : -1;
}

GOMP_API int omp_pause_resource_all(int kind)
{
    (void)kind;
    return gomp_pool_pause();
}

GOMP_API double omp_get_wtime(void) { return (double)up__now_ns() * 1e-9; }
GOMP_API double omp_get_wtick(void) { return 1e-9; }
