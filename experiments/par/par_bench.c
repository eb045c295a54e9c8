/* par_bench: the OpenMP-style API's experiments (see par_bench.h).
 *
 * usage: par_bench [table|epcc|metg|grain|all] --out DIR [--bin DIR]
 *            [--rounds R] [--metg-rounds R] [--grain-rounds R] [--threads 1,2]
 *            [--runtimes gomp,libomp,ultrapool,ultrapool@gomp,ultrapool@llvm] [--seed S] [--quick]
 *            [--width-factor F] [--metg-time SEC]
 * The sequential child is always run (it is every speedup's baseline);
 * a runtime whose child program is missing is left out with a note. */
#include "par_bench.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

extern char **environ;

/* A runtime named "ultrapool@gomp" is the child of ultrapool (the
 * parallel.h variant) run on an OpenMP backend: UP_BACKEND=gomp in its
 * environment. The child's name is what comes before the @. */
static void child_path(const pb_opts *o, const char *runtime, char *path, size_t size)
{
    size_t n = strcspn(runtime, "@");
    snprintf(path, size, "%s/par_child_%.*s", o->bin, (int)n, runtime);
}

/* The environment for runtime's child: ours, with UP_BACKEND set to what
 * follows the @ (or left as it is). */
static char **child_environ(const char *runtime, char *backend_var, size_t size)
{
    const char *at = strchr(runtime, '@');
    if (!at)
        return environ;
    static char *env[1024];
    int n = 0;
    for (char **e = environ; *e && n < 1022; e++)
        if (strncmp(*e, "UP_BACKEND=", 11) != 0)
            env[n++] = *e;
    snprintf(backend_var, size, "UP_BACKEND=%s", at + 1);
    env[n++] = backend_var;
    env[n] = NULL;
    return env;
}

