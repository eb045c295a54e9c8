# What the pkg-config modules say about dependencies, read from what the
# build links (cmake/Install.cmake uses it).
#
# up_pc_link_deps(<target> <requires-var> <libs-var> [COVERED <target>...])
#   Walks the LINK_LIBRARIES of <target>, and of the project's own static
#   and interface libraries it links (unless COVERED: another module, named
#   in Requires, provides them), and sets <requires-var> to the modules
#   (comma-separated) and <libs-var> to the linker flags that a static link
#   of <target> needs:
#     an imported target whose UP_PC_MODULE property is set
#                           that module (an empty value: nothing)
#     Threads::Threads      CMAKE_THREAD_LIBS_INIT (-pthread), if any
#     a library file        -l<name>, after -L<folder> when the linker does
#                           not search that folder by itself
#     a name (dl)           -l<name>
#     a flag (-pthread)     itself
#   $<BUILD_INTERFACE:x> and $<LINK_ONLY:x> count as x; $<INSTALL_INTERFACE:
#   ...> is the installed CMake package's business and is skipped. Anything
#   else stops the configure with a message, rather than write a .pc file
#   that leaves a dependency out.
#
# up_pc_mpi_module(<var>)
#   The pkg-config module that describes the MPI that find_package(MPI)
#   found, "" when this machine has none.

function(_up_pc_walk target covered)
  get_target_property(items ${target} LINK_LIBRARIES)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(items ${target} INTERFACE_LINK_LIBRARIES)
  endif()
  if(NOT items)
    return()
  endif()
  foreach(item IN LISTS items)
    if(item MATCHES "^\\$<INSTALL_INTERFACE:")
      continue()
    elseif(item MATCHES "^\\$<(BUILD_INTERFACE|LINK_ONLY):(.*)>$")
      set(item "${CMAKE_MATCH_2}")
    endif()
    if(item MATCHES "\\$<")
      message(FATAL_ERROR "cmake/PkgConfigDeps.cmake: ${target} links '${item}', a generator "
                          "expression it cannot translate for the pkg-config modules")
    endif()
    if(TARGET ${item})
      get_target_property(aliased ${item} ALIASED_TARGET)
      if(aliased)
        set(item ${aliased})
      endif()
      get_target_property(imported ${item} IMPORTED)
      if(NOT imported)
        if(item IN_LIST covered OR item IN_LIST _up_pc_seen)
          continue()
        endif()
        list(APPEND _up_pc_seen ${item})
        get_target_property(item_type ${item} TYPE)
        if(NOT item_type MATCHES "^(STATIC|OBJECT|INTERFACE)_LIBRARY$")
          message(FATAL_ERROR "cmake/PkgConfigDeps.cmake: ${target} links ${item} (${item_type}): "
                              "name the module that provides it in COVERED")
        endif()
        _up_pc_walk(${item} "${covered}")
      elseif(item STREQUAL "Threads::Threads")
        list(APPEND _up_pc_libs ${CMAKE_THREAD_LIBS_INIT})
      else()
        get_property(known TARGET ${item} PROPERTY UP_PC_MODULE SET)
        if(NOT known)
          message(FATAL_ERROR "cmake/PkgConfigDeps.cmake: ${target} links ${item}: set its "
                              "UP_PC_MODULE property to its pkg-config module (or \"\")")
        endif()
        get_target_property(module ${item} UP_PC_MODULE)
        if(module)
          list(APPEND _up_pc_requires "${module}")
        endif()
      endif()
    elseif(IS_ABSOLUTE "${item}")
      get_filename_component(dir "${item}" DIRECTORY)
      get_filename_component(name "${item}" NAME)
      string(REGEX REPLACE "^lib(.*)\\.(so|a|dylib|tbd)(\\.[0-9.]+)?$" "\\1" name "${name}")
      get_filename_component(real_dir "${dir}" REALPATH)
      set(searched FALSE)
      foreach(d IN LISTS CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
        get_filename_component(d "${d}" REALPATH)
        if(d STREQUAL real_dir)
          set(searched TRUE)
        endif()
      endforeach()
      if(NOT searched)
        list(APPEND _up_pc_libs "-L${dir}")
      endif()
      list(APPEND _up_pc_libs "-l${name}")
    elseif(item MATCHES "^-")
      list(APPEND _up_pc_libs "${item}")
    elseif(item)
      list(APPEND _up_pc_libs "-l${item}")
    endif()
  endforeach()
  set(_up_pc_seen "${_up_pc_seen}" PARENT_SCOPE)
  set(_up_pc_requires "${_up_pc_requires}" PARENT_SCOPE)
  set(_up_pc_libs "${_up_pc_libs}" PARENT_SCOPE)
endfunction()

function(up_pc_link_deps target requires_var libs_var)
  cmake_parse_arguments(PARSE_ARGV 3 arg "" "" "COVERED")
  set(_up_pc_seen ${target})
  set(_up_pc_requires "")
  set(_up_pc_libs "")
  _up_pc_walk(${target} "${arg_COVERED}")
  list(REMOVE_DUPLICATES _up_pc_requires)
  list(REMOVE_DUPLICATES _up_pc_libs)
  string(REPLACE ";" ", " requires "${_up_pc_requires}")
  string(REPLACE ";" " " libs "${_up_pc_libs}")
  set(${requires_var} "${requires}" PARENT_SCOPE)
  set(${libs_var} "${libs}" PARENT_SCOPE)
endfunction()

# Debian's mpi-c follows the default MPI (as mpicc does); ompi-c is Open
# MPI's own name, mpich MPICH's. The one whose include folders hold the
# mpi.h that find_package(MPI) found is the MPI the library was built with.
function(up_pc_mpi_module var)
  set(${var} "" PARENT_SCOPE)
  if(NOT PKG_CONFIG_FOUND)
    return()
  endif()
  set(want "")
  foreach(d IN LISTS MPI_C_HEADER_DIR MPI_C_INCLUDE_DIRS MPI_C_COMPILER_INCLUDE_DIRS)
    get_filename_component(d "${d}" REALPATH)
    list(APPEND want "${d}")
  endforeach()
  foreach(module IN ITEMS mpi-c ompi-c mpich)
    execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --cflags-only-I ${module}
      OUTPUT_VARIABLE flags RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT rc EQUAL 0)
      continue()
    endif()
    execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --variable=includedir ${module}
      OUTPUT_VARIABLE includedir ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    separate_arguments(flags UNIX_COMMAND "${flags}")
    list(TRANSFORM flags REPLACE "^-I" "")
    foreach(d IN LISTS flags includedir)
      if(d)
        get_filename_component(d "${d}" REALPATH)
        if(d IN_LIST want)
          set(${var} ${module} PARENT_SCOPE)
          return()
        endif()
      endif()
    endforeach()
  endforeach()
endfunction()
