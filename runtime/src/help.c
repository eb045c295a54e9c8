/* The helping depth's thread-local state and its limit (help.h). */
#include "help.h"
#include "tls.h"

#include <stddef.h>

#include "os/os.h"

static _Thread_local unsigned tls_depth UP__TLS_IE; /* levels of helping now */
static _Thread_local unsigned tls_limit UP__TLS_IE; /* 0 until this thread first helps */

static unsigned compute_limit(size_t stack)
{
    if (stack == 0)
        stack = UP__HELP_STACK_UNKNOWN;
    size_t levels = stack / 2 / UP__HELP_LEVEL_BYTES;
    if (levels < 1)
        levels = 1;
    if (levels > UP__HELP_MAX_DEPTH)
        levels = UP__HELP_MAX_DEPTH;
    return (unsigned)levels;
}

unsigned up__help_limit(void)
{
    if (tls_limit == 0)
        tls_limit = compute_limit(up__os_stack_size());
    return tls_limit;
}

void up__help_set_stack(size_t bytes) { tls_limit = compute_limit(bytes); }

int up__help_enter(void)
{
    if (tls_depth >= up__help_limit())
        return 0;
    tls_depth++;
    return 1;
}

void up__help_leave(void) { tls_depth--; }

unsigned up__help_depth(void) { return tls_depth; }
