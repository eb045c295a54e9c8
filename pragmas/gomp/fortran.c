/* The Fortran omp_*_ wrappers of gfortran's omp_lib: arguments by
 * reference, LOGICAL as a 4-byte (or, in the _8_ forms, 8-byte) integer,
 * the _8_ forms taking INTEGER(8) for -fdefault-integer-8, and a CHARACTER
 * argument followed by a hidden length (size_t) at the end of the list,
 * blank-padded rather than NUL-terminated. The locks' wrappers are in
 * locks.c, with their two symbol versions. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gomp.h"

/* The C calls (their files define them). */
void omp_set_dynamic(int);
void omp_set_nested(int);
int omp_get_nested(void);
void omp_set_num_threads(int);
int omp_get_dynamic(void);
int omp_get_max_threads(void);
int omp_get_num_procs(void);
int omp_in_parallel(void);
double omp_get_wtick(void);
double omp_get_wtime(void);
int omp_get_active_level(void);
int omp_get_max_active_levels(void);
void omp_set_max_active_levels(int);
void omp_get_schedule(int *, int *);
void omp_set_schedule(int, int);
int omp_get_team_size(int);
int omp_get_thread_limit(void);
int omp_in_final(void);
int omp_get_cancellation(void);
int omp_get_default_device(void);
void omp_set_default_device(int);
int omp_get_num_devices(void);
int omp_get_proc_bind(void);
int omp_is_initial_device(void);
int omp_get_initial_device(void);
int omp_get_max_task_priority(void);
int omp_get_num_places(void);
int omp_get_partition_num_places(void);
void omp_get_partition_place_nums(int *);
int omp_get_place_num(void);
int omp_get_place_num_procs(int);
void omp_get_place_proc_ids(int, int *);
size_t omp_capture_affinity(char *, size_t, const char *);
void omp_display_affinity(const char *);
size_t omp_get_affinity_format(char *, size_t);
void omp_set_affinity_format(const char *);
int omp_pause_resource(int, int);
int omp_pause_resource_all(int);
void omp_destroy_allocator(uintptr_t);
void omp_set_default_allocator(uintptr_t);
uintptr_t omp_init_allocator(uintptr_t, int, const void *);
int omp_get_supported_active_levels(void);
int omp_get_device_num(void);
void omp_display_env(int);
int omp_get_max_teams(void);
int omp_get_teams_thread_limit(void);
void omp_set_num_teams(int);
void omp_set_teams_thread_limit(int);

/* An INTEGER(8) argument as the C int it stands for, clamped. */
static int narrow(int64_t v)
{
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int)v;
}

/* No argument, the C call's value. */
#define GET(type, name)                                                                            \
    GOMP_API type name##_(void) { return (type)name(); }
/* One INTEGER (or LOGICAL) argument, in both kinds. */
#define SET(name)                                                                                  \
    GOMP_API void name##_(const int32_t *v) { name(*v); }                                          \
    GOMP_API void name##_8_(const int64_t *v) { name(narrow(*v)); }

GET(int32_t, omp_get_dynamic)
GET(int32_t, omp_get_nested)
GET(int32_t, omp_get_max_threads)
GET(int32_t, omp_get_num_procs)
GET(int32_t, omp_get_num_threads)
GET(int32_t, omp_get_thread_num)
GET(int32_t, omp_in_parallel)
GET(double, omp_get_wtick)
GET(double, omp_get_wtime)
GET(int32_t, omp_get_active_level)
GET(int32_t, omp_get_level)
GET(int32_t, omp_get_max_active_levels)
GET(int32_t, omp_get_thread_limit)
GET(int32_t, omp_in_final)
GET(int32_t, omp_get_cancellation)
GET(int32_t, omp_get_default_device)
GET(int32_t, omp_get_num_devices)
GET(int32_t, omp_get_num_teams)
GET(int32_t, omp_get_proc_bind)
GET(int32_t, omp_get_team_num)
GET(int32_t, omp_is_initial_device)
GET(int32_t, omp_get_initial_device)
GET(int32_t, omp_get_max_task_priority)
GET(int32_t, omp_get_num_places)
GET(int32_t, omp_get_partition_num_places)
GET(int32_t, omp_get_place_num)
GET(uintptr_t, omp_get_default_allocator)
GET(int32_t, omp_get_supported_active_levels)
GET(int32_t, omp_get_device_num)
GET(int32_t, omp_get_max_teams)
GET(int32_t, omp_get_teams_thread_limit)

SET(omp_set_dynamic)
SET(omp_set_nested)
SET(omp_set_num_threads)
SET(omp_set_max_active_levels)
SET(omp_set_default_device)
SET(omp_display_env)
SET(omp_set_num_teams)
SET(omp_set_teams_thread_limit)

GOMP_API int32_t omp_get_ancestor_thread_num_(const int32_t *l)
{
    return omp_get_ancestor_thread_num(*l);
}
GOMP_API int32_t omp_get_ancestor_thread_num_8_(const int64_t *l)
{
    return omp_get_ancestor_thread_num(narrow(*l));
}
GOMP_API int32_t omp_get_team_size_(const int32_t *l) { return omp_get_team_size(*l); }
GOMP_API int32_t omp_get_team_size_8_(const int64_t *l) { return omp_get_team_size(narrow(*l)); }

