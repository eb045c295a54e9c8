# The other OpenMP runtime's compiler. libgomp comes with GCC and libomp
# with clang, and a CMake tree has one C compiler, so whatever needs the
# runtime this tree's compiler does not bring is built by a second project
# (an ExternalProject) with the other compiler. Sets, in the caller's
# scope:
#   UP_OMP_MAIN       gomp or libomp: this tree's runtime ("" without OpenMP)
#   UP_OMP_PEER       the other one, "" when its compiler is missing or
#                     cannot build an OpenMP program
#   UP_OMP_PEER_CC    that compiler
#   UP_OMP_PEER_FLAG  its OpenMP flag
# Probed once per tree (the result is cached with the compiler path).
function(up_openmp_peer)
  set(main "")
  if(UP_HAVE_OPENMP)
    if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
      set(main gomp)
    elseif(CMAKE_C_COMPILER_ID MATCHES "Clang")
      set(main libomp)
    endif()
  endif()
  set(peer "")
  set(flag "")
  if(main STREQUAL "gomp")
    find_program(UP_PEER_CC NAMES clang clang-18 clang-17 clang-16 clang-15 clang-14)
    set(peer libomp)
    set(flag -fopenmp=libomp)
  elseif(main STREQUAL "libomp")
    find_program(UP_PEER_CC NAMES gcc)
    set(peer gomp)
    set(flag -fopenmp)
  endif()
  if(peer AND UP_PEER_CC)
    if(NOT DEFINED UP_PEER_CC_WORKS_${peer})
      set(probe ${CMAKE_BINARY_DIR}/omp-peer-probe)
      file(WRITE ${probe}.c "#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n")
      execute_process(COMMAND ${UP_PEER_CC} ${flag} ${probe}.c -o ${probe}
                      RESULT_VARIABLE probe_rc OUTPUT_QUIET ERROR_QUIET)
      if(probe_rc EQUAL 0)
        set(works ON)
      else()
        set(works OFF)
        message(STATUS "ultrapool: ${UP_PEER_CC} cannot build OpenMP programs; no ${peer} peer")
      endif()
      set(UP_PEER_CC_WORKS_${peer} ${works} CACHE INTERNAL "")
    endif()
    if(NOT UP_PEER_CC_WORKS_${peer})
      set(peer "")
    endif()
  else()
    set(peer "")
  endif()
  set(UP_OMP_MAIN ${main} PARENT_SCOPE)
  set(UP_OMP_PEER ${peer} PARENT_SCOPE)
  set(UP_OMP_PEER_CC ${UP_PEER_CC} PARENT_SCOPE)
  set(UP_OMP_PEER_FLAG ${flag} PARENT_SCOPE)
endfunction()
