/* The MPI soak run (scripts/test soak --mpi; docs/testing.md, "Soak"):
 * random farms under mpirun until the time is up. Each round every rank
 * creates a pool of a random configuration and runs one farm (up_mpi_for
 * or up_mpi_reduce) of a random size, schedule, chunk bounds and lanes;
 * some rounds have a body that fails at one index, some stop one rank's
 * pool before the farm. Checks, on every rank: the same return code; an
 * index never runs twice; a farm that returns UP_OK ran every index once
 * across the ranks (the ranks' counts summed) and its reduction equals the
 * closed form; a failed farm reports the failing index's chunk and code.
 * Rank 0 draws the seed (--seed replays the farms' sequence), decides when
 * the time is up and prints the summary; a violation prints the seed and
 * round and aborts the job.
 *   soak_mpi [--minutes M | --seconds S] [--seed S] [--first-round R] */
#include <stdatomic.h>
#include <string.h>

#include <ultrapool/mpi.h>

#include "check.h"

#define FAIL_CODE 42
#define NMAX      200000u

static int rank, nranks;
static uint64_t seed0, round_no;

#define MPI_CHECK(cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr,                                                                        \
                    "soak_mpi: FAILED seed %" PRIu64 " round %" PRIu64 " rank %d: ", seed0,        \
                    round_no, rank);                                                               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr,                                                                        \
                    "\nsoak_mpi: replay with --seed %" PRIu64 " --first-round %" PRIu64 "\n",      \
                    seed0, round_no);                                                              \
            fflush(stderr);                                                                        \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

typedef struct farm {
    _Atomic unsigned char *hits;
    uint64_t n, fail_at; /* fail_at >= n: no failure */
    unsigned spin;
} farm;

static int mark(uint64_t begin, uint64_t end, void *ctx)
{
    farm *f = ctx;
    MPI_CHECK(begin < end && end <= f->n, "a body got [%" PRIu64 ", %" PRIu64 ") of %" PRIu64,
              begin, end, f->n);
    for (uint64_t i = begin; i < end; i++)
        MPI_CHECK(atomic_fetch_add_explicit(&f->hits[i], 1, memory_order_relaxed) == 0,
                  "index %" PRIu64 " ran twice on this rank", i);
    test_spin(f->spin * (unsigned)(end - begin));
    return f->fail_at >= begin && f->fail_at < end ? FAIL_CODE : 0;
}

static int add(uint64_t begin, uint64_t end, void *acc, void *ctx)
{
    int rc = mark(begin, end, ctx);
    uint64_t *sum = acc;
    for (uint64_t i = begin; i < end; i++)
        *sum += i;
    return rc;
}

static void combine(void *into, const void *from, void *ctx)
{
    (void)ctx;
    *(uint64_t *)into += *(const uint64_t *)from;
}

static uint64_t n_rc[8], n_items, n_rounds;

