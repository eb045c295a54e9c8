/* No libsde: the pool's counters stay available through up_pool_stats()
 * only. */
#include "sde.h"

void up__sde_register(struct up_pool *p) { (void)p; }

void up__sde_unregister(struct up_pool *p) { (void)p; }
