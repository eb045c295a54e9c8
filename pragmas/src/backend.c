/* The backend switch: which runtime runs the calls of parallel.h.
 *
 * ultrapool's own scheduler is the default and costs one load per call
 * (par_omp() in par_internal.h). An OpenMP backend is a module built with
 * that runtime's compiler (pragmas/interop/), opened with dlopen on first
 * use and reached through its table of functions. Every public call checks
 * its arguments first, then asks par_omp() where to go, so both backends
 * share one set of checks and error messages.
 *
 * State. par_backend_state is UNRESOLVED until the first call that needs
 * it reads UP_BACKEND (under resolve_lock), then OWN or FOREIGN; with
 * FOREIGN, par_foreign_ops was written before the state (release), and a
 * reader that sees FOREIGN (acquire) sees the table. par_foreign_ops is
 * atomic because a pool task may read it (up_cancelled) while another
 * thread switches the backend. A backend named by
 * UP_BACKEND that cannot be loaded leaves FOREIGN with failed_ops, whose
 * calls all fail with the loading error, so nothing runs on a backend the
 * user did not ask for. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if defined(__APPLE__)
#include <mach-o/dyld.h>
#elif defined(__linux__) || defined(__FreeBSD__)
#include <link.h>
#endif

#include "par_internal.h"

#ifndef UP_BACKEND_BUILD_DIR
#define UP_BACKEND_BUILD_DIR ""
#endif
#ifndef UP_BACKEND_INSTALL_DIR
#define UP_BACKEND_INSTALL_DIR ""
#endif
#ifndef UP_BACKEND_SUFFIX
#define UP_BACKEND_SUFFIX ".so"
#endif

atomic_int par_backend_state; /* PAR_BACKEND_* */
_Atomic(const up_omp_ops *) par_foreign_ops;

static pthread_mutex_t resolve_lock = PTHREAD_MUTEX_INITIALIZER;
static up_backend current = UP_BACKEND_ULTRAPOOL; /* (resolve_lock) */
/* The modules opened so far, kept open: a table once handed out stays
 * valid. At most one, since the two OpenMP runtimes exclude each other. */
static const up_omp_ops *loaded[3]; /* (resolve_lock) by up_backend */

static const char *const names[] = {"ultrapool", "gomp", "llvm"};
static const char *const runtimes[] = {"ultrapool", "libgomp", "libomp"};

const char *up_backend_name(up_backend b)
{
    return (unsigned)b <= UP_BACKEND_LLVM ? names[b] : NULL;
}

/* ---- the failed backend ----------------------------------------------- */

static char failure[1024]; /* written once, before failed_ops is published */

/* The failed table's entries do nothing: the calls that return an error
 * have already returned it (par_backend_error), and the others have no
 * way to say it. */
static int f_parallel(unsigned n, int exact, up_fn fn, void *ctx)
{
    (void)n, (void)exact, (void)fn, (void)ctx;
    return UP_EINVAL;
}
static unsigned f_zero(void) { return 0; }
static unsigned f_one(void) { return 1; }
static void f_nothing(void) {}
static int f_single(void) { return 1; }
static void f_share(uint64_t n, const up_for_opts *o, up_omp_units_fn body, void *p)
{
    (void)n, (void)o, (void)body, (void)p;
}
static int f_reduce(void *value, size_t size, up_omp_combine_fn combine, void *cctx)
{
    (void)value, (void)size, (void)combine, (void)cctx;
    return UP_EINVAL;
}
static int f_task(up_fn fn, void *arg, const void *payload, size_t size, const up_dep *deps,
                  size_t ndeps, const up_task_opts *opts)
{
    (void)fn, (void)arg, (void)payload, (void)size, (void)deps, (void)ndeps, (void)opts;
    return UP_EINVAL;
}
static int f_task_plain(up_fn fn, void *arg)
{
    (void)fn, (void)arg;
    return UP_EINVAL;
}
static int f_taskgroup(up_fn fn, void *ctx)
{
    (void)fn, (void)ctx;
    return UP_EINVAL;
}
static int f_cancelled(void) { return 0; }
static void f_taskloop(uint64_t k, up_omp_chunk_fn chunk, const void *payload, size_t size)
{
    (void)k, (void)chunk, (void)payload, (void)size;
}

