/* The portable context switch on POSIX ucontext (getcontext, makecontext,
 * swapcontext), for processors without an assembly switch in
 * fiber_switch.c, and selectable everywhere with UP_FIBER=ucontext. It is
 * correct but slow: swapcontext saves and restores the signal mask with a
 * system call on every switch (see fiber.h for the measurements).
 *
 * A context is a frame holding a ucontext_t and the value handed over by
 * the jump that resumes it. A suspended fiber's frame is a local variable
 * of its pending jump, on its own stack, where it stays valid exactly as
 * long as the fiber is suspended; a new fiber's frame sits at the top of
 * its stack. So the contexts need no storage of their own. */
#if defined(__APPLE__) && !defined(_XOPEN_SOURCE)
/* macOS declares the ucontext calls only for X/Open programs. */
#define _XOPEN_SOURCE 700
#endif
#include "fiber.h"

#include <stdint.h>
#include <stdlib.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(__clang__)
/* macOS marks the ucontext calls deprecated; they still work. */
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
#endif

struct uc_frame {
    ucontext_t uc;
    void *arg; /* written by the jump that resumes this context */
};

/* A new fiber's frame, with what its first function needs. */
struct uc_start {
    struct uc_frame frame;
    void (*start)(void *arg, void *data);
    void *data;
};

void *up__fiber_uc_jump(void **save, void *to, void *arg)
{
    struct uc_frame self;
    struct uc_frame *dst = to;
    *save = &self;
    dst->arg = arg;
    if (swapcontext(&self.uc, &dst->uc) != 0)
        abort(); /* only fails for a corrupt context: a broken invariant */
    return self.arg;
}

/* makecontext passes int arguments only, so the frame's address travels
 * as two 32-bit halves. */
static void uc_entry(unsigned hi, unsigned lo)
{
    struct uc_start *s = (struct uc_start *)(((uintptr_t)hi << 16 << 16) | (uintptr_t)lo);
    s->start(s->frame.arg, s->data);
    abort(); /* start must not return */
}

/* getcontext only fills in a template here (makecontext then replaces
 * where it resumes), so it never returns twice; calling it from its own
 * function keeps the compiler from guarding the caller's variables as if
 * it could. */
__attribute__((noinline)) static int uc_template(ucontext_t *uc) { return getcontext(uc); }

void *up__fiber_uc_make(void *stack_lo, size_t stack_size, void (*start)(void *arg, void *data),
                        void *data)
{
    uintptr_t top = ((uintptr_t)stack_lo + stack_size - sizeof(struct uc_start)) & ~(uintptr_t)63;
    struct uc_start *s = (struct uc_start *)top;
    if (uc_template(&s->frame.uc) != 0)
        return NULL;
    s->frame.uc.uc_stack.ss_sp = stack_lo;
    s->frame.uc.uc_stack.ss_size = (size_t)(top - (uintptr_t)stack_lo);
    s->frame.uc.uc_link = NULL;
    s->frame.arg = NULL;
    s->start = start;
    s->data = data;
    uintptr_t addr = (uintptr_t)s;
    makecontext(&s->frame.uc, (void (*)(void))uc_entry, 2, (unsigned)(addr >> 16 >> 16),
                (unsigned)(addr & 0xffffffffu));
    return s;
}
