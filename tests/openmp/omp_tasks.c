/* Tasks on ultrapool's libgomp: fib, big aligned firstprivate blocks, depend with
 * taskwait depend, taskloop reductions (long and ull), taskgroup task reductions, detach. */
#include <dlfcn.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int fib(int n)
{
    if (n < 2)
        return n;
    int a, b;
#pragma omp task shared(a) firstprivate(n)
    a = fib(n - 1);
#pragma omp task shared(b) firstprivate(n)
    b = fib(n - 2);
#pragma omp taskwait
    return a + b;
}
struct big {
    double v[20];
    char c;
} __attribute__((aligned(64)));
int main(void)
{
    if (!dlsym(RTLD_DEFAULT, "up_gomp_runtime")) {
        puts("not ultrapool");
        return 1;
    }
    int r = 0;
#pragma omp parallel
#pragma omp single
    r = fib(25);
    if (r != 75025) {
        printf("fib %d\n", r);
        return 1;
    }
    /* big aligned firstprivate */
    int bad = 0;
#pragma omp parallel
#pragma omp single
    for (int i = 0; i < 100; i++) {
        struct big b;
        for (int k = 0; k < 20; k++)
            b.v[k] = i + k;
        b.c = (char)i;
#pragma omp task firstprivate(b) shared(bad)
        {
            if (((unsigned long)&b) % 64) {
#pragma omp atomic
                bad++;
            }
            for (int k = 0; k < 20; k++)
                if (b.v[k] != i + k) {
#pragma omp atomic
                    bad++;
                }
        }
    }
    if (bad) {
        printf("bad %d\n", bad);
        return 1;
    }
    /* depend */
    int x = 0, y = 0;
    int order[4];
    int pos = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp task depend(out : x)
        {
            x = 1;
            order[__atomic_fetch_add(&pos, 1, 0)] = 1;
        }
#pragma omp task depend(in : x) depend(out : y)
        {
            y = x + 1;
            order[__atomic_fetch_add(&pos, 1, 0)] = 2;
        }
#pragma omp task depend(inout : y)
        {
            y *= 10;
            order[__atomic_fetch_add(&pos, 1, 0)] = 3;
        }
#pragma omp taskwait depend(in : y)
        if (y != 20)
            bad = 1;
    }
    if (bad || y != 20 || pos != 3 || order[0] != 1 || order[1] != 2 || order[2] != 3) {
        printf("dep y=%d\n", y);
        return 1;
    }
    /* taskloop reduction */
    long s = 0;
#pragma omp parallel
#pragma omp single
#pragma omp taskloop grainsize(7) reduction(+ : s)
    for (long i = 0; i < 1000; i++)
        s += i;
    if (s != 499500) {
        printf("tl %ld\n", s);
        return 1;
    }
    unsigned long long u = 0;
#pragma omp parallel
#pragma omp single
#pragma omp taskloop num_tasks(13) reduction(+ : u)
    for (unsigned long long i = 1000; i >= 10; i -= 3)
        u += i;
    unsigned long long e = 0;
    for (unsigned long long i = 1000; i >= 10; i -= 3)
        e += i;
    if (u != e) {
        printf("tl ull %llu %llu\n", u, e);
        return 1;
    }
    /* taskgroup task_reduction */
    long t = 0;
#pragma omp parallel
#pragma omp single
#pragma omp taskgroup task_reduction(+ : t)
    for (int i = 0; i < 500; i++) {
#pragma omp task in_reduction(+ : t)
        t += i;
    }
    if (t != 124750) {
        printf("tg red %ld\n", t);
        return 1;
    }
    /* detach */
    omp_event_handle_t ev;
    int done = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp task detach(ev)
        {
            done = 1;
        }
#pragma omp task
        {
            omp_fulfill_event(ev);
        }
#pragma omp taskwait
    }
    if (!done) {
        puts("detach");
        return 1;
    }
    puts("ok");
    return 0;
}
