/* Parsers of configuration values and the configuration's internal entry
 * points, exposed for pool.c, the tests and the fuzz target. */
#ifndef UP_CONFIG_H
#define UP_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include <ultrapool/pool.h>

/* Units of the configuration's values. */
#define UP__KIB UINT64_C(1024)
#define UP__US  UINT64_C(1000)
#define UP__MS  UINT64_C(1000000)
#define UP__SEC UINT64_C(1000000000)

/* These return 0 on success, -1 on a malformed value and (the numeric
 * ones) -2 on a number too large for 64 bits. */
int up__parse_duration(const char *s, uint64_t *out);
int up__parse_size(const char *s, uint64_t *out);   /* 65536, 256k, 8M, 1G */
int up__parse_number(const char *s, uint64_t *out); /* decimal digits only */
int up__parse_bind(const char *s, up_bind *out);
int up__parse_shard_choice(const char *s, up_shard_choice *out);
/* The one boolean parser: 1 0 true false yes no on off y n, any case. */
int up__parse_bool(const char *s, int *out);

/* A duration or size as its variable would spell it (1s, 250us; 8M): the
 * parsers above read it back. */
void up__format_duration(uint64_t ns, char *buf, size_t size);
void up__format_size(uint64_t bytes, char *buf, size_t size);

/* 1 when the variable is set to a true boolean, else 0 (unset or
 * malformed; up_config_init reports a malformed one). */
int up__env_flag(const char *name);

/* The program's configuration in, read into out in this library's layout
 * (abi_struct.h): UP_OK, or UP_EINVAL with the reason, "who: ...", in
 * up_last_error() and on stderr (a cfg not made by up_config_init, or one
 * setting fields this library lacks). */
int up__config_read(const char *who, const up_config *in, up_config *out);
/* up_config_validate's checks of a configuration already read. */
int up__config_check(const up_config *cfg);

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

/* OpenMP's variables standing in for unset UP_* ones (config_omp.c). The
 * parsers return 0, or -1 with a message naming the variable in err. */
int up__omp_bind(const char *proc_bind, const char *places, up_bind *out, char *err, size_t esize);
int up__omp_stacksize(const char *s, uint64_t *bytes, char *err, size_t esize);
int up__omp_wait_policy(const char *s, unsigned *spin, char *err, size_t esize);
int up__omp_display_env(const char *s, int *on, char *err, size_t esize);
/* UP_SPIN for OMP_WAIT_POLICY=active: the most UP_SPIN allows, since
 * OpenMP's active threads spin without end; an idle worker then polls
 * for about half a second (docs/env.md) before it parks. */
#define UP_OMP_ACTIVE_SPIN 10000000u
/* What the OpenMP variables say about the pool variable up_name: 0 when
 * none of them is set, 1 with the value in the field's unit in *out and
 * the assignments it came from ("OMP_STACKSIZE=4M") in from, -1 when one
 * is malformed (the message in err). Reads the environment. */
int up__omp_value(const char *up_name, uint64_t *out, char *from, size_t fsize, char *err,
                  size_t esize);
/* A malformed or out-of-range OpenMP variable standing in for up_name:
 * msg (naming it) on stderr, once per process for each variable and
 * message, and up_name keeps its default (OpenMP's convention). */
void up__omp_warn(const char *up_name, const char *msg);
/* 1 when UP_PRINT_CONFIG, or OMP_DISPLAY_ENV in its absence, asks for the
 * configuration to be printed (malformed: 0; up_config_init reports it). */
int up__print_config_wanted(void);

/* The parallel layer's part of UP_PRINT_CONFIG (up_layer.h): printed by
 * up__print_layer when the layer is linked, nothing otherwise. */
void up__set_print_hook(void (*fn)(FILE *f));
void up__print_layer(FILE *f);

#endif
