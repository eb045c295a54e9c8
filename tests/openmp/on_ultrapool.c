/* For the Fortran test: 1 when the process runs on ultrapool's libgomp. */
#include <dlfcn.h>

int on_ultrapool(void) { return dlsym(RTLD_DEFAULT, "up_gomp_runtime") != 0; }

/* The process's pool is never destroyed (omp_check.h says why). */
#if defined(__SANITIZE_THREAD__)
const char *__tsan_default_options(void);
const char *__tsan_default_options(void) { return "report_thread_leaks=0"; }
#endif
