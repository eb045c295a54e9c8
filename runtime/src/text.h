/* Text of variable values: OpenMP's variables allow spaces around a value
 * and inside lists, and their keywords any case, so the pool's readers
 * (config_omp.c) and the parallel layer's (pragmas/src/env.c, backend.c,
 * pragmas/gomp/environ.c, through up_layer.h) trim, look words up and read
 * sizes the same way. */
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

/* A size as OMP_STACKSIZE (and libgomp's GOMP_STACKSIZE) writes it: a
 * whole number, then B, K, M or G in any case (none: K), spaces around
 * each. 0 with the bytes in *out; -1 when malformed, -2 for a size of 0,
 * -3 when above 64 bits. The one reader of that syntax, for the pool
 * (config_omp.c, which names each problem) and libgomp's ICV
 * (pragmas/gomp/environ.c). */
static inline int up__omp_size(const char *s, uint64_t *out)
{
    static const char units[] = "bkmg"; /* shifts of 0, 10, 20 and 30 */
    uint64_t v;
    int over;
    int digits = up__digits(&s, &v, &over);
    unsigned shift = 10;
    if (*s) {
        const char *u = strchr(units, *s | 0x20);
        if (!u)
            return -1;
        shift = 10u * (unsigned)(u - units);
        for (s++; up__is_space(*s); s++)
            ;
    }
    if (!digits || *s)
        return -1;
    if (v == 0)
        return -2;
    if (over || v > UINT64_MAX >> shift)
        return -3;
    *out = v << shift;
    return 0;
}

#endif
