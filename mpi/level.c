/* MPI's thread levels: initialising with the one the program needs and
 * saying clearly when MPI gives less. */
#include <ultrapool/mpi.h>

#include "ledger.h"
#include "up_layer.h"

const char *up_mpi_level_name(int level)
{
    if (level == MPI_THREAD_SINGLE)
        return "MPI_THREAD_SINGLE";
    if (level == MPI_THREAD_FUNNELED)
        return "MPI_THREAD_FUNNELED";
    if (level == MPI_THREAD_SERIALIZED)
        return "MPI_THREAD_SERIALIZED";
    if (level == MPI_THREAD_MULTIPLE)
        return "MPI_THREAD_MULTIPLE";
    return "unknown";
}

/* The standard orders the levels SINGLE < FUNNELED < SERIALIZED <
 * MULTIPLE but leaves their values to the implementation: compare ranks. */
static int level_rank(int level)
{
    if (level == MPI_THREAD_SINGLE)
        return 0;
    if (level == MPI_THREAD_FUNNELED)
        return 1;
    if (level == MPI_THREAD_SERIALIZED)
        return 2;
    if (level == MPI_THREAD_MULTIPLE)
        return 3;
    return -1;
}

static int check(int provided, int required, const char *who)
{
    if (level_rank(provided) < level_rank(required)) {
        up__set_error("%s: MPI provides %s, and this needs %s (initialise MPI with "
                      "up_mpi_init or MPI_Init_thread asking for it)",
                      who, up_mpi_level_name(provided), up_mpi_level_name(required));
        return UP_EINVAL;
    }
    return UP_OK;
}

int up_mpi_require(int required)
{
    if (level_rank(required) < 0) {
        up__set_error("up_mpi_require: %d is not an MPI thread level", required);
        return UP_EINVAL;
    }
    int inited = 0, finalized = 0, provided = MPI_THREAD_SINGLE;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (!inited || finalized) {
        up__set_error("ultrapool mpi: MPI is %s (call up_mpi_init or MPI_Init_thread)",
                      finalized ? "finalised" : "not initialised");
        return UP_EINVAL;
    }
    MPI_Query_thread(&provided);
    return check(provided, required, "ultrapool mpi");
}

int up_mpi_init(int *argc, char ***argv, int required, int *provided)
{
    if (level_rank(required) < 0) {
        up__set_error("up_mpi_init: %d is not an MPI thread level", required);
        return UP_EINVAL;
    }
    int inited = 0, got = MPI_THREAD_SINGLE;
    MPI_Initialized(&inited);
    if (inited) {
        MPI_Query_thread(&got);
    } else {
        int rc = MPI_Init_thread(argc, argv, required, &got);
        if (rc != MPI_SUCCESS)
            return up__mpi_error("up_mpi_init: MPI_Init_thread", rc);
    }
    if (provided)
        *provided = got;
    return check(got, required, "up_mpi_init");
}
