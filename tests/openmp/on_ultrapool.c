/* For the Fortran test: 1 when the process runs on ultrapool's libgomp. */
#include <dlfcn.h>

int on_ultrapool(void) { return dlsym(RTLD_DEFAULT, "up_gomp_runtime") != 0; }
