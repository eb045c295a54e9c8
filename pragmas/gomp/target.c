/* target and teams without an offload device: the host fallback.
 *
 * GCC emits GOMP_target_ext and its companions for `#pragma omp target`
 * whether or not a device exists; ultrapool has none (omp_get_num_devices
 * is 0), so every target region runs on the host, as libgomp's fallback
 * does: the mapped addresses are the host's own, map clauses and data
 * regions move nothing, and only firstprivate variables are copied (the
 * region may write its copy). The region runs on the encountering thread
 * as an initial thread: outside any team, so that omp_get_thread_num is 0
 * and a parallel region inside opens a team of its own. A target region
 * with depend or nowait is a task (GOMP_task), as OpenMP makes it.
 *
 * teams runs its league one team after another on the encountering thread
 * (teams cannot synchronise with each other, so this is a valid schedule);
 * each team's number is in the thread's ICVs, which the members of a
 * parallel region inside inherit (gomp.h). */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gomp.h"

/* The constants of GCC's ABI that the host fallback reads (GCC's
 * gomp-constants.h gives them these values). */
#define MAP_KIND_MASK      0xff
#define MAP_FIRSTPRIVATE   0x0c /* GOMP_MAP_FIRSTPRIVATE: copy, do not map */
#define TARGET_NOWAIT      1u   /* GOMP_TARGET_FLAG_NOWAIT */
#define TASK_FLAG_DEPEND   8u   /* GOMP_TASK_FLAG_DEPEND */
#define INITIAL_DEVICE     0    /* omp_get_initial_device(): the number of devices */
#define OMP_INITIAL_DEVICE (-1) /* omp_initial_device (OpenMP 5.1) */

/* GOMP_task is another file's (the task entry points): referenced weakly,
 * so that this file does not fix the order in which they are built. */
extern void GOMP_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *), long arg_size,
                      long arg_align, bool if_clause, unsigned flags, void **depend, int priority,
                      void *detach) __attribute__((weak));

/* OMP_TARGET_OFFLOAD=MANDATORY stops a construct for a device that is
 * not there, as libgomp's does: any number but the initial device's (0,
 * the number of devices) and GCC's host fallback of if(false). A device
 * clause's absence means default-device-var (whose default, 0, is the
 * host here). */
#define DEVICE_ICV           (-1) /* GOMP_DEVICE_ICV: no device clause */
#define DEVICE_HOST_FALLBACK (-2) /* GOMP_DEVICE_HOST_FALLBACK: if(false) */
static void offload_mandatory(int device, const char *what)
{
    const char *v = up__env("OMP_TARGET_OFFLOAD");
    if (!v || strcasecmp(v, "mandatory"))
        return;
    if (device == DEVICE_ICV)
        device = gomp_icv_get()->default_device;
    if (device != DEVICE_HOST_FALLBACK && device != INITIAL_DEVICE)
        gomp_fatal("%s: OMP_TARGET_OFFLOAD=MANDATORY, but device %d is not available "
                   "(ultrapool has only the host, device %d)",
                   what, device, INITIAL_DEVICE);
}

/* GOMP_target_ext's args: the construct's thread_limit, 0 for none
 * (GCC's GOMP_TARGET_ARG_* encoding). */
#define ARG_DEVICE_MASK      0x7f
#define ARG_SUBSEQUENT_PARAM 0x80
#define ARG_ID_MASK          0xff00
#define ARG_THREAD_LIMIT     0x200
#define ARG_VALUE_SHIFT      16
static unsigned args_thread_limit(void **args)
{
    while (args && *args) {
        intptr_t id = (intptr_t)*args++, val;
        if (id & ARG_SUBSEQUENT_PARAM)
            val = (intptr_t)*args++;
        else
            val = id >> ARG_VALUE_SHIFT;
        if ((id & ARG_DEVICE_MASK) != 0 || (id & ARG_ID_MASK) != ARG_THREAD_LIMIT)
            continue;
        return val <= 0 ? 0 : val > INT_MAX ? INT_MAX : (unsigned)val;
    }
    return 0;
}

/* Runs fn(addrs) as the initial thread of a target region, as libgomp's
 * host fallback does: outside the encountering thread's team, at nesting
 * level 0 and with the initial ICVs (the environment's; the construct's
 * thread_limit, if any), all restored afterwards. The thread keeps its
 * depth (par_thread), so that a region opened inside takes a deque of its
 * own. */
