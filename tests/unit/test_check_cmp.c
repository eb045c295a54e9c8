/* The suite's CHECK_EQ and orderings (tests/common/check.h): operands of
 * any integer type, signed or unsigned, floating or pointer compare by
 * value, and a failing check prints both values as they are. A cast of
 * both sides to long long, which CHECK_EQ used to do, passes
 * CHECK_EQ(UINT64_MAX, -1), fails CHECK_LT(-1, 0u) the other way round
 * from C's own conversion, and prints a uint64_t above INT64_MAX as a
 * negative number. Each failing check runs in a child process. */
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "check.h"
#include "child.h"

static void passing(void)
{
    uint64_t big = UINT64_MAX;
    size_t size = 5;
    _Atomic unsigned char byte = 1;
    _Atomic int neg = -3;
    char c = 'a';
    _Bool yes = 1;
    int array[2];
    int *p = array;
    const char *text = "x";
    double half = 0.5;
    CHECK_EQ(big, UINT64_MAX);
    CHECK_NE(big, -1);
    CHECK_GT(big, -1);
    CHECK_NE(-1, 4294967295u);
    CHECK_LT(-1, 0u);
    CHECK_LT(INT64_MIN, 0u);
    CHECK_GE(INT64_MAX, INT64_MAX);
    CHECK_EQ(size, 5);
    CHECK_LE(size, 5u);
    CHECK_EQ(byte, 1);
    CHECK_EQ(neg, -3);
    CHECK_EQ(atomic_load(&neg), -3);
    CHECK_EQ(c, 'a');
    CHECK_EQ(yes, 1);
    CHECK_EQ(p, array);
    CHECK_NE(text, NULL);
    CHECK_NE(half, 0);
    CHECK_LT(0, half);
    CHECK_EQ(half * 2, 1);
}

/* The failing checks, one per child, and what the message must say. */
static int which;
static void failing(void *arg)
{
    (void)arg;
    uint64_t big = UINT64_MAX;
    size_t size = 5;
    int *none = NULL;
    double half = 0.5;
    switch (which) {
    case 0:
        CHECK_EQ(big, -1);
        break;
    case 1:
        CHECK_EQ(size, (size_t)-1);
        break;
    case 2:
        CHECK_NE(none, NULL);
        break;
    case 3:
        CHECK_EQ(half, 0);
        break;
    case 4:
        CHECK_GT(-1, 0u);
        break;
    }
}

static const char *const expect[] = {
    "CHECK failed: big == -1 (left 18446744073709551615, right -1)",
    "CHECK failed: size == (size_t)-1 (left 5, right 18446744073709551615)",
    "CHECK failed: none != NULL (left ", /* a null pointer prints as the C library says */
    "CHECK failed: half == 0 (left 0.5, right 0)",
    "CHECK failed: -1 > 0u (left -1, right 0)",
};

int main(void)
{
    passing();
    for (which = 0; which < (int)(sizeof expect / sizeof expect[0]); which++) {
        char out[1024];
        int status = child_stderr(failing, NULL, out, sizeof out);
        printf("check %d: %s", which, out[0] ? out : "(nothing)\n");
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
        if (!strstr(out, expect[which])) {
            fprintf(stderr, "expected: %s\n", expect[which]);
            CHECK(0);
        }
    }
    printf("typed checks: values compare and print as themselves\n");
    return 0;
}
