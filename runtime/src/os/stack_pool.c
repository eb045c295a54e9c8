/* Guarded fiber stacks, their free lists, and the overflow handler (see
 * stack_pool.h for the memory and map-count rules). */
#include "os/stack_pool.h"

#include "atomic.h"
#include "clock.h"
#include "fiber.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <sys/uio.h>
#endif

#include <ultrapool/pool.h>

#define PEAK_DECAY_NS 1000000000u /* stack_pool.h: peak_decay_ns */

#if !defined(MAP_ANONYMOUS)
#define MAP_ANONYMOUS MAP_ANON
#endif
/* Linux only: stacks are reserved address space, committed page by page
 * as they are touched, whatever the overcommit policy says. */
#if defined(MAP_NORESERVE) && defined(__linux__)
#define STACK_MAP_NORESERVE MAP_NORESERVE
#else
#define STACK_MAP_NORESERVE 0
#endif
#if defined(MAP_STACK) && defined(__linux__)
#define STACK_MAP_STACK MAP_STACK
#else
#define STACK_MAP_STACK 0
#endif
/* Giving pages back: MADV_DONTNEED frees them at once on Linux (so RSS
 * drops); elsewhere MADV_FREE is the call that actually releases them. */
#if defined(__linux__) || !defined(MADV_FREE)
#define STACK_MADV_COLD MADV_DONTNEED
#else
#define STACK_MADV_COLD MADV_FREE
#endif

/* Mappings left to the rest of the program below vm.max_map_count. */
#define MAP_RESERVE 4096

/* Bytes at the top of each mapping for its descriptor. */
#define DESC_SIZE 64
_Static_assert(sizeof(up__stack) <= DESC_SIZE, "the descriptor fits its slot");

/* Guarded stacks mapped by all pools of the process (atomic). A pool
 * reserves one with fetch_add before mapping and gives it back if the
 * total went past the budget, so the count never stays above it; relaxed
 * is enough, since the count orders nothing but itself. */
static _Atomic size_t guarded_mapped;
static _Atomic int budget_said;
static size_t guarded_budget = SIZE_MAX;
static pthread_once_t budget_once = PTHREAD_ONCE_INIT;

long up__stack_max_map_count(void)
{
    int fd = open("/proc/sys/vm/max_map_count", O_RDONLY);
    if (fd < 0)
        return -1;
    char buf[32];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *end;
    long v = strtol(buf, &end, 10);
    return end == buf || v <= 0 ? -1 : v;
}

/* How a stack's guard page is made. Linux 6.13 and later install a
 * lightweight guard region (MADV_GUARD_INSTALL): the page faults like a
 * PROT_NONE one but stays part of the stack's mapping, so a guarded stack
 * is one kernel mapping, not two, and neighbouring stacks may even merge;
 * installing it takes the address-space lock for reading only, where
 * mprotect takes it for writing and splits the mapping. Elsewhere (older
 * kernels, other systems) the guard is a PROT_NONE page. Probed once, on
 * a scratch mapping. */
#if defined(__linux__)
#if !defined(MADV_GUARD_INSTALL)
#define MADV_GUARD_INSTALL 102
#endif
#define HAVE_GUARD_REGIONS 1
#endif
static int guard_regions; /* 1: MADV_GUARD_INSTALL works here (set once, budget_once) */

static int probe_guard_regions(void)
{
#if defined(HAVE_GUARD_REGIONS)
    long page = sysconf(_SC_PAGESIZE);
    size_t pg = page > 0 ? (size_t)page : 4096;
    char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return 0;
    int ok = madvise(m, pg, MADV_GUARD_INSTALL) == 0;
    if (ok) {
        /* Trusted only if the page now refuses access: the kernel's copy
         * from it must fail. (An emulator may accept the advice and
         * ignore it, as qemu-user does with advice it does not know.) */
        int fds[2];
        ok = 0;
        if (pipe(fds) == 0) {
            ok = write(fds[1], m, 1) < 0 && errno == EFAULT;
            close(fds[0]);
            close(fds[1]);
        }
    }
    munmap(m, 2 * pg);
    return ok;
#else
    return 0;
#endif
}