static void run_on_host(void (*fn)(void *), void **addrs, unsigned thread_limit)
{
    par_thread *th = par_tls;
    gomp_icv saved_icv = *gomp_icv_get();
    gomp_icv_outer outer; /* a region of its own for the ICVs' snapshots */
    gomp_icv_region_enter(&outer);
    gomp_icv *v = gomp_icv_get();
    *v = *gomp_icv_initial();
    v->team_num = 0;
    v->num_teams = 1;
    if (thread_limit)
        v->limits.thread_limit = thread_limit;
    if (!th) {
        fn(addrs);
        *gomp_icv_get() = saved_icv;
        gomp_icv_region_leave(&outer);
        return;
    }
    par_ctx saved = th->c;
    unsigned saved_level = th->level;
    memset(&th->c, 0, sizeof th->c);
    th->level = 0;
    fn(addrs);
    th->c = saved;
    th->level = saved_level;
    *gomp_icv_get() = saved_icv;
    gomp_icv_region_leave(&outer);
}

/* A target region's arguments in one block, for a task whose storage
 * GOMP_task copies: the header, the addresses, then each firstprivate
 * variable's bytes (its address slot holds its offset in the block). */
typedef struct job {
    void (*fn)(void *);
    size_t mapnum;
    size_t len; /* of the whole block */
    unsigned thread_limit;
    /* void *addrs[mapnum]; unsigned char is_copy[mapnum]; copies ... */
} job;

static size_t align_up(size_t n, size_t a) { return (n + a - 1) & ~(a - 1); }

static void **job_addrs(job *j) { return (void **)(j + 1); }
static unsigned char *job_copied(job *j) { return (unsigned char *)(job_addrs(j) + j->mapnum); }

static void run_job(void *arg)
{
    job *j = arg;
    void **addrs = malloc((j->mapnum ? j->mapnum : 1) * sizeof *addrs);
    if (!addrs)
        gomp_fatal("out of memory for a target task's %zu addresses", j->mapnum);
    for (size_t i = 0; i < j->mapnum; i++)
        addrs[i] = job_copied(j)[i] ? (char *)j + (uintptr_t)job_addrs(j)[i] : job_addrs(j)[i];
    run_on_host(j->fn, addrs, j->thread_limit);
    free(addrs);
}

static void nothing(void *arg) { (void)arg; }

static void need_task(const char *what)
{
    if (!GOMP_task)
        gomp_fatal("%s with depend or nowait needs GOMP_task, which this libgomp lacks", what);
}

/* A target construct with depend or nowait: a task, undeferred without
 * nowait (it still waits for its dependences). fn NULL: a data construct
 * (update, enter/exit data), which moves nothing on the host but keeps
 * its place in the dependence graph. */
static void target_task(const char *what, void (*fn)(void *), size_t mapnum, void **hostaddrs,
                        size_t *sizes, unsigned short *kinds, unsigned flags, void **depend,
                        unsigned thread_limit)
{
    need_task(what);
    bool if_clause = (flags & TARGET_NOWAIT) != 0;
    unsigned tflags = depend ? TASK_FLAG_DEPEND : 0;
    if (!fn) {
        GOMP_task(nothing, NULL, NULL, 0, 1, if_clause, tflags, depend, 0, NULL);
        return;
    }
    size_t maxal = _Alignof(max_align_t);
    size_t len = sizeof(job) + mapnum * (sizeof(void *) + 1);
    for (size_t i = 0; i < mapnum; i++) {
        if ((kinds[i] & MAP_KIND_MASK) != MAP_FIRSTPRIVATE)
            continue;
        size_t al = (size_t)1 << (kinds[i] >> 8);
        if (al > maxal)
            maxal = al;
        len = align_up(len, al) + sizes[i];
    }
    job *j = aligned_alloc(maxal, align_up(len, maxal));
    if (!j)
        gomp_fatal("%s: out of memory for a target task of %zu bytes", what, len);
    j->fn = fn;
    j->mapnum = mapnum;
    j->len = len;
    j->thread_limit = thread_limit;
    size_t at = sizeof(job) + mapnum * (sizeof(void *) + 1);
    for (size_t i = 0; i < mapnum; i++) {
        int fp = (kinds[i] & MAP_KIND_MASK) == MAP_FIRSTPRIVATE && hostaddrs[i];
        job_copied(j)[i] = (unsigned char)fp;
        if (!fp) {
            job_addrs(j)[i] = hostaddrs[i];
            continue;
        }
        at = align_up(at, (size_t)1 << (kinds[i] >> 8));
        memcpy((char *)j + at, hostaddrs[i], sizes[i]);
        job_addrs(j)[i] = (void *)(uintptr_t)at;
        at += sizes[i];
    }
    GOMP_task(run_job, j, NULL, (long)len, (long)maxal, if_clause, tflags, depend, 0, NULL);
    free(j);
}

