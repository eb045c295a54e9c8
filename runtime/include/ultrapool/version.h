/** @file
 * ultrapool: the version of the headers a program is compiled against.
 *
 * These macros describe the installed headers; up_version() (pool.h) gives
 * the version of the library the program runs with. The two differ only
 * when a program is run against a library other than the one it was built
 * with. CMake checks at configure time that these numbers match the
 * project's VERSION, so the header and the package cannot drift apart. */
#ifndef ULTRAPOOL_VERSION_H
#define ULTRAPOOL_VERSION_H

#define UP_VERSION_MAJOR  0       /**< the headers' major version */
#define UP_VERSION_MINOR  1       /**< the headers' minor version */
#define UP_VERSION_PATCH  0       /**< the headers' patch version */
#define UP_VERSION_STRING "0.1.0" /**< the headers' version, "MAJOR.MINOR.PATCH" */

/** One number that grows with every release, for preprocessor comparisons:
 * \#if UP_VERSION_NUMBER >= UP_VERSION_ENCODE(0, 2, 0) */
#define UP_VERSION_ENCODE(major, minor, patch) ((major)*10000 + (minor)*100 + (patch))

/** The headers' version as one number (UP_VERSION_ENCODE). */
#define UP_VERSION_NUMBER UP_VERSION_ENCODE(UP_VERSION_MAJOR, UP_VERSION_MINOR, UP_VERSION_PATCH)

#endif
