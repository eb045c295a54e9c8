/* No PAPI: every counter is missing. */
#include "counters.h"

#include <string.h>

const char *const counters_hw_names[COUNTERS_HW] = {"PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_L1_DCM",
                                                    "PAPI_L2_DCM",  "PAPI_L3_TCM",  "PAPI_BR_MSP"};
const char *const counters_sde_names[COUNTERS_SDE] = {
    "tasks_submitted", "tasks_executed",  "tasks_helped", "tasks_inlined",
    "steals",          "workers_spawned", "parks",        "wakes",
    "overloads",       "workers_peak",    "tasks_resumed"};

void counters_init(void) {}
const char *counters_papi_version(void) { return "none"; }
void counters_hw_start(void) {}
void counters_hw_stop(counter_values *out) { memset(out, 0, sizeof *out); }
const char *counters_hw_note(void) { return "built without PAPI"; }
void counters_sde_start(void) {}
void counters_sde_stop(counter_values *out) { memset(out, 0, sizeof *out); }
