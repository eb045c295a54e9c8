/* Simple and nestable locks under contention, nest counts, both symbol
 * versions (omp_*_lock@@OMP_3.0 and the OpenMP 2.5 ones @OMP_1.0, whose
 * nestable lock is 8 bytes owned by a thread), a waiter that does not
 * burn its CPU while the lock is held for long, and the critical
 * sections: unnamed, named (two names are two locks, nested in either
 * order), atomic's lock fallback, and a waiter at a critical section that
 * sleeps too. */
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "omp_check.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void)
{
    require_ultrapool();
    CHECK(sizeof(omp_lock_t) == 4 && sizeof(omp_nest_lock_t) == 16);
    const char *s = getenv("UP_TEST_SCALE");
    double scale = s ? atof(s) : 1.0;
    int rounds = (int)(20000 * (scale > 0 ? scale : 1.0));
    if (rounds < 200)
        rounds = 200;

    /* Simple lock: a counter no increment of which is lost. */
    omp_lock_t lock;
    omp_init_lock(&lock);
    long counter = 0;
#pragma omp parallel num_threads(4)
    for (int i = 0; i < rounds; i++) {
        omp_set_lock(&lock);
        counter++;
        omp_unset_lock(&lock);
    }
    CHECK(counter == 4L * rounds);
    CHECK(omp_test_lock(&lock) == 1 && omp_test_lock(&lock) == 0);
    omp_unset_lock(&lock);

    /* Nestable lock: counts, and ownership by the task holding it. */
    omp_nest_lock_t nest;
    omp_init_nest_lock(&nest);
    long nested = 0;
#pragma omp parallel num_threads(4)
    for (int i = 0; i < rounds / 4; i++) {
        omp_set_nest_lock(&nest);
        int depth = omp_test_nest_lock(&nest);
        CHECK(depth == 2);
        omp_set_nest_lock(&nest);
        nested++;
        omp_unset_nest_lock(&nest);
        omp_unset_nest_lock(&nest);
        omp_unset_nest_lock(&nest);
    }
    CHECK(nested == rounds);
    CHECK(omp_test_nest_lock(&nest) == 1 && omp_test_nest_lock(&nest) == 2);
    int other = -1;
#pragma omp parallel num_threads(2)
    if (omp_get_thread_num() == 1)
        other = omp_test_nest_lock(&nest); /* another task holds it */
    CHECK(other == 0);
    omp_unset_nest_lock(&nest);
    omp_unset_nest_lock(&nest);
    omp_destroy_nest_lock(&nest);

    /* The OpenMP 2.5 versions, as binaries built before GCC 4.4 call them. */
    void (*init25)(void *) =
        (void (*)(void *))dlvsym(RTLD_DEFAULT, "omp_init_nest_lock", "OMP_1.0");
    void (*set25)(void *) = (void (*)(void *))dlvsym(RTLD_DEFAULT, "omp_set_nest_lock", "OMP_1.0");
    void (*unset25)(void *) =
        (void (*)(void *))dlvsym(RTLD_DEFAULT, "omp_unset_nest_lock", "OMP_1.0");
    int (*test25)(void *) = (int (*)(void *))dlvsym(RTLD_DEFAULT, "omp_test_nest_lock", "OMP_1.0");
    void (*lock25)(void *) = (void (*)(void *))dlvsym(RTLD_DEFAULT, "omp_set_lock", "OMP_1.0");
    void (*unlock25)(void *) = (void (*)(void *))dlvsym(RTLD_DEFAULT, "omp_unset_lock", "OMP_1.0");
    CHECK(init25 && set25 && unset25 && test25 && lock25 && unlock25);
    CHECK((void *)init25 != dlvsym(RTLD_DEFAULT, "omp_init_nest_lock", "OMP_3.0"));
    struct {
        int owner, count;
    } old = {-1, -1};
    init25(&old);
    CHECK(old.owner == 0 && old.count == 0);
    long old_count = 0;
#pragma omp parallel num_threads(3)
    for (int i = 0; i < rounds / 4; i++) {
        set25(&old);
        CHECK(test25(&old) == 2);
        old_count++;
        unset25(&old);
        unset25(&old);
    }
    CHECK(old_count == 3L * (rounds / 4) && old.owner == 0);
    int word = 0; /* the OMP_1.0 simple lock is the same word */
    lock25(&word);
    CHECK(word != 0);
    unlock25(&word);
    CHECK(word == 0);

    /* A waiter sleeps: the lock held 300 ms costs it well under that. */
    double waiter_cpu = -1;
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 0) {
            omp_set_lock(&lock);
#pragma omp barrier
            usleep(300000);
            omp_unset_lock(&lock);
        } else {
#pragma omp barrier
            double t0 = cpu_now();
            omp_set_lock(&lock);
            waiter_cpu = cpu_now() - t0;
            omp_unset_lock(&lock);
        }
    }
    printf("waiter's CPU time over a 300 ms hold: %.1f ms\n", waiter_cpu * 1e3);
    CHECK(waiter_cpu >= 0 && waiter_cpu < 0.15);
    omp_destroy_lock(&lock);

    /* Critical sections: no increment lost, for the unnamed one and two
     * named ones nested inside it and inside each other (a name is a lock
     * of its own, or the inner one would deadlock). The non-atomic
     * read-modify-write of two counters makes a lost update likely if two
     * threads were ever inside together. */
    long c0 = 0, c1 = 0, c2 = 0;
    volatile long inside = 0, overlap = 0;
#pragma omp parallel num_threads(4)
    for (int i = 0; i < rounds; i++) {
#pragma omp critical
        {
            if (inside++)
                overlap++;
            c0++;
            inside--;
        }
        if (i % 2) {
#pragma omp critical(alpha)
            {
                c1++;
#pragma omp critical(beta)
                c2++;
            }
        } else {
#pragma omp critical(beta)
            {
                c2++;
#pragma omp critical
                c0++;
            }
        }
    }
    CHECK(overlap == 0);
    CHECK(c0 == 4L * rounds + 4L * ((rounds + 1) / 2));
    CHECK(c1 == 4L * (rounds / 2));
    CHECK(c2 == 4L * rounds);

    /* Atomic on a type the compiler has no instruction for falls back to
     * GOMP_atomic_start/end: the sum stays exact. */
    long double ld = 0;
#pragma omp parallel num_threads(4)
    for (int i = 0; i < rounds / 4; i++) {
#pragma omp atomic
        ld += 1.0L;
    }
    CHECK(ld == 4.0L * (rounds / 4));

    /* A thread waiting at a critical section held 300 ms sleeps. */
    double crit_cpu = -1;
    int held = 0;
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 0) {
#pragma omp critical(hold)
            {
                __atomic_store_n(&held, 1, __ATOMIC_SEQ_CST);
                usleep(300000);
            }
        } else {
            while (!__atomic_load_n(&held, __ATOMIC_SEQ_CST))
                usleep(100);
            double t0 = cpu_now();
#pragma omp critical(hold)
            crit_cpu = cpu_now() - t0;
        }
    }
    printf("critical waiter's CPU time over a 300 ms hold: %.1f ms\n", crit_cpu * 1e3);
    CHECK(crit_cpu >= 0 && crit_cpu < 0.15);
    printf("ok\n");
    return 0;
}
