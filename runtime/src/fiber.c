/* Fibers over the backend's raw jump (fiber.h): what every switch does
 * around it (sanitizer annotations, the record of which fiber runs on this
 * thread for the stack-overflow handler), fiber set-up and exit. */
#include "fiber.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <ultrapool/pool.h>
#include "debug.h"
#include "tls.h"

#if defined(UP_FIBER_UCONTEXT) || !defined(UP__FIBER_HAVE_ASM)
#define JUMP(save, to, arg)         up__fiber_uc_jump(save, to, arg)
#define MAKE(lo, size, start, data) up__fiber_uc_make(lo, size, start, data)
#define BACKEND                     "ucontext"
#else
#define JUMP(save, to, arg)         up__fiber_asm_jump(save, to, arg)
#define MAKE(lo, size, start, data) up__fiber_asm_make(lo, size, start, data)
#if defined(__x86_64__)
#define BACKEND "x86_64"
#else
#define BACKEND "aarch64"
#endif
#endif

/* Sanitizer detection, as atomic.h does it for TSan. */
#if defined(__SANITIZE_ADDRESS__)
#define UP__ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UP__ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define UP__FIBER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UP__FIBER_TSAN 1
#endif
#endif
#if defined(UP__ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(UP__FIBER_TSAN)
#include <sanitizer/tsan_interface.h>
#endif
#if defined(UP__ASAN) || defined(UP__FIBER_TSAN)
#define ANNOTATED 1
#else
#define ANNOTATED 0
#endif

/* What a switch hands over: in plain builds the caller's value, through
 * the jump. Sanitizer builds also need the fiber switched from (so the
 * destination can record the stack ASan reports for it): the jump carries
 * that, and the value goes in the destination's handoff field. Not a
 * record on the switching stack: with detect_stack_use_after_return, ASan
 * puts such a local on a fake stack the destination cannot read (measured:
 * a SEGV at the first switch). */

/* The fiber running on this thread, read only by the SIGSEGV handler of
 * the same thread. Each switch stores its destination here before it
 * jumps, on the thread doing the jump, so the value is always that of the
 * thread it is read on; nothing reads it after a jump (the fiber may have
 * moved to another thread by then). Initial-exec: the default model for
 * position-independent code calls __tls_get_addr, which tripled the cost
 * of a switch; a pointer of static TLS fits glibc's reserve even when the
 * library is loaded with dlopen. */
static _Thread_local up__fiber *running UP__TLS_IE;

#if ANNOTATED
/* Before a jump: ASan and TSan learn where execution goes. A fiber that
 * exits passes dying, so ASan frees its fake stack. Always inlined: TSan
 * instruments a function's entry and exit on the fiber current at each,
 * so a function of its own would enter on one fiber's shadow stack and
 * leave on the other's (seen with clang 14: a corrupt shadow stack). */
__attribute__((always_inline)) static inline void before_jump(up__fiber *from, up__fiber *to,
                                                              int dying)
{
    running = to;
#if defined(UP__ASAN)
    const void *lo = to->stack_lo ? (const void *)to->stack_lo : to->asan_lo;
    size_t size = to->stack_lo ? to->stack_size : to->asan_size;
    __sanitizer_start_switch_fiber(dying ? NULL : &from->asan_fake, lo, size);
#else
    (void)from;
    (void)dying;
#endif
#if defined(UP__FIBER_TSAN)
    /* A fiber's TSan context is made at its first start, not at init: a
     * context destroyed before it recorded any event crashes some TSan
     * runtimes (LLVM's uninitialised Trace.local_head, fixed upstream in
     * December 2025), and a task fiber may be set up and dropped unrun. */
    if (!to->tsan)
        to->tsan = __tsan_create_fiber(0);
    __tsan_switch_to_fiber(to->tsan, 0);
#endif
}

/* After a jump, on the resumed fiber self: ASan finishes the switch and
 * says which stack was left; a thread's own stack is recorded so that
 * switching back to it can name it. */
