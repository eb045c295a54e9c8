/* The environment registry: every variable that any ultrapool library
 * reads, with the layer that reads it and what it means, and the names
 * reserved for the tools and tests (env_registry.c holds the one table).
 *
 * Three things use it. Every library reads its variables through up__env,
 * which checks (in UP_DEBUG builds) that the name is registered, so that
 * a variable cannot be read without being listed. up_config_init's
 * warning about unknown UP_* names (config.c) accepts exactly the names
 * and prefixes listed here, and suggests the nearest of those marked
 * UP__ENV_SUGGEST. And test_env_docs checks the table against
 * docs/env.md, in both directions. */
#ifndef UP_ENV_REGISTRY_H
#define UP_ENV_REGISTRY_H

#include <stddef.h>

/* Which code reads a variable (a bit mask; 0: no library reads it, the
 * name is reserved for the tools and tests). */
enum {
    UP__ENV_POOL = 1,     /* libultrapool: the pool (runtime/src) */
    UP__ENV_PARALLEL = 2, /* the parallel layer (pragmas/src), in libultrapool_par and
                           * in libgomp.so.1 alike */
    UP__ENV_OPENMP = 4,   /* ultrapool's OpenMP runtime, libgomp.so.1 (pragmas/gomp) */
    UP__ENV_MPI = 8,      /* the MPI mode, libultrapool_mpi (mpi/) */
};

/* Flags of an entry. */
enum {
    UP__ENV_PREFIX = 1,  /* name is a prefix: every name that starts with it */
    UP__ENV_SUGGEST = 2, /* offered as the nearest name to an unknown UP_* one */
};

typedef struct up__env_var {
    const char *name;     /* the variable, or a prefix (UP__ENV_PREFIX) */
    unsigned char layers; /* UP__ENV_POOL ...; 0: reserved */
    unsigned char flags;  /* UP__ENV_PREFIX, UP__ENV_SUGGEST */
    const char *meaning;  /* one line */
} up__env_var;

/* The table, in a fixed order: the pool's variables in the order of
 * up_config's fields, then the parallel layer's, the other libraries',
 * OpenMP's, other software's and the reserved names. */
extern const up__env_var up__env_vars[];
extern const size_t up__env_nvars;

/* The entry that covers name: its own, or the prefix it starts with;
 * NULL when the name is not registered. */
const up__env_var *up__env_lookup(const char *name);

/* getenv(name) for a registered variable that a library reads: the one
 * path by which the libraries read the environment. An unregistered name,
 * or a reserved one, is a broken internal invariant (an assertion in
 * UP_DEBUG builds). The other libraries reach it through the layer
 * interface (runtime/layer/up_layer.h). */
const char *up__env(const char *name);

/* The layers of a mask as words ("pool,openmp"; "-" for none), for the
 * table's listing. */
void up__env_layer_names(unsigned layers, char *buf, size_t size);

#endif
