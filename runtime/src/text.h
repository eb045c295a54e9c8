/* Text of variable values: OpenMP's variables allow spaces around a value
 * and inside lists, so the pool's readers (config_omp.c) and the parallel
 * layer's (pragmas/src/env.c, through up_layer.h) trim the same way. */
#ifndef UP_TEXT_H
#define UP_TEXT_H

#include <stddef.h>
#include <string.h>

static inline int up__is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* s without the spaces around it, in buf; 0 when it does not fit. */
static inline int up__trimmed(const char *s, char *buf, size_t size)
{
    while (up__is_space(*s))
        s++;
    size_t n = strlen(s);
    while (n && up__is_space(s[n - 1]))
        n--;
    if (n >= size)
        return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return 1;
}

#endif
