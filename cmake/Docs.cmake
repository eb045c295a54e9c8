# The API reference (docs/api/Doxyfile.in) and the man pages (man/).
#
# `cmake --build <build> --target docs` runs Doxygen on the public headers
# that the install puts in <includedir>/ultrapool (the same folders and the
# same filter as cmake/Install.cmake) and writes HTML to
# <build>/docs/api/html. Any warning, an undocumented public name among
# them, fails the target. The target exists only where Doxygen is found
# (Debian: doxygen); its HTML is installed to <docdir>/html when it was
# built before the install.
find_package(Doxygen QUIET)
file(GLOB up_docs_headers ${PROJECT_SOURCE_DIR}/runtime/include/ultrapool/*.h
     ${PROJECT_SOURCE_DIR}/pragmas/include/ultrapool/*.h)
if(UP_HAVE_MPI)
  file(GLOB up_docs_mpi_headers ${PROJECT_SOURCE_DIR}/mpi/include/ultrapool/*.h)
  list(APPEND up_docs_headers ${up_docs_mpi_headers})
endif()
list(SORT up_docs_headers)
if(DOXYGEN_FOUND)
  set(UP_DOCS_OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/docs/api)
  string(REPLACE ";" " " UP_DOCS_INPUT "${up_docs_headers}")
  set(UP_DOCS_STRIP
      "${PROJECT_SOURCE_DIR}/runtime/include ${PROJECT_SOURCE_DIR}/pragmas/include ${PROJECT_SOURCE_DIR}/mpi/include")
  configure_file(docs/api/Doxyfile.in ${UP_DOCS_OUTPUT}/Doxyfile @ONLY)
  add_custom_target(docs
    COMMAND ${CMAKE_COMMAND} -E remove_directory ${UP_DOCS_OUTPUT}/html
    COMMAND Doxygen::doxygen ${UP_DOCS_OUTPUT}/Doxyfile
    WORKING_DIRECTORY ${UP_DOCS_OUTPUT}
    COMMENT "API reference (Doxygen) in ${UP_DOCS_OUTPUT}/html"
    VERBATIM)
  install(DIRECTORY ${UP_DOCS_OUTPUT}/html/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/html OPTIONAL)
else()
  message(STATUS "ultrapool: no Doxygen: no docs target (Debian: doxygen)")
endif()

# The man pages, written by hand in roff: ultrapool-topo(1), ultrapool(7)
# (ultrapool-omp(1) is installed with its launcher, cmake/Install.cmake).
install(FILES man/ultrapool-topo.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES man/ultrapool.7 DESTINATION ${CMAKE_INSTALL_MANDIR}/man7)

# test_docs (tests/docs/check_docs.sh): the docs target builds without a
# warning; skipped (77) without Doxygen.
if(UP_BUILD_TESTS)
  if(DOXYGEN_FOUND)
    set(up_docs_have ON)
  else()
    set(up_docs_have OFF)
  endif()
  add_test(NAME test_docs
    COMMAND sh ${PROJECT_SOURCE_DIR}/tests/docs/check_docs.sh ${CMAKE_BINARY_DIR} ${up_docs_have})
  set_tests_properties(test_docs PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77 LABELS "docs;quick")
endif()
