# up_no_undefined(<target>): a shared library that leaves a symbol
# undefined fails to link instead of failing when a program loads it. This
# is what catches a shared library that calls a hidden function of another
# one. Sanitizer builds are left alone: their runtime's symbols are
# resolved from the executable, so every instrumented library has some.
function(up_no_undefined target)
  if(UP_SANITIZE STREQUAL "" AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
    target_link_options(${target} PRIVATE LINKER:--no-undefined)
  endif()
endfunction()

# The shared libraries' versions (docs/packaging.md, "Shared library
# versions").
#
# SONAME: libultrapool.so.<major>, libultrapool_par.so.<major>. From 1.0
# on a release keeps the ABI of every earlier one of its major version, as
# the package version file promises (cmake/ultrapoolConfigVersion.cmake.in:
# a request for 1.2 takes any later 1.x), so the major version is all the
# SONAME needs to say. While the major version is 0 the SONAME is .so.0
# and a minor release may break the ABI, as it may the API; the package
# dependencies say so instead (debian/rules).
#
# Symbol versions, where the linker takes a version script (up_version_script):
# what the installed headers declare is in UP_ABI_NODE, the node of 1.0's
# ABI, which a program built against it then asks the loader for; what no
# installed header declares is in UP_ABI_INTERNAL_NODE, named after the
# exact release, since it may change in any release and the libraries that
# use it (libultrapool_par.so, libgomp.so.1) come from the same one: the
# loader refuses a mixed pair by that name instead of running it.
#
# The backend modules' peer project (pragmas/interop/peer) includes this
# file too; it is not ultrapool's project, so it gets the node's name
# from ultrapool's build (-DUP_ABI_INTERNAL_NODE=).
if(DEFINED ultrapool_VERSION_MAJOR)
  set(UP_SOVERSION ${ultrapool_VERSION_MAJOR})
endif()
set(UP_ABI_NODE ULTRAPOOL_1.0)
if(NOT UP_ABI_INTERNAL_NODE)
  if(NOT ultrapool_VERSION)
    message(FATAL_ERROR "cmake/Abi.cmake outside ultrapool's project: set UP_ABI_INTERNAL_NODE")
  endif()
  set(UP_ABI_INTERNAL_NODE ULTRAPOOL_INTERNAL_${ultrapool_VERSION})
endif()

# up_version_script(<target> <script> [REQUIRED]): links the shared library
# <target> with the linker version script <script>, and again when the
# script changes. Only where the linker takes one (GNU ld, gold, lld and
# mold on ELF; UP_HAVE_VERSION_SCRIPT, checked once per build tree by
# linking a program with such a script: CheckLinkerFlag does the same but
# needs CMake 3.18, and the project builds with 3.16). Elsewhere (macOS:
# Mach-O has no symbol versions) nothing is done: hidden visibility alone
# keeps the exports to what the headers mark UP_API, unversioned; REQUIRED
# makes that a configure error instead, for a library whose ABI is its
# version nodes (libgomp.so.1).
function(up_version_script target script)
  cmake_parse_arguments(V "REQUIRED" "" "" ${ARGN})
  if(NOT DEFINED UP_HAVE_VERSION_SCRIPT)
    if(APPLE OR WIN32 OR CYGWIN)
      set(UP_HAVE_VERSION_SCRIPT OFF CACHE INTERNAL "The linker takes --version-script")
    else()
      set(probe ${CMAKE_BINARY_DIR}/CMakeFiles/up_version_probe.map)
      file(WRITE ${probe} "UP_PROBE_1.0 {\n  global:\n    up_probe;\n  local:\n    *;\n};\n")
      include(CheckCSourceCompiles)
      set(CMAKE_REQUIRED_LINK_OPTIONS "LINKER:--version-script=${probe}")
      check_c_source_compiles("int up_probe(void);
int up_probe(void) { return 0; }
int main(void) { return up_probe(); }" UP_HAVE_VERSION_SCRIPT)
    endif()
    if(NOT UP_HAVE_VERSION_SCRIPT)
      message(STATUS "ultrapool: the linker takes no version script: the shared libraries' "
                     "symbols are not versioned")
    endif()
  endif()
  if(UP_HAVE_VERSION_SCRIPT)
    target_link_options(${target} PRIVATE LINKER:--version-script=${script})
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${script})
  elseif(V_REQUIRED)
    message(FATAL_ERROR "${target} needs symbol versions, and this linker takes no "
                        "version script (--version-script)")
  endif()
endfunction()

# up_symbol_versions(<target> [PUBLIC] [INTERNAL <name>...]): writes the
# version script of one of ultrapool's own shared libraries into the build
# tree (<target>.map) and links <target> with it. PUBLIC: every up_ symbol
# the library exports goes into UP_ABI_NODE. INTERNAL: the names given go
# into UP_ABI_INTERNAL_NODE. Nothing else is exported.
#
# The public node takes a pattern, not a list, so that it cannot drift
# from the headers: hidden visibility already keeps every symbol that is
# not UP_API (every up__ function) inside, and a version script never
# exports a hidden symbol. The internal names are exact. GNU ld, gold and
# lld put a symbol that a node names exactly there rather than under
# another node's pattern, wherever the nodes stand; the internal node
# comes first all the same, for a linker that takes the first node that
# matches (older mold releases did), and "local: *" last. A function added
# after 1.0 goes the same way, by its exact name into a new node
# ULTRAPOOL_1.<minor> that names the one before it as its parent.
function(up_symbol_versions target)
  cmake_parse_arguments(V "PUBLIC" "" "INTERNAL" ${ARGN})
  if(NOT V_PUBLIC AND NOT V_INTERNAL)
    message(FATAL_ERROR "up_symbol_versions(${target}): PUBLIC, INTERNAL <name>... or both")
  endif()
  set(script "/* Written by CMake (up_symbol_versions in cmake/Abi.cmake). */\n")
  set(local "  local:\n    *;\n")
  set(public "")
  if(V_PUBLIC)
    set(public "${UP_ABI_NODE} {\n  global:\n    up_*;\n${local}};\n")
    set(local "")
  endif()
  if(V_INTERNAL)
    list(SORT V_INTERNAL)
    string(REPLACE ";" ";\n    " names "${V_INTERNAL}")
    string(APPEND script "${UP_ABI_INTERNAL_NODE} {\n  global:\n    ${names};\n${local}};\n")
  endif()
  string(APPEND script "${public}")
  set(file ${CMAKE_CURRENT_BINARY_DIR}/${target}.map)
  # Rewritten only when it changes: the library is linked again when it does.
  file(WRITE ${file}.new "${script}")
  configure_file(${file}.new ${file} COPYONLY)
  up_version_script(${target} ${file})
endfunction()
