/* Places (OMP_PLACES, GOMP_CPU_AFFINITY) and the affinity format
 * (OMP_AFFINITY_FORMAT, OMP_DISPLAY_AFFINITY): the omp_ calls on them.
 *
 * The place list is what the variables say, restricted to the CPUs the
 * process may run on (libgomp drops the others, and places left empty).
 * The pool binds its workers itself (it reads OMP_PROC_BIND and
 * OMP_PLACES, docs/env.md); omp_get_place_num answers from the calling
 * thread's actual CPU mask, so it never names a place the thread is not
 * confined to. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "gomp.h"

#define MAX_PLACES 1024

static cpu_set_t *places; /* (ro after gomp_places_init) */
static int nplaces;
static cpu_set_t allowed;

/* ---- cpu lists ------------------------------------------------------------- */

static int read_int(const char **s, long *out)
{
    char *end;
    long v = strtol(*s, &end, 10);
    if (end == *s || v < 0)
        return -1;
    *s = end;
    *out = v;
    return 0;
}

/* "0-3,8,10-11" (sysfs) into set. */
static int cpulist(const char *s, cpu_set_t *set)
{
    CPU_ZERO(set);
    while (*s && *s != '\n') {
        long a, b;
        if (read_int(&s, &a) != 0)
            return -1;
        b = a;
        if (*s == '-' && (s++, read_int(&s, &b) != 0))
            return -1;
        for (long c = a; c <= b && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, set);
        if (*s == ',')
            s++;
    }
    return 0;
}

static int sysfs_list(const char *path, cpu_set_t *set)
{
    char buf[1024];
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fgets(buf, sizeof buf, f) != NULL;
    fclose(f);
    return ok ? cpulist(buf, set) : -1;
}

static void add_place(const cpu_set_t *set)
{
    cpu_set_t in;
    CPU_AND(&in, set, &allowed);
    if (CPU_COUNT(&in) > 0 && nplaces < MAX_PLACES)
        places[nplaces++] = in;
}

/* ---- abstract names ------------------------------------------------------------ */

/* One place per group of CPUs sharing what file (a sysfs list per CPU,
 * %d its number), at most limit of them. */
static void by_group(const char *file, long limit)
{
    cpu_set_t done;
    CPU_ZERO(&done);
    for (int c = 0; c < CPU_SETSIZE && nplaces < limit; c++) {
        if (!CPU_ISSET(c, &allowed) || CPU_ISSET(c, &done))
            continue;
        char path[160];
        cpu_set_t set;
        snprintf(path, sizeof path, file, c);
        if (!file[0] || sysfs_list(path, &set) != 0) {
            CPU_ZERO(&set);
            CPU_SET(c, &set);
        }
        CPU_OR(&done, &done, &set);
        add_place(&set);
    }
}

static int abstract(const char *s)
{
    static const struct {
        const char *name, *file;
    } kinds[] = {{"threads", ""},
                 {"cores", "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list"},
                 {"sockets", "/sys/devices/system/cpu/cpu%d/topology/core_siblings_list"},
                 {"ll_caches", "/sys/devices/system/cpu/cpu%d/cache/index3/shared_cpu_list"},
                 {"numa_domains", ""}};
    size_t n = strcspn(s, "( \t");
    for (size_t k = 0; k < 5; k++) {
        if (strlen(kinds[k].name) != n || strncasecmp(s, kinds[k].name, n))
            continue;
        long limit = MAX_PLACES;
        const char *p = s + n;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '(') {
            p++;
            if (read_int(&p, &limit) != 0 || limit == 0 || *p++ != ')')
                return -1;
        }
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p)
            return -1;
        if (k == 4) { /* NUMA nodes: their own lists, else one domain */
            for (int node = 0; nplaces < limit && node < 1024; node++) {
                char path[96];
                cpu_set_t set;
                snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", node);
                if (sysfs_list(path, &set) != 0)
                    break;
                add_place(&set);
            }
            if (nplaces == 0)
                add_place(&allowed);
        } else
            by_group(kinds[k].file, limit);
        return 0;
    }
    return -1;
}

/* ---- explicit lists ---------------------------------------------------------- */

static void skip(const char **s)
{
    while (**s == ' ' || **s == '\t')
        (*s)++;
}