static const up_omp_ops failed_ops = {
    UP_OMP_OPS_VERSION, "none",    f_parallel,  f_zero,     f_one,        f_zero,    f_nothing,
    f_single,           f_share,   f_reduce,    f_task,     f_nothing,    f_nothing, f_zero,
    f_taskgroup,        f_nothing, f_cancelled, f_taskloop, f_task_plain, f_zero,    f_zero,
};

int par_backend_error(const up_omp_ops *ops, const char *who)
{
    if (ops != &failed_ops)
        return UP_OK;
    up__set_error("%s: %s", who, failure);
    return UP_EINVAL;
}

/* ---- the other runtime ------------------------------------------------ */

/* Whether an image whose file name contains needle is in the process. */
#if defined(__linux__) || defined(__FreeBSD__)
static int has_image(struct dl_phdr_info *info, size_t size, void *needle)
{
    (void)size;
    return info->dlpi_name && strstr(info->dlpi_name, needle) != NULL;
}
static int image_loaded(const char *needle) { return dl_iterate_phdr(has_image, (void *)needle); }
#elif defined(__APPLE__)
static int image_loaded(const char *needle)
{
    for (uint32_t i = 0; i < _dyld_image_count(); i++) {
        const char *n = _dyld_get_image_name(i);
        if (n && strstr(n, needle))
            return 1;
    }
    return 0;
}
#else
static int image_loaded(const char *needle)
{
    (void)needle;
    return 0;
}
#endif

/* The OpenMP runtime other than b's already in the process (linked by the
 * program, or by a library it uses), or NULL. */
static const char *rival_runtime(up_backend b)
{
    if (b == UP_BACKEND_GOMP && (image_loaded("/libomp.") || image_loaded("/libiomp5.")))
        return "libomp";
    if (b == UP_BACKEND_GOMP && image_loaded("/libomp-"))
        return "libomp"; /* a vendored copy, libomp-<hash>.so */
    if (b == UP_BACKEND_LLVM && image_loaded("/libiomp5."))
        return "libiomp5"; /* Intel's build of the same runtime: one copy only */
    if (b == UP_BACKEND_LLVM && image_loaded("/libgomp"))
        return "libgomp"; /* libgomp.so.1, or a vendored libgomp-<hash>.so.1 */
    return NULL;
}

/* ---- loading ---------------------------------------------------------- */

/* Where the modules are looked for, in this order:
 *   1. the folders of UP_BACKEND_PATH (absolute, colon-separated);
 *   2. the library's own folder: for libultrapool_par.so the folder it was
 *      loaded from (dladdr), so an installed tree finds the modules beside
 *      it wherever it was installed or moved; for the static library,
 *      which became part of a program, the libdir fixed at configure time
 *      (UP_BACKEND_INSTALL_DIR);
 *      but for the uninstalled build, the build tree's module folder
 *      instead (UP_BACKEND_BUILD_DIR): the shared library knows it is the
 *      build tree's when it sits where the build put it, and a program of
 *      the build tree that links the static library says so through
 *      src/build_tree.c.in, compiled into those programs only. An
 *      installed copy never looks in the build tree;
 *   3. the loader's own search path (LD_LIBRARY_PATH, ...), by name. */
#define MAX_DIRS 17 /* UP_BACKEND_PATH's 16 and the library's own */
#define DIR_MAX  1024

static const char *build_dir; /* set before main (build_tree.c), or NULL */

void up__par_backend_build_dir(const char *dir) { build_dir = dir; }

#if defined(UP_BACKEND_BUILD_LIBDIR) /* the shared library */
/* The folder of the image holding this code. */
static int own_directory(char *buf, size_t size)
{
    Dl_info info;
    if (!dladdr((void *)&up_backend_name, &info) || !info.dli_fname)
        return 0;
    const char *slash = strrchr(info.dli_fname, '/');
    if (!slash)
        return 0;
    size_t n = (size_t)(slash - info.dli_fname);
    if (n + 1 > size)
        return 0;
    memcpy(buf, info.dli_fname, n);
    buf[n] = '\0';
    return 1;
}

/* Whether folders a and b are the same one (symbolic links resolved). */
static int same_directory(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    return realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb);
}

