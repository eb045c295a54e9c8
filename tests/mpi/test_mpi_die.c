/* A rank that dies (kill) or stops answering (stop) in the middle of a
 * farm: run by die.sh under mpirun, which checks that the job ends
 * non-zero with a report naming the rank and its chunk. Rank 1 is the
 * victim: after a few of its chunks it prints the time and then raises
 * SIGKILL (the launcher sees the death) or SIGSTOP (it does not: only the
 * heartbeat tells); stop-static stops it in its static block. The other
 * ranks have minutes of work left.
 *
 * hang: what a rank stopped inside an atomic call on the window does to
 * the others (it keeps the lock that guards rank 0's counter): from a
 * moment the ranks agree on, every rank's next chunk grab never returns,
 * through MPI's profiling interface (this file's MPI_Fetch_and_op). No
 * heartbeat is read any more, so only the watchdog can end the job. */
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ultrapool/mpi.h>

#include "check.h"

static int rank, sig, hang;
static double hang_at; /* CLOCK_REALTIME seconds, the same on every rank */

static double realtime(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int MPI_Fetch_and_op(const void *origin, void *result, MPI_Datatype type, int target, MPI_Aint disp,
                     MPI_Op op, MPI_Win win)
{
    if (hang && realtime() >= hang_at) {
        fprintf(stderr, "rank %d hangs in a grab: UP_TEST_VICTIM_AT=%.9f\n", rank, realtime());
        fflush(stderr);
        for (;;)
            sleep(1);
    }
    return PMPI_Fetch_and_op(origin, result, type, target, disp, op, win);
}

static int body(uint64_t begin, uint64_t end, void *ctx)
{
    (void)ctx;
    if (rank == 1 && begin >= 200 && sig != 0) {
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
                        strcmp(argv[1], "stop-static") == 0 || strcmp(argv[1], "hang") == 0));
    sig = strcmp(argv[1], "kill") == 0 ? SIGKILL : strcmp(argv[1], "hang") == 0 ? 0 : SIGSTOP;
    int statics = strcmp(argv[1], "stop-static") == 0;
    CHECK_EQ(up_mpi_init(&argc, &argv, MPI_THREAD_FUNNELED, NULL), UP_OK);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (sig == 0) {
        hang_at = realtime() + 0.5;
        MPI_Bcast(&hang_at, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        hang = 1;
    }
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