/* ":len[:stride]" after an item, defaults 1 and 1. */
static int interval(const char **s, long *len, long *stride)
{
    *len = 1;
    *stride = 1;
    skip(s);
    if (**s != ':')
        return 0;
    (*s)++;
    skip(s);
    if (read_int(s, len) != 0 || *len == 0)
        return -1;
    skip(s);
    if (**s == ':') {
        (*s)++;
        skip(s);
        int neg = **s == '-';
        if (neg)
            (*s)++;
        if (read_int(s, stride) != 0)
            return -1;
        if (neg)
            *stride = -*stride;
    }
    return 0;
}

/* "{res,...}" into set, where res is [!]num[:len[:stride]]. */
static int braces(const char **s, cpu_set_t *set)
{
    CPU_ZERO(set);
    skip(s);
    if (*(*s)++ != '{')
        return -1;
    for (;;) {
        skip(s);
        int excl = **s == '!';
        if (excl)
            (*s)++;
        long first, len, stride;
        if (read_int(s, &first) != 0 || interval(s, &len, &stride) != 0)
            return -1;
        for (long i = 0; i < len; i++) {
            long c = first + i * stride;
            if (c < 0 || c >= CPU_SETSIZE)
                return -1;
            if (excl)
                CPU_CLR((int)c, set);
            else
                CPU_SET((int)c, set);
        }
        skip(s);
        if (**s == '}')
            break;
        if (*(*s)++ != ',')
            return -1;
    }
    (*s)++;
    return 0;
}

static int explicit_list(const char *s)
{
    for (;;) {
        cpu_set_t set;
        long len, stride;
        skip(&s);
        if (*s == '!')
            return -1; /* excluding whole places: not supported, reported */
        if (braces(&s, &set) != 0 || interval(&s, &len, &stride) != 0)
            return -1;
        for (long i = 0; i < len; i++) {
            cpu_set_t shifted;
            CPU_ZERO(&shifted);
            for (int c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, &set)) {
                    long d = c + i * stride;
                    if (d < 0 || d >= CPU_SETSIZE)
                        return -1;
                    CPU_SET((int)d, &shifted);
                }
            add_place(&shifted);
        }
        skip(&s);
        if (*s == '\0')
            return 0;
        if (*s++ != ',')
            return -1;
    }
}

/* GOMP_CPU_AFFINITY="0 3 1-2 4-15:2": a place per CPU, in that order. */
static int cpu_affinity(const char *s)
{
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == ',')
            s++;
        if (!*s)
            return 0;
        long a, b, step = 1;
        if (read_int(&s, &a) != 0)
            return -1;
        b = a;
        if (*s == '-') {
            s++;
            if (read_int(&s, &b) != 0 || b < a)
                return -1;
            if (*s == ':' && (s++, read_int(&s, &step) != 0 || step == 0))
                return -1;
        }
        for (long c = a; c <= b; c += step) {
            cpu_set_t one;
            if (c >= CPU_SETSIZE)
                return -1;
            CPU_ZERO(&one);
            CPU_SET((int)c, &one);
            add_place(&one);
        }
    }
}

int gomp_places_init(int binding)
{
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        CPU_ZERO(&allowed);
        for (long c = 0, n = sysconf(_SC_NPROCESSORS_ONLN); c < n && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, &allowed);
    }
    places = calloc(MAX_PLACES, sizeof *places);
    if (!places)
        gomp_fatal("out of memory for the place list");
    const char *v = up__env("OMP_PLACES"), *name = "OMP_PLACES";
    int rc = 0;
    if (v) {
        const char *p = v;
        skip(&p);
        rc = *p == '{' ? explicit_list(p) : abstract(p);
    } else if ((v = up__env("GOMP_CPU_AFFINITY")) != NULL) {
        name = "GOMP_CPU_AFFINITY";
        rc = cpu_affinity(v);
    } else if (binding)
        by_group("", MAX_PLACES); /* one place per CPU, as libgomp's default */
    if (rc != 0) {
        nplaces = 0;
        gomp_env_warn(name, v, "not a place list such as threads, cores(4) or {0,1},{2:2}",
                      "no places");
    }
    return nplaces;
}

int gomp_places_count(void)
{
    gomp_env_get();
    return nplaces;
}

int gomp_place_cpus(int p, int *ids, int max)
{
    if (p < 0 || p >= gomp_places_count())
        return 0;
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &places[p])) {
            if (ids && n < max)
                ids[n] = c;
            n++;
        }
    return n;
}