GOMP_API void GOMP_target_ext(int device, void (*fn)(void *), size_t mapnum, void **hostaddrs,
                              size_t *sizes, unsigned short *kinds, unsigned int flags,
                              void **depend, void **args)
{
    offload_mandatory(device, "a target region");
    unsigned thread_limit = args_thread_limit(args);
    if (depend || (flags & TARGET_NOWAIT)) {
        target_task("a target region", fn, mapnum, hostaddrs, sizes, kinds, flags, depend,
                    thread_limit);
        return;
    }
    /* firstprivate: a copy for the region, on this stack frame. */
    size_t need = 0, maxal = 1;
    for (size_t i = 0; i < mapnum; i++)
        if ((kinds[i] & MAP_KIND_MASK) == MAP_FIRSTPRIVATE) {
            size_t al = (size_t)1 << (kinds[i] >> 8);
            maxal = al > maxal ? al : maxal;
            need = align_up(need, al) + sizes[i];
        }
    char *block = NULL;
    if (need) {
        block = aligned_alloc(maxal, align_up(need, maxal));
        if (!block)
            gomp_fatal("a target region: out of memory for %zu bytes of firstprivate data", need);
        size_t at = 0;
        for (size_t i = 0; i < mapnum; i++)
            if ((kinds[i] & MAP_KIND_MASK) == MAP_FIRSTPRIVATE && hostaddrs[i]) {
                at = align_up(at, (size_t)1 << (kinds[i] >> 8));
                memcpy(block + at, hostaddrs[i], sizes[i]);
                hostaddrs[i] = block + at;
                at += sizes[i];
            }
    }
    run_on_host(fn, hostaddrs, thread_limit);
    free(block);
}

/* OpenMP 4.0's entry point: no firstprivate maps, no depend. */
GOMP_API void GOMP_target(int device, void (*fn)(void *), const void *unused, size_t mapnum,
                          void **hostaddrs, size_t *sizes, unsigned char *kinds)
{
    (void)unused, (void)mapnum, (void)sizes, (void)kinds;
    offload_mandatory(device, "a target region");
    run_on_host(fn, hostaddrs, 0);
}

/* Data regions and motion: the host's addresses are the device's, so
 * nothing moves; with depend they are still tasks in the graph. */
GOMP_API void GOMP_target_data(int device, const void *unused, size_t mapnum, void **hostaddrs,
                               size_t *sizes, unsigned char *kinds)
{
    (void)device, (void)unused, (void)mapnum, (void)hostaddrs, (void)sizes, (void)kinds;
    offload_mandatory(device, "a target data region");
}

GOMP_API void GOMP_target_data_ext(int device, size_t mapnum, void **hostaddrs, size_t *sizes,
                                   unsigned short *kinds)
{
    (void)device, (void)mapnum, (void)hostaddrs, (void)sizes, (void)kinds;
    offload_mandatory(device, "a target data region");
}

GOMP_API void GOMP_target_end_data(void) {}

GOMP_API void GOMP_target_update(int device, const void *unused, size_t mapnum, void **hostaddrs,
                                 size_t *sizes, unsigned char *kinds)
{
    (void)device, (void)unused, (void)mapnum, (void)hostaddrs, (void)sizes, (void)kinds;
    offload_mandatory(device, "target update");
}

GOMP_API void GOMP_target_update_ext(int device, size_t mapnum, void **hostaddrs, size_t *sizes,
                                     unsigned short *kinds, unsigned int flags, void **depend)
{
    (void)device;
    offload_mandatory(device, "target update");
    if (depend)
        target_task("target update", NULL, mapnum, hostaddrs, sizes, kinds, flags, depend, 0);
}

