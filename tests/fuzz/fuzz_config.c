/* libFuzzer target for configuration parsing: the input is a list of
 * NAME=VALUE lines. Each line whose NAME is one of ultrapool's variables
 * sets it; then up_config_init parses the environment and
 * up_config_validate checks the result. Whatever the bytes, this must not
 * crash, leak or hang, and a refused variable must be named in the error.
 * The duration and binding parsers are fed the raw input too. Run by
 * scripts/test for a short time (clang -fsanitize=fuzzer,address,undefined). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ultrapool/pool.h>

#include "config.h"

static const char *names[] = {"UP_SHARDS",
                              "UP_SHARD_MIN_WORKERS",
                              "UP_SHARD_MAX_WORKERS",
                              "UP_MAX_WORKERS",
                              "UP_QUEUE_CAPACITY",
                              "UP_DEQUE_CAPACITY",
                              "UP_IDLE_TIMEOUT",
                              "UP_SPAWN_DELAY",
                              "UP_SPIN",
                              "UP_SUBMIT_HELP",
                              "UP_BIND",
                              "UP_SHARD_MAX_CORES",
                              "UP_STACK_SIZE",
                              "UP_PRINT_CONFIG"};
#define NNAMES (sizeof names / sizeof names[0])

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    uint64_t ns;
    up_bind b;
    (void)up__parse_duration(text, &ns);
    (void)up__parse_bind(text, &b);

    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *eq = strchr(line, '=');
        if (!eq)
            continue;
        *eq = '\0';
        for (size_t i = 0; i < NNAMES; i++)
            if (!strcmp(line, names[i]))
                setenv(names[i], eq + 1, 1);
    }
    up_config cfg;
    int rc = up_config_init(&cfg);
    if (rc != UP_OK) {
        /* The message names the variable it refuses. */
        if (strncmp(up_last_error(), "UP_", 3) != 0)
            abort();
    } else {
        (void)up_config_validate(&cfg);
    }
    for (size_t i = 0; i < NNAMES; i++)
        unsetenv(names[i]);
    free(text);
    return 0;
}
