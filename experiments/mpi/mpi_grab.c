/* The latency of one chunk grab: MPI_Fetch_and_op(MPI_SUM) on a counter
 * in rank 0's window, then MPI_Win_flush, in a window made the way the
 * farm's ledger makes it (mpi/ledger.c: MPI_Win_allocate, one
 * passive epoch opened with MPI_Win_lock_all(MPI_MODE_NOCHECK)).
 *
 * Cases, each timed over --inner rounds of --grabs grabs (the median
 * round is what counts):
 *   remote       rank 1 grabs while rank 0 waits in MPI_Barrier (inside MPI)
 *   remote-busy  rank 1 grabs while rank 0 computes outside MPI, as the
 *                farm's rank 0 does (its coordinator sleeps on a condition
 *                variable, its lanes run bodies): shows whether a grab
 *                needs the target to make MPI progress
 *   local        rank 0 grabs its own counter
 *   contended    every rank grabs at once
 * A benchmark, not a test: it reports, and checks only that the counter
 * saw every grab. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_stats.h"
#include "counters.h"
#include "mb_common.h"

/* Grabs whose fetched value did not follow the one before while this
 * rank was the only one grabbing: a counter that loses updates or
 * returns stale values. */
static uint64_t bad_values;

/* ns per grab of `grabs` grabs; alone: no other rank grabs meanwhile. */
static double grab_run(MPI_Win win, uint64_t grabs, uint64_t *total, int alone)
{
    uint64_t one = 1, start = 0, last = 0;
    uint64_t t0 = mb_now_ns();
    for (uint64_t i = 0; i < grabs; i++) {
        MPI_Fetch_and_op(&one, &start, MPI_UINT64_T, 0, 0, MPI_SUM, win);
        MPI_Win_flush(0, win);
        if (alone && i > 0 && start != last + 1)
            bad_values++;
        last = start;
    }
    uint64_t ns = mb_now_ns() - t0;
    *total += grabs;
    return (double)ns / (double)grabs;
}

/* Each grab timed on its own, for the worst one (the first grab while the
 * target is outside MPI would wait for its progress). */
static void grab_each(MPI_Win win, uint64_t grabs, double *lat, uint64_t *total)
{
    uint64_t one = 1, start = 0;
    for (uint64_t i = 0; i < grabs; i++) {
        uint64_t t0 = mb_now_ns();
        MPI_Fetch_and_op(&one, &start, MPI_UINT64_T, 0, 0, MPI_SUM, win);
        MPI_Win_flush(0, win);
        lat[i] = (double)(mb_now_ns() - t0);
    }
    *total += grabs;
}

static void busy_for(uint64_t ns)
{
    uint64_t end = mb_now_ns() + ns;
    while (mb_now_ns() < end)
        mb_spin(1000, 7);
}

static void print_case(const char *name, double *per_round, int inner, uint64_t grabs, int ranks)
{
    double v[256];
    memcpy(v, per_round, (size_t)inner * sizeof v[0]);
    bench_summary st = bench_summarize(v, (size_t)inner);
    printf("RESULT exp=grab peer=mpi case=%s ranks=%d grabs=%llu inner=%d median_ns=%.1f "
           "min_ns=%.1f max_ns=%.1f\n",
           name, ranks, (unsigned long long)grabs, inner, st.median, st.min, st.max);
}

