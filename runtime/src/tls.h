/* The thread-local variables read on every task, submit or region are
 * initial-exec: in a shared library an access is then one load at an
 * offset from the thread pointer, where the default model calls
 * __tls_get_addr. Such a variable lives in the static TLS block, which a
 * library loaded late (dlopen) must find room in, and glibc keeps only a
 * small reserve for that: so only small, hot variables get the model, and
 * larger ones (an error message buffer, caches) keep the default. */
#ifndef UP_TLS_H
#define UP_TLS_H

#if defined(__GNUC__) && defined(__ELF__)
#define UP__TLS_IE __attribute__((tls_model("initial-exec")))
#else
#define UP__TLS_IE
#endif

#endif
