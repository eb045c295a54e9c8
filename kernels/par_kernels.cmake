# Sources of the scientific kernels (fib, nqueens, merge sort, sparse LU,
# Strassen, Jacobi, the Task Bench graph), as absolute paths.
set(UP_PAR_KERNEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/fib.c
  ${CMAKE_CURRENT_LIST_DIR}/jacobi.c
  ${CMAKE_CURRENT_LIST_DIR}/kutil.c
  ${CMAKE_CURRENT_LIST_DIR}/msort.c
  ${CMAKE_CURRENT_LIST_DIR}/nqueens.c
  ${CMAKE_CURRENT_LIST_DIR}/sparselu.c
  ${CMAKE_CURRENT_LIST_DIR}/strassen.c
  ${CMAKE_CURRENT_LIST_DIR}/taskbench.c)

# Every benchmark child links the same kernel objects, but each places
# them at other addresses, and a hot loop's offset within its 64-byte
# block changes how the front end feeds it (on Intel cores, a jump that
# crosses or ends on a 32-byte boundary is not cached in the decoded
# icache after the JCC erratum's microcode update). Measured on the Intel
# VM: sparse LU at one thread took a median of 222 ms in the sequential
# child (bmod at 16 mod 64) and 427 ms in ultrapool's (48 mod 64), both
# built from the same object code. Functions aligned to 64 bytes give
# every loop the same offset in every binary.
include(CheckCCompilerFlag)
function(up_par_kernels_align target)
  check_c_compiler_flag(-falign-functions=64 UP_HAVE_ALIGN_FUNCTIONS_64)
  if(UP_HAVE_ALIGN_FUNCTIONS_64)
    target_compile_options(${target} PRIVATE -falign-functions=64)
  endif()
endfunction()
