/* Text of variable values: OpenMP's variables allow spaces around a value
 * and inside lists, and their keywords any case, so the pool's readers
 * (config_omp.c) and the parallel layer's (pragmas/src/env.c, backend.c,
 * pragmas/gomp/environ.c, through up_layer.h) trim and look words up the
 * same way. */
#ifndef UP_TEXT_H
#define UP_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

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

/* The index of word among the n words, in any case, -1 when it is none
 * of them: the one lookup of a keyword (a schedule kind, a bind policy, a
 * place name, a backend). */
static inline int up__word_index(const char *word, const char *const *words, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcasecmp(word, words[i]))
            return (int)i;
    return -1;
}

/* The decimal digits at *s, spaces before and after them skipped; *s
 * moves past it all. Returns how many digits there were; *over is set
 * when the number does not fit in 64 bits (*out then holds its first
 * digits). */
static inline int up__digits(const char **s, uint64_t *out, int *over)
{
    const char *p = *s;
    while (up__is_space(*p))
        p++;
    uint64_t v = 0;
    int n = 0;
    *over = 0;
    for (; *p >= '0' && *p <= '9'; p++, n++) {
        uint64_t d = (uint64_t)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            *over = 1;
        else
            v = v * 10 + d;
    }
    while (up__is_space(*p))
        p++;
    *s = p;
    *out = v;
    return n;
}

#endif
