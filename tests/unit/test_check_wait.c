/* The suite's shared wait, WAIT_UNTIL (tests/common/check.h): a condition
 * that comes true ends the wait; one that never does fails the test,
 * naming the condition and the time waited, instead of letting the test
 * run on as if it had held. The failing wait runs in a child process.
 * And test_poll_until, the same wait for a caller that judges the
 * outcome itself: it says whether the condition came true, and returns
 * only after the bound when it did not. */
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>

#include "check.h"
#include "child.h"

static _Atomic int polls;

/* True from the fifth poll on. */
static int fifth_poll(void) { return atomic_fetch_add(&polls, 1) >= 4; }

static int fifth_poll_arg(void *arg)
{
    (void)arg;
    return fifth_poll();
}

static int never(void *arg)
{
    atomic_fetch_add((_Atomic int *)arg, 1);
    return 0;
}

/* In the child: a wait whose condition never holds (polls is past 0)
 * must fail the test, not return. */
static void wait_never_holds(void *arg)
{
    (void)arg;
    uint64_t t0 = test_now_ns();
    WAIT_UNTIL(atomic_load(&polls) == 0, 20);
    /* Reached only when the wait gave up silently. */
    printf("a wait that never held returned after %.0f ms\n", (double)(test_now_ns() - t0) / 1e6);
    fflush(stdout);
}

int main(void)
{
    WAIT_UNTIL(fifth_poll(), 10000);
    CHECK_EQ(atomic_load(&polls), 5);

    atomic_store(&polls, 0);
    CHECK_EQ(test_poll_until(fifth_poll_arg, NULL, 10000), 1);
    CHECK_EQ(atomic_load(&polls), 5);
    _Atomic int looks = 0;
    uint64_t t0 = test_now_ns();
    CHECK_EQ(test_poll_until(never, &looks, 20), 0);
    uint64_t waited = test_now_ns() - t0;
    printf("test_poll_until: a condition that never held: 0 after %.1f ms, %d looks\n",
           (double)waited / 1e6, atomic_load(&looks));
    CHECK_GE(waited, 20000000ull * test_time_factor());
    CHECK_GE(atomic_load(&looks), 2); /* the last look comes after the bound */

    char msg[512];
    int status = child_stderr(wait_never_holds, NULL, msg, sizeof msg);
    printf("the child's report: %s", msg[0] ? msg : "(nothing)\n");
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    CHECK(strstr(msg, "WAIT_UNTIL timed out after") != NULL);
    CHECK(strstr(msg, "atomic_load(&polls) == 0") != NULL);
    printf("a wait that holds returns; one that never holds fails the test, saying so\n");
    return 0;
}