int main(int argc, char **argv)
{
    counters_init();
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t grabs = (uint64_t)mb_opt_num(argc, argv, "--grabs", 20000);
    int inner = (int)mb_opt_num(argc, argv, "--inner", 11);
    double busy_ms = mb_opt_num(argc, argv, "--busy-ms", 20);
    int ledger_order = (int)mb_opt_num(argc, argv, "--ledger-order", 0);
    if (inner < 1 || inner > 256 || grabs < 1) {
        if (rank == 0)
            fprintf(stderr, "mpi_grab: --inner 1..256, --grabs >= 1\n");
        MPI_Finalize();
        return 2;
    }
    if (size < 2) {
        if (rank == 0)
            printf("NOTE mpi_grab needs 2 ranks or more; nothing measured\n");
        MPI_Finalize();
        return 0;
    }

    uint64_t *base;
    MPI_Win win;
    MPI_Win_allocate((MPI_Aint)(8 * sizeof(uint64_t)), (int)sizeof(uint64_t), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &base, &win);
    /* Zeroed before anyone reads: MPI_Win_sync is valid inside the passive
     * epoch only (osc/ucx refuses it outside, with MPI_ERR_RMA_SYNC), so
     * the epoch opens first. */
    memset(base, 0, 8 * sizeof(uint64_t));
    int sync_rc = MPI_SUCCESS;
    if (ledger_order) {
        /* mpi/ledger.c's order: sync, barrier, then the epoch. */
        MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
        sync_rc = MPI_Win_sync(win);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    } else {
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
        MPI_Win_sync(win);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 1) {
        /* The counter as rank 1 first sees it: 0 unless the window is
         * broken. */
        uint64_t one = 0, first = 0;
        int frc = MPI_Fetch_and_op(&one, &first, MPI_UINT64_T, 0, 0, MPI_SUM, win);
        int flrc = MPI_Win_flush(0, win);
        printf("RESULT exp=grab peer=mpi kind=first ledger_order=%d sync_rc=%d fetch_rc=%d "
               "flush_rc=%d first_value=%llu\n",
               ledger_order, sync_rc, frc, flrc, (unsigned long long)first);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    mb_usage usage;
    mb_usage_begin(&usage);
    double remote[256], local[256], busy[256], busy_worst[256], cont0[256], cont1[256];
    uint64_t total = 0;
    double *lat = malloc(grabs * sizeof *lat);
    uint64_t warm = grabs / 10 + 1;
    for (int r = 0; r < inner; r++) {
        /* remote: rank 1 grabs, the others wait inside MPI. */
        if (rank == 1) {
            grab_run(win, warm, &total, 1);
            remote[r] = grab_run(win, grabs, &total, 1);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* local: rank 0 grabs its own counter. */
        if (rank == 0) {
            grab_run(win, warm, &total, 1);
            local[r] = grab_run(win, grabs, &total, 1);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* remote-busy: rank 0 computes outside MPI for busy_ms, rank 1
         * grabs at most busy_ms / 2 worth (grabs that wait for progress
         * show in the worst one). */
        if (rank == 0) {
            busy_for((uint64_t)(busy_ms * 1e6));
        } else if (rank == 1) {
            uint64_t n = grabs, t0 = mb_now_ns();
            grab_each(win, n, lat, &total);
            uint64_t ns = mb_now_ns() - t0;
            bench_summary st = bench_summarize(lat, n);
            busy[r] = st.median;
            busy_worst[r] = st.max;
            if ((double)ns > busy_ms * 1e6 / 2 && r == 0)
                printf("NOTE remote-busy: rank 1's %llu grabs took %.1f ms, more than half of "
                       "rank 0's %.1f ms outside MPI\n",
                       (unsigned long long)n, (double)ns / 1e6, busy_ms);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* contended: every rank at once. */
        double mine = grab_run(win, grabs, &total, 0);
        if (rank == 0)
            cont0[r] = mine;
        if (rank == 1)
            cont1[r] = mine;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* Rank 1's figures to rank 0. */
    double pack[4 * 256];
    if (rank == 1) {
        memcpy(pack, remote, sizeof remote[0] * (size_t)inner);
        memcpy(pack + inner, busy, sizeof busy[0] * (size_t)inner);
        memcpy(pack + 2 * inner, busy_worst, sizeof busy_worst[0] * (size_t)inner);
        memcpy(pack + 3 * inner, cont1, sizeof cont1[0] * (size_t)inner);
        MPI_Send(pack, 4 * inner, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
    } else if (rank == 0) {
        MPI_Recv(pack, 4 * inner, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    uint64_t all = 0, seen = 0, none = 0, bad = 0;
    MPI_Reduce(&total, &all, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad_values, &bad, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Fetch_and_op(&none, &seen, MPI_UINT64_T, 0, 0, MPI_NO_OP, win);
        MPI_Win_flush(0, win);
    }
    mb_usage_end(&usage, MPI_COMM_WORLD, "grab", "mpi");
    if (rank == 0) {
        print_case("remote", pack, inner, grabs, size);
        print_case("local", local, inner, grabs, size);
        print_case("remote-busy", pack + inner, inner, grabs, size);
        print_case("remote-busy-worst", pack + 2 * inner, inner, grabs, size);
        print_case("contended-rank0", cont0, inner, grabs, size);
        print_case("contended-rank1", pack + 3 * inner, inner, grabs, size);
        printf("RESULT exp=grab peer=mpi kind=check grabs_total=%llu counter=%llu "
               "out_of_sequence=%llu ok=%d\n",
               (unsigned long long)all, (unsigned long long)seen, (unsigned long long)bad,
               all == seen && bad == 0);
    }
    free(lat);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
