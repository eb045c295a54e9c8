# Optional dependencies, found the ecosystem's way. Each sets UP_HAVE_<X>.
#
# UP_WITH_<X> says how hard to look: AUTO (on when found), ON (required) or
# OFF; an undefined one is OFF. This file is also included by stand-alone
# helper projects (experiments/omp) that pass the top-level values on: only
# the ultrapool project itself treats ON as required, so a helper project
# leaves a missing library out instead of failing the outer build.
set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)
find_package(PkgConfig QUIET)

# up_dep_mode(<var> <out>): OFF, AUTO or REQUIRED from the value of <var>.
function(up_dep_mode var out)
  set(v "${${var}}")
  string(TOUPPER "${v}" vu)
  if(vu STREQUAL "AUTO")
    set(mode AUTO)
  elseif(v)
    if(CMAKE_PROJECT_NAME STREQUAL "ultrapool")
      set(mode REQUIRED)
    else()
      set(mode AUTO)
    endif()
  else()
    set(mode OFF)
  endif()
  set(${out} ${mode} PARENT_SCOPE)
endfunction()

# up_dep_check(<var> <mode> <found> <what>): fails when <var> asked for a
# dependency that is missing; says so when AUTO leaves it out.
function(up_dep_check var mode found what)
  if(found)
    return()
  endif()
  if(mode STREQUAL "REQUIRED")
    message(FATAL_ERROR "${var}=${${var}} but ${what} was not found. Install it, or configure "
                        "with -D${var}=AUTO (on when found) or -D${var}=OFF.")
  elseif(mode STREQUAL "AUTO")
    message(STATUS "ultrapool: ${var}=AUTO: ${what} not found, left out")
  endif()
endfunction()

up_dep_mode(UP_WITH_HWLOC up_mode)
set(UP_HAVE_HWLOC OFF)
if(NOT up_mode STREQUAL "OFF")
  if(PKG_CONFIG_FOUND)
    set(UP_HWLOC_MIN_VERSION 2.4) # CPU kinds; the pkg-config modules ask for it too
    pkg_check_modules(HWLOC QUIET IMPORTED_TARGET hwloc>=${UP_HWLOC_MIN_VERSION})
    if(HWLOC_FOUND)
      set(UP_HAVE_HWLOC ON)
    endif()
  endif()
  up_dep_check(UP_WITH_HWLOC ${up_mode} "${UP_HAVE_HWLOC}"
               "hwloc >= 2.4 through pkg-config (Debian: libhwloc-dev pkg-config)")
endif()

up_dep_mode(UP_WITH_PAPI up_mode)
set(UP_HAVE_PAPI OFF)
if(NOT up_mode STREQUAL "OFF")
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(PAPI QUIET IMPORTED_TARGET papi)
  endif()
  if(NOT PAPI_FOUND)
    find_path(PAPI_INCLUDE_DIR papi.h)
    find_library(PAPI_LIBRARY papi)
    if(PAPI_INCLUDE_DIR AND PAPI_LIBRARY)
      add_library(PkgConfig::PAPI UNKNOWN IMPORTED)
      set_target_properties(PkgConfig::PAPI PROPERTIES IMPORTED_LOCATION "${PAPI_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${PAPI_INCLUDE_DIR}")
      set(PAPI_FOUND ON)
    endif()
  endif()
  if(PAPI_FOUND)
    set(UP_HAVE_PAPI ON)
  endif()
  up_dep_check(UP_WITH_PAPI ${up_mode} "${UP_HAVE_PAPI}" "PAPI (Debian: libpapi-dev)")
endif()

up_dep_mode(UP_WITH_SDE up_mode)
set(UP_HAVE_SDE OFF)
if(NOT up_mode STREQUAL "OFF")
  find_path(SDE_INCLUDE_DIR sde_lib.h)
  find_library(SDE_LIBRARY sde)
  if(SDE_INCLUDE_DIR AND SDE_LIBRARY)
    set(UP_HAVE_SDE ON)
  endif()
  up_dep_check(UP_WITH_SDE ${up_mode} "${UP_HAVE_SDE}"
               "libsde (sde_lib.h and libsde; Debian: libpapi-dev)")
endif()

up_dep_mode(UP_WITH_LIKWID up_mode)
set(UP_HAVE_LIKWID OFF)
if(NOT up_mode STREQUAL "OFF")
  find_path(LIKWID_INCLUDE_DIR likwid-marker.h)
  find_library(LIKWID_LIBRARY likwid)
  if(LIKWID_INCLUDE_DIR AND LIKWID_LIBRARY)
    set(UP_HAVE_LIKWID ON)
  endif()
  up_dep_check(UP_WITH_LIKWID ${up_mode} "${UP_HAVE_LIKWID}" "likwid (Debian: liblikwid-dev)")
endif()

up_dep_mode(UP_WITH_OPENMP up_mode)
set(UP_HAVE_OPENMP OFF)
if(NOT up_mode STREQUAL "OFF")
  find_package(OpenMP QUIET COMPONENTS C)
  if(OpenMP_C_FOUND)
    set(UP_HAVE_OPENMP ON)
  endif()
  up_dep_check(UP_WITH_OPENMP ${up_mode} "${UP_HAVE_OPENMP}"
               "OpenMP for ${CMAKE_C_COMPILER_ID} (clang: Debian's libomp-dev)")
endif()

up_dep_mode(UP_WITH_MPI up_mode)
set(UP_HAVE_MPI OFF)
if(NOT up_mode STREQUAL "OFF")
  find_package(MPI QUIET COMPONENTS C)
  if(MPI_C_FOUND)
    set(UP_HAVE_MPI ON)
  endif()
  up_dep_check(UP_WITH_MPI ${up_mode} "${UP_HAVE_MPI}" "MPI for C (Debian: libopenmpi-dev)")
endif()

find_package(ZLIB QUIET)
find_package(OpenSSL QUIET COMPONENTS Crypto)

message(STATUS "ultrapool: hwloc=${UP_HAVE_HWLOC} sde=${UP_HAVE_SDE} papi=${UP_HAVE_PAPI} "
               "likwid=${UP_HAVE_LIKWID} openmp=${UP_HAVE_OPENMP} mpi=${UP_HAVE_MPI} "
               "zlib=${ZLIB_FOUND} openssl=${OpenSSL_FOUND} sanitize='${UP_SANITIZE}'")
