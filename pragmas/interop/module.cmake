# The OpenMP backend module of parallel.h for one runtime, from
# omp_backend.c, into output_dir: libultrapool_omp_<name> with the
# compiler's OpenMP. Shared by this tree and the peer project (peer/),
# which builds the other runtime's module with the other compiler.
#
# The module's one export, its entry point up_omp_backend (up_omp_ops.h,
# which is not installed), is in the internal version node
# (cmake/Abi.cmake): the layer of the same release opens it by file name.
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/Abi.cmake)
function(up_omp_backend_module name source_dir output_dir)
  add_library(ultrapool_omp_${name} MODULE ${source_dir}/pragmas/interop/omp_backend.c)
  target_include_directories(ultrapool_omp_${name} PRIVATE
    ${source_dir}/pragmas/interop ${source_dir}/pragmas/include ${source_dir}/runtime/include)
  target_link_libraries(ultrapool_omp_${name} PRIVATE OpenMP::OpenMP_C)
  set_target_properties(ultrapool_omp_${name} PROPERTIES
    PREFIX "lib" C_VISIBILITY_PRESET hidden LIBRARY_OUTPUT_DIRECTORY ${output_dir})
  up_symbol_versions(ultrapool_omp_${name} INTERNAL up_omp_backend)
endfunction()
