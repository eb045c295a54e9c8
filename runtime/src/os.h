/* The runtime's one OS layer: what differs between Linux, macOS and other
 * POSIX systems, behind plain functions, so the core files carry no
 * #ifdef. Each function says what it returns where the OS offers nothing.
 * The futex itself is Linux-only and used only by park_futex.c (the
 * parker elsewhere is park_cond.c). */
#ifndef UP_OS_H
#define UP_OS_H

#include <stddef.h>

/* Usable size in bytes of the calling thread's stack, 0 when the OS does
 * not say. */
size_t up__os_stack_size(void);

#endif
