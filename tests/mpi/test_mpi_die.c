/* A rank that dies (kill) or stops answering (stop) in the middle of a
 * farm: run by die.sh under mpirun, which checks that the job ends
 * non-zero with a report naming the rank and its chunk. Rank 1 is the
 * victim: after a few of its chunks it prints the time and then raises
 * SIGKILL (the launcher sees the death, and its watcher sees its process
 * gone) or SIGSTOP (it does not: only the heartbeat tells); stop-static
 * stops it in its static block; kill-short kills it with a heartbeat
 * timeout of 300 ms. The other
 * ranks have minutes of work left.
 *
 * hang: what a rank stopped inside an atomic call on the window does to
 * the others (it keeps the lock that guards the words the call touches):
 * once the counter has passed HANG_FROM, every rank's next chunk grab or
 * heartbeat read never returns, through MPI's profiling interface (this
 * file's MPI_Fetch_and_op and MPI_Get_accumulate). The counter is shared,
 * so the ranks hang within a chunk's time of each other, after a few
 * heartbeats have shown each watcher its neighbour's chunk. No heartbeat
 * is read any more, so only the watchdogs can end the job. */
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ultrapool/mpi.h>

#include "check.h"

#define HANG_FROM 3000 /* indexes; about 0.4 s into the farm on 4 ranks of 2 lanes */

static int rank, sig, hang;
static _Atomic int passed; /* a grab returned an index past HANG_FROM */

static void hang_here(const char *where)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    fprintf(stderr, "rank %d hangs in %s: UP_TEST_VICTIM_AT=%lld.%09ld\n", rank, where,
            (long long)t.tv_sec, t.tv_nsec);
    fflush(stderr);
    for (;;)
        sleep(1);
}

int MPI_Fetch_and_op(const void *origin, void *result, MPI_Datatype type, int target, MPI_Aint disp,
                     MPI_Op op, MPI_Win win)
{
    if (hang && passed)
        hang_here("a grab");
    int rc = PMPI_Fetch_and_op(origin, result, type, target, disp, op, win);
    if (hang && rc == MPI_SUCCESS && type == MPI_UINT64_T && *(uint64_t *)result >= HANG_FROM)
        passed = 1;
    return rc;
}

int MPI_Get_accumulate(const void *origin, int origin_count, MPI_Datatype origin_type, void *result,
                       int result_count, MPI_Datatype result_type, int target, MPI_Aint disp,
                       int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win)
{
    if (hang && passed)
        hang_here("a heartbeat read");
    return PMPI_Get_accumulate(origin, origin_count, origin_type, result, result_count, result_type,
                               target, disp, target_count, target_type, op, win);
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
    CHECK(argc == 2 && (strcmp(argv[1], "kill") == 0 || strcmp(argv[1], "kill-short") == 0 ||
                        strcmp(argv[1], "stop") == 0 || strcmp(argv[1], "stop-static") == 0 ||
                        strcmp(argv[1], "hang") == 0));
    int short_beat = strcmp(argv[1], "kill-short") == 0;
    sig = strncmp(argv[1], "kill", 4) == 0 ? SIGKILL : strcmp(argv[1], "hang") == 0 ? 0 : SIGSTOP;
    int statics = strcmp(argv[1], "stop-static") == 0;
    CHECK_EQ(up_mpi_init(&argc, &argv, MPI_THREAD_FUNNELED, NULL), UP_OK);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    hang = sig == 0;
    up_pool *pool;
    CHECK_EQ(up_pool_create(&pool, NULL), UP_OK);
    up_mpi_opts o;
    up_mpi_opts_init(&o);
    /* Static: rank 1's block, published once, is what a report names. */
    o.schedule = statics ? UP_MPI_STATIC : UP_MPI_DYNAMIC;
    o.min_chunk = 10;
    /* Shorter than MPI_Abort takes to end the job: the watcher of the
     * rank that aborts must not call it silent. */
    if (short_beat)
        o.heartbeat_timeout_ns = 300000000u;
    int rc = up_mpi_for(MPI_COMM_WORLD, pool, 1000000, &o, body, NULL);
    /* Not reached by a correct farm: the job is aborted first. */
    fprintf(stderr, "rank %d: up_mpi_for returned %d (%s)\n", rank, rc, up_last_error());
    up_pool_stop_and_wait(pool);
    up_pool_destroy(pool);
    MPI_Finalize();
    return 0;
}
