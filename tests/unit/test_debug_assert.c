/* The internal assertions (runtime/src/debug.h): in a UP_DEBUG build each
 * level at or below UP_DEBUG_LEVEL aborts on a false expression with a
 * message naming the file, the line and the expression, evaluates a true
 * one once and goes on; a level above it evaluates nothing. The runtime
 * library itself is checked too: an invariant broken on purpose inside
 * it (a queue whose capacity is not a power of two) must abort there.
 * Without UP_DEBUG only the "evaluates nothing" half can be observed: it
 * is checked, then the test exits 77. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "child.h"
#include "debug.h"
#include "mpmc.h"

static int evaluated;

/* Unused attribute: without UP_DEBUG the assertions below are not
 * evaluated, and clang would call these unneeded. */
__attribute__((unused)) static int count(int v)
{
    evaluated++;
    return v;
}

__attribute__((unused)) static int one = 1;
static const int false_line = __LINE__ + 4; /* the line of the assertion below */
static void fail_cheap(void *arg)
{
    (void)arg;
    up__assert(one == 2);
}
static void fail_internal(void *arg)
{
    (void)arg;
    up__assert_internal(count(0) != 0);
}
static void fail_expensive(void *arg)
{
    (void)arg;
    up__assert_expensive(count(0) != 0);
}
static void fail_in_runtime(void *arg)
{
    (void)arg;
    up__mpmc q;
    up__mpmc_init(&q, 3); /* not a power of two: mpmc.c's up__assert */
}

/* A false assertion of the given level: aborts with the message when the
 * level is compiled in, else returns normally. */
static void expect(const char *name, void (*fn)(void *), int on, const char *text)
{
    char out[4096];
    int st = child_stderr(fn, NULL, out, sizeof out);
    if (on) {
        if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGABRT || !strstr(out, text) ||
            !strstr(out, "internal assertion failed")) {
            fprintf(stderr, "%s: expected an abort naming \"%s\"; status 0x%x, stderr:\n%s\n", name,
                    text, st, out);
            exit(1);
        }
        printf("%s: aborted as expected: %s", name, out);
    } else {
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || out[0]) {
            fprintf(stderr, "%s: compiled out, yet status 0x%x, stderr:\n%s\n", name, st, out);
            exit(1);
        }
        printf("%s: compiled out at level %d\n", name, UP_DEBUG_LEVEL);
    }
}

int main(void)
{
    /* True assertions: evaluated once per enabled level, never otherwise. */
    evaluated = 0;
    up__assert(count(1));
    up__assert_internal(count(1));
    up__assert_expensive(count(1));
    int want = (UP_DEBUG_LEVEL >= 1) + (UP_DEBUG_LEVEL >= 2) + (UP_DEBUG_LEVEL >= 3);
    if (evaluated != want) {
        fprintf(stderr, "level %d: %d expressions evaluated, want %d\n", UP_DEBUG_LEVEL, evaluated,
                want);
        return 1;
    }
    printf("level %d: true assertions evaluated %d times\n", UP_DEBUG_LEVEL, evaluated);
    if (UP_DEBUG_LEVEL == 0) {
        printf("UP_DEBUG off: assertions are compiled out; the abort path is not built\n");
        return TEST_SKIP;
    }
    char where[64];
    snprintf(where, sizeof where, "test_debug_assert.c:%d: fail_cheap: one == 2", false_line);
    expect("up__assert", fail_cheap, 1, where);
    expect("up__assert_internal", fail_internal, UP_DEBUG_LEVEL >= 2, "count(0) != 0");
    expect("up__assert_expensive", fail_expensive, UP_DEBUG_LEVEL >= 3, "count(0) != 0");
    expect("runtime (mpmc.c)", fail_in_runtime, 1, "mpmc.c:");
    return 0;
}
