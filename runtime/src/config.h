/* Parsers of configuration values, exposed for the fuzz target. */
#ifndef UP_CONFIG_H
#define UP_CONFIG_H

#include <stdint.h>

#include <ultrapool/pool.h>

/* Both return 0 on success and -1 on a malformed value. */
int up__parse_duration(const char *s, uint64_t *out);
int up__parse_bind(const char *s, up_bind *out);
int up__parse_shard_choice(const char *s, up_shard_choice *out);

#endif
