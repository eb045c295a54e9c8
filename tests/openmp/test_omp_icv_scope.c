/* Where ICVs live and what bounds a region, beyond test_omp_icv: an
 * explicit task's omp_set_* ends with the task; a region's tasks that run
 * at its closing barrier see the region's ICVs (def-allocator-var here);
 * a target region starts from the initial ICVs and level 0, with its
 * thread_limit; a teams construct bounds its regions by its thread_limit;
 * a pause ends the workers (threadprivate data starts afresh); a pooled
 * allocator counts whole blocks and grows a block in place. Also runs on
 * GCC's libgomp with OMP_TEST_ANY_RUNTIME=1, which answers the same. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>

#include "omp_check.h"

static int tp = 7;
#pragma omp threadprivate(tp)

int main(void)
{
    require_ultrapool();
    omp_set_dynamic(0);

    /* A task's setting ends with it, undeferred or not. */
    omp_set_num_threads(3);
#pragma omp task if (0)
    {
        omp_set_num_threads(5);
        EXPECT(omp_get_max_threads() == 5, "inside the task: %d", omp_get_max_threads());
    }
    EXPECT(omp_get_max_threads() == 3, "after an undeferred task: %d", omp_get_max_threads());
#pragma omp parallel num_threads(2)
    {
#pragma omp single
        for (int i = 0; i < 8; i++) {
#pragma omp task
            omp_set_num_threads(9);
        }
        EXPECT(omp_get_max_threads() == 3, "member after tasks: %d", omp_get_max_threads());
    }

    /* Tasks at the closing barrier: the region's default allocator. */
    omp_alloctrait_t al64[1] = {{omp_atk_alignment, 64}};
    omp_allocator_handle_t a = omp_init_allocator(omp_default_mem_space, 1, al64);
    CHECK(a != omp_null_allocator);
    omp_set_default_allocator(a);
    int wrong = 0;
#pragma omp parallel num_threads(2)
    for (int i = 0; i < 16; i++) {
#pragma omp task shared(wrong)
        if (omp_get_default_allocator() != a) {
#pragma omp atomic
            wrong++;
        }
    }
    EXPECT(wrong == 0, "%d tasks saw another default allocator", wrong);
    omp_set_default_allocator(omp_default_mem_alloc);

    /* A target region: initial ICVs, level 0, its thread_limit. */
#pragma omp parallel num_threads(2)
#pragma omp single
    {
#pragma omp target thread_limit(3)
        {
            EXPECT(omp_get_level() == 0 && !omp_in_parallel(), "target level %d", omp_get_level());
            EXPECT(omp_get_thread_limit() == 3, "target thread limit %d", omp_get_thread_limit());
            EXPECT(omp_get_default_allocator() == omp_default_mem_alloc, "target allocator");
#pragma omp parallel num_threads(2)
            EXPECT(omp_get_level() == 1 && omp_get_ancestor_thread_num(1) == omp_get_thread_num(),
                   "level %d in a target's region", omp_get_level());
        }
    }

    /* teams thread_limit bounds the team's regions, nested ones together. */
    omp_set_max_active_levels(3);
    int live = 0, most = 0, limit_wrong = 0;
#pragma omp teams num_teams(2) thread_limit(4)
#pragma omp parallel num_threads(3) shared(live, most, limit_wrong)
    {
        if (omp_get_thread_limit() != 4) {
#pragma omp atomic
            limit_wrong++;
        }
#pragma omp parallel num_threads(3) shared(live, most)
        {
            int v;
#pragma omp atomic capture
            v = ++live;
#pragma omp critical
            most = v > most ? v : most;
#pragma omp atomic
            live--;
        }
    }
    EXPECT(limit_wrong == 0 && most <= 4, "teams: %d wrong limits, %d threads", limit_wrong, most);
    omp_set_max_active_levels(1);

    /* A pause: the next region's workers start with fresh threadprivate data. */
#pragma omp parallel num_threads(2)
    tp = 100 + omp_get_thread_num();
    EXPECT(omp_pause_resource_all(omp_pause_soft) == 0, "pause refused");
    int stale = 0;
#pragma omp parallel num_threads(2) reduction(+ : stale)
    stale += omp_get_thread_num() != 0 && tp != 7;
    EXPECT(stale == 0, "%d workers kept their threadprivate value after a pause", stale);
#pragma omp parallel num_threads(2)
    {
#pragma omp single
        EXPECT(omp_pause_resource_all(omp_pause_soft) == -1, "pause inside a region");
    }

    /* A pool counts whole blocks; realloc within it grows in place. */
    omp_alloctrait_t pooled[2] = {{omp_atk_fallback, omp_atv_null_fb}, {omp_atk_pool_size, 4096}};
    omp_allocator_handle_t p = omp_init_allocator(omp_default_mem_space, 2, pooled);
    CHECK(p != omp_null_allocator);
    char *x = omp_alloc(3071, p);
    EXPECT(x != NULL, "3071 bytes of a 4096-byte pool");
    x = omp_realloc(x, 3072, p, p);
    EXPECT(x != NULL, "grown in place to 3072 bytes");
    EXPECT(omp_alloc(1024, p) == NULL, "1024 more bytes fit a full pool");
    void *small = omp_alloc(sizeof(int), p);
    EXPECT(small && omp_realloc(small, 3072, p, p) == NULL, "a second 3072-byte block");
    omp_free(small, p);
    omp_free(x, p);
    EXPECT((x = omp_alloc(4096 - 32, p)) != NULL, "the whole pool after frees");
    omp_free(x, omp_null_allocator);
    omp_destroy_allocator(p);
    omp_destroy_allocator(a);
    return omp_report("test_omp_icv_scope");
}
