/* Sleeping tasks: a task that blocks its thread for a fixed time without
 * using the CPU, the shape of I/O-bound work. Kernels are plain C and know
 * nothing of any runtime. */
#ifndef UP_KERNEL_SLEEP_H
#define UP_KERNEL_SLEEP_H

#include <stdint.h>

/* Sleeps at least ns nanoseconds on CLOCK_MONOTONIC, to an absolute
 * deadline (clock_nanosleep; on macOS, nanosleep toward it), resuming
 * after signals. The kernel adds its timer slack (about 50 us on
 * Linux), so a 1 us sleep lasts much longer than 1 us. */
void up_k_sleep_ns(uint64_t ns);
/* Returns 0 when a 1 us and a 2 ms sleep each lasted at least as asked. */
int up_k_sleep_verify(void);

#endif
