/* Helper of safety.sh: a gcc -fopenmp program that calls an entry point of
 * GCC's libgomp that ultrapool's does not provide (OpenACC's
 * acc_get_num_devices, node OACC_2.0). Under ultrapool the loader must
 * stop it naming the symbol: at the call with lazy binding, at load with
 * LD_BIND_NOW. */
#include <omp.h>
#include <stdio.h>

int acc_get_num_devices(int device_type);

int main(void)
{
    printf("before the call: %d threads\n", omp_get_max_threads());
    fflush(stdout);
    printf("acc_get_num_devices: %d\n", acc_get_num_devices(0));
    return 0;
}