pb_output pb_run_child(const pb_opts *o, const char *runtime, const char *const *args)
{
    pb_output res = {NULL, 0};
    char path[1024], backend_var[64];
    child_path(o, runtime, path, sizeof path);
    const char *argv[64];
    int argc = 0;
    argv[argc++] = path;
    for (int i = 0; args[i] && argc < 63; i++)
        argv[argc++] = args[i];
    argv[argc] = NULL;

    int fd[2];
    if (pipe(fd))
        return res;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addclose(&fa, fd[1]);
    pid_t pid;
    int rc = posix_spawn(&pid, path, &fa, NULL, (char *const *)argv,
                         child_environ(runtime, backend_var, sizeof backend_var));
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (rc) {
        fprintf(stderr, "par_bench: cannot start %s: %s\n", path, strerror(rc));
        close(fd[0]);
        return res;
    }
    size_t len = 0, cap = 4096;
    res.text = malloc(cap);
    for (;;) {
        if (len + 1024 > cap)
            res.text = realloc(res.text, cap *= 2);
        ssize_t n = read(fd[0], res.text + len, cap - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    res.text[len] = 0;
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    res.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (o->raw) {
        fputs(res.text, o->raw);
        if (!res.ok) {
            fprintf(o->raw, "# FAILED (status %d):", status);
            for (int i = 0; i < argc; i++)
                fprintf(o->raw, " %s", argv[i]);
            fputc('\n', o->raw);
        }
        fflush(o->raw);
    }
    if (!res.ok) {
        fprintf(stderr, "par_bench: failed:");
        for (int i = 0; i < argc; i++)
            fprintf(stderr, " %s", argv[i]);
        fputc('\n', stderr);
    }
    return res;
}

double pb_field(const pb_output *out, const char *prefix, const char *key)
{
    if (!out->text)
        return NAN;
    size_t plen = strlen(prefix), klen = strlen(key);
    for (const char *line = out->text; *line;) {
        const char *end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        if ((size_t)(end - line) > plen && strncmp(line, prefix, plen) == 0) {
            for (const char *p = line; p + klen < end; p++)
                if ((p == line || p[-1] == ' ') && strncmp(p, key, klen) == 0 && p[klen] == '=')
                    return strtod(p + klen + 1, NULL);
        }
        line = *end ? end + 1 : end;
    }
    return NAN;
}

void pb_output_free(pb_output *out)
{
    free(out->text);
    out->text = NULL;
}

FILE *pb_open(const pb_opts *o, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", o->out, name);
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "par_bench: cannot write %s: %s\n", path, strerror(errno));
    return f;
}

uint64_t pb_rand(uint64_t *state) { return bench_rand(state); }

void pb_shuffle(int *v, int n, uint64_t *state)
{
    for (int i = n; i > 1; i--) {
        int j = (int)(bench_rand(state) % (uint64_t)i);
        int t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

void pb_progress(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fflush(stderr);
}

void pb_round(const pb_opts *o, const char *what, int round, int rounds, int ncells)
{
    char load[128] = "unknown";
    double avg[3];
    if (getloadavg(avg, 3) == 3) /* Linux and macOS; no /proc on macOS */
        snprintf(load, sizeof load, "%.2f %.2f %.2f", avg[0], avg[1], avg[2]);
    pb_progress("%s: round %d/%d, %d cells (load average %s)\n", what, round + 1, rounds, ncells,
                load);
    if (o->raw)
        fprintf(o->raw, "# %s round %d/%d, load average %s\n", what, round + 1, rounds, load);
}

/* For the parallel.h variant on an OpenMP backend ("ultrapool@gomp"), the
 * index of the hand-written pragma variant on the same runtime ("gomp";
 * "libomp" for "@llvm"), or -1: the interop overhead is their ratio. */
static int api_base(const pb_opts *o, int r)
{
    const char *at = strchr(o->runtimes[r], '@');
    if (!at)
        return -1;
    const char *base = strcmp(at + 1, "llvm") == 0 ? "libomp" : at + 1;
    for (int i = 0; i < o->nruntimes; i++)
        if (strcmp(o->runtimes[i], base) == 0)
            return i;
    return -1;
}

void pb_md_runtime_header(FILE *md, const pb_opts *o, const char *head, const char *sep)
{
    fprintf(md, "%s", head);
    for (int r = 0; r < o->nruntimes; r++)
        fprintf(md, " %s |", o->runtimes[r]);
    fprintf(md, " best OpenMP / ultrapool |");
    int extra = 0;
    for (int r = 0; r < o->nruntimes; r++)
        if (api_base(o, r) >= 0) {
            fprintf(md, " %s / %s |", o->runtimes[r], o->runtimes[api_base(o, r)]);
            extra++;
        }
    fprintf(md, "\n%s", sep);
    for (int r = 0; r <= o->nruntimes + extra; r++)
        fprintf(md, "---:|");
    fprintf(md, "\n");
}

int pb_md_runtime_cells(FILE *md, const pb_opts *o, const double *median, const int *flagged,
                        double seq_median)
{
    double best_omp = INFINITY, up = NAN;
    int problems = 0;
    for (int r = 0; r < o->nruntimes; r++) {
        fprintf(md, " %.1f (%.2fx)%s |", median[r] / 1e6, seq_median / median[r],
                flagged[r] ? " *" : "");
        problems += flagged[r];
        if (strcmp(o->runtimes[r], "ultrapool") == 0)
            up = median[r];
        else if (!strchr(o->runtimes[r], '@') && median[r] < best_omp)
            best_omp = median[r]; /* the hand-written OpenMP versions */
    }
    if (isnan(up) || isinf(best_omp))
        fprintf(md, " |");
    else
        fprintf(md, " %.2f |", best_omp / up);
    for (int r = 0; r < o->nruntimes; r++)
        if (api_base(o, r) >= 0)
            fprintf(md, " %.3f |", median[r] / median[api_base(o, r)]);
    fprintf(md, "\n");
    return problems;
}

unsigned pb_target_threads(const pb_opts *o)
{
    unsigned best = o->threads[0];
    for (int i = 0; i < o->nthreads; i++) {
        if (o->threads[i] == 2)
            return 2;
        if (o->threads[i] > best)
            best = o->threads[i];
    }
    return best;
}

static int usage(const char *msg)
{
    fprintf(stderr,
            "par_bench: %s\nusage: par_bench [table|epcc|metg|grain|all] --out DIR [--bin DIR] "
            "[--rounds R] [--metg-rounds R] [--grain-rounds R] [--threads 1,2] [--runtimes "
            "gomp,libomp,ultrapool,ultrapool@gomp,ultrapool@llvm] "
            "[--seed S] [--quick] [--width-factor F] [--metg-time SEC]\n",
            msg);
    return 2;
}

static int exists(const pb_opts *o, const char *runtime)
{
    char path[1024];
    child_path(o, runtime, path, sizeof path);
    return access(path, X_OK) == 0;
}

int main(int argc, char **argv)
{
    static char bindir[1024];
    pb_opts o = {.rounds = 5,
                 .metg_rounds = 3,
                 .grain_rounds = 5,
                 .seed = 0,
                 .width_factor = 4,
                 .metg_target_s = 0.05};
    const char *mode = "all", *runtimes = "gomp,libomp,ultrapool,ultrapool@gomp,ultrapool@llvm",
               *threads = "1,2";
    snprintf(bindir, sizeof bindir, "%s", argv[0]);
    char *slash = strrchr(bindir, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(bindir, sizeof bindir, ".");
    o.bin = bindir;
    int i = 1;
    if (i < argc && argv[i][0] != '-')
        mode = argv[i++];
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--quick") == 0) {
            o.quick = 1;
            continue;
        }
        if (i + 1 >= argc)
            return usage("an option is missing its value");
        const char *v = argv[++i];
        if (strcmp(a, "--out") == 0)
            o.out = v;
        else if (strcmp(a, "--bin") == 0)
            o.bin = v;
        else if (strcmp(a, "--rounds") == 0)
            o.rounds = atoi(v);
        else if (strcmp(a, "--metg-rounds") == 0)
            o.metg_rounds = atoi(v);
        else if (strcmp(a, "--grain-rounds") == 0)
            o.grain_rounds = atoi(v);
        else if (strcmp(a, "--threads") == 0)
            threads = v;
        else if (strcmp(a, "--runtimes") == 0)
            runtimes = v;
        else if (strcmp(a, "--seed") == 0)
            o.seed = strtoull(v, NULL, 10);
        else if (strcmp(a, "--width-factor") == 0)
            o.width_factor = atoi(v);
        else if (strcmp(a, "--metg-time") == 0)
            o.metg_target_s = atof(v);
        else
            return usage("unknown option");
    }
    if (strcmp(mode, "all") && strcmp(mode, "table") && strcmp(mode, "epcc") &&
        strcmp(mode, "metg") && strcmp(mode, "grain"))
        return usage("unknown mode");
    if (!o.out)
        return usage("--out is required");
    if (o.rounds < 1 || o.metg_rounds < 1 || o.grain_rounds < 1 || o.width_factor < 1 ||
        !(o.metg_target_s > 0))
        return usage("rounds, width factor and METG time must be positive");
    o.nthreads = bench_parse_list(threads, o.threads, PB_MAX_THREADS);
    if (o.nthreads < 1)
        return usage("bad --threads list");
    static char rtbuf[256];
    snprintf(rtbuf, sizeof rtbuf, "%s", runtimes);
    for (char *tok = strtok(rtbuf, ","); tok; tok = strtok(NULL, ",")) {
        if (strcmp(tok, "seq") == 0)
            continue;
        if (!exists(&o, tok)) {
            fprintf(stderr, "par_bench: no %s/par_child_%s; %s left out\n", o.bin, tok, tok);
            continue;
        }
        if (o.nruntimes < PB_MAX_RUNTIMES)
            o.runtimes[o.nruntimes++] = tok;
    }
    if (!exists(&o, "seq"))
        return usage("no par_child_seq next to par_bench (see --bin)");
    if (o.seed == 0)
        o.seed = (uint64_t)time(NULL);
    mkdir(o.out, 0777);
    o.raw = pb_open(&o, "raw.log");
    o.summary = pb_open(&o, "summary.md");
    if (!o.raw || !o.summary)
        return 1;
    fprintf(o.raw, "# par_bench %s seed %llu\n", mode, (unsigned long long)o.seed);
    fprintf(o.summary, "# Targets of issue 7, as measured in this run (seed %llu)\n\n",
            (unsigned long long)o.seed);
    pb_progress("par_bench: %s, seed %llu, results in %s\n", mode, (unsigned long long)o.seed,
                o.out);

    int rc = 0;
    int all = strcmp(mode, "all") == 0;
    if (all || strcmp(mode, "table") == 0)
        rc |= pb_table(&o);
    if (all || strcmp(mode, "epcc") == 0)
        rc |= pb_epcc(&o);
    if (all || strcmp(mode, "metg") == 0)
        rc |= pb_metg(&o);
    if (all || strcmp(mode, "grain") == 0)
        rc |= pb_grain(&o);
    fclose(o.raw);
    fclose(o.summary);
    return rc ? 1 : 0;
}
