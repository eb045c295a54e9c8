/* The OS layer (os.h). Every piece that differs by system is here, each in
 * one small #if block with a portable fallback. */
#include "os.h"

#include <pthread.h>

size_t up__os_stack_size(void)
{
#if defined(__linux__)
    /* glibc and musl report the mapping of the thread's stack (for the
     * main thread, its current limit). */
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return 0;
    size_t size = 0;
    pthread_attr_getstacksize(&attr, &size);
    pthread_attr_destroy(&attr);
    return size;
#elif defined(__APPLE__)
    return pthread_get_stacksize_np(pthread_self());
#else
    return 0;
#endif
}
