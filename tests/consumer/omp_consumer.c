/* A gcc -fopenmp program, built against the installed tree three ways
 * (plain -fopenmp, ultrapool::openmp, the ultrapool-openmp pkg-config
 * module; run.sh): prints which OpenMP runtime it ran on and checks a
 * parallel reduction and a task. */
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>

int main(void)
{
    long sum = 0;
    int threads = 0;
#pragma omp parallel reduction(+ : sum)
    {
#pragma omp single
        threads = omp_get_num_threads();
#pragma omp for
        for (long i = 1; i <= 1000; i++)
            sum += i;
    }
    if (sum != 500500) {
        fprintf(stderr, "omp_consumer: sum %ld, expected 500500\n", sum);
        return 1;
    }
    printf("runtime: %s (%d threads)\n",
           dlsym(RTLD_DEFAULT, "up_gomp_runtime") ? "ultrapool" : "other", threads);
    return 0;
}