GOMP_API void omp_get_schedule_(int32_t *kind, int32_t *chunk)
{
    int k, c;
    omp_get_schedule(&k, &c);
    *kind = k;
    *chunk = c;
}

GOMP_API void omp_get_schedule_8_(int32_t *kind, int64_t *chunk)
{
    int k, c;
    omp_get_schedule(&k, &c);
    *kind = k;
    *chunk = c;
}

GOMP_API void omp_set_schedule_(const int32_t *kind, const int32_t *chunk)
{
    omp_set_schedule(*kind, *chunk);
}

GOMP_API void omp_set_schedule_8_(const int32_t *kind, const int64_t *chunk)
{
    omp_set_schedule(*kind, narrow(*chunk));
}

GOMP_API void omp_get_partition_place_nums_(int32_t *nums) { omp_get_partition_place_nums(nums); }

GOMP_API void omp_get_partition_place_nums_8_(int64_t *nums)
{
    for (int p = 0, n = omp_get_partition_num_places(); p < n; p++)
        nums[p] = p;
}

GOMP_API int32_t omp_get_place_num_procs_(const int32_t *p) { return omp_get_place_num_procs(*p); }
GOMP_API int32_t omp_get_place_num_procs_8_(const int64_t *p)
{
    return omp_get_place_num_procs(narrow(*p));
}

GOMP_API void omp_get_place_proc_ids_(const int32_t *p, int32_t *ids)
{
    omp_get_place_proc_ids(*p, ids);
}

GOMP_API void omp_get_place_proc_ids_8_(const int64_t *p, int64_t *ids)
{
    int n = omp_get_place_num_procs(narrow(*p));
    int tmp[1024];
    gomp_place_cpus(narrow(*p), tmp, 1024);
    for (int i = 0; i < n && i < 1024; i++)
        ids[i] = tmp[i];
}

/* ---- CHARACTER arguments --------------------------------------------------------- */

/* A Fortran string as a C one: trailing blanks dropped (OpenMP says they
 * do not count), at most size - 1 characters. */
static const char *c_string(const char *s, size_t len, char *buf, size_t size)
{
    while (len && s[len - 1] == ' ')
        len--;
    if (len >= size)
        len = size - 1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    return buf;
}

/* A C string into a Fortran one of len characters: blank-padded. */
static void f_string(char *out, size_t len, const char *s)
{
    size_t n = strlen(s);
    if (n > len)
        n = len;
    memcpy(out, s, n);
    memset(out + n, ' ', len - n);
}

GOMP_API void omp_set_affinity_format_(const char *fmt, size_t len)
{
    char buf[GOMP_AFFINITY_FORMAT_MAX];
    omp_set_affinity_format(c_string(fmt, len, buf, sizeof buf));
}

GOMP_API int32_t omp_get_affinity_format_(char *out, size_t len)
{
    char buf[GOMP_AFFINITY_FORMAT_MAX];
    size_t n = omp_get_affinity_format(buf, sizeof buf);
    f_string(out, len, buf);
    return (int32_t)n;
}

GOMP_API int32_t omp_capture_affinity_(char *out, const char *fmt, size_t out_len, size_t fmt_len)
{
    char f[GOMP_AFFINITY_FORMAT_MAX], line[1024];
    size_t n = omp_capture_affinity(line, sizeof line, c_string(fmt, fmt_len, f, sizeof f));
    f_string(out, out_len, line);
    return (int32_t)n;
}

GOMP_API void omp_display_affinity_(const char *fmt, size_t len)
{
    char f[GOMP_AFFINITY_FORMAT_MAX];
    omp_display_affinity(c_string(fmt, len, f, sizeof f));
}

/* ---- resources and allocators ------------------------------------------------------ */

GOMP_API int32_t omp_pause_resource_(const int32_t *kind, const int32_t *device)
{
    return omp_pause_resource(*kind, *device);
}

GOMP_API int32_t omp_pause_resource_all_(const int32_t *kind)
{
    return omp_pause_resource_all(*kind);
}

GOMP_API void omp_destroy_allocator_(const uintptr_t *a) { omp_destroy_allocator(*a); }
GOMP_API void omp_set_default_allocator_(const uintptr_t *a) { omp_set_default_allocator(*a); }

/* Fortran's omp_alloctrait is C's omp_alloctrait_t: a c_int key, then a
 * c_intptr_t value. */
GOMP_API uintptr_t omp_init_allocator_(const uintptr_t *space, const int32_t *n, const void *t)
{
    return omp_init_allocator(*space, *n, t);
}

GOMP_API uintptr_t omp_init_allocator_8_(const uintptr_t *space, const int64_t *n, const void *t)
{
    return omp_init_allocator(*space, narrow(*n), t);
}

/* omp_lib passes the event handle by value (omp_event_handle_kind). */
void omp_fulfill_event(uintptr_t);
GOMP_API void omp_fulfill_event_(intptr_t event) { omp_fulfill_event((uintptr_t)event); }
