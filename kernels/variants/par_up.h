/* What the two files of the ultrapool variant share. */
#ifndef UP_PAR_UP_H
#define UP_PAR_UP_H

#include <stdatomic.h>
#include <stdlib.h>

#include <ultrapool/parallel.h>

#include "par_variant.h"

extern up_pool *par_up_pool;
extern unsigned par_up_threads;
/* Runs a region on par_up_threads threads; aborts if the runtime refuses
 * (a benchmark cannot go on without its region). */
void par_up_region(up_fn fn, void *ctx);
/* Called by every member at the start of a region: records its size. */
void par_up_note_team(void);

#endif
