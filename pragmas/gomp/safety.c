/* One OpenMP runtime per process. Two runtimes would each keep their own
 * threads, locks, critical sections and thread numbers: a critical section
 * entered through one would not exclude a thread in the other, so a mixed
 * process can compute a wrong answer without any message. So ultrapool's
 * libgomp.so.1 refuses to run beside another one, with a message naming
 * it and the way out, and stops the process (abort):
 *
 *  - at load (a constructor) and again at the first parallel region (a
 *    runtime dlopen'ed in between), it looks through the loaded objects
 *    (dl_iterate_phdr) for LLVM's libomp, Intel's libiomp5, and a libgomp
 *    that is another file than this one (GCC's real one, loaded from
 *    another path);
 *  - UP_BACKEND=gomp or llvm asks ultrapool's parallel.h to run on another
 *    OpenMP runtime, which under this library cannot be (the gomp module
 *    would bind to this very library): refused at load too. */
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "gomp.h"

typedef struct scan {
    struct stat self; /* this library's file */
    int self_known;
    const char *kind; /* what was found, NULL: nothing */
    char path[512];
} scan;

static const char *runtime_kind(const char *base)
{
    if (!strncmp(base, "libomp.so", 9) || !strncmp(base, "libomp5.so", 10))
        return "LLVM's OpenMP runtime (libomp)";
    if (!strncmp(base, "libiomp5", 8))
        return "Intel's OpenMP runtime (libiomp5)";
    if (!strncmp(base, "libgomp.so", 10))
        return "another libgomp (GCC's OpenMP runtime)";
    return NULL;
}

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    scan *s = arg;
    const char *name = info->dlpi_name;
    if (!name || !*name || s->kind)
        return 0;
    const char *slash = strrchr(name, '/');
    const char *kind = runtime_kind(slash ? slash + 1 : name);
    if (!kind)
        return 0;
    if (!strncmp(kind, "another libgomp", 15)) {
        struct stat st;
        /* This library itself, by file identity (a symbolic link or a
         * relative path names the same file). */
        if (!s->self_known || stat(name, &st) != 0 ||
            (st.st_dev == s->self.st_dev && st.st_ino == s->self.st_ino))
            return 0;
    }
    s->kind = kind;
    size_t n = strlen(name);
    if (n >= sizeof s->path)
        n = sizeof s->path - 1;
    memcpy(s->path, name, n);
    s->path[n] = '\0';
    return 0;
}

void gomp_check_alone(const char *when)
{
    scan s;
    memset(&s, 0, sizeof s);
    Dl_info me;
    if (dladdr((void *)gomp_check_alone, &me) && me.dli_fname && stat(me.dli_fname, &s.self) == 0)
        s.self_known = 1;
    dl_iterate_phdr(visit, &s);
    if (s.kind)
        gomp_fatal("%s: this process already holds %s, %s, beside ultrapool's libgomp.so.1. "
                   "Two OpenMP runtimes in one process do not share locks or threads, so "
                   "ultrapool refuses to run: start the program without ultrapool-omp or "
                   "ultrapool's folder on LD_LIBRARY_PATH, or without the other runtime",
                   when, s.kind, s.path);
}

static void check_backend(void)
{
    const char *b = up__env("UP_BACKEND");
    if (b && (!strcasecmp(b, "gomp") || !strcasecmp(b, "llvm")))
        gomp_fatal("UP_BACKEND=%s asks for another OpenMP runtime, but this process runs on "
                   "ultrapool's own libgomp.so.1 (OpenMP here is ultrapool): unset UP_BACKEND "
                   "or set it to ultrapool",
                   b);
}

__attribute__((constructor)) static void gomp_safety_at_load(void)
{
    check_backend();
    gomp_check_alone("at load");
}
