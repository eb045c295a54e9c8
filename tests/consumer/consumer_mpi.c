/* The installed MPI mode: a farm over one rank (a singleton MPI process,
 * started without mpirun) covers its space once and reduces it. */
#include <stdio.h>

#include <ultrapool/mpi.h>

static int count(uint64_t begin, uint64_t end, void *acc, void *ctx)
{
    (void)ctx;
    *(uint64_t *)acc += end - begin;
    return 0;
}

static void add(void *into, const void *from, void *ctx)
{
    (void)ctx;
    *(uint64_t *)into += *(const uint64_t *)from;
}

int main(int argc, char **argv)
{
    if (up_mpi_init(&argc, &argv, MPI_THREAD_FUNNELED, NULL) != UP_OK) {
        printf("FAIL: %s\n", up_last_error());
        return 1;
    }
    up_pool *pool;
    uint64_t total = 0;
    int rc = up_pool_create(&pool, NULL);
    if (rc == UP_OK)
        rc = up_mpi_reduce(MPI_COMM_WORLD, pool, 12345, NULL, count, add, NULL, &total,
                           sizeof total);
    if (rc == UP_OK) {
        up_pool_stop_and_wait(pool);
        up_pool_destroy(pool);
    }
    MPI_Finalize();
    if (rc != UP_OK || total != 12345) {
        printf("FAIL: rc %d, total %llu\n", rc, (unsigned long long)total);
        return 1;
    }
    printf("ok (MPI farm of 12345 indexes on one rank)\n");
    return 0;
}
