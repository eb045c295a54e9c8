/* Parsers of configuration values and the configuration's internal entry
 * points, exposed for pool.c, the tests and the fuzz target. */
#ifndef UP_CONFIG_H
#define UP_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include <ultrapool/pool.h>

/* These return 0 on success, -1 on a malformed value and (the numeric
 * ones) -2 on a number too large for 64 bits. */
int up__parse_duration(const char *s, uint64_t *out);
int up__parse_bind(const char *s, up_bind *out);
int up__parse_shard_choice(const char *s, up_shard_choice *out);
/* The one boolean parser: 1 0 true false yes no on off y n, any case. */
int up__parse_bool(const char *s, int *out);

/* 1 when the variable is set to a true boolean, else 0 (unset or
 * malformed; up_config_init reports a malformed one). */
int up__env_flag(const char *name);

/* Sets up_last_error() and prints the message on stderr: for the errors
 * of a configuration, which a program may not check. */
void up__config_error(const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Writes a warning to f for every UP_* entry of env (a NULL-terminated
 * NAME=VALUE array, like environ) that is neither an ultrapool variable
 * nor reserved, naming the nearest variable. Returns how many it warned
 * about. up_config_init runs it once per process on the environment. */
unsigned up__env_check_names(char *const *env, FILE *f);

#endif