GOMP_API void GOMP_target_enter_exit_data(int device, size_t mapnum, void **hostaddrs,
                                          size_t *sizes, unsigned short *kinds, unsigned int flags,
                                          void **depend)
{
    (void)device;
    offload_mandatory(device, "target enter/exit data");
    if (depend)
        target_task("target enter/exit data", NULL, mapnum, hostaddrs, sizes, kinds, flags, depend,
                    0);
}

/* Offload images register their device code at load: there is no device
 * to take it, so it is accepted and ignored. */
GOMP_API void GOMP_offload_register_ver(unsigned version, const void *host_table, int target_type,
                                        const void *target_data)
{
    (void)version, (void)host_table, (void)target_type, (void)target_data;
}

GOMP_API void GOMP_offload_unregister_ver(unsigned version, const void *host_table, int target_type,
                                          const void *target_data)
{
    (void)version, (void)host_table, (void)target_type, (void)target_data;
}

GOMP_API void GOMP_offload_register(const void *host_table, int target_type,
                                    const void *target_data)
{
    (void)host_table, (void)target_type, (void)target_data;
}

GOMP_API void GOMP_offload_unregister(const void *host_table, int target_type,
                                      const void *target_data)
{
    (void)host_table, (void)target_type, (void)target_data;
}

/* teams. The league size when the construct names none: nteams-var when
 * something sets it (omp_get_max_teams, weak: another file's), else one. */
extern int omp_get_max_teams(void) __attribute__((weak));

static unsigned league_default(void)
{
    int n = omp_get_max_teams ? omp_get_max_teams() : 0;
    return n > 0 ? (unsigned)n : 1;
}

/* The teams construct's thread_limit clause (0: none) sets each team's
 * thread-limit-var, as libgomp does. */
static void teams_thread_limit(gomp_icv *v, unsigned thread_limit)
{
    if (thread_limit)
        v->limits.thread_limit = thread_limit > INT_MAX ? INT_MAX : thread_limit;
}

/* A host teams construct (not in a target region): the league, one team
 * after another on this thread. */
GOMP_API void GOMP_teams_reg(void (*fn)(void *), void *data, unsigned num_teams,
                             unsigned thread_limit, unsigned flags)
{
    (void)flags;
    if (num_teams == 0)
        num_teams = league_default();
    gomp_icv *v = gomp_icv_get();
    unsigned saved_num = v->num_teams, saved_team = v->team_num;
    unsigned saved_limit = v->limits.thread_limit;
    int nteams, teams_limit;
    gomp_env_teams(&nteams, &teams_limit);
    if (!thread_limit && teams_limit > 0)
        thread_limit = (unsigned)teams_limit; /* teams-thread-limit-var, as libgomp */
    for (unsigned k = 0; k < num_teams; k++) {
        gomp_icv_touch(); /* the team's tasks take its number */
        v = gomp_icv_get();
        v->num_teams = num_teams;
        v->team_num = k;
        teams_thread_limit(v, thread_limit);
        fn(data);
    }
    gomp_icv_touch();
    v = gomp_icv_get();
    v->num_teams = saved_num;
    v->team_num = saved_team;
    v->limits.thread_limit = saved_limit;
}

/* teams inside a target region (OpenMP 5.1's form): GCC calls it with
 * first true, runs the body while it returns true, calling it again with
 * first false after each team. */
GOMP_API bool GOMP_teams4(unsigned num_teams_low, unsigned num_teams_high, unsigned thread_limit,
                          bool first)
{
    gomp_icv_touch();
    gomp_icv *v = gomp_icv_get();
    if (first) {
        teams_thread_limit(v, thread_limit); /* the target region's ICVs: restored at its end */
        unsigned n = num_teams_low ? num_teams_low : num_teams_high;
        v->num_teams = n ? n : league_default();
        v->team_num = 0;
        return true;
    }
    if (v->team_num + 1 < v->num_teams) {
        v->team_num++;
        return true;
    }
    v->num_teams = 1;
    v->team_num = 0;
    return false;
}

/* OpenMP 4.0's form, inside a target region: the body runs once, a league
 * of one. */
GOMP_API void GOMP_teams(unsigned num_teams, unsigned thread_limit)
{
    (void)num_teams;
    gomp_icv_touch();
    gomp_icv *v = gomp_icv_get();
    teams_thread_limit(v, thread_limit);
    v->num_teams = 1;
    v->team_num = 0;
}