static void run_round(unsigned char *sum)
{
    uint64_t rng = seed0 ^ (round_no * 0x9e3779b97f4a7c15ull);
    (void)test_rand(&rng);
    farm f = {.n = test_rand(&rng) % NMAX, .spin = (unsigned)(test_rand(&rng) % 50)};
    if (test_rand(&rng) % 4 == 0)
        f.n = test_rand(&rng) % 40; /* the small edge sizes */
    f.fail_at = test_rand(&rng) % 6 == 0 && f.n ? test_rand(&rng) % f.n : UINT64_MAX;
    up_mpi_opts o;
    up_mpi_opts_init(&o);
    o.schedule = (up_mpi_schedule)(test_rand(&rng) % 3);
    o.min_chunk = 1 + test_rand(&rng) % 512;
    o.max_chunk = test_rand(&rng) % 2 ? 0 : o.min_chunk + test_rand(&rng) % 4096;
    o.lanes = (unsigned)(test_rand(&rng) % 9);
    int reduce = (int)(test_rand(&rng) % 2);
    int stopped_rank = test_rand(&rng) % 8 == 0 ? (int)(test_rand(&rng) % (uint64_t)nranks) : -1;
    up_mpi_report rep = UP_MPI_REPORT();
    o.report = &rep;

    uint64_t prng = rng ^ (uint64_t)(rank + 1) * 0x2545f4914f6cdd1dull;
    up_config cfg;
    up_config_init(&cfg);
    cfg.shards = 1 + (unsigned)(test_rand(&prng) % 2);
    cfg.shard_max_workers = 1 + (unsigned)(test_rand(&prng) % 4);
    cfg.queue_capacity = 16u << (test_rand(&prng) % 4);
    up_pool *pool;
    MPI_CHECK(up_pool_create(&pool, &cfg) == UP_OK, "up_pool_create: %s", up_last_error());
    if (rank == stopped_rank)
        up_pool_stop(pool);

    f.hits = calloc(f.n ? f.n : 1, 1);
    CHECK(f.hits);
    uint64_t total = 0;
    int rc = reduce ? up_mpi_reduce(MPI_COMM_WORLD, pool, f.n, &o, add, combine, &f, &total,
                                    sizeof total)
                    : up_mpi_for(MPI_COMM_WORLD, pool, f.n, &o, mark, &f);
    int rc_min, rc_max;
    MPI_Allreduce(&rc, &rc_min, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&rc, &rc_max, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_CHECK(rc_min == rc_max, "the ranks returned %d to %d (this one %s: %s)", rc_min, rc_max,
              up_strerror(rc), up_last_error());
    if (f.n)
        MPI_Allreduce((void *)f.hits, sum, (int)f.n, MPI_UNSIGNED_CHAR, MPI_SUM, MPI_COMM_WORLD);
    uint64_t ran = 0;
    for (uint64_t i = 0; i < f.n; i++) {
        MPI_CHECK(sum[i] <= 1, "index %" PRIu64 " ran %u times across the ranks", i, sum[i]);
        ran += sum[i];
    }
    /* A static farm cannot make up for a stopped rank's block, unless
     * that block is empty (n below the ranks): then nothing is left
     * undone and the farm succeeds (docs/mpi.md). */
    uint64_t stopped_block =
        stopped_rank >= 0
            ? f.n / (uint64_t)nranks + ((uint64_t)stopped_rank < f.n % (uint64_t)nranks)
            : 0;
    int expect_stopped = stopped_rank >= 0 && o.schedule == UP_MPI_STATIC && stopped_block > 0;
    /* A static farm with a stopped rank and a failing body: the other
     * ranks may run their blocks and fail before the refusal reaches
     * them, so either result is right, the same on every rank. */
    if (expect_stopped && f.fail_at < f.n && rc == UP_ECANCELED)
        expect_stopped = 0;
    if (f.fail_at < f.n && !expect_stopped) {
        MPI_CHECK(rc == UP_ECANCELED, "a failing body gave %s (%s)", up_strerror(rc),
                  up_last_error());
        MPI_CHECK(rep.body_code == FAIL_CODE && rep.begin <= f.fail_at && f.fail_at < rep.end,
                  "the report says code %d in [%" PRIu64 ", %" PRIu64
                  "), the body failed at %" PRIu64,
                  rep.body_code, rep.begin, rep.end, f.fail_at);
        MPI_CHECK(sum[f.fail_at] == 1, "the failing index ran %u times", sum[f.fail_at]);
    } else if (expect_stopped) {
        MPI_CHECK(rc == UP_ESTOPPED, "a static farm with a stopped rank gave %s (%s)",
                  up_strerror(rc), up_last_error());
    } else {
        MPI_CHECK(rc == UP_OK, "the farm gave %s (%s)", up_strerror(rc), up_last_error());
        MPI_CHECK(ran == f.n && rep.items_all == f.n,
                  "%" PRIu64 " of %" PRIu64 " indexes ran (report: %" PRIu64 ")", ran, f.n,
                  rep.items_all);
        MPI_CHECK(rank != stopped_rank || rep.items == 0, "a stopped pool ran %" PRIu64, rep.items);
        uint64_t want = f.n ? (f.n % 2 ? f.n * ((f.n - 1) / 2) : (f.n / 2) * (f.n - 1)) : 0;
        MPI_CHECK(!reduce || total == want, "the reduction gave %" PRIu64 ", not %" PRIu64, total,
                  want);
    }
    n_rc[-rc & 7]++;
    n_items += ran;
    n_rounds++;
    free((void *)f.hits);
    MPI_CHECK(up_pool_destroy(pool) == UP_OK, "up_pool_destroy: %s", up_last_error());
}

int main(int argc, char **argv)
{
    int provided;
    if (up_mpi_init(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != UP_OK) {
        fprintf(stderr, "soak_mpi: %s\n", up_last_error());
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *sc = getenv("UP_TEST_SCALE");
    double seconds = 10 * (sc && *sc ? atof(sc) : 1.0);
    if (seconds < 2)
        seconds = 2;
    uint64_t first = 0;
    int have_seed = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--minutes"))
            seconds = 60 * atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--seconds"))
            seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed"))
            seed0 = strtoull(argv[i + 1], NULL, 10), have_seed = 1;
        else if (!strcmp(argv[i], "--first-round"))
            first = strtoull(argv[i + 1], NULL, 10);
    }
    if (!have_seed && rank == 0)
        seed0 = test_seed();
    MPI_Bcast(&seed0, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("soak_mpi: seed %" PRIu64 " (--seed to replay), %.0f s, %d ranks\n", seed0, seconds,
               nranks);
    fflush(stdout);
    unsigned char *sum = calloc(NMAX, 1);
    CHECK(sum);
    uint64_t t0 = test_now_ns(), next_progress = t0 + 15000000000ull;
    for (round_no = first;; round_no++) {
        int go = test_now_ns() - t0 < (uint64_t)(seconds * 1e9);
        MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD); /* rank 0's clock decides for all */
        if (!go)
            break;
        run_round(sum);
        if (rank == 0 && test_now_ns() >= next_progress) {
            printf("soak_mpi: %.0f s, %" PRIu64 " farms, %" PRIu64 " indexes\n",
                   (double)(test_now_ns() - t0) / 1e9, n_rounds, n_items);
            fflush(stdout);
            next_progress = test_now_ns() + 15000000000ull;
        }
    }
    if (rank == 0)
        printf("soak_mpi: seed %" PRIu64 ", %" PRIu64 " farms in %.1f s on %d ranks, %" PRIu64
               " indexes ran; ok %" PRIu64 ", cancelled %" PRIu64 ", stopped %" PRIu64
               "\nsoak_mpi: failures=0\n",
               seed0, n_rounds, (double)(test_now_ns() - t0) / 1e9, nranks, n_items, n_rc[0],
               n_rc[-UP_ECANCELED], n_rc[-UP_ESTOPPED]);
    free(sum);
    MPI_Finalize();
    return 0;
}
