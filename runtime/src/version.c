/* The library's version at run time. The string comes from the header the
 * library was compiled with, so a program can compare it with the
 * UP_VERSION_STRING it was compiled with. */
#include <ultrapool/pool.h>

const char *up_version(void) { return UP_VERSION_STRING; }
