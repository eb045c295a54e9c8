// The oneTBB runner: tasks submitted with task_arena::enqueue into one
// explicit arena.
//
// Why enqueue and not task_group::run: the benchmark's submitters are
// external threads that hand work over and go on. task_group::run spawns
// into the calling thread's own task pool; in oneTBB an external thread
// outside any arena gets an implicit arena of its own, so 100 submitters
// would make 100 arenas whose tasks only move when workers visit them, and
// someone must still call wait() on the group. task_arena::enqueue is the
// interface oneTBB documents for handing fire-and-forget work to an arena
// from any thread: the task goes to the arena's shared queue and the
// caller does not join the arena.
//
// The arena reserves no slot for external threads (they never join it) and
// the process allows one worker per core (global_control counts the main
// thread, hence cores + 1), so all cores run tasks, as for every other peer.
#include <cstdio>
#include <memory>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/version.h>

#include "harness.h"

namespace
{

std::unique_ptr<tbb::global_control> control;
std::unique_ptr<tbb::task_arena> arena;

int tbb_init(unsigned submitters, unsigned cores)
{
    (void)submitters;
    control = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                    cores + 1);
    arena = std::make_unique<tbb::task_arena>(static_cast<int>(cores), 0u);
    arena->initialize();
    return 0;
}

void tbb_submit(harness_fn fn, void *arg)
{
    arena->enqueue([fn, arg] { fn(arg); });
}

void tbb_fini()
{
    arena.reset();
    control.reset();
}

const char *tbb_version()
{
    static char v[64];
    std::snprintf(v, sizeof v, "oneTBB %s (runtime %s)", TBB_VERSION_STRING, TBB_runtime_version());
    return v;
}

const peer p_tbb = {"tbb",       "oneTBB task_arena::enqueue into one arena of one worker per core",
                    0,           tbb_init,
                    tbb_submit,  nullptr,
                    tbb_fini,    nullptr,
                    tbb_version, 0,
                    nullptr};

} // namespace

int main(int argc, char **argv)
{
    static const peer *const peers[] = {&p_tbb};
    return harness_main(argc, argv, "bench_tbb", peers, 1);
}
