/* Internal assertions, compiled in only by the UP_DEBUG build option.
 *
 * Three levels, chosen by the macro UP_DEBUG_LEVEL (CMake: -DUP_DEBUG=ON
 * sets it from the cache variable UP_DEBUG_LEVEL, default 2):
 *   up__assert(e)           level >= 1: cheap checks on slow paths and on
 *                           values already in registers;
 *   up__assert_internal(e)  level >= 2: the invariants written above the
 *                           lock-free code, on hot paths (indices, counts,
 *                           state machine edges);
 *   up__assert_expensive(e) level >= 3: checks that walk a structure or
 *                           load extra shared words.
 * Below its level an assertion compiles to nothing: the expression sits in
 * sizeof, so it is type-checked and its variables count as used, but it is
 * never evaluated and no code is emitted. A Release build without UP_DEBUG
 * therefore costs nothing and keeps its timing. NDEBUG plays no part: CMake
 * sets it for Release and RelWithDebInfo alike.
 *
 * A failed assertion means a broken internal invariant, the one case the
 * conventions allow abort(): it prints file, line, function and the
 * expression on stderr, then aborts. An assertion must have no side
 * effects: a debug build would otherwise run differently from the release.
 * Included by the runtime's sources, and by pragmas/ and mpi/
 * through runtime/layer/up_layer.h. */
#ifndef UP_DEBUG_H
#define UP_DEBUG_H

#ifndef UP_DEBUG_LEVEL
#define UP_DEBUG_LEVEL 0
#endif

#if UP_DEBUG_LEVEL > 0
#include <stdio.h>
#include <stdlib.h>

/* Out of line (one copy per file that fails an assertion) and cold, so the checks' fast path stays
 * a compare and a not-taken branch. */
#if defined(__GNUC__)
__attribute__((noinline, cold, unused))
#endif
static _Noreturn void
up__assert_fail(const char *expr, const char *file, int line, const char *func)
{
    fprintf(stderr, "ultrapool: internal assertion failed: %s:%d: %s: %s\n", file, line, func,
            expr);
    fflush(stderr);
    abort();
}

#define UP__ASSERT_ON(e) ((e) ? (void)0 : up__assert_fail(#e, __FILE__, __LINE__, __func__))
#endif

/* Not evaluated, but type-checked and counted as a use of its operands. */
#define UP__ASSERT_OFF(e) ((void)sizeof((e) ? 1 : 0))

#if UP_DEBUG_LEVEL >= 1
#define up__assert(e) UP__ASSERT_ON(e)
#else
#define up__assert(e) UP__ASSERT_OFF(e)
#endif
#if UP_DEBUG_LEVEL >= 2
#define up__assert_internal(e) UP__ASSERT_ON(e)
#else
#define up__assert_internal(e) UP__ASSERT_OFF(e)
#endif
#if UP_DEBUG_LEVEL >= 3
#define up__assert_expensive(e) UP__ASSERT_ON(e)
#else
#define up__assert_expensive(e) UP__ASSERT_OFF(e)
#endif

#endif
