#include "fib.h"

uint64_t up_k_fib(int n)
{
    if (n < 2)
        return (uint64_t)n;
    return up_k_fib(n - 1) + up_k_fib(n - 2);
}

uint64_t up_k_fib_iter(int n)
{
    uint64_t a = 0, b = 1;
    for (int i = 0; i < n; i++) {
        uint64_t c = a + b;
        a = b;
        b = c;
    }
    return a;
}

uint64_t up_k_fib_calls(int n) { return n < 1 ? 1 : 2 * up_k_fib_iter(n + 1) - 1; }

int up_k_fib_verify(int n, uint64_t r)
{
    return n >= 0 && n <= 92 && r == up_k_fib_iter(n) ? 0 : -1;
}
