/* The assembly context switch (see fiber.h for the contract and for why
 * it is the one the runtime uses), for x86-64 System V and AArch64
 * AAPCS64, as top-level assembly so the project needs no assembler
 * language in its build. A context is the stack pointer of a suspended
 * fiber; below it on that fiber's stack lie the callee-saved registers
 * that the jump pushed. Caller-saved registers need no saving: the jump
 * is an ordinary function call to the compiler, which has already spilled
 * whatever it needs across it. On other processors this file is empty
 * and fiber_ucontext.c serves. */
#include "fiber.h"

#include <stdint.h>
#include <string.h>

#if defined(UP__FIBER_HAVE_ASM)

#if defined(__APPLE__)
#define SYM(name) "_" #name
#define FN_BEGIN(name)                                                                             \
    ".globl " SYM(name) "\n.private_extern " SYM(name) "\n.p2align 4\n" SYM(name) ":\n"
#define FN_END(name)   ""
#define SECTION_TEXT   ".text\n"
#define SECTION_NOEXEC ""
#else
#define SYM(name) #name
#define FN_BEGIN(name)                                                                             \
    ".globl " SYM(name) "\n.hidden " SYM(name) "\n.type " SYM(                                     \
        name) ",%function\n.p2align 4\n" SYM(name) ":\n"
#define FN_END(name)   ".size " SYM(name) ", .-" SYM(name) "\n"
#define SECTION_TEXT   ".text\n"
#define SECTION_NOEXEC ".section .note.GNU-stack,\"\",%progbits\n.text\n"
#endif

/* The first code a new fiber runs, entered by the jump's return with the
 * start function and its data in callee-saved registers and the jump's
 * arg in the first argument register. It calls start(arg, data), which
 * never returns; the trap after the call catches one that does. The CFI
 * marks the return address undefined, so debuggers and unwinders stop
 * here instead of walking into garbage. */
__attribute__((visibility("hidden"))) void up__fiber_start_trampoline(void);

#if defined(__x86_64__)

/* Frame of a suspended context, from its saved stack pointer upwards:
 * MXCSR (4 bytes) and the x87 control word (2 bytes, then 2 of padding),
 * r15, r14, r13, r12, rbx, rbp, and the return address. Both control
 * words are callee-saved in the System V ABI: a fiber that changes its
 * rounding mode must not change the worker's. The frame is 64 bytes and
 * the stack pointer saved is 16-byte aligned (the call pushed 8, the
 * jump pushes 56). The jump leaves by an indirect jump to the popped
 * return address, not by ret: a ret into another context's call site
 * misses the return-stack predictor on every switch (measured here: about
 * 3x slower), while the indirect-branch predictor learns the pattern. */
/* clang-format off */
__asm__(SECTION_TEXT
        FN_BEGIN(up__fiber_asm_jump)
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $8, %rsp\n"
        "    stmxcsr (%rsp)\n"
        "    fnstcw 4(%rsp)\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    ldmxcsr (%rsp)\n"
        "    fldcw 4(%rsp)\n"
        "    addq $8, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    popq %r8\n"
        "    movq %rdx, %rax\n"
        "    movq %rdx, %rdi\n"
        "    jmpq *%r8\n"
        FN_END(up__fiber_asm_jump)
        FN_BEGIN(up__fiber_start_trampoline)
        "    .cfi_startproc\n"
        "    .cfi_undefined %rip\n"
        "    movq %r13, %rsi\n"
        "    callq *%r12\n"
        "    ud2\n"
        "    .cfi_endproc\n"
        FN_END(up__fiber_start_trampoline)
        SECTION_NOEXEC);
/* clang-format on */

/* The first frame (up__fiber_asm_make): the 64 bytes above, then 16 at
 * the top that stay zero (the trampoline's stack pointer lands on them,
 * 16-byte aligned, so its call gives start the alignment the ABI
 * promises); slots of 8 bytes from the saved stack pointer up. */
#define FRAME_BYTES  80
#define SLOT_CONTROL 0 /* MXCSR, and the x87 control word at its byte 4 */
#define SLOT_DATA    3 /* r13 */
#define SLOT_START   4 /* r12 */
#define SLOT_RETURN  7

/* The calling thread's control words, which a new fiber starts with. */
static uint64_t control_words(void)
{
    uint32_t mxcsr;
    uint16_t fpcw;
    __asm__ __volatile__("stmxcsr %0" : "=m"(mxcsr));
    __asm__ __volatile__("fnstcw %0" : "=m"(fpcw));
    return (uint64_t)mxcsr | ((uint64_t)fpcw << 32);
}

