# Installation: headers, both libraries, the ultrapool-topo command, a CMake package
# (find_package(ultrapool CONFIG) -> ultrapool::ultrapool) and a pkg-config
# file (pkg-config --libs ultrapool).
include(CMakePackageConfigHelpers)

install(DIRECTORY runtime/include/ultrapool DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ultrapool ultrapool_static EXPORT ultrapoolTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ultrapool-topo RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT ultrapoolTargets NAMESPACE ultrapool::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ultrapool)

configure_package_config_file(cmake/ultrapoolConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/ultrapoolConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ultrapool)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/ultrapoolConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ultrapoolConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/ultrapoolConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ultrapool)

set(UP_PC_REQUIRES "")
if(UP_HAVE_HWLOC)
  set(UP_PC_REQUIRES "hwloc")
endif()
# The .pc file finds its prefix from where it lies (${pcfiledir}), so it is
# right for whatever prefix `cmake --install --prefix` is given.
set(UP_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${UP_PC_DIR}")
  set(UP_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH UP_PC_UP "/root/${UP_PC_DIR}" "/root")
  string(REGEX REPLACE "/$" "" UP_PC_UP "${UP_PC_UP}")
  set(UP_PC_PREFIX "\${pcfiledir}/${UP_PC_UP}")
endif()
set(UP_PC_LIBS_PRIVATE "")
if(UP_HAVE_SDE)
  set(UP_PC_LIBS_PRIVATE "-lsde")
endif()
configure_file(cmake/ultrapool.pc.in ${CMAKE_CURRENT_BINARY_DIR}/ultrapool.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ultrapool.pc DESTINATION ${UP_PC_DIR})
