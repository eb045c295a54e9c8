/* What every variant shares: the delay sink and the names of the EPCC
 * tests. */
#include "par_common.h"

#include <string.h>

_Thread_local uint64_t par_sink;

static const char *const epcc_names[] = {"reference", "parallel_task", "master_task",
                                         "taskwait",  "depend",        "taskloop"};

const char *par_epcc_name(par_epcc_test t)
{
    return t >= 0 && t < PAR_EPCC_NTESTS ? epcc_names[t] : "?";
}

int par_epcc_parse(const char *name)
{
    for (int t = 0; t < PAR_EPCC_NTESTS; t++)
        if (strcmp(name, epcc_names[t]) == 0)
            return t;
    return -1;
}
