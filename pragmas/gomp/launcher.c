/* ultrapool-omp: runs a program on ultrapool's OpenMP runtime without
 * relinking it.
 *
 *   ultrapool-omp ./app args...
 *
 * It puts the folder holding ultrapool's libgomp.so.1 first on
 * LD_LIBRARY_PATH and executes the program; it sets nothing else. The
 * folder is found from where the launcher itself lies, so a prefix that
 * was moved after installation still works: <bindir>/UP_OMP_REL_DIR in an
 * installed tree, else (only for the launcher of the build tree, which
 * lies in UP_OMP_BUILD_BINDIR) the build tree's library folder. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef UP_OMP_REL_DIR
#error "UP_OMP_REL_DIR (the omp folder relative to the installed bindir) is not defined"
#endif

static const char *prog = "ultrapool-omp";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s PROGRAM [ARGUMENTS...]\n"
            "       %s --print-path\n"
            "Runs PROGRAM with ultrapool's libgomp.so.1 first on LD_LIBRARY_PATH, so that an\n"
            "unmodified gcc -fopenmp binary runs on ultrapool. --print-path prints that folder.\n",
            prog, prog);
}

static int is_file(const char *path) { return access(path, R_OK) == 0; }

/* The folder of this executable, resolved (symbolic links followed). */
static int self_dir(char *out, size_t size)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    if (!realpath(exe, out) || strlen(out) >= size)
        return -1;
    return 0;
}

/* The folder holding libgomp.so.1, or NULL with a message. */
static const char *omp_dir(char *out, size_t size)
{
    char here[PATH_MAX], lib[PATH_MAX + 32];
    if (self_dir(here, sizeof here) != 0) {
        fprintf(stderr, "%s: cannot find where this launcher lies (/proc/self/exe): %s\n", prog,
                strerror(errno));
        return NULL;
    }
    char rel[PATH_MAX];
    int n = snprintf(rel, sizeof rel, "%s/%s", here, UP_OMP_REL_DIR);
    if (n < 0 || (size_t)n >= sizeof rel) {
        fprintf(stderr, "%s: the path of its folder is too long: %s\n", prog, here);
        return NULL;
    }
    n = snprintf(lib, sizeof lib, "%s/libgomp.so.1", rel);
    if (n > 0 && (size_t)n < sizeof lib && is_file(lib) && realpath(rel, out) && strlen(out) < size)
        return out;
#ifdef UP_OMP_BUILD_BINDIR
    /* The build tree's launcher: its library is in the build tree. Only
     * when this is that launcher, never an installed copy. */
    char build_bin[PATH_MAX];
    if (realpath(UP_OMP_BUILD_BINDIR, build_bin) && strcmp(build_bin, here) == 0) {
        n = snprintf(lib, sizeof lib, "%s/libgomp.so.1", UP_OMP_BUILD_LIBDIR);
        if (n > 0 && (size_t)n < sizeof lib && is_file(lib) && strlen(UP_OMP_BUILD_LIBDIR) < size) {
            snprintf(out, size, "%s", UP_OMP_BUILD_LIBDIR);
            return out;
        }
    }
#endif
    fprintf(stderr, "%s: ultrapool's libgomp.so.1 is not in %s (installed beside this launcher?)\n",
            prog, rel);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        return 0;
    }
    char dir[PATH_MAX];
    if (!omp_dir(dir, sizeof dir))
        return 1;
    if (!strcmp(argv[1], "--print-path")) {
        puts(dir);
        return 0;
    }
    char **args = argv + 1;
    if (!strcmp(args[0], "--")) { /* ultrapool-omp -- --program-starting-with-dashes */
        if (argc < 3) {
            usage(stderr);
            return 2;
        }
        args++;
    }
    const char *app = args[0];
    /* Not through the environment registry (up__env): this program links
     * no ultrapool library, and it does not interpret the variable, only
     * puts its folder in front for the dynamic linker. */
    const char *old = getenv("LD_LIBRARY_PATH");
    size_t len = strlen(dir) + (old && *old ? strlen(old) + 1 : 0) + 1;
    char *path = malloc(len);
    if (!path) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return 1;
    }
    if (old && *old)
        snprintf(path, len, "%s:%s", dir, old);
    else
        snprintf(path, len, "%s", dir);
    if (setenv("LD_LIBRARY_PATH", path, 1) != 0) {
        fprintf(stderr, "%s: cannot set LD_LIBRARY_PATH: %s\n", prog, strerror(errno));
        return 1;
    }
    free(path);
    execvp(app, args);
    int e = errno;
    if (e == ENOENT)
        fprintf(stderr, "%s: %s: no such program (not a file, and not found on PATH)\n", prog, app);
    else
        fprintf(stderr, "%s: cannot run %s: %s\n", prog, app, strerror(e));
    return e == ENOENT ? 127 : 126;
}