__attribute__((always_inline)) static inline void after_jump(up__fiber *self, up__fiber *prev)
{
#if defined(UP__ASAN)
    const void *lo = NULL;
    size_t size = 0;
    __sanitizer_finish_switch_fiber(self ? self->asan_fake : NULL, &lo, &size);
    if (prev && !prev->stack_lo) {
        prev->asan_lo = lo;
        prev->asan_size = size;
    }
#else
    (void)self;
    (void)prev;
#endif
}
#endif

/* The first code of every fiber (the backend's start function). */
static void fiber_start(void *arg, void *data)
{
    up__fiber *self = data;
#if ANNOTATED
    after_jump(NULL, arg);
    arg = self->handoff;
#endif
    self->fn(self, arg);
    static const char msg[] = "ultrapool: a fiber's function returned (it must end with "
                              "up__fiber_exit)\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    abort();
}

void up__fiber_init_thread(up__fiber *f)
{
    *f = (up__fiber){0};
#if defined(UP__FIBER_TSAN)
    f->tsan = __tsan_get_current_fiber();
#endif
}

int up__fiber_init(up__fiber *f, void *stack_lo, size_t stack_size, size_t guard_size,
                   up__fiber_fn fn)
{
    if (!f || !stack_lo || !fn || stack_size < UP__FIBER_MIN_STACK)
        return UP_EINVAL;
    *f = (up__fiber){
        .stack_lo = stack_lo, .stack_size = stack_size, .guard_size = guard_size, .fn = fn};
#if defined(UP__ASAN)
    /* A recycled stack keeps the poison of the frames its last fiber left
     * on it when it exited mid-call. */
    __asan_unpoison_memory_region(stack_lo, stack_size);
#endif
    f->ctx = MAKE(stack_lo, stack_size, fiber_start, f);
    if (!f->ctx)
        return UP_ENOMEM;
    return 0;
}

/* Without sanitizers the jump is the switch's tail call, so its return
 * (an indirect jump to the other context's call site) goes straight to
 * the caller of up__fiber_switch: had this function a return of its own
 * after the jump, the return-stack predictor would miss it on every
 * switch (measured: 24 ns instead of 8). */
void *up__fiber_switch(up__fiber *from, up__fiber *to, void *arg)
{
    /* Only from the fiber running now, to a suspended one (fiber.h). */
    up__assert_internal(from && to && from != to && to->ctx);
#if ANNOTATED
    before_jump(from, to, 0);
    to->handoff = arg;
    up__fiber *prev = JUMP(&from->ctx, to->ctx, from);
    after_jump(from, prev);
    return from->handoff;
#else
    running = to;
    return JUMP(&from->ctx, to->ctx, arg);
#endif
}

_Noreturn void up__fiber_exit(up__fiber *from, up__fiber *to, void *arg)
{
    up__assert_internal(from && to && from != to && to->ctx && from->stack_lo);
#if ANNOTATED
    before_jump(from, to, 1);
    to->handoff = arg;
    JUMP(&from->ctx, to->ctx, from);
#else
    running = to;
    JUMP(&from->ctx, to->ctx, arg);
#endif
    abort(); /* an exited fiber was resumed: a broken invariant */
}

void up__fiber_destroy(up__fiber *f)
{
#if defined(UP__FIBER_TSAN)
    if (f && f->stack_lo && f->tsan) {
        __tsan_destroy_fiber(f->tsan);
        f->tsan = NULL;
    }
#else
    (void)f;
#endif
}

int up__fiber_fault_in_guard(const void *addr, void **guard_lo, size_t *stack_size)
{
    const up__fiber *f = running;
    if (!f || !f->stack_lo || !f->guard_size)
        return 0;
    uintptr_t a = (uintptr_t)addr, lo = (uintptr_t)f->stack_lo;
    if (a >= lo || a < lo - f->guard_size)
        return 0;
    *guard_lo = f->stack_lo - f->guard_size;
    *stack_size = f->stack_size;
    return 1;
}

const char *up__fiber_backend(void) { return BACKEND; }