/* A CPU set as "0-3,8" into buf (what %A shows); sep "-" as here, or ":"
 * for OMP_DISPLAY_ENV's places, which give a run as first:length. */
static void set_text_sep(const cpu_set_t *set, char *buf, size_t size, int colon)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
            e++;
        int w = e == c  ? snprintf(buf + n, size - n, "%s%d", n ? "," : "", c)
                : colon ? snprintf(buf + n, size - n, "%s%d:%d", n ? "," : "", c, e - c + 1)
                        : snprintf(buf + n, size - n, "%s%d-%d", n ? "," : "", c, e);
        if (w < 0 || (size_t)w >= size - n)
            return;
        n += (size_t)w;
        c = e;
    }
}

static void set_text(const cpu_set_t *set, char *buf, size_t size)
{
    set_text_sep(set, buf, size, 0);
}

void gomp_places_text(char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int p = 0; p < gomp_places_count() && n + 4 < size; p++) {
        char one[256];
        set_text_sep(&places[p], one, sizeof one, 1);
        int w = snprintf(buf + n, size - n, "%s{%s}", p ? "," : "", one);
        if (w < 0 || (size_t)w >= size - n)
            break;
        n += (size_t)w;
    }
}

/* ---- the omp_ calls on places ------------------------------------------------- */

GOMP_API int omp_get_num_places(void) { return gomp_places_count(); }
GOMP_API int omp_get_place_num_procs(int p) { return gomp_place_cpus(p, NULL, 0); }

GOMP_API void omp_get_place_proc_ids(int p, int *ids) { gomp_place_cpus(p, ids, CPU_SETSIZE); }

GOMP_API int omp_get_place_num(void)
{
    cpu_set_t mine;
    if (pthread_getaffinity_np(pthread_self(), sizeof mine, &mine) != 0)
        return -1;
    for (int p = 0; p < gomp_places_count(); p++) {
        cpu_set_t in;
        CPU_AND(&in, &mine, &places[p]);
        if (CPU_EQUAL(&in, &mine))
            return p;
    }
    return -1;
}

/* The partition of the current task is the whole list: the pool does not
 * split places between nested teams. */
GOMP_API int omp_get_partition_num_places(void) { return gomp_places_count(); }

GOMP_API void omp_get_partition_place_nums(int *nums)
{
    for (int p = 0; p < gomp_places_count(); p++)
        nums[p] = p;
}

/* ---- the affinity format -------------------------------------------------------- */

GOMP_API void omp_set_affinity_format(const char *fmt)
{
    gomp_affinity_format_set(fmt, strlen(fmt));
}

GOMP_API size_t omp_get_affinity_format(char *buf, size_t size)
{
    char all[GOMP_AFFINITY_FORMAT_MAX];
    gomp_affinity_format_get(all, sizeof all);
    if (buf && size)
        snprintf(buf, size, "%s", all);
    return strlen(all);
}

/* Appends text to out (capacity size, used *n, counting past the end). */
static void put(char *out, size_t size, size_t *n, const char *text)
{
    for (; *text; text++, (*n)++)
        if (*n + 1 < size)
            out[*n] = *text;
}

/* One field: flags and width, then its value as text. Zeros pad numbers
 * only (host and affinity pad with blanks), after the sign or the 0x of
 * a thread id, as libgomp pads them. */
static void field(char *out, size_t size, size_t *n, int zero, int right, long width,
                  const char *value, int number)
{
    long len = (long)strlen(value);
    if (zero && number) {
        size_t lead = value[0] == '-' ? 1 : (value[0] == '0' && value[1] == 'x') ? 2 : 0;
        char head[3] = {0};
        memcpy(head, value, lead);
        put(out, size, n, head);
        for (long i = len; i < width; i++)
            put(out, size, n, "0");
        put(out, size, n, value + lead);
        return;
    }
    if (right || zero)
        for (long i = len; i < width; i++)
            put(out, size, n, " ");
    put(out, size, n, value);
    if (!right)
        for (long i = len; i < width; i++)
            put(out, size, n, " ");
}

static int ancestor_tnum(void) { return omp_get_ancestor_thread_num(omp_get_level() - 1); }

