# The runtime variants of the kernels (par_variant.h): one static library
# per runtime, and the OpenMP peer that needs the other compiler. Included
# by experiments/par/CMakeLists.txt and, when the experiments are off, by
# tests/CMakeLists.txt (the kernel tests run on every variant).
#
# Sets (cache, internal): UP_PAR_VARIANTS, the variants this tree builds
# (par_variant_<name> libraries); UP_PAR_PEER, the name of the variant the
# peer project builds ("" when none); UP_PAR_BIN, where the benchmark
# children and the peer's programs go.
include_guard(GLOBAL)

set(UP_PAR_DIR ${CMAKE_CURRENT_LIST_DIR})
set(UP_PAR_BIN ${CMAKE_BINARY_DIR}/experiments/par CACHE INTERNAL "")
set(up_par_common ${UP_PAR_DIR}/par_common.c ${UP_PAR_DIR}/par_run.c)

function(up_par_variant name)
  add_library(par_variant_${name} STATIC ${ARGN} ${up_par_common})
  target_include_directories(par_variant_${name} PUBLIC ${UP_PAR_DIR})
  target_link_libraries(par_variant_${name} PUBLIC up_par_kernels)
endfunction()

up_par_variant(seq ${UP_PAR_DIR}/seq_variant.c)
up_par_variant(ultrapool ${UP_PAR_DIR}/up_variant.c ${UP_PAR_DIR}/up_micro.c)
target_link_libraries(par_variant_ultrapool PUBLIC ultrapool_par)
set(variants seq ultrapool)

# OpenMP through this tree's compiler: libgomp with GCC, libomp with clang.
# Not in sanitizer builds: the OpenMP runtimes are not built with the
# sanitizers, so ThreadSanitizer cannot see their synchronisation (it
# reports races that are not there) and their allocations escape ASan.
set(omp_main "")
if(UP_HAVE_OPENMP AND UP_SANITIZE STREQUAL "")
  if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
    set(omp_main gomp)
  elseif(CMAKE_C_COMPILER_ID MATCHES "Clang")
    set(omp_main libomp)
  endif()
endif()
if(omp_main)
  up_par_variant(${omp_main} ${UP_PAR_DIR}/omp_variant.c ${UP_PAR_DIR}/omp_micro.c)
  target_link_libraries(par_variant_${omp_main} PUBLIC OpenMP::OpenMP_C)
  list(APPEND variants ${omp_main})
endif()
set(UP_PAR_VARIANTS ${variants} CACHE INTERNAL "")

# The other OpenMP runtime needs the other compiler, and a compiler is
# fixed per CMake tree: a second project (omp-peer/) built with it, whose
# programs land in UP_PAR_BIN beside the others. It links this tree's
# kernel library, so every runtime runs the same machine code for the
# kernels and only the task code differs (clang's code for merge sort is
# much faster than GCC's here, which would otherwise show as a runtime
# difference). Skipped when that compiler cannot build an OpenMP program.
set(peer "")
if(omp_main STREQUAL "gomp")
  find_program(UP_PEER_CC NAMES clang clang-18 clang-17 clang-16 clang-15 clang-14)
  set(peer libomp)
  set(peer_flag -fopenmp=libomp)
elseif(omp_main STREQUAL "libomp")
  find_program(UP_PEER_CC NAMES gcc)
  set(peer gomp)
  set(peer_flag -fopenmp)
endif()
if(peer AND UP_PEER_CC)
  set(probe ${CMAKE_BINARY_DIR}/omp-peer-probe)
  file(WRITE ${probe}.c "#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n")
  execute_process(COMMAND ${UP_PEER_CC} ${peer_flag} ${probe}.c -o ${probe}
                  RESULT_VARIABLE probe_rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT probe_rc EQUAL 0)
    message(STATUS "ultrapool: ${UP_PEER_CC} cannot build OpenMP programs; no ${peer} peer")
    set(peer "")
  endif()
else()
  set(peer "")
endif()
set(UP_PAR_PEER ${peer} CACHE INTERNAL "")
if(peer)
  include(ExternalProject)
  ExternalProject_Add(par_omp_peer
    SOURCE_DIR ${UP_PAR_DIR}/omp-peer
    BINARY_DIR ${CMAKE_BINARY_DIR}/omp-peer
    CMAKE_ARGS -DCMAKE_C_COMPILER=${UP_PEER_CC}
               -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE}
               -DUP_SOURCE_DIR=${CMAKE_SOURCE_DIR}
               -DUP_PEER_NAME=${peer}
               -DUP_WERROR=${UP_WERROR}
               -DUP_OUTPUT_DIR=${UP_PAR_BIN}
               -DUP_KERNELS_LIB=$<TARGET_FILE:up_par_kernels>
    DEPENDS up_par_kernels
    BUILD_ALWAYS ON
    INSTALL_COMMAND ""
    BUILD_BYPRODUCTS ${UP_PAR_BIN}/par_child_${peer} ${UP_PAR_BIN}/test_par_kernels_${peer})
endif()
message(STATUS "ultrapool: kernel variants ${variants}; OpenMP peer '${peer}'")
