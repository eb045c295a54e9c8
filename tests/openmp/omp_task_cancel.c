/* if(0), final, mergeable, untied, omp_in_final; mutexinoutset, depobj and an iterator;
 * cancellation of for, taskgroup and parallel with OMP_CANCELLATION true, ignored when false. */
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
    if (!dlsym(RTLD_DEFAULT, "up_gomp_runtime")) {
        puts("not ultrapool");
        return 1;
    }
    int want = getenv("OMP_CANCELLATION") && getenv("OMP_CANCELLATION")[0] == 't';
    /* if(0), final, mergeable, untied, omp_in_final */
    int bad = 0, inf = 0;
#pragma omp parallel
#pragma omp single
    {
        int me = omp_get_thread_num(), ran = -1;
#pragma omp task if (0) shared(ran)
        ran = omp_get_thread_num();
        if (ran != me)
            bad++;
#pragma omp task final(1) shared(inf)
        {
            if (omp_in_final())
                inf++;
#pragma omp task shared(inf) mergeable untied
            if (omp_in_final())
                inf++;
        }
#pragma omp taskwait
    }
    if (bad || inf != 2) {
        printf("if0/final %d %d\n", bad, inf);
        return 1;
    }
    /* mutexinoutset, depobj, iterator */
    int a = 0, b = 0, c = 0;
    int arr[4] = {0};
    omp_depend_t obj;
#pragma omp depobj(obj) depend(inout : c)
#pragma omp parallel
#pragma omp single
    {
#pragma omp task depend(out : a)
        a = 1;
        for (int i = 0; i < 8; i++) {
#pragma omp task depend(in : a) depend(mutexinoutset : b)
            b += a;
        }
#pragma omp task depend(in : b) depend(depobj : obj)
        c = b;
        for (int i = 0; i < 4; i++) {
#pragma omp task depend(out : arr[i]) depend(in : c)
            arr[i] = c + i;
        }
#pragma omp task depend(iterator(j = 0 : 4), in : arr[j]) shared(bad)
        {
            for (int j = 0; j < 4; j++)
                if (arr[j] != 8 + j)
                    bad++;
        }
    }
#pragma omp depobj(obj) destroy
    if (bad || b != 8 || c != 8) {
        printf("deps %d %d %d\n", bad, b, c);
        return 1;
    }
    /* cancellation */
    int iters = 0, tasks = 0, par = 0;
#pragma omp parallel num_threads(2) reduction(+ : par)
    {
#pragma omp for schedule(static, 1) reduction(+ : iters)
        for (int i = 0; i < 1000; i++) {
            iters++;
            if (i == 0) {
#pragma omp cancel for
            }
#pragma omp cancellation point for
        }
#pragma omp single
        {
#pragma omp taskgroup
            {
                for (int i = 0; i < 200; i++) {
#pragma omp task shared(tasks)
                    {
                        if (i == 0) {
#pragma omp cancel taskgroup
                        }
#pragma omp atomic
                        tasks++;
                    }
                }
            }
        }
        par++;
#pragma omp cancel parallel
#pragma omp barrier
        par += 10;
    }
    printf("want=%d iters=%d tasks=%d par=%d\n", want, iters, tasks, par);
    if (want) {
        if (par >= 10) {
            puts("parallel not cancelled");
            return 1;
        }
    } else {
        if (iters != 1000 || tasks != 200 || par != 22) {
            puts("cancel not ignored");
            return 1;
        }
    }
    puts("ok");
    return 0;
}