/* Kernel mappings one guarded stack may take: one with guard regions (at
 * most one however the stacks merge and split), two with a PROT_NONE
 * guard. */
static size_t maps_per_stack(void) { return guard_regions ? 1 : 2; }

static void budget_read(void)
{
    guard_regions = probe_guard_regions();
    long max = up__stack_max_map_count();
    if (max < 0)
        guarded_budget = SIZE_MAX;
    else
        guarded_budget = max > MAP_RESERVE ? (size_t)(max - MAP_RESERVE) / maps_per_stack() : 0;
}

size_t up__stack_guarded_budget(void)
{
    pthread_once(&budget_once, budget_read);
    return guarded_budget;
}

void up__stack_lower_budget(size_t n)
{
    pthread_once(&budget_once, budget_read);
    if (n < guarded_budget)
        guarded_budget = n;
}

unsigned up__stack_maps_per_stack(void)
{
    pthread_once(&budget_once, budget_read);
    return (unsigned)maps_per_stack();
}

void up__stack_pool_config_init(up__stack_pool_config *cfg)
{
    *cfg = (up__stack_pool_config){.stack_size = UP__STACK_DEFAULT_SIZE,
                                   .guard = 1,
                                   .hot_max = 16,
                                   .free_max = 1024,
                                   .max_stacks = 0,
                                   .peak_decay_ns = PEAK_DECAY_NS};
}

int up__stack_pool_init(up__stack_pool *p, const up__stack_pool_config *cfg)
{
    up__stack_pool_config c;
    if (cfg)
        c = *cfg;
    else
        up__stack_pool_config_init(&c);
    if (!p || c.stack_size < UP__STACK_MIN_SIZE || c.stack_size > UP__STACK_MAX_SIZE ||
        c.free_max < c.hot_max || c.guard > 1)
        return UP_EINVAL;
    memset(p, 0, sizeof *p);
    long page = sysconf(_SC_PAGESIZE);
    p->page = page > 0 ? (size_t)page : 4096;
    c.stack_size = (c.stack_size + p->page - 1) / p->page * p->page;
    p->cfg = c;
    if (pthread_mutex_init(&p->lock, NULL) != 0)
        return UP_ENOMEM;
    if (pthread_mutex_init(&p->chunk_mu, NULL) != 0) {
        pthread_mutex_destroy(&p->lock);
        return UP_ENOMEM;
    }
    if (c.guard)
        up__stack_guarded_budget();
    return 0;
}

static void unmap_stack(up__stack_pool *p, up__stack *s)
{
    int guarded = p->cfg.guard;
    munmap(s->map, s->map_size);
    if (guarded)
        up__fetch_sub_relaxed(&guarded_mapped, 1);
}

typedef struct addr_range {
    char *lo;
    size_t size;
} addr_range;