unsigned gomp_team_num(void) { return gomp_icv_get()->team_num; }
unsigned gomp_num_teams(void)
{
    unsigned n = gomp_icv_get()->num_teams;
    return n ? n : 1;
}

GOMP_API int omp_get_team_num(void) { return (int)gomp_team_num(); }
GOMP_API int omp_get_num_teams(void) { return (int)gomp_num_teams(); }

/* Devices: none but the host (query.c), whose number is the number of
 * devices (0). */
static int is_host(int device) { return device == INITIAL_DEVICE || device == OMP_INITIAL_DEVICE; }

/* Device memory routines on the host device: ordinary memory. */
GOMP_API void *omp_target_alloc(size_t size, int device)
{
    return is_host(device) ? malloc(size ? size : 1) : NULL;
}

GOMP_API void omp_target_free(void *ptr, int device)
{
    if (is_host(device))
        free(ptr);
}

GOMP_API int omp_target_is_present(const void *ptr, int device)
{
    (void)ptr;
    return is_host(device);
}

GOMP_API int omp_target_memcpy(void *dst, const void *src, size_t length, size_t dst_offset,
                               size_t src_offset, int dst_device, int src_device)
{
    if (!is_host(dst_device) || !is_host(src_device))
        return EINVAL;
    memmove((char *)dst + dst_offset, (const char *)src + src_offset, length);
    return 0;
}

static void copy_rect(char *dst, const char *src, size_t elem, int dims, const size_t *volume,
                      const size_t *dst_off, const size_t *src_off, const size_t *dst_dim,
                      const size_t *src_dim)
{
    if (dims == 1) {
        memmove(dst + dst_off[0] * elem, src + src_off[0] * elem, volume[0] * elem);
        return;
    }
    /* One row of the outermost dimension is the product of the inner ones. */
    size_t dst_row = elem, src_row = elem;
    for (int d = 1; d < dims; d++) {
        dst_row *= dst_dim[d];
        src_row *= src_dim[d];
    }
    for (size_t i = 0; i < volume[0]; i++)
        copy_rect(dst + (dst_off[0] + i) * dst_row, src + (src_off[0] + i) * src_row, elem,
                  dims - 1, volume + 1, dst_off + 1, src_off + 1, dst_dim + 1, src_dim + 1);
}

GOMP_API int omp_target_memcpy_rect(void *dst, const void *src, size_t element_size, int num_dims,
                                    const size_t *volume, const size_t *dst_offsets,
                                    const size_t *src_offsets, const size_t *dst_dimensions,
                                    const size_t *src_dimensions, int dst_device, int src_device)
{
    if (!dst && !src)
        return INT_MAX; /* the most dimensions supported */
    if (!dst || !src || num_dims < 1 || !is_host(dst_device) || !is_host(src_device))
        return EINVAL;
    copy_rect(dst, src, element_size, num_dims, volume, dst_offsets, src_offsets, dst_dimensions,
              src_dimensions);
    return 0;
}

/* There is no device memory to associate host memory with. */
GOMP_API int omp_target_associate_ptr(const void *host_ptr, const void *device_ptr, size_t size,
                                      size_t device_offset, int device)
{
    (void)host_ptr, (void)device_ptr, (void)size, (void)device_offset, (void)device;
    return EINVAL;
}

GOMP_API int omp_target_disassociate_ptr(const void *ptr, int device)
{
    (void)ptr, (void)device;
    return EINVAL;
}

/* The error directive at run time: libgomp's exact text (a blank line
 * before each message, which programs' expected outputs match), and for
 * severity(fatal) the end of the program. msglen (size_t)-1: NUL-terminated. */
static void directive_message(const char *prefix, const char *msg, size_t msglen)
{
    if (msg && msglen == (size_t)-1)
        msglen = strlen(msg);
    fprintf(stderr, "\nlibgomp: %serror directive encountered", prefix);
    if (msg) {
        fputs(": ", stderr);
        fwrite(msg, 1, msglen, stderr);
    }
    fputc('\n', stderr);
}

GOMP_API void GOMP_warning(const char *msg, size_t msglen) { directive_message("", msg, msglen); }

GOMP_API void GOMP_error(const char *msg, size_t msglen)
{
    directive_message("fatal error: ", msg, msglen);
    exit(EXIT_FAILURE);
}
