/* libFuzzer target for configuration parsing: the input is a list of
 * NAME=VALUE lines. Each line whose NAME is one of ultrapool's variables
 * sets it; then up_config_init parses the environment and
 * up_config_validate checks the result. Whatever the bytes, this must not
 * crash, leak or hang, and a refused variable must be named in the error.
 * A configuration that passes is printed as UP_PRINT_CONFIG prints it, the
 * printed lines are set as the environment again, and parsing them must
 * give the same configuration. Every UP_* line also goes through the
 * unknown-name check, and the raw input through the value parsers (the
 * OpenMP ones too, whose variables are set like the UP_ ones). Run by
 * scripts/test for a short time (clang -fsanitize=fuzzer,address,undefined). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ultrapool/pool.h>

#include "config.h"
#include "pool_internal.h"

static const char *names[] = {
    "UP_SHARDS", "UP_SHARD_MIN_WORKERS", "UP_SHARD_MAX_WORKERS", "UP_MAX_WORKERS",
    "UP_QUEUE_CAPACITY", "UP_DEQUE_CAPACITY", "UP_IDLE_TIMEOUT", "UP_SPAWN_DELAY", "UP_SPIN",
    "UP_SUBMIT_HELP", "UP_BIND", "UP_SHARD_MAX_CORES", "UP_SHARD_CHOICE", "UP_STACK_SIZE",
    "UP_OMP_SHARE", "UP_PRINT_CONFIG",
    /* OpenMP's, read where the UP_ one is unset */
    "OMP_STACKSIZE", "OMP_WAIT_POLICY", "OMP_PROC_BIND", "OMP_PLACES", "OMP_DISPLAY_ENV"};
#define NNAMES (sizeof names / sizeof names[0])

static void clear_names(void)
{
    for (size_t i = 0; i < NNAMES; i++)
        unsetenv(names[i]);
}

static int same(const up_config *a, const up_config *b)
{
    return a->shards == b->shards && a->shard_min_workers == b->shard_min_workers &&
           a->shard_max_workers == b->shard_max_workers && a->max_workers == b->max_workers &&
           a->queue_capacity == b->queue_capacity && a->deque_capacity == b->deque_capacity &&
           a->idle_timeout_ns == b->idle_timeout_ns && a->spawn_delay_ns == b->spawn_delay_ns &&
           a->spin == b->spin && a->submit_help == b->submit_help && a->bind == b->bind &&
           a->shard_max_cores == b->shard_max_cores && a->shard_choice == b->shard_choice &&
           a->stack_size == b->stack_size;
}

/* Print, set the printed lines as the environment, parse again. */
static void round_trip(const up_config *cfg, FILE *sink)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return;
    up__print_config(cfg, NULL, mem);
    fclose(mem);
    clear_names();
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *eq = strchr(line, '=');
        if (line[0] == '#')
            continue;
        if (!eq)
            abort(); /* a line that is neither a comment nor an assignment */
        *eq = '\0';
        setenv(line, eq + 1, 1);
    }
    free(text);
    up_config back;
    if (up_config_init(&back) != UP_OK || !same(cfg, &back)) {
        fprintf(sink, "round trip failed: %s\n", up_last_error());
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "w");
    if (!sink)
        return 0;
    char *text = malloc(size + 1);
    char **env = calloc(size / 3 + 2, sizeof *env); /* every UP_* line, at most size/3 */
    if (!text || !env) {
        free(text);
        free(env);
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';

    uint64_t ns;
    up_bind b;
    up_shard_choice sc;
    int on;
    (void)up__parse_duration(text, &ns);
    (void)up__parse_bind(text, &b);
    (void)up__parse_shard_choice(text, &sc);
    (void)up__parse_bool(text, &on);
    char err[256];
    unsigned spin;
    (void)up__omp_stacksize(text, &ns, err, sizeof err);
    (void)up__omp_bind(text, text, &b, err, sizeof err);
    (void)up__omp_bind(NULL, text, &b, err, sizeof err);
    (void)up__omp_wait_policy(text, &spin, err, sizeof err);
    (void)up__omp_display_env(text, &on, err, sizeof err);

    size_t nenv = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strncmp(line, "UP_", 3))
            env[nenv++] = line;
        char *eq = strchr(line, '=');
        if (!eq)
            continue;
        *eq = '\0';
        for (size_t i = 0; i < NNAMES; i++)
            if (!strcmp(line, names[i]))
                setenv(names[i], eq + 1, 1);
        *eq = '=';
    }
    env[nenv] = NULL;
    (void)up__env_check_names(env, sink);

    up_config cfg;
    int rc = up_config_init(&cfg);
    if (rc != UP_OK) {
        /* The message names the variable it refuses. */
        if (strncmp(up_last_error(), "UP_", 3) != 0 && strncmp(up_last_error(), "OMP_", 4) != 0)
            abort();
    } else if (up_config_validate(&cfg) == UP_OK) {
        round_trip(&cfg, sink);
    }
    clear_names();
    free(env);
    free(text);
    return 0;
}
