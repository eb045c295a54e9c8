/* PAPI behind counters.h. Hardware presets go in one event set with
 * PAPI_INHERIT, so threads the peer creates later are counted too; each
 * preset is added on its own, and one the machine cannot count stays
 * missing while the others work. The SDE events sit in a second event set
 * of their own component. */
#include "counters.h"

#include <papi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

const char *const counters_hw_names[COUNTERS_HW] = {"PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_L1_DCM",
                                                    "PAPI_L2_DCM",  "PAPI_L3_TCM",  "PAPI_BR_MSP"};
const char *const counters_sde_names[COUNTERS_SDE] = {
    "tasks_submitted", "tasks_executed",  "tasks_helped", "tasks_inlined",
    "steals",          "workers_spawned", "parks",        "wakes",
    "overloads",       "workers_peak",    "tasks_resumed"};

static int ready;

static unsigned long thread_id(void) { return (unsigned long)pthread_self(); }

static char note[160];
static char version[32] = "none";

typedef struct set {
    int es;
    int nin;                /* events in the set */
    int slot[COUNTERS_SDE]; /* index in the set of counter i, -1 when missing */
    int running;
} set;

static set hw = {PAPI_NULL, 0, {0}, 0}, sde = {PAPI_NULL, 0, {0}, 0};

void counters_init(void)
{
    int rc = PAPI_library_init(PAPI_VER_CURRENT);
    if (rc != PAPI_VER_CURRENT) {
        snprintf(note, sizeof note, "PAPI_library_init failed (%d)", rc);
        return;
    }
    PAPI_thread_init(thread_id);
    snprintf(version, sizeof version, "%d.%d.%d.%d", PAPI_VERSION_MAJOR(PAPI_VERSION),
             PAPI_VERSION_MINOR(PAPI_VERSION), PAPI_VERSION_REVISION(PAPI_VERSION),
             PAPI_VERSION_INCREMENT(PAPI_VERSION));
    ready = 1;
}

const char *counters_papi_version(void) { return version; }

const char *counters_hw_note(void) { return note; }

static void add_all(set *s, const char *const *names, int n, const char *prefix)
{
    for (int i = 0; i < n; i++) {
        char full[128];
        snprintf(full, sizeof full, "%s%s", prefix, names[i]);
        s->slot[i] = PAPI_add_named_event(s->es, full) == PAPI_OK ? s->nin++ : -1;
    }
}

void counters_hw_start(void)
{
    if (!ready)
        return;
    const PAPI_component_info_t *cpu = PAPI_get_component_info(0);
    if (!cpu || cpu->disabled || cpu->num_cntrs <= 0) {
        snprintf(note, sizeof note, "no hardware counters (PAPI: %d counters%s%.100s)",
                 cpu ? cpu->num_cntrs : 0, cpu && cpu->disabled ? "; " : "",
                 cpu && cpu->disabled ? cpu->disabled_reason : "");
        return;
    }
    if (PAPI_create_eventset(&hw.es) != PAPI_OK ||
        PAPI_assign_eventset_component(hw.es, 0) != PAPI_OK)
        return;
    PAPI_option_t opt;
    memset(&opt, 0, sizeof opt);
    opt.inherit.eventset = hw.es;
    opt.inherit.inherit = PAPI_INHERIT_ALL;
    if (PAPI_set_opt(PAPI_INHERIT, &opt) != PAPI_OK)
        snprintf(note, sizeof note, "PAPI_INHERIT refused: only the main thread is counted");
    add_all(&hw, counters_hw_names, COUNTERS_HW, "");
    if (hw.nin == 0) {
        snprintf(note, sizeof note, "no PAPI preset could be added");
        return;
    }
    hw.running = PAPI_start(hw.es) == PAPI_OK;
}

static void stop(set *s, int n, counter_values *out)
{
    memset(out, 0, sizeof *out);
    long long v[COUNTERS_SDE];
    if (!s->running || PAPI_stop(s->es, v) != PAPI_OK)
        return;
    s->running = 0;
    for (int i = 0; i < n; i++)
        if (s->slot[i] >= 0) {
            out->v[i] = v[s->slot[i]];
            out->have[i] = 1;
        }
}

void counters_hw_stop(counter_values *out) { stop(&hw, COUNTERS_HW, out); }

void counters_sde_start(void)
{
    if (!ready)
        return;
    if (sde.es == PAPI_NULL && PAPI_create_eventset(&sde.es) != PAPI_OK)
        return;
    if (sde.nin == 0)
        add_all(&sde, counters_sde_names, COUNTERS_SDE, "sde:::ULTRAPOOL::");
    if (sde.nin > 0)
        sde.running = PAPI_start(sde.es) == PAPI_OK;
}

void counters_sde_stop(counter_values *out) { stop(&sde, COUNTERS_SDE, out); }
