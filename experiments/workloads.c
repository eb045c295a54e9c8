#include "workloads.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "aes_cbc.h"
#include "bytesum.h"
#include "crc32.h"
#include "mixed.h"
#include "mutex.h"
#include "sha256.h"
#include "sleep.h"

static atomic_int wrong; /* set (never cleared by tasks) on a wrong result */
static unsigned char sha_expected[32];

static void flag_wrong(void) { atomic_store_explicit(&wrong, 1, memory_order_relaxed); }

static void sleep_1us(void) { up_k_sleep_ns(1000); }

static void sleep_50ms(void) { up_k_sleep_ns(50000000); }

/* Set once by the peer's init before its first task and only read by
 * tasks afterwards; the peer's own hand-over of each task (a queue, a
 * thread's creation) orders that store before the loads. */
static workload_wait_fn wait_ns = up_k_sleep_ns;

void workload_set_wait(workload_wait_fn fn) { wait_ns = fn ? fn : up_k_sleep_ns; }

/* Whether the installed wait was used, for the result line. Loaded before
 * it is stored, so that tasks after the first only read its cache line. */
static atomic_int waited;

static void sleep_wait(uint64_t ns)
{
    workload_wait_fn fn = wait_ns;
    if (fn != up_k_sleep_ns && !atomic_load_explicit(&waited, memory_order_relaxed))
        atomic_store_explicit(&waited, 1, memory_order_relaxed);
    fn(ns);
}

int workload_waited(void) { return atomic_load(&waited); }

static void sleep_1us_wait(void) { sleep_wait(1000); }

static void sleep_50ms_wait(void) { sleep_wait(50000000); }

static void sha256_1k(void)
{
    unsigned char d[32];
    up_k_sha256_1k(d);
    if (memcmp(d, sha_expected, sizeof d) != 0)
        flag_wrong();
}

static void aes_1k(void)
{
    if (up_k_aes_cbc(1024) != up_k_aes_cbc_expected_len(1024))
        flag_wrong();
}

static void aes_8k(void)
{
    if (up_k_aes_cbc(8192) != up_k_aes_cbc_expected_len(8192))
        flag_wrong();
}

static void crc32_64(void)
{
    if (up_k_crc32_64() != up_k_crc32_expected())
        flag_wrong();
}

static void bytesum_4k(void)
{
    if (up_k_bytesum_4k() != up_k_bytesum_expected())
        flag_wrong();
}

/* Each thread draws from its own generator, seeded from its address so
 * threads differ; the first draw of a thread initialises it. */
static _Thread_local uint64_t rng;

static void mixed(void)
{
    if (rng == 0)
        rng = (uint64_t)(uintptr_t)&rng * 0x9e3779b97f4a7c15ull | 1;
    if (up_k_mixed(&rng) < 0)
        flag_wrong();
}

static void mutex_inc(void) { up_k_mutex_inc(); }

const workload up_workloads[] = {
    {"sleep-1us", "Sleep 1µs", sleep_1us},
    {"sleep-50ms", "Sleep 50ms", sleep_50ms},
    {"sleep-1us-wait", "Sleep 1µs (wait)", sleep_1us_wait},
    {"sleep-50ms-wait", "Sleep 50ms (wait)", sleep_50ms_wait},
    {"sha256-1k", "SHA256 1 kB", sha256_1k},
    {"aes-cbc-1k", "AES-CBC 1 kB", aes_1k},
    {"aes-cbc-8k", "AES-CBC 8 kB", aes_8k},
    {"crc32-64", "CRC32 64 B", crc32_64},
    {"bytesum-4k", "MemScan 4 kB", bytesum_4k},
    {"mixed", "Mixed bimodal", mixed},
    {"mutex", "Mutex contention", mutex_inc},
};
const unsigned up_nworkloads = sizeof up_workloads / sizeof up_workloads[0];

const workload *workload_find(const char *name)
{
    for (unsigned i = 0; i < up_nworkloads; i++)
        if (!strcmp(up_workloads[i].name, name))
            return &up_workloads[i];
    return NULL;
}

int workloads_verify(void)
{
    static const struct {
        const char *name;
        int (*verify)(void);
    } checks[] = {{"sleep", up_k_sleep_verify},     {"sha256", up_k_sha256_verify},
                  {"aes-cbc", up_k_aes_cbc_verify}, {"crc32", up_k_crc32_verify},
                  {"bytesum", up_k_bytesum_verify}, {"mixed", up_k_mixed_verify},
                  {"mutex", up_k_mutex_verify}};
    for (unsigned i = 0; i < sizeof checks / sizeof checks[0]; i++)
        if (checks[i].verify() != 0) {
            fprintf(stderr, "the %s kernel does not verify\n", checks[i].name);
            return -1;
        }
    up_k_sha256_1k(sha_expected);
    return 0;
}

void workload_reset(void)
{
    atomic_store(&wrong, 0);
    atomic_store(&waited, 0);
    up_k_mutex_reset();
}

int workload_check(const workload *w, uint64_t n, const char **why)
{
    if (atomic_load(&wrong)) {
        *why = "a task computed a wrong result";
        return -1;
    }
    if (w->task == mutex_inc && up_k_mutex_count() != n) {
        *why = "the mutex counter does not equal the number of tasks";
        return -1;
    }
    return 0;
}
