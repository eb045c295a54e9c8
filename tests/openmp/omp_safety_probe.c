/* Helper of safety.sh. Without arguments: a small parallel region, then
 * prints the runtime it ran on. With a path: a program running on the
 * libgomp it was linked with (GCC's) loads ultrapool's libgomp.so.1 from
 * that path, which must refuse to run beside the first one. */
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int n = 0;
#pragma omp parallel reduction(+ : n)
    n++;
    if (argc > 1) {
        void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        printf("loaded %s beside the program's libgomp: %s\n", argv[1], h ? "yes" : dlerror());
        return 0;
    }
    printf("ran %d threads on %s\n", n,
           dlsym(RTLD_DEFAULT, "up_gomp_runtime") ? "ultrapool" : "another runtime");
    return 0;
}
