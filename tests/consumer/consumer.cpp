// A C++17 program that knows ultrapool only through its installed headers
// and libraries: every public header compiled as C++, a typed front
// (UP_TYPED), the OpenMP-style API (a region, a shared loop, a
// taskwait-based fib) and the version, each result checked.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <ultrapool/chan.h>
#include <ultrapool/export.h>
#include <ultrapool/group.h>
#include <ultrapool/parallel.h>
#include <ultrapool/pool.h>
#include <ultrapool/sem.h>
#include <ultrapool/version.h>
#ifdef UP_CONSUMER_ALL_HEADERS
#include UP_CONSUMER_ALL_HEADERS
#endif

namespace
{

constexpr int fib_n = 20;
constexpr long fib_want = 6765; // fib(20)
constexpr int64_t loop_n = 100000;

struct point {
    int x, y;
};
std::atomic<long> point_sum{0};
void on_point(point *pt) { point_sum += pt->x * pt->y; }

struct fib_arg {
    int n;
    long result;
};

// Each task waits for its two children, whose arguments live in its frame.
void fib_task(void *p)
{
    auto *a = static_cast<fib_arg *>(p);
    if (a->n < 2) {
        a->result = a->n;
        return;
    }
    fib_arg x{a->n - 1, 0}, y{a->n - 2, 0};
    if (up_task(fib_task, &x, nullptr) != UP_OK)
        fib_task(&x);
    if (up_task(fib_task, &y, nullptr) != UP_OK)
        fib_task(&y);
    up_taskwait();
    a->result = x.result + y.result;
}

struct region_ctx {
    fib_arg fib{fib_n, -1};
    std::atomic<long long> sum{0};
    std::atomic<int> errors{0};
};

void region(void *p)
{
    auto *c = static_cast<region_ctx *>(p);
    auto body = [](int64_t lo, int64_t hi, void *q) {
        long long s = 0;
        for (int64_t i = lo; i < hi; i++)
            s += i;
        static_cast<region_ctx *>(q)->sum += s;
    };
    if (up_for(0, loop_n, nullptr, body, c) != UP_OK)
        c->errors++;
    if (up_single()) {
        if (up_task(fib_task, &c->fib, nullptr) != UP_OK)
            fib_task(&c->fib);
        up_taskwait();
    }
    up_barrier();
}

} // namespace

// The typed front at namespace scope, as a C++ user writes it.
UP_TYPED(point_q, point, on_point)

int main()
{
    int bad = 0;
    if (std::strcmp(up_version(), UP_VERSION_STRING) != 0)
        bad = 1;
    up_pool *p = nullptr;
    if (up_pool_create(&p, nullptr) != UP_OK) {
        std::fprintf(stderr, "consumer: up_pool_create: %s\n", up_last_error());
        return 1;
    }
    long want_points = 0;
    for (int i = 0; i < 100; i++) {
        if (point_q_submit_wait(p, point{i, 2}) != UP_OK)
            bad = 1;
        want_points += 2L * i;
    }
    region_ctx c;
    if (up_parallel(p, 2, region, &c) != UP_OK)
        bad = 1;
    if (up_pool_destroy(p) != UP_OK)
        bad = 1;
    long long want_sum = static_cast<long long>(loop_n) * (loop_n - 1) / 2;
    if (point_sum != want_points || c.fib.result != fib_want || c.sum != want_sum || c.errors)
        bad = 1;
    std::printf("consumer (C++17, ultrapool %s): UP_TYPED sum %ld (want %ld); fib(%d) = %ld "
                "(want %ld); up_for sum %lld (want %lld)\n",
                up_version(), point_sum.load(), want_points, fib_n, c.fib.result, fib_want,
                c.sum.load(), want_sum);
    return bad;
}
