/* up_mpi_wait: completing a request from a task without holding its
 * worker in MPI_Wait. */
#include <ultrapool/mpi.h>
#include <ultrapool/wait.h>

#include "ledger.h"
#include "up_layer.h"

/* Tests first spin this many rounds of yields before sleeping: a reply
 * from a rank on the same node often comes within a few microseconds. */
#define YIELDS_BEFORE_SLEEP 64
#define MAX_NAP_NS          100000u

/* The one test-and-yield loop of the MPI mode (ledger.h). up_yield and
 * up_sleep_ns park a task on a pooled stack and block anything else, as
 * sched_yield and nanosleep would. */
int up__mpi_test_until(MPI_Request *req, MPI_Status *status, uint64_t deadline,
                       void (*between)(void *), void *arg, const char *who)
{
    uint64_t nap = 1000;
    for (unsigned round = 0;; round++) {
        int done = 0;
        int rc = MPI_Test(req, &done, status);
        if (rc != MPI_SUCCESS)
            return up__mpi_error(who, rc);
        if (done)
            return UP_OK;
        if (up__remaining_ns(deadline) == 0)
            return UP_ETIMEDOUT;
        if (between)
            between(arg);
        if (round < YIELDS_BEFORE_SLEEP) {
            up_yield();
            continue;
        }
        up_sleep_ns(nap);
        if (nap < MAX_NAP_NS)
            nap *= 2;
    }
}

int up_mpi_wait_timeout(MPI_Request *req, MPI_Status *status, uint64_t timeout_ns)
{
    if (!req) {
        up__set_error("up_mpi_wait: the request is NULL");
        return UP_EINVAL;
    }
    /* MPI_Is_thread_main is erroneous outside MPI's lifetime: that case
     * is up_mpi_require's UP_EINVAL. */
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (!inited || finalized)
        return up_mpi_require(MPI_THREAD_SINGLE);
    /* A task may resume on another worker after a yield, so in a task
     * only MPI_THREAD_MULTIPLE will do; elsewhere the main thread may
     * call with FUNNELED. */
    int in_task = up_current_pool() != NULL, main_thread = 0;
    MPI_Is_thread_main(&main_thread);
    int rc = up_mpi_require(!in_task && main_thread ? MPI_THREAD_FUNNELED : MPI_THREAD_MULTIPLE);
    if (rc != UP_OK)
        return rc;
    uint64_t deadline = timeout_ns == UINT64_MAX ? UINT64_MAX : up__deadline_after(timeout_ns);
    return up__mpi_test_until(req, status, deadline, NULL, NULL, "up_mpi_wait: MPI_Test");
}

int up_mpi_wait(MPI_Request *req, MPI_Status *status)
{
    return up_mpi_wait_timeout(req, status, UINT64_MAX);
}
