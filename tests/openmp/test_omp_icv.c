/* ICV inheritance and the limits set at run time: a region's members take
 * the opener's ICVs; omp_set_* in a member changes only that member's
 * later regions; omp_set_max_active_levels decides whether a nested
 * region gets a team; the level and ancestor queries follow the nesting. */
#include <omp.h>
#include <stdio.h>

#include "omp_check.h"

static int nested_size(void)
{
    int size[2] = {0, 0};
#pragma omp parallel num_threads(2)
    {
        int outer = omp_get_thread_num();
#pragma omp parallel num_threads(2)
        {
#pragma omp single
            size[outer] = omp_get_num_threads();
        }
    }
    CHECK(size[0] == size[1]);
    return size[0];
}

int main(void)
{
    require_ultrapool();
    omp_set_dynamic(0);

    /* max-active-levels at run time: 1 serializes the inner region. */
    omp_set_max_active_levels(1);
    CHECK(nested_size() == 1);
    omp_set_max_active_levels(2);
    CHECK(nested_size() == 2);
    omp_set_nested(0);
    CHECK(omp_get_max_active_levels() == 1 && !omp_get_nested());
    CHECK(nested_size() == 1);
    omp_set_nested(1);
    CHECK(omp_get_max_active_levels() == omp_get_supported_active_levels());
    omp_set_max_active_levels(2);

    /* Inheritance: members take the opener's values; a member's own
     * settings stay its own. */
    omp_set_num_threads(2);
    omp_set_schedule(omp_sched_guided, 5);
    int seen[2][3];
#pragma omp parallel
    {
        int me = omp_get_thread_num();
        omp_sched_t k;
        int c;
        omp_get_schedule(&k, &c);
        CHECK(k == omp_sched_guided && c == 5);
        CHECK(omp_get_max_threads() == 2);
        CHECK(omp_get_level() == 1 && omp_get_active_level() == 1);
        CHECK(omp_get_ancestor_thread_num(1) == me && omp_get_ancestor_thread_num(0) == 0);
        CHECK(omp_get_team_size(1) == 2 && omp_get_team_size(0) == 1);
        CHECK(omp_get_team_size(2) == -1 && omp_get_ancestor_thread_num(2) == -1);
        if (me == 1) {
            omp_set_num_threads(3);
            omp_set_schedule(omp_sched_static, 0);
            omp_set_max_active_levels(1);
        }
#pragma omp barrier
        omp_get_schedule(&k, &c);
        CHECK(me == 1 ? k == omp_sched_static : k == omp_sched_guided);
#pragma omp parallel
        {
            /* The inner member sees its own opener's settings. */
            if (omp_get_thread_num() == 0) {
                seen[me][0] = omp_get_num_threads();
                seen[me][1] = omp_get_ancestor_thread_num(1);
                seen[me][2] = omp_get_level();
            }
            CHECK(omp_get_ancestor_thread_num(1) == me);
            CHECK(omp_get_team_size(1) == 2);
        }
    }
    CHECK(seen[0][0] == 2); /* max-active 2, nthreads 2 */
    CHECK(seen[1][0] == 1); /* its own max-active 1 */
    CHECK(seen[0][1] == 0 && seen[1][1] == 1);
    CHECK(seen[0][2] == 2 && seen[1][2] == 2); /* an inactive region is a level too */
    /* The initial thread's values are untouched by the member's calls. */
    omp_sched_t k;
    int c;
    omp_get_schedule(&k, &c);
    CHECK(k == omp_sched_guided && c == 5 && omp_get_max_threads() == 2);
    CHECK(omp_get_max_active_levels() == 2);
    CHECK(omp_get_level() == 0 && !omp_in_parallel());

    /* omp_set_schedule's chunk rules (libgomp's). */
    omp_set_schedule(omp_sched_dynamic, 0);
    omp_get_schedule(&k, &c);
    CHECK(k == omp_sched_dynamic && c == 1);
    omp_set_schedule((omp_sched_t)(omp_sched_static | omp_sched_monotonic), -4);
    omp_get_schedule(&k, &c);
    CHECK(k == (omp_sched_t)(omp_sched_static | omp_sched_monotonic) && c == 0);
    omp_set_schedule((omp_sched_t)99, 3); /* not a schedule: nothing changes */
    omp_get_schedule(&k, &c);
    CHECK(k == (omp_sched_t)(omp_sched_static | omp_sched_monotonic) && c == 0);

    /* Three levels with max-active 3: every level a team. */
    omp_set_max_active_levels(3);
    int deep = 0;
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
    {
        CHECK(omp_get_level() == 3 && omp_get_active_level() == 3);
        CHECK(omp_get_team_size(3) == 2 && omp_get_team_size(2) == 2);
#pragma omp atomic
        deep++;
    }
    CHECK(deep == 8);
    printf("ok\n");
    return 0;
}