static int by_address(const void *a, const void *b)
{
    const addr_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Unmaps the n ranges of r (sorted here), each run of touching ones with
 * one call. */
static void unmap_ranges(addr_range *r, size_t n)
{
    qsort(r, n, sizeof *r, by_address);
    for (size_t i = 0; i < n;) {
        char *lo = r[i].lo, *hi = r[i].lo + r[i].size;
        size_t j = i + 1;
        for (; j < n && r[j].lo == hi; j++)
            hi += r[j].size;
        munmap(lo, (size_t)(hi - lo));
        i = j;
    }
}

void up__stack_pool_destroy(up__stack_pool *p)
{
    pthread_mutex_lock(&p->lock);
    if (p->in_use != 0) {
        fprintf(stderr, "ultrapool: a stack pool destroyed with %zu stacks in use\n", p->in_use);
        abort();
    }
    up__stack **hot = p->hot;
    size_t hot_first = p->hot_first, hot_cap = p->hot_cap, n_hot = p->n_hot;
    up__stack *cold = p->cold;
    size_t n = p->n_hot + p->n_cold;
    p->hot = NULL;
    p->cold = NULL;
    p->hot_first = p->hot_cap = 0;
    p->n_hot = p->n_cold = p->mapped = 0;
    pthread_mutex_unlock(&p->lock);
    /* Neighbours (stacks cut from one chunk, and the chunk's uncut rest)
     * go in one munmap each run: one per stack would split the chunk's
     * mapping at every call, thousands of times for a pool that parked
     * thousands of tasks. Per stack only when the list cannot be had. */
    size_t slot = p->cfg.stack_size + up__stack_guard_size(p);
    addr_range *r = malloc((n + 1) * sizeof *r);
    size_t k = 0;
    for (size_t i = 0; i < n_hot; i++) {
        up__stack *s = hot[(hot_first + i) & (hot_cap - 1)];
        if (r)
            r[k++] = (addr_range){s->map, s->map_size};
        else
            unmap_stack(p, s);
    }
    free(hot);
    for (up__stack *s = cold, *next; s; s = next) {
        next = s->next;
        if (r)
            r[k++] = (addr_range){s->map, s->map_size};
        else
            unmap_stack(p, s);
    }
    if (r && p->chunk_left)
        r[k++] = (addr_range){p->chunk_next, p->chunk_left * slot};
    else if (p->chunk_left)
        munmap(p->chunk_next, p->chunk_left * slot);
    p->chunk_left = 0;
    if (r) {
        size_t guarded = p->cfg.guard ? n : 0;
        unmap_ranges(r, k);
        free(r);
        if (guarded)
            up__fetch_sub_relaxed(&guarded_mapped, guarded);
    }
    pthread_mutex_destroy(&p->chunk_mu);
    pthread_mutex_destroy(&p->lock);
}

/* Address space for one stack (guard included), cut from the pool's
 * current chunk. Stacks are mapped up to CHUNK_MAX at a time (the first
 * chunks smaller, so that a pool that needs few stacks reserves little
 * address space): mmap takes the process's address-space lock for
 * writing, which stalls every page fault of every thread meanwhile, and a
 * pool whose parked tasks need thousands of stacks would take it once per
 * stack. A stack cut from a chunk is unmapped on its own like any (munmap
 * of part of a mapping), and the rest of the current chunk at destroy.
 * NULL when the OS refuses even a single stack. */
#define CHUNK_MIN 4
#define CHUNK_MAX UP__STACK_CHUNK_MAX

#if defined(HAVE_GUARD_REGIONS) && defined(SYS_process_madvise) && defined(SYS_pidfd_open)
#define HAVE_CHUNK_GUARDS 1
#endif

/* Installs the guard regions of a new chunk's k slots with one system
 * call (process_madvise on this process, Linux 6.13 and later): one
 * madvise per stack costs about 1 us more per stack on a VM, which a pool
 * that parks tens of thousands of tasks pays for each. 1 when every guard
 * is in; 0 leaves them to map_stack, one by one (also after a partial
 * success: installing a guard twice is harmless). */
static int guard_chunk(up__stack_pool *p, char *m, size_t k, size_t slot, size_t guard)
{
#if defined(HAVE_CHUNK_GUARDS)
    static _Atomic int refused; /* the kernel does not take it: stop asking */
    if (!guard_regions || k < 2 || up__load_relaxed(&refused))
        return 0;
    /* A pidfd per chunk, not one kept open: the program owns its fds. */
    int fd = (int)syscall(SYS_pidfd_open, (long)getpid(), 0L);
    if (fd < 0) {
        if (errno == ENOSYS)
            up__store_relaxed(&refused, 1);
        return 0; /* out of fds, say: per stack this time */
    }
    /* The iovecs live in the pool (chunk_mu held), not on this stack,
     * which may be a parking task's. */
    struct iovec *v = p->chunk_iov;
    for (size_t i = 0; i < k; i++)
        v[i] = (struct iovec){m + i * slot, guard};
    long done = syscall(SYS_process_madvise, (long)fd, v, (long)k, (long)MADV_GUARD_INSTALL, 0L);
    if (done < 0 && (errno == ENOSYS || errno == EINVAL || errno == EPERM))
        up__store_relaxed(&refused, 1); /* an older kernel: never on this one */
    close(fd);
    return done == (long)(k * guard);
#else
    (void)p;
    (void)m;
    (void)k;
    (void)slot;
    (void)guard;
    return 0;
#endif
}

/* Sets *guarded when the slot's guard is already installed. */
static char *carve(up__stack_pool *p, size_t map_size, int *guarded)
{
    pthread_mutex_lock(&p->chunk_mu);
    if (p->chunk_left == 0) {
        size_t k = p->chunk_stacks < CHUNK_MIN ? CHUNK_MIN : p->chunk_stacks;
        char *m;
        for (;; k /= 2) { /* smaller chunks while the OS refuses */
            m = mmap(NULL, k * map_size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | STACK_MAP_NORESERVE | STACK_MAP_STACK, -1, 0);
            if (m != MAP_FAILED || k == 1)
                break;
        }
        if (m == MAP_FAILED) {
            pthread_mutex_unlock(&p->chunk_mu);
            return NULL;
        }
        p->chunk_next = m;
        p->chunk_left = k;
        p->chunk_stacks = k * 2 > CHUNK_MAX ? CHUNK_MAX : k * 2;
        size_t guard = up__stack_guard_size(p);
        p->chunk_guarded = guard && guard_chunk(p, m, k, map_size, guard);
    }
    *guarded = p->chunk_guarded;
    char *r = p->chunk_next;
    p->chunk_next += map_size;
    p->chunk_left--;
    pthread_mutex_unlock(&p->chunk_mu);
    return r;
}

/* Maps a new stack; NULL when the budget or the OS refuses. */
static up__stack *map_stack(up__stack_pool *p)
{
    size_t guard = up__stack_guard_size(p);
    if (guard) {
        size_t n = up__fetch_add_relaxed(&guarded_mapped, 1) + 1;
        if (n > guarded_budget) {
            up__fetch_sub_relaxed(&guarded_mapped, 1);
            if (!up__exchange_acq_rel(&budget_said, 1))
                fprintf(stderr,
                        "ultrapool: %zu guarded task stacks reach what vm.max_map_count=%ld "
                        "allows (%s each, %d left to the program): queued tasks wait "
                        "for parked ones to end; for N parked tasks at once set "
                        "sysctl vm.max_map_count=%sN+%d or more\n",
                        guarded_budget, up__stack_max_map_count(),
                        guard_regions ? "one mapping" : "two mappings", MAP_RESERVE,
                        guard_regions ? "" : "2*", MAP_RESERVE);
            return NULL;
        }
    }
    size_t map_size = p->cfg.stack_size + guard;
    int guarded = 0;
    char *map = carve(p, map_size, &guarded);
    if (!map)
        goto fail;
    if (guard && !guarded) {
#if defined(HAVE_GUARD_REGIONS)
        int rc = guard_regions ? madvise(map, guard, MADV_GUARD_INSTALL)
                               : mprotect(map, guard, PROT_NONE);
#else
        int rc = mprotect(map, guard, PROT_NONE);
#endif
        if (rc != 0) {
            munmap(map, map_size);
            goto fail;
        }
    }
    up__stack *s = (up__stack *)(map + map_size - DESC_SIZE);
    s->map = map;
    s->map_size = map_size;
    s->lo = map + guard;
    s->size = (size_t)((char *)s - s->lo);
    s->next = NULL;
    s->cold = 0;
    return s;
fail:
    if (guard)
        up__fetch_sub_relaxed(&guarded_mapped, 1);
    return NULL;
}

/* How many free stacks keep their pages, and how many stay mapped: the
 * configured bounds, or the recent peak of stacks in use when that is
 * more. Giving pages back (madvise) and unmapping both cost a TLB
 * shootdown across the process's CPUs, several microseconds each, and a
 * pool whose parked tasks resume in bursts (a timer tick releases them
 * together) swings from many stacks in use to few and back: with fixed
 * bounds, or bounds that follow the use itself, it would pay one per task.
 * The peak halves (down to what is in use) once per peak_decay_ns (1 s
 * by default) at an acquire or a release, so free stacks cost at most
 * what the peak use cost, and a pool that stays smaller gives the excess
 * back as it goes. A pool that stops using stacks altogether keeps its
 * free ones (their pages, and their share of the process's map budget)
 * until its next use or its destroy. */
static void note_use(up__stack_pool *p)
{
    if (p->in_use > p->use_peak) {
        p->use_peak = p->in_use;
        p->peak_at = up__now_ns(); /* a new peak lasts a full period */
    }
}

static void decay_peak(up__stack_pool *p)
{
    uint64_t now = up__now_ns();
    if (now - p->peak_at < p->cfg.peak_decay_ns)
        return;
    p->peak_at = now;
    p->use_peak = p->use_peak / 2 > p->in_use ? p->use_peak / 2 : p->in_use;
}

static size_t hot_bound(const up__stack_pool *p)
{
    return p->use_peak > p->cfg.hot_max ? p->use_peak : p->cfg.hot_max;
}

static size_t free_bound(const up__stack_pool *p)
{
    return p->use_peak > p->cfg.free_max ? p->use_peak : p->cfg.free_max;
}

/* Under the lock: the hot ring's newest (hot_take) and oldest (hot_drop)
 * stack, and room for one more (hot_room: 0 when the ring cannot grow). */
static up__stack *hot_take(up__stack_pool *p)
{
    p->n_hot--;
    return p->hot[(p->hot_first + p->n_hot) & (p->hot_cap - 1)];
}

static up__stack *hot_drop(up__stack_pool *p)
{
    up__stack *s = p->hot[p->hot_first];
    p->hot_first = (p->hot_first + 1) & (p->hot_cap - 1);
    p->n_hot--;
    return s;
}

static int hot_room(up__stack_pool *p)
{
    if (p->n_hot < p->hot_cap)
        return 1;
    size_t cap = p->hot_cap ? p->hot_cap * 2 : 64;
    up__stack **ring = malloc(cap * sizeof *ring);
    if (!ring)
        return 0;
    for (size_t i = 0; i < p->n_hot; i++)
        ring[i] = p->hot[(p->hot_first + i) & (p->hot_cap - 1)];
    free(p->hot);
    p->hot = ring;
    p->hot_first = 0;
    p->hot_cap = cap;
    return 1;
}

int up__stack_acquire(up__stack_pool *p, up__stack **out)
{
    *out = NULL;
    pthread_mutex_lock(&p->lock);
    up__stack *s = NULL;
    if (p->n_hot) {
        s = hot_take(p);
    } else if ((s = p->cold)) {
        p->cold = s->next;
        p->n_cold--;
        s->cold = 0;
        s->next = NULL;
    }
    if (s) {
        p->in_use++;
        p->reused++;
        note_use(p);
        decay_peak(p);
        pthread_mutex_unlock(&p->lock);
        *out = s;
        return 0;
    }
    if (p->cfg.max_stacks && p->mapped >= p->cfg.max_stacks) {
        pthread_mutex_unlock(&p->lock);
        return UP_ENOMEM;
    }
    /* Reserve the place, then map outside the lock (a system call). */
    p->mapped++;
    p->in_use++;
    note_use(p);
    pthread_mutex_unlock(&p->lock);
    s = map_stack(p);
    pthread_mutex_lock(&p->lock);
    if (s) {
        p->created++;
    } else {
        p->mapped--;
        p->in_use--;
    }
    pthread_mutex_unlock(&p->lock);
    *out = s;
    return s ? 0 : UP_ENOMEM;
}

/* Under the lock: s leaves the hot list's accounting for the cold one.
 * Returns 1 when the caller must give its pages back and then list it
 * (cold_list), 0 when it must unmap it. Its place is reserved while
 * unlocked: n_cold counts it before it is on the list. */
static int to_cold(up__stack_pool *p)
{
    int keep = p->n_hot + p->n_cold < free_bound(p);
    if (keep)
        p->n_cold++;
    else
        p->mapped--;
    return keep;
}

/* Outside the lock: gives s's pages back (every page but the top one,
 * which holds the descriptor) and lists it cold, or unmaps it. */
static void cold_list(up__stack_pool *p, up__stack *s, int keep)
{
    if (!keep) {
        unmap_stack(p, s);
        return;
    }
    char *top_page = s->map + s->map_size - p->page;
    madvise(s->lo, (size_t)(top_page - s->lo), STACK_MADV_COLD);
    s->cold = 1;
    pthread_mutex_lock(&p->lock);
    s->next = p->cold;
    p->cold = s;
    pthread_mutex_unlock(&p->lock);
}

void up__stack_release(up__stack_pool *p, up__stack *s)
{
    pthread_mutex_lock(&p->lock);
    p->in_use--;
    decay_peak(p);
    if (p->n_hot < hot_bound(p) && hot_room(p)) {
        p->hot[(p->hot_first + p->n_hot) & (p->hot_cap - 1)] = s;
        p->n_hot++;
        pthread_mutex_unlock(&p->lock);
        return;
    }
    int keep = to_cold(p);
    /* A hot list left long by a larger use shrinks by one more per
     * release, so it follows the use down to hot_max. */
    up__stack *extra = NULL;
    int keep_extra = 0;
    if (p->n_hot > hot_bound(p)) {
        extra = hot_drop(p); /* the longest unused */
        keep_extra = to_cold(p);
    }
    pthread_mutex_unlock(&p->lock);
    cold_list(p, s, keep);
    if (extra)
        cold_list(p, extra, keep_extra);
}

void up__stack_pool_read_stats(up__stack_pool *p, up__stack_pool_stats *out)
{
    pthread_mutex_lock(&p->lock);
    *out = (up__stack_pool_stats){.mapped = p->mapped,
                                  .in_use = p->in_use,
                                  .free_hot = p->n_hot,
                                  .free_cold = p->n_cold,
                                  .created = p->created,
                                  .reused = p->reused};
    pthread_mutex_unlock(&p->lock);
}

/* ---- The overflow handler ---- */

static struct sigaction old_segv, old_bus;
static pthread_once_t handler_once = PTHREAD_ONCE_INIT;
static int handler_err;
static _Thread_local void *alt_mem;
static _Thread_local size_t alt_size;

/* Async-signal-safe number formatting into buf (at least 24 bytes);
 * returns the length. */
static size_t fmt_u(char *buf, uintptr_t v, unsigned base)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}

