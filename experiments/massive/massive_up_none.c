/* massive without ultrapool's waiting tasks: the runtime this program is
 * built against has no up_event (CMake picks this file instead of
 * massive_up.c), so only the pthread mode runs and the others say why. */
#include <stdio.h>

#include "massive.h"

static int setup(massive_run *run, char *why, size_t why_size)
{
    (void)run;
    snprintf(why, why_size, "this build of ultrapool has no waiting tasks (no up_event)");
    return -1;
}

static uint64_t launch(massive_run *run, char *why, size_t why_size)
{
    (void)run;
    (void)why;
    (void)why_size;
    return 0;
}

static void nothing(massive_run *run) { (void)run; }

const massive_mode massive_stackless = {"stackless", 0, 64, setup, launch, nothing, nothing};
const massive_mode massive_stackful = {"stackful", 0,       8 * 1024 + 64, setup,
                                       launch,     nothing, nothing};

int massive_stackful_parks(char *what, size_t what_size)
{
    snprintf(what, what_size, "this build of ultrapool has no stackful calls");
    return 0;
}
