/* target and teams on ultrapool's libgomp, which has no offload device:
 * every target region runs on the host (the host fallback). Checks the
 * results of target regions with map and firstprivate clauses, data
 * regions and motion, teams leagues (team numbers, a parallel region
 * inside a team), the device queries and the omp_target_* routines, and,
 * when the library has tasks, target nowait with depend. */
#include <dlfcn.h>
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "omp_check.h"

#define N 1000

int main(void)
{
    require_ultrapool();
    static int a[N];
    long sum = 0;
#pragma omp target teams distribute parallel for map(tofrom : a) reduction(+ : sum) num_teams(3)
    for (int i = 0; i < N; i++) {
        a[i] = 2 * i;
        sum += i;
    }
    EXPECT(sum == (long)N * (N - 1) / 2, "sum == (long)N * (N - 1) / 2");
    for (int i = 0; i < N; i++)
        EXPECT(a[i] == 2 * i, "a[i] == 2 * i");

    /* firstprivate: the region writes its own copy. */
    int x = 5, out = 0, initial = 0, ndev = -1;
#pragma omp target firstprivate(x) map(from : out, initial, ndev)
    {
        x += 10;
        out = x;
        initial = omp_is_initial_device();
        ndev = omp_get_num_devices();
    }
    EXPECT(out == 15 && x == 5, "out == 15 && x == 5");
    EXPECT(initial == 1 && ndev == 0, "initial == 1 && ndev == 0");

    /* A target region inside a parallel region: its own initial thread. */
    int inner[8] = {0};
#pragma omp parallel num_threads(4)
    {
        int me = omp_get_thread_num();
        int tn = -1;
#pragma omp target map(from : tn)
        {
            tn = omp_get_thread_num();
        }
        inner[me] = tn == 0 ? 1 : -1;
    }
    for (int i = 0; i < 4; i++)
        EXPECT(inner[i] == 1, "inner[i] == 1");

    /* The initial thread of a target region: level 0, the initial ICVs
     * (not the encountering thread's), restored after; a region inside is
     * at level 1; teams' thread_limit bounds thread-limit-var. */
    int lvl[4] = {-1, -1, -1, -1}, in_dyn = -1, in_lvl = -1, in_anc = -1, tl = -1;
    omp_set_max_active_levels(2);
    omp_set_schedule(omp_sched_guided, 7); /* inherited by the members, not the target */
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
    if (omp_get_ancestor_thread_num(1) == 1 && omp_get_thread_num() == 1) {
#pragma omp target map(from : lvl, in_dyn, in_lvl, in_anc)
        {
            lvl[0] = omp_get_level();
            lvl[1] = omp_in_parallel();
            omp_sched_t k;
            int chunk;
            omp_get_schedule(&k, &chunk);
            in_dyn = k == omp_sched_guided && chunk == 7;
#pragma omp parallel num_threads(2)
            if (omp_get_thread_num() == 1) {
                in_lvl = omp_get_level();
                in_anc = omp_get_ancestor_thread_num(1);
            }
        }
        lvl[2] = omp_get_level();
        omp_sched_t k;
        int chunk;
        omp_get_schedule(&k, &chunk);
        lvl[3] = k == omp_sched_guided && chunk == 7;
    }
    EXPECT(lvl[0] == 0 && lvl[1] == 0 && in_lvl == 1 && in_anc == 1,
           "lvl[0] == 0 && lvl[1] == 0 && in_lvl == 1 && in_anc == 1");
    EXPECT(in_dyn == 0 && lvl[2] == 2 && lvl[3] == 1, "in_dyn == 0 && lvl[2] == 2 && lvl[3] == 1");
#pragma omp target teams thread_limit(3) map(from : tl)
    {
#pragma omp parallel if (0)
        tl = omp_get_thread_limit();
    }
    EXPECT(tl >= 1 && tl <= 3, "tl >= 1 && tl <= 3");

    /* Host teams: every team runs, numbered, a parallel region inside each. */
    int team_seen[4] = {0}, nteams = 0, members[4] = {0};
#pragma omp teams num_teams(4)
    {
        int t = omp_get_team_num();
        team_seen[t]++;
        nteams = omp_get_num_teams();
#pragma omp parallel num_threads(2)
        {
            if (omp_get_team_num() == t) {
#pragma omp atomic
                members[t]++;
            }
        }
    }
    EXPECT(nteams == 4, "nteams == 4");
    for (int t = 0; t < 4; t++)
        EXPECT(team_seen[t] == 1 && members[t] == 2, "team_seen[t] == 1 && members[t] == 2");
    EXPECT(omp_get_team_num() == 0 && omp_get_num_teams() == 1,
           "omp_get_team_num() == 0 && omp_get_num_teams() == 1");

    /* Data regions and motion move nothing: the addresses are the host's. */
    int b[16];
    for (int i = 0; i < 16; i++)
        b[i] = i;
#pragma omp target data map(tofrom : b)
    {
#pragma omp target update to(b)
#pragma omp target map(tofrom : b)
        for (int i = 0; i < 16; i++)
            b[i] *= 3;
#pragma omp target update from(b)
    }
#pragma omp target enter data map(to : b)
#pragma omp target exit data map(from : b)
    for (int i = 0; i < 16; i++)
        EXPECT(b[i] == 3 * i, "b[i] == 3 * i");

    /* Device memory routines on the host device. */
    int host = omp_get_initial_device();
    EXPECT(host == omp_get_num_devices(), "host == omp_get_num_devices()");
    int *d = omp_target_alloc(16 * sizeof(int), host);
    EXPECT(d != NULL, "d != NULL");
    EXPECT(omp_target_memcpy(d, b, 16 * sizeof(int), 0, 0, host, host) == 0,
           "omp_target_memcpy(d, b, 16 * sizeof(int), 0, 0, host, host) == 0");
    EXPECT(d[15] == 45, "d[15] == 45");
    EXPECT(omp_target_is_present(b, host) == 1, "omp_target_is_present(b, host) == 1");
    int m[3][4] = {{0}}, src[3][4];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            src[i][j] = 10 * i + j;
    size_t vol[2] = {2, 2}, off_d[2] = {1, 1}, off_s[2] = {0, 2}, dim[2] = {3, 4};
    EXPECT(omp_target_memcpy_rect(m, src, sizeof(int), 2, vol, off_d, off_s, dim, dim, host,
                                  host) == 0,
           "omp_target_memcpy_rect(m, src, sizeof(int), 2, vol, off_d, off_s, dim, dim, host, "
           "host) == 0");
    EXPECT(m[1][1] == 2 && m[1][2] == 3 && m[2][1] == 12 && m[2][2] == 13 && m[0][0] == 0,
           "m[1][1] == 2 && m[1][2] == 3 && m[2][1] == 12 && m[2][2] == 13 && m[0][0] == 0");
    EXPECT(omp_target_memcpy(d, b, 4, 0, 0, host + 5, host) == EINVAL,
           "omp_target_memcpy(d, b, 4, 0, 0, host + 5, host) == EINVAL");
    EXPECT(omp_target_associate_ptr(b, d, 4, 0, host) == EINVAL,
           "omp_target_associate_ptr(b, d, 4, 0, host) == EINVAL");
    omp_target_free(d, host);

    /* nowait and depend make a target region a task: only with tasks. */
    if (dlsym(RTLD_DEFAULT, "GOMP_task")) {
        int v = 1;
#pragma omp parallel num_threads(2)
#pragma omp single
        {
#pragma omp target map(tofrom : v) depend(inout : v) nowait
            {v = v * 10;
    }
#pragma omp target map(tofrom : v) depend(inout : v) nowait
    {
        v = v + 1;
    }
#pragma omp taskwait
}
EXPECT(v == 11, "v == 11");
}
else
{
    printf("test_omp_target: no GOMP_task in this library: target nowait not checked\n");
}
return omp_report("test_omp_target");
}
