/* Lock contention: every task locks one shared mutex, increments a shared
 * counter and unlocks. Kernels are plain C and know nothing of any runtime. */
#ifndef UP_KERNEL_MUTEX_H
#define UP_KERNEL_MUTEX_H

#include <stdint.h>

/* One task. */
void up_k_mutex_inc(void);
/* The counter (read under the mutex) and its reset. */
uint64_t up_k_mutex_count(void);
void up_k_mutex_reset(void);
/* Returns 0 when 4 threads x 20,000 increments leave the counter at 80,000. */
int up_k_mutex_verify(void);

#endif
