/* A rank that dies (kill) or stops answering (stop) in the middle of a
 * farm: run by die.sh under mpirun, which checks that the job ends
 * non-zero with a report naming the rank and its chunk. Rank 1 is the
 * victim: after a few of its chunks it prints the time and then raises
 * SIGKILL (the launcher sees the death) or SIGSTOP (it does not: only the
 * heartbeat tells); stop-static stops it in its static block. The other
 * ranks have minutes of work left. */
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ultrapool/mpi.h>

#include "check.h"

static int rank, sig;

static int body(uint64_t begin, uint64_t end, void *ctx)
{
    (void)ctx;
    if (rank == 1 && begin >= 200) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        fprintf(stderr, "victim rank 1 at index %llu: UP_TEST_VICTIM_AT=%lld.%09ld\n",
                (unsigned long long)begin, (long long)t.tv_sec, t.tv_nsec);
        fflush(stderr);
        raise(sig);
    }
    usleep((useconds_t)(end - begin) * 1000);
    return 0;
}

int main(int argc, char **argv)
{
    CHECK(argc == 2 && (strcmp(argv[1], "kill") == 0 || strcmp(argv[1], "stop") == 0 ||
                        strcmp(argv[1], "stop-static") == 0));
    sig = strcmp(argv[1], "kill") == 0 ? SIGKILL : SIGSTOP;
    int statics = strcmp(argv[1], "stop-static") == 0;
    CHECK_EQ(up_mpi_init(&argc, &argv, MPI_THREAD_FUNNELED, NULL), UP_OK);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    up_pool *pool;
    CHECK_EQ(up_pool_create(&pool, NULL), UP_OK);
    up_mpi_opts o;
    up_mpi_opts_init(&o);
    /* Static: rank 1's block, published once, is what a report names. */
    o.schedule = statics ? UP_MPI_STATIC : UP_MPI_DYNAMIC;
    o.min_chunk = 10;
    int rc = up_mpi_for(MPI_COMM_WORLD, pool, 1000000, &o, body, NULL);
    /* Not reached by a correct farm: the job is aborted first. */
    fprintf(stderr, "rank %d: up_mpi_for returned %d (%s)\n", rank, rc, up_last_error());
    up_pool_stop_and_wait(pool);
    up_pool_destroy(pool);
    MPI_Finalize();
    return 0;
}
