/* The thread-level check: MPI initialised with MPI_THREAD_SINGLE, the
 * farm (which needs FUNNELED from the main thread) and up_mpi_init asking
 * for more both fail with UP_EINVAL and a message naming both levels;
 * nothing runs. Exits 77 when the MPI library gives more than SINGLE
 * although SINGLE was asked (then the error cannot be provoked). */
#include <string.h>

#include <ultrapool/mpi.h>

#include "check.h"

static int ran;

static int body(uint64_t begin, uint64_t end, void *ctx)
{
    (void)begin;
    (void)end;
    (void)ctx;
    ran = 1;
    return 0;
}

int main(int argc, char **argv)
{
    CHECK_EQ(up_mpi_require(MPI_THREAD_SINGLE), UP_EINVAL); /* not initialised yet */
    CHECK(strstr(up_last_error(), "not initialised") != NULL);
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, NULL, 10, NULL, body, NULL), UP_EINVAL);
    MPI_Request none = MPI_REQUEST_NULL;
    CHECK_EQ(up_mpi_wait(&none, MPI_STATUS_IGNORE), UP_EINVAL);
    CHECK(strstr(up_last_error(), "not initialised") != NULL);
    int provided = -1;
    CHECK_EQ(up_mpi_init(&argc, &argv, MPI_THREAD_SINGLE, &provided), UP_OK);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (provided != MPI_THREAD_SINGLE) {
        if (rank == 0)
            printf("MPI gave %s for MPI_THREAD_SINGLE: the low level cannot be seen here\n",
                   up_mpi_level_name(provided));
        MPI_Finalize();
        return TEST_SKIP;
    }
    up_pool *pool;
    CHECK_EQ(up_pool_create(&pool, NULL), UP_OK);
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, 10, NULL, body, NULL), UP_EINVAL);
    const char *msg = up_last_error();
    CHECK(strstr(msg, "MPI_THREAD_SINGLE") != NULL);
    CHECK(strstr(msg, "MPI_THREAD_FUNNELED") != NULL);
    if (rank == 0)
        printf("farm: %s\n", msg);
    CHECK_EQ(ran, 0);
    CHECK_EQ(up_mpi_init(&argc, &argv, MPI_THREAD_MULTIPLE, &provided), UP_EINVAL);
    CHECK(strstr(up_last_error(), "MPI_THREAD_MULTIPLE") != NULL);
    CHECK(strstr(up_last_error(), "MPI_THREAD_SINGLE") != NULL);
    CHECK_EQ(up_mpi_require(MPI_THREAD_SINGLE), UP_OK);
    CHECK_EQ(up_mpi_require(12345), UP_EINVAL);
    CHECK_EQ(up_mpi_init(&argc, &argv, -7, NULL), UP_EINVAL);
    CHECK(strcmp(up_mpi_level_name(MPI_THREAD_SERIALIZED), "MPI_THREAD_SERIALIZED") == 0);
    CHECK(strcmp(up_mpi_level_name(4242), "unknown") == 0);
    up_pool_stop_and_wait(pool);
    up_pool_destroy(pool);
    MPI_Finalize();
    CHECK_EQ(up_mpi_wait(&none, MPI_STATUS_IGNORE), UP_EINVAL);
    CHECK(strstr(up_last_error(), "finalised") != NULL);
    return 0;
}
