/* The pool's counters as PAPI Software Defined Events: with libsde linked,
 * every pool's counters are readable as sde:::ULTRAPOOL::<name> through
 * PAPI (papi_native_avail lists them); without it both calls do nothing
 * (sde_null.c). CMake picks the implementation (UP_HAVE_SDE).
 *
 * The events are process-wide sums over the live pools plus the final
 * counts of destroyed ones, so a delta read across a pool's whole life
 * (create to destroy) stays exact and never goes backwards. */
#ifndef UP_SDE_H
#define UP_SDE_H

struct up_pool;

/* Called once a pool is running; from then on its counters are included. */
void up__sde_register(struct up_pool *p);
/* Called when a stopped pool is about to be freed: its final counts are
 * folded into the totals. Harmless for a pool never registered. */
void up__sde_unregister(struct up_pool *p);

#endif
