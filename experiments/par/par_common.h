/* Names shared by the benchmark child, the driver and the tests. */
#ifndef UP_PAR_COMMON_H
#define UP_PAR_COMMON_H

#include "par_variant.h"

const char *par_epcc_name(par_epcc_test t);
/* The test with that name, or -1. */
int par_epcc_parse(const char *name);

#endif