static size_t append(char *buf, size_t at, const char *s)
{
    while (*s && at < 255)
        buf[at++] = *s++;
    return at;
}

static void on_fault(int sig, siginfo_t *si, void *uctx)
{
    void *guard_lo;
    size_t stack_size;
    if (up__fiber_fault_in_guard(si->si_addr, &guard_lo, &stack_size)) {
        char msg[256], num[24];
        size_t n = append(msg, 0, "ultrapool: stack overflow in a task (guard page at 0x");
        num[fmt_u(num, (uintptr_t)guard_lo, 16)] = '\0';
        n = append(msg, n, num);
        n = append(msg, n, ", stack size ");
        num[fmt_u(num, stack_size, 10)] = '\0';
        n = append(msg, n, num);
        n = append(msg, n,
                   "; give tasks a larger stack, or move large locals and deep recursion "
                   "off the task's stack)\n");
        ssize_t w = write(2, msg, n);
        (void)w;
        abort();
    }
    /* Not ours: the handler that was there before, or the default. */
    struct sigaction *old = sig == SIGSEGV ? &old_segv : &old_bus;
    if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction) {
        old->sa_sigaction(sig, si, uctx);
        return;
    }
    if (!(old->sa_flags & SA_SIGINFO) && old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
        return;
    }
    /* Returning re-runs the faulting instruction, which now takes the
     * default action; a fault sent by kill() is not re-run, so re-raise. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    if (si->si_code <= 0)
        raise(sig);
}

static void install_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, &old_segv) != 0 || sigaction(SIGBUS, &sa, &old_bus) != 0)
        handler_err = errno ? errno : EINVAL;
}

int up__stack_guard_thread_init(void)
{
    pthread_once(&handler_once, install_handler);
    if (handler_err)
        return UP_ENOMEM;
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE))
        return 0; /* the thread has one already (its own, or a sanitizer's) */
    size_t size = 64 * 1024;
    if ((size_t)SIGSTKSZ > size)
        size = (size_t)SIGSTKSZ;
    void *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return UP_ENOMEM;
    stack_t ss = {.ss_sp = mem, .ss_size = size, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) {
        munmap(mem, size);
        return UP_ENOMEM;
    }
    alt_mem = mem;
    alt_size = size;
    return 0;
}

void up__stack_guard_thread_fini(void)
{
    if (!alt_mem)
        return;
    stack_t ss = {.ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE};
    if (sigaltstack(&ss, NULL) == 0)
        munmap(alt_mem, alt_size);
    alt_mem = NULL;
    alt_size = 0;
}