#elif defined(__aarch64__)

/* Frame of a suspended context, from its saved stack pointer upwards:
 * d8-d15, x19-x28, x29 (frame pointer), x30 (the return address) and
 * FPCR (rounding mode, flush-to-zero), 8 bytes of padding: 176 bytes,
 * keeping the stack pointer 16-byte aligned as AAPCS64 demands. Only the
 * low 64 bits of v8-v15 are callee-saved, hence d, not q. FPCR travels
 * with its fiber as MXCSR does on x86-64; it is written only when it
 * differs, since writing it can stall the pipeline. */
/* clang-format off */
__asm__(SECTION_TEXT
        FN_BEGIN(up__fiber_asm_jump)
        "    sub sp, sp, #176\n"
        "    stp d8, d9, [sp, #0]\n"
        "    stp d10, d11, [sp, #16]\n"
        "    stp d12, d13, [sp, #32]\n"
        "    stp d14, d15, [sp, #48]\n"
        "    stp x19, x20, [sp, #64]\n"
        "    stp x21, x22, [sp, #80]\n"
        "    stp x23, x24, [sp, #96]\n"
        "    stp x25, x26, [sp, #112]\n"
        "    stp x27, x28, [sp, #128]\n"
        "    stp x29, x30, [sp, #144]\n"
        "    mrs x9, fpcr\n"
        "    str x9, [sp, #160]\n"
        "    mov x10, sp\n"
        "    str x10, [x0]\n"
        "    mov sp, x1\n"
        "    ldr x10, [sp, #160]\n"
        "    cmp x9, x10\n"
        "    b.eq 1f\n"
        "    msr fpcr, x10\n"
        "1:\n"
        "    ldp d8, d9, [sp, #0]\n"
        "    ldp d10, d11, [sp, #16]\n"
        "    ldp d12, d13, [sp, #32]\n"
        "    ldp d14, d15, [sp, #48]\n"
        "    ldp x19, x20, [sp, #64]\n"
        "    ldp x21, x22, [sp, #80]\n"
        "    ldp x23, x24, [sp, #96]\n"
        "    ldp x25, x26, [sp, #112]\n"
        "    ldp x27, x28, [sp, #128]\n"
        "    ldp x29, x30, [sp, #144]\n"
        "    add sp, sp, #176\n"
        "    mov x0, x2\n"
        "    ret\n"
        FN_END(up__fiber_asm_jump)
        FN_BEGIN(up__fiber_start_trampoline)
        "    .cfi_startproc\n"
        "    .cfi_undefined x30\n"
        "    mov x1, x20\n"
        "    blr x19\n"
        "    brk #0xf1\n"
        "    .cfi_endproc\n"
        FN_END(up__fiber_start_trampoline)
        SECTION_NOEXEC);
/* clang-format on */

/* The first frame (up__fiber_asm_make): the 176 bytes above; the
 * trampoline starts with the stack pointer at the top, aligned. Slots of
 * 8 bytes from the saved stack pointer up. */
#define FRAME_BYTES  176
#define SLOT_START   8  /* x19 */
#define SLOT_DATA    9  /* x20 */
#define SLOT_RETURN  19 /* x30 */
#define SLOT_CONTROL 20 /* FPCR */

/* The calling thread's control word, which a new fiber starts with. */
static uint64_t control_words(void)
{
    uint64_t fpcr;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
    return fpcr;
}

#endif

/* The one frame builder: a context that the first jump into resumes in
 * the trampoline, with start and data in its callee-saved registers and
 * the calling thread's control words; every other saved register zero.
 * Only the layout above differs between the processors. */
void *up__fiber_asm_make(void *stack_lo, size_t stack_size, void (*start)(void *arg, void *data),
                         void *data)
{
    uintptr_t top = ((uintptr_t)stack_lo + stack_size) & ~(uintptr_t)15;
    uint64_t *frame = (uint64_t *)(top - FRAME_BYTES);
    uint64_t control = control_words();
    memset(frame, 0, FRAME_BYTES);
    frame[SLOT_CONTROL] = control;
    frame[SLOT_START] = (uint64_t)(uintptr_t)start;
    frame[SLOT_DATA] = (uint64_t)(uintptr_t)data;
    frame[SLOT_RETURN] = (uint64_t)(uintptr_t)up__fiber_start_trampoline;
    return frame;
}

#endif
