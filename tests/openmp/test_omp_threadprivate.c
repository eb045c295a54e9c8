/* threadprivate on ultrapool's libgomp: GCC keeps threadprivate variables
 * in thread-local storage, so OpenMP's rule that a member's values persist
 * from one region to the next of the same size (dynamic adjustment off)
 * holds only if member i is the same thread every time. Each member counts
 * the regions it ran in its threadprivate counter and records its thread;
 * after R regions every member's counter must be R. Then copyin: every
 * member starts with the master's value. */
#include <dlfcn.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define REGIONS 100
#define MAXT    64

static long counter;
static int seed_value;
#pragma omp threadprivate(counter, seed_value)

static int run(int nthreads)
{
    static long seen[MAXT];
    static pthread_t who[MAXT];
    int bad = 0;
#pragma omp parallel num_threads(nthreads)
    {
        counter = 0;
    }
    for (int r = 0; r < REGIONS; r++) {
#pragma omp parallel num_threads(nthreads) reduction(+ : bad)
        {
            int me = omp_get_thread_num();
            counter++;
            if (counter != r + 1)
                bad++;
            if (r > 0 && !pthread_equal(who[me], pthread_self()))
                bad++;
            who[me] = pthread_self();
            seen[me] = counter;
        }
    }
    for (int i = 0; i < nthreads; i++)
        if (seen[i] != REGIONS) {
            fprintf(stderr, "team of %d: member %d counted %ld of %d regions\n", nthreads, i,
                    seen[i], REGIONS);
            bad++;
        }
    if (bad)
        fprintf(stderr, "team of %d: %d member-regions found another thread or count\n", nthreads,
                bad);
    return bad;
}

int main(void)
{
    if (!dlsym(RTLD_DEFAULT, "up_gomp_runtime")) {
        fprintf(stderr, "not running on ultrapool's libgomp.so.1\n");
        return 1;
    }
    omp_set_dynamic(0);
    int bad = 0;
    int sizes[] = {2, 4, 3};
    for (unsigned k = 0; k < sizeof sizes / sizeof *sizes; k++)
        bad += run(sizes[k]);

    /* copyin: the master's value in every member, whatever it held. */
    for (int r = 0; r < 20; r++) {
        seed_value = 1000 + r;
        int wrong = 0;
#pragma omp parallel num_threads(4) copyin(seed_value) reduction(+ : wrong)
        {
            if (seed_value != 1000 + r)
                wrong++;
            seed_value = -omp_get_thread_num(); /* overwritten by the next copyin */
        }
        if (wrong) {
            fprintf(stderr, "copyin: %d members did not get %d\n", wrong, 1000 + r);
            bad++;
        }
    }
    printf("test_omp_threadprivate: %s\n", bad ? "FAIL" : "ok");
    return bad ? 1 : 0;
}
