# up_bench_runner(NAME SOURCES...): a runner executable of the
# cross-library benchmark, with the harness, the workloads and the kernels
# compiled in, and PAPI and likwid when found. Used here and by the
# stand-alone OpenMP builds (experiments/omp), which compile the same files
# with another compiler.
set(UP_EXPERIMENTS_DIR ${CMAKE_CURRENT_LIST_DIR})
include(${CMAKE_CURRENT_LIST_DIR}/../kernels/sources.cmake)

function(up_bench_runner name)
  set(dir ${UP_EXPERIMENTS_DIR})
  set(srcs ${ARGN} ${dir}/harness.c ${dir}/workloads.c ${dir}/bench_util.c ${UP_KERNEL_SOURCES})
  if(UP_HAVE_PAPI)
    list(APPEND srcs ${dir}/counters_papi.c)
  else()
    list(APPEND srcs ${dir}/counters_null.c)
  endif()
  add_executable(${name} ${srcs})
  target_include_directories(${name} PRIVATE ${dir} ${dir}/../kernels)
  target_link_libraries(${name} PRIVATE Threads::Threads m OpenSSL::Crypto ZLIB::ZLIB)
  if(UP_HAVE_PAPI)
    target_link_libraries(${name} PRIVATE PkgConfig::PAPI)
  endif()
  if(UP_HAVE_LIKWID)
    target_compile_definitions(${name} PRIVATE UP_HAVE_LIKWID)
    target_include_directories(${name} PRIVATE ${LIKWID_INCLUDE_DIR})
    target_link_libraries(${name} PRIVATE ${LIKWID_LIBRARY})
  endif()
endfunction()
