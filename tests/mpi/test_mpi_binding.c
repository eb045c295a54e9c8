/* Ranks bound one core each (mpirun --bind-to core): each rank's pool
 * covers exactly its own CPUs, a parallel region of the default size has
 * that many threads, no two ranks share a CPU, and a farm's lanes stay
 * inside the binding. Exits 77 when the launcher did not bind (fewer
 * cores than ranks, or a launcher without the flag). */
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include <ultrapool/mpi.h>
#include <ultrapool/parallel.h>

#include "check.h"

static atomic_uint team;
static cpu_set_t bound;
static atomic_int strays;

static void region(void *ctx)
{
    (void)ctx;
    if (up_thread_num() == 0)
        atomic_store(&team, up_num_threads());
}

static int body(uint64_t begin, uint64_t end, void *ctx)
{
    (void)begin;
    (void)end;
    (void)ctx;
    int cpu = sched_getcpu();
    if (cpu >= 0 && !CPU_ISSET(cpu, &bound))
        atomic_fetch_add(&strays, 1);
    return 0;
}

int main(int argc, char **argv)
{
    CHECK_EQ(up_mpi_init(&argc, &argv, MPI_THREAD_FUNNELED, NULL), UP_OK);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(sched_getaffinity(0, sizeof bound, &bound) == 0);
    int mine = CPU_COUNT(&bound);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int widest = mine;
    MPI_Allreduce(MPI_IN_PLACE, &widest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (widest >= online) {
        if (rank == 0)
            printf("ranks are not bound (a rank sees %d of %ld CPUs): nothing to check\n", widest,
                   online);
        MPI_Finalize();
        return TEST_SKIP;
    }
    /* No CPU in two ranks' bindings. */
    unsigned char have[CPU_SETSIZE / 8] = {0}, all[CPU_SETSIZE / 8] = {0};
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &bound))
            have[c / 8] |= (unsigned char)(1u << (c % 8));
    int overlap = 0;
    for (int r = 0; r < size; r++) {
        unsigned char theirs[sizeof have];
        memcpy(theirs, have, sizeof have);
        MPI_Bcast(theirs, (int)sizeof theirs, MPI_UNSIGNED_CHAR, r, MPI_COMM_WORLD);
        for (size_t i = 0; i < sizeof all; i++) {
            overlap |= (all[i] & theirs[i]) != 0;
            all[i] |= theirs[i];
        }
    }
    CHECK_EQ(overlap, 0);
    up_pool *pool;
    CHECK_EQ(up_pool_create(&pool, NULL), UP_OK);
    CHECK_EQ(up_pool_cpus(pool), (unsigned)mine);
    CHECK_EQ(up_parallel(pool, 0, region, NULL), UP_OK);
    CHECK_EQ(atomic_load(&team), (unsigned)mine);
    CHECK_EQ(up_mpi_for(MPI_COMM_WORLD, pool, 100000, NULL, body, NULL), UP_OK);
    CHECK_EQ(atomic_load(&strays), 0);
    printf("rank %d: bound to %d CPU(s); pool covers %u, default region %u threads\n", rank, mine,
           up_pool_cpus(pool), atomic_load(&team));
    up_pool_stop_and_wait(pool);
    up_pool_destroy(pool);
    MPI_Finalize();
    return 0;
}
