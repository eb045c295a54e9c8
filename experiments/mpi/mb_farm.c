/* The load-imbalanced farm (mb_runs.h): heavy-tailed costs, the heavy
 * half first, the same costs on every rank from one seed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mb_common.h"
#include "mb_runs.h"

int mb_farm_main(int argc, char **argv, const char *peer, mb_farm_fn run, void *ctx)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t n = (uint64_t)mb_opt_num(argc, argv, "--n", 4000);
    double work_ms = mb_opt_num(argc, argv, "--work-ms", 400);
    double alpha = mb_opt_num(argc, argv, "--alpha", 1.5);
    double cap = mb_opt_num(argc, argv, "--cap", 50);
    double heavy = mb_opt_num(argc, argv, "--heavy", 6);
    uint64_t seed = (uint64_t)mb_opt_num(argc, argv, "--seed", 12345);
    double ipu = mb_opt_num(argc, argv, "--ipu", 0);
    if (ipu <= 0)
        ipu = mb_calibrate();
    if (n < 1 || alpha <= 0 || cap < 1 || heavy <= 0 || work_ms <= 0) {
        if (rank == 0)
            fprintf(stderr,
                    "farm: --n >= 1, --alpha > 0, --cap >= 1, --heavy > 0, --work-ms > 0\n");
        return 2;
    }
    uint64_t total = (uint64_t)(work_ms * 1000.0 * ipu);
    uint64_t *cost = mb_farm_costs(n, alpha, cap, heavy, seed, total);
    uint64_t *out = calloc(n, sizeof *out);
    if (!out) {
        fprintf(stderr, "farm: out of memory\n");
        return 1;
    }
    /* What a static split into `size` blocks leaves on the heaviest rank:
     * the bound a static schedule cannot beat. */
    uint64_t heaviest = 0, sum = 0, biggest = 0;
    for (int r = 0; r < size; r++) {
        uint64_t b = n / (uint64_t)size * (uint64_t)r +
                     ((uint64_t)r < n % (uint64_t)size ? (uint64_t)r : n % (uint64_t)size);
        uint64_t e = b + n / (uint64_t)size + ((uint64_t)r < n % (uint64_t)size);
        uint64_t s = 0;
        for (uint64_t i = b; i < e; i++)
            s += cost[i];
        heaviest = s > heaviest ? s : heaviest;
        sum += s;
    }
    for (uint64_t i = 0; i < n; i++)
        biggest = cost[i] > biggest ? cost[i] : biggest;

    mb_farm_job job = {n, cost, out};
    mb_usage usage;
    int rc = 0;
    if (strcmp(peer, "serial") == 0) {
        mb_usage_begin(&usage);
        if (rank == 0) {
            uint64_t t0 = mb_now_ns(), check = 0;
            for (uint64_t i = 0; i < n; i++)
                check += out[i] = mb_spin(cost[i], i);
            uint64_t ns = mb_now_ns() - t0;
            printf("RESULT exp=farm peer=serial kind=time n=%llu elapsed_ns=%llu cores=1 "
                   "checksum=%llu\n",
                   (unsigned long long)n, (unsigned long long)ns, (unsigned long long)check);
        }
        mb_usage_end(&usage, MPI_COMM_WORLD, "farm", peer);
    } else {
        uint64_t items = 0, chunks = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        mb_usage_begin(&usage);
        uint64_t t0 = mb_now_ns();
        rc = run(&job, &items, &chunks, ctx);
        double ns = mb_max((double)(mb_now_ns() - t0), MPI_COMM_WORLD);
        int cores = mb_total_cores(MPI_COMM_WORLD);
        mb_usage_end(&usage, MPI_COMM_WORLD, "farm", peer);
        /* Every index ran once somewhere: out[] of the indexes this rank
         * ran is non-zero only here, so the sum over ranks is the checksum. */
        uint64_t check = 0, check_all = 0, items_all = 0;
        for (uint64_t i = 0; i < n; i++)
            check += out[i];
        MPI_Reduce(&check, &check_all, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Reduce(&items, &items_all, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
        uint64_t per[3] = {items, chunks, (uint64_t)(int64_t)rc},
                 *all = rank == 0 ? malloc(3 * sizeof *all * (size_t)size) : NULL;
        MPI_Gather(per, 3, MPI_UINT64_T, all, 3, MPI_UINT64_T, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("RESULT exp=farm peer=%s kind=time n=%llu elapsed_ns=%.0f cores=%d rc=%d "
                   "items_all=%llu checksum=%llu",
                   peer, (unsigned long long)n, ns, cores, rc, (unsigned long long)items_all,
                   (unsigned long long)check_all);
            for (int r = 0; r < size; r++)
                printf(" items_r%d=%llu chunks_r%d=%llu rc_r%d=%d", r,
                       (unsigned long long)all[3 * r], r, (unsigned long long)all[3 * r + 1], r,
                       (int)(int64_t)all[3 * r + 2]);
            printf("\n");
            free(all);
        }
    }
    if (rank == 0) {
        printf("RESULT exp=farm peer=%s kind=work total_iters=%llu static_heaviest_share=%.4f "
               "largest_task_share=%.5f ipu=%.2f alpha=%g cap=%g heavy=%g seed=%llu\n",
               peer, (unsigned long long)sum, (double)heaviest / (double)sum,
               (double)biggest / (double)sum, ipu, alpha, cap, heavy, (unsigned long long)seed);
        fflush(stdout);
    }
    free(out);
    free(cost);
    return rc;
}
