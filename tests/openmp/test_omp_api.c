/* The omp_ query, device, timing, allocator and affinity calls answer as
 * libgomp does on the host. */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "omp_check.h"

int main(void)
{
    require_ultrapool();
    /* Outside any region. */
    CHECK(omp_get_thread_num() == 0 && omp_get_num_threads() == 1 && !omp_in_parallel());
    CHECK(omp_get_level() == 0 && omp_get_active_level() == 0 && !omp_in_final());
    CHECK(omp_get_num_procs() >= 1);
    CHECK(omp_get_num_devices() == 0 && omp_get_initial_device() == 0);
    CHECK(omp_get_device_num() == 0 && omp_is_initial_device());
    CHECK(omp_get_num_teams() == 1 && omp_get_team_num() == 0);
    CHECK(omp_get_supported_active_levels() == 255);
    CHECK(omp_pause_resource(omp_pause_soft, 0) == 0 &&
          omp_pause_resource(omp_pause_soft, 3) == -1);
    CHECK(omp_pause_resource_all(omp_pause_hard) == 0);
    omp_set_num_teams(4);
    omp_set_teams_thread_limit(3);
    CHECK(omp_get_max_teams() == 4 && omp_get_teams_thread_limit() == 3);
    double t0 = omp_get_wtime();
    CHECK(omp_get_wtick() > 0 && omp_get_wtick() < 1e-3);
    CHECK(omp_get_wtime() >= t0);

    /* In a region (omp_in_final inside a final task is the tasks' test). */
#pragma omp parallel num_threads(2)
    CHECK(omp_in_parallel() && omp_get_num_threads() == 2 && !omp_in_final());

    /* Allocators: the default one, alignment, a pool with null fallback. */
    char *p = omp_alloc(100, omp_default_mem_alloc);
    CHECK(p);
    memset(p, 7, 100);
    p = omp_realloc(p, 1000, omp_default_mem_alloc, omp_default_mem_alloc);
    CHECK(p && p[99] == 7);
    omp_free(p, omp_null_allocator);
    int *z = omp_calloc(50, sizeof *z, omp_default_mem_alloc);
    CHECK(z);
    for (int i = 0; i < 50; i++)
        CHECK(z[i] == 0);
    omp_free(z, omp_default_mem_alloc);
    void *a = omp_aligned_alloc(256, 10, omp_default_mem_alloc);
    CHECK(a && (uintptr_t)a % 256 == 0);
    omp_free(a, omp_default_mem_alloc);
    omp_alloctrait_t traits[] = {
        {omp_atk_alignment, 128}, {omp_atk_pool_size, 1000}, {omp_atk_fallback, omp_atv_null_fb}};
    omp_allocator_handle_t al = omp_init_allocator(omp_default_mem_space, 3, traits);
    CHECK(al != omp_null_allocator);
    void *b1 = omp_alloc(600, al);
    CHECK(b1 && (uintptr_t)b1 % 128 == 0);
    CHECK(omp_alloc(600, al) == NULL); /* past the pool: null_fb */
    omp_free(b1, al);
    void *b2 = omp_alloc(600, al); /* the pool has room again */
    CHECK(b2);
    omp_free(b2, al);
    omp_destroy_allocator(al);
    omp_alloctrait_t bad[] = {{omp_atk_alignment, 3}};
    CHECK(omp_init_allocator(omp_default_mem_space, 1, bad) == omp_null_allocator);
    omp_set_default_allocator(omp_large_cap_mem_alloc);
    CHECK(omp_get_default_allocator() == omp_large_cap_mem_alloc);
    void *d = omp_alloc(10, omp_null_allocator);
    CHECK(d);
    omp_free(d, omp_null_allocator);

    /* The affinity format: widths, justification, long names. */
    char buf[64];
    size_t n = omp_capture_affinity(buf, sizeof buf, "%0.5n|%.3L|%4N|%{thread_num}");
    CHECK(n == strlen("00000|  0|1   |0") && !strcmp(buf, "00000|  0|1   |0"));
    n = omp_capture_affinity(buf, 4, "%L-%N-%n");
    CHECK(n == 5 && !strcmp(buf, "0-1"));
    omp_set_affinity_format("T%n/%N");
    CHECK(omp_get_affinity_format(buf, 3) == 6 && !strcmp(buf, "T%"));
    char team[2][16];
#pragma omp parallel num_threads(2)
    omp_capture_affinity(team[omp_get_thread_num()], 16, NULL);
    CHECK(!strcmp(team[0], "T0/2") && !strcmp(team[1], "T1/2"));
    printf("ok\n");
    return 0;
}
