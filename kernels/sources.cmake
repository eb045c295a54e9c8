# The kernel sources, shared by kernels/CMakeLists.txt and the stand-alone
# OpenMP runner builds (experiments/omp), which compile them with another
# compiler.
set(UP_KERNEL_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/crc32.c
  ${CMAKE_CURRENT_LIST_DIR}/sleep.c
  ${CMAKE_CURRENT_LIST_DIR}/bytesum.c
  ${CMAKE_CURRENT_LIST_DIR}/mutex.c
  ${CMAKE_CURRENT_LIST_DIR}/sha256.c
  ${CMAKE_CURRENT_LIST_DIR}/aes_cbc.c
  ${CMAKE_CURRENT_LIST_DIR}/mixed.c)
