/* Errors: the codes' texts and names (UP_ERRNO_MAP in pool.h, the one
 * table) and the thread's last detailed message. */
#include <stdarg.h>
#include <stdio.h>

#include "config.h"
#include "pool_internal.h"

static _Thread_local char errbuf[UP__ERROR_MAX];

void up__set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, sizeof errbuf, fmt, ap);
    va_end(ap);
}

/* A configuration problem: kept for up_last_error() and printed on stderr
 * at once, so that a program which ignores the return code still shows
 * why its pool did not start. */
void up__config_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, sizeof errbuf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "ultrapool: %s\n", errbuf);
}

const char *up_last_error(void) { return errbuf; }

const char *up_strerror(int err)
{
    switch (err) {
#define TEXT_CASE(name, value, text)                                                               \
    case UP_##name:                                                                                \
        return text;
        UP_ERRNO_MAP(TEXT_CASE)
#undef TEXT_CASE
    default:
        return "unknown error";
    }
}

const char *up_err_name(int err)
{
    switch (err) {
#define NAME_CASE(name, value, text)                                                               \
    case UP_##name:                                                                                \
        return "UP_" #name;
        UP_ERRNO_MAP(NAME_CASE)
#undef NAME_CASE
    default:
        return "UP_UNKNOWN";
    }
}
