// Must not compile: UP_TYPED of a type larger than a queue slot's payload.
// The consumer project checks that it fails (static_assert under C++).
#include <ultrapool/pool.h>

struct too_big {
    char bytes[UP_PAYLOAD_MAX + 1];
};
static void on_big(too_big *) {}
UP_TYPED(big_q, too_big, on_big)

int main() { return 0; }