static size_t format_affinity(char *out, size_t size, const char *fmt)
{
    /* The fields: letter, name, and for a number the query that gives it. */
    static const struct {
        char c;
        const char *name;
        int (*num)(void);
    } types[] = {{'t', "team_num", omp_get_team_num},
                 {'T', "num_teams", omp_get_num_teams},
                 {'L', "nesting_level", omp_get_level},
                 {'n', "thread_num", omp_get_thread_num},
                 {'N', "num_threads", omp_get_num_threads},
                 {'a', "ancestor_tnum", ancestor_tnum},
                 {'H', "host", NULL},
                 {'P', "process_id", NULL},
                 {'i', "native_thread_id", NULL},
                 {'A', "thread_affinity", NULL}};
    size_t n = 0;
    for (const char *p = fmt; *p;) {
        if (*p != '%') {
            char one[2] = {*p++, '\0'};
            put(out, size, &n, one);
            continue;
        }
        p++;
        if (*p == '%') {
            put(out, size, &n, "%");
            p++;
            continue;
        }
        int zero = 0, right = 0;
        if (*p == '0') {
            zero = 1;
            if (*++p != '.')
                gomp_fatal("affinity format \"%s\": a leading zero not followed by a dot", fmt);
        }
        if (*p == '.') {
            right = 1;
            p++;
        }
        long width = 0;
        while (*p >= '0' && *p <= '9')
            width = width * 10 + (*p++ - '0');
        int k = -1;
        if (*p == '{') {
            const char *end = strchr(p, '}');
            for (int i = 0; end && i < 10; i++)
                if ((size_t)(end - p - 1) == strlen(types[i].name) &&
                    !strncmp(p + 1, types[i].name, (size_t)(end - p - 1)))
                    k = i;
            p = end ? end + 1 : p;
        } else {
            for (int i = 0; i < 10; i++)
                if (*p == types[i].c)
                    k = i;
            p++;
        }
        if (k < 0)
            gomp_fatal("affinity format \"%s\": an unknown field", fmt);
        char value[256];
        cpu_set_t mine;
        if (types[k].num)
            snprintf(value, sizeof value, "%d", types[k].num());
        else
            switch (types[k].c) {
            case 'H':
                if (gethostname(value, sizeof value) != 0)
                    snprintf(value, sizeof value, "?");
                value[sizeof value - 1] = '\0';
                break;
            case 'P':
                snprintf(value, sizeof value, "%ld", (long)getpid());
                break;
            case 'i':
                snprintf(value, sizeof value, "0x%lx", (unsigned long)pthread_self());
                break;
            default:
                if (pthread_getaffinity_np(pthread_self(), sizeof mine, &mine) != 0)
                    CPU_ZERO(&mine);
                set_text(&mine, value, sizeof value);
            }
        field(out, size, &n, zero, right, width, value, types[k].c != 'H' && types[k].c != 'A');
    }
    if (size)
        out[n < size ? n : size - 1] = '\0';
    return n;
}

GOMP_API size_t omp_capture_affinity(char *buf, size_t size, const char *fmt)
{
    char dflt[GOMP_AFFINITY_FORMAT_MAX];
    if (!fmt || !*fmt) {
        gomp_affinity_format_get(dflt, sizeof dflt);
        fmt = dflt;
    }
    return format_affinity(buf, buf ? size : 0, fmt);
}

GOMP_API void omp_display_affinity(const char *fmt)
{
    char line[1024];
    size_t n = omp_capture_affinity(line, sizeof line, fmt);
    char *big = n >= sizeof line ? malloc(n + 1) : NULL;
    if (big)
        omp_capture_affinity(big, n + 1, fmt);
    fprintf(stderr, "%s\n", big ? big : line);
    free(big);
}

/* OMP_DISPLAY_AFFINITY: a thread shows its line when it enters a region
 * and what the default format shows (its level, number, team size,
 * CPUs) changed since its last line. The thread keeps a hash of that
 * line, not the line: the library's thread-local storage is static (the
 * layer's par_tls is initial-exec), and a dlopen finds little room for
 * it. */
void gomp_display_affinity_entry(void)
{
    static _Thread_local uint64_t last;
    if (!gomp_env_get()->display_affinity)
        return;
    char now[1024];
    omp_capture_affinity(now, sizeof now, NULL);
    uint64_t h = 1469598103934665603u; /* FNV-1a; 0 never: the first line always shows */
    for (const unsigned char *c = (const unsigned char *)now; *c; c++)
        h = (h ^ *c) * 1099511628211u;
    h |= 1;
    if (h != last) {
        fprintf(stderr, "%s\n", now);
        last = h;
    }
}
