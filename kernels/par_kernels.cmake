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