/* The library's own folder (2. above) into buf; 0 when it has none. The
 * shared library: beside itself, or the build tree's modules when it is
 * the build tree's copy. */
static int home_directory(char *buf, size_t size)
{
    if (!own_directory(buf, size))
        return 0;
    if (UP_BACKEND_BUILD_DIR[0] && same_directory(buf, UP_BACKEND_BUILD_LIBDIR))
        snprintf(buf, size, "%s", UP_BACKEND_BUILD_DIR);
    return 1;
}
#else
/* The static library: the build tree's modules in a program of the build
 * tree, else the configured libdir. */
static int home_directory(char *buf, size_t size)
{
    const char *d = build_dir ? build_dir : UP_BACKEND_INSTALL_DIR;
    if (!d[0])
        return 0;
    snprintf(buf, size, "%s", d);
    return 1;
}
#endif

/* Splits UP_BACKEND_PATH into dirs; -1 with why when it is malformed. */
static int path_directories(const char *v, char dirs[][DIR_MAX], int max, char *why, size_t size)
{
    int n = 0;
    const char *problem = NULL;
    for (const char *p = v;; n++) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        if (len == 0)
            problem = "an empty folder";
        else if (p[0] != '/')
            problem = "a folder that is not an absolute path";
        else if (len >= DIR_MAX)
            problem = "a folder name too long";
        else if (n == max)
            problem = "too many folders";
        if (problem) {
            snprintf(why, size,
                     "UP_BACKEND_PATH=\"%.200s\": %s; it must be a colon-separated list of at most "
                     "%d absolute folders",
                     v, problem, max);
            return -1;
        }
        memcpy(dirs[n], p, len);
        dirs[n][len] = '\0';
        if (!colon)
            return n + 1;
        p = colon + 1;
    }
}

/* Opens b's module from the folders above. On failure, why is the message
 * for the user, with every folder tried. */
static const up_omp_ops *load(up_backend b, char *why, size_t size)
{
    char file[64];
    snprintf(file, sizeof file, "libultrapool_omp_%s%s", names[b], UP_BACKEND_SUFFIX);
    const char *rival = rival_runtime(b);
    if (rival) {
        snprintf(why, size,
                 "%s is already loaded in this process, and %s cannot share it: choose the "
                 "backend of the OpenMP runtime the program links",
                 rival, runtimes[b]);
        return NULL;
    }
    static char dirs[MAX_DIRS][DIR_MAX]; /* (resolve_lock) */
    int ndirs = 0;
    const char *env = up__env("UP_BACKEND_PATH");
    if (env && (ndirs = path_directories(env, dirs, MAX_DIRS - 1, why, size)) < 0)
        return NULL;
    if (home_directory(dirs[ndirs], sizeof dirs[0]))
        ndirs++;
    void *h = NULL;
    char path[DIR_MAX + 80], last[400] = "";
    for (int i = 0; i <= ndirs && !h; i++) {
        if (i < ndirs)
            snprintf(path, sizeof path, "%.*s/%.63s", DIR_MAX - 1, dirs[i], file);
        else
            snprintf(path, sizeof path, "%s", file);
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *e = dlerror();
            /* Keep the most telling error: a module that exists but does
             * not load (a missing libgomp.so.1) beats "not found". */
            if (e && !strcasestr(e, "no such file"))
                snprintf(last, sizeof last, "%s", e);
        }
    }
    if (!h) {
        size_t n = (size_t)snprintf(why, size, "cannot load %s (%s); tried ", file,
                                    last[0] ? last : "not found");
        for (int i = 0; i < ndirs && n < size; i++)
            n += (size_t)snprintf(why + n, size - n, "%s, ", dirs[i]);
        if (n < size)
            snprintf(why + n, size - n, "then the loader's search path");
        return NULL;
    }
    up_omp_backend_fn entry = NULL;
    void *sym = dlsym(h, UP_OMP_BACKEND_SYMBOL);
    memcpy(&entry, &sym, sizeof entry); /* a data pointer to a function pointer, as POSIX allows */
    const up_omp_ops *ops = entry ? entry() : NULL;
    if (!ops || ops->version != UP_OMP_OPS_VERSION) {
        snprintf(why, size, "%.300s is not a backend of this ultrapool (%s)", path,
                 !ops ? "no " UP_OMP_BACKEND_SYMBOL : "another version");
        dlclose(h);
        return NULL;
    }
    return ops; /* never closed: tables handed out stay valid */
}

/* Makes b current; the caller holds resolve_lock. */
static int select_locked(up_backend b, char *why, size_t size)
{
    /* Under ultrapool's own libgomp.so.1 (the marker up_gomp_runtime),
     * the gomp module would bind to that library, and libomp would be a
     * second OpenMP runtime beside it: both are refused. */
    if (b != UP_BACKEND_ULTRAPOOL && dlsym(RTLD_DEFAULT, "up_gomp_runtime")) {
        snprintf(why, size,
                 "this process runs on ultrapool's own libgomp.so.1 (OpenMP is already "
                 "ultrapool); unset UP_BACKEND or run without ultrapool's libgomp");
        return UP_EINVAL;
    }
    if (b != UP_BACKEND_ULTRAPOOL && !loaded[b]) {
        up_backend other = b == UP_BACKEND_GOMP ? UP_BACKEND_LLVM : UP_BACKEND_GOMP;
        if (loaded[other]) {
            snprintf(why, size, "%s is already loaded in this process, and %s cannot share it",
                     runtimes[other], runtimes[b]);
            return UP_EINVAL;
        }
        loaded[b] = load(b, why, size);
        if (!loaded[b])
            return UP_EINVAL;
    }
    current = b;
    if (b == UP_BACKEND_ULTRAPOOL) {
        up__store_release(&par_backend_state, PAR_BACKEND_OWN);
    } else {
        up__store_relaxed(&par_foreign_ops, loaded[b]);
        up__store_release(&par_backend_state, PAR_BACKEND_FOREIGN);
    }
    return UP_OK;
}

/* UP_BACKEND, read once, the first time a call needs the backend. */
static void resolve_locked(void)
{
    if (up__load_relaxed(&par_backend_state) != PAR_BACKEND_UNRESOLVED)
        return;
    const char *v = up__env("UP_BACKEND");
    up_backend b = UP_BACKEND_ULTRAPOOL;
    char why[960];
    if (v && *v) {
        int i = up__word_index(v, names, sizeof names / sizeof names[0]);
        if (i < 0) {
            snprintf(failure, sizeof failure,
                     "UP_BACKEND=\"%.64s\": must be one of ultrapool, gomp, llvm", v);
            goto failed;
        }
        b = (up_backend)i;
    }
    if (select_locked(b, why, sizeof why) == UP_OK)
        return;
    snprintf(failure, sizeof failure, "UP_BACKEND=%s: %s", names[b], why);
    current = b;
failed:
    fprintf(stderr, "ultrapool: %s\n", failure);
    up__store_relaxed(&par_foreign_ops, &failed_ops);
    up__store_release(&par_backend_state, PAR_BACKEND_FOREIGN);
}

const up_omp_ops *par_omp_slow(void)
{
    pthread_mutex_lock(&resolve_lock);
    resolve_locked();
    pthread_mutex_unlock(&resolve_lock);
    return up__load_acquire(&par_backend_state) == PAR_BACKEND_OWN
               ? NULL
               : up__load_relaxed(&par_foreign_ops);
}

int up_set_backend(up_backend b)
{
    if ((unsigned)b > UP_BACKEND_LLVM) {
        up__set_error("up_set_backend: %d is not an up_backend", (int)b);
        return UP_EINVAL;
    }
    if (up_level() > 0) {
        up__set_error("up_set_backend: called inside a parallel region");
        return UP_EINVAL;
    }
    char why[960];
    pthread_mutex_lock(&resolve_lock);
    int rc = select_locked(b, why, sizeof why);
    pthread_mutex_unlock(&resolve_lock);
    if (rc != UP_OK)
        up__set_error("up_set_backend: %s: %s", names[b], why);
    return rc;
}

up_backend up_get_backend(void)
{
    (void)par_omp();
    pthread_mutex_lock(&resolve_lock);
    up_backend b = current;
    pthread_mutex_unlock(&resolve_lock);
    return b;
}
