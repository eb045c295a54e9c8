# Installation: every public header, both flavours of both libraries, the
# ultrapool-topo command, a CMake package and its pkg-config modules.
#
#   find_package(ultrapool CONFIG)        component  pkg-config
#   ultrapool::ultrapool                  pool       ultrapool            the pool
#   ultrapool::parallel (ultrapool::par)  parallel   ultrapool-parallel   the OpenMP-style API
#   ultrapool::mpi                        mpi        ultrapool-mpi        the MPI mode (static)
#   ultrapool::openmp                     openmp     ultrapool-openmp     libgomp.so.1 (Linux)
#   ultrapool::ultrapool_static, ultrapool::parallel_static,
#   ultrapool::ultrapool_shared, ultrapool::parallel_shared    one flavour by name
#
# The unsuffixed targets are the shared libraries unless the build was
# configured with BUILD_SHARED_LIBS=OFF (see the top-level CMakeLists.txt).
# A pkg-config user picks the flavour with the linker: --static gives the
# private dependencies of the static libraries.
include(CMakePackageConfigHelpers)

# The public header folders, whole: whatever a later change adds to them is
# installed too. The layer and src folders are internal and stay behind.
# The MPI mode's folder (mpi.h) only with its library.
set(up_header_dirs runtime/include/ultrapool pragmas/include/ultrapool)
if(UP_HAVE_MPI)
  list(APPEND up_header_dirs mpi/include/ultrapool)
endif()
install(DIRECTORY ${up_header_dirs} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The MPI mode's target goes to an export file of its own,
# ultrapoolMpiTargets.cmake, which the config file includes when it is
# there: a distribution can then ship the MPI library (which needs MPI's
# development files) in a package of its own, and find_package(ultrapool)
# works without it, the component mpi reported missing.
if(UP_HAVE_MPI)
  set_target_properties(ultrapool_mpi PROPERTIES EXPORT_NAME mpi)
  install(TARGETS ultrapool_mpi EXPORT ultrapoolMpiTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(TARGETS ultrapool ultrapool_static ultrapool_par_shared ultrapool_par
  EXPORT ultrapoolTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ultrapool-topo RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The OpenMP runtime (pragmas/gomp): libgomp.so.1 in a folder of its own,
# which the launcher ultrapool-omp or LD_LIBRARY_PATH puts first, so that
# it replaces GCC's libgomp without relinking; exported as
# ultrapool::openmp for programs that link it. No libgomp.so name link:
# -lgomp must keep meaning GCC's for every other program.
if(TARGET ultrapool_gomp)
  install(TARGETS ultrapool_gomp EXPORT ultrapoolTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/ultrapool/omp NAMELINK_SKIP)
  install(TARGETS ultrapool-omp RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES man/ultrapool-omp.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()
install(EXPORT ultrapoolTargets NAMESPACE ultrapool::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ultrapool)
if(UP_HAVE_MPI)
  install(EXPORT ultrapoolMpiTargets NAMESPACE ultrapool::
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ultrapool)
endif()

# What the config file needs to know about this build: which flavour the
# unsuffixed names mean, and where the static libraries' link-only
# dependencies were found here (a hint for the consumer's machine).
if(UP_DEFAULT_SHARED)
  set(UP_PACKAGE_DEFAULT shared)
else()
  set(UP_PACKAGE_DEFAULT static)
endif()
set(UP_PACKAGE_HWLOC_HINT "")
if(UP_HAVE_HWLOC)
  set(UP_PACKAGE_HWLOC_HINT "${HWLOC_LIBRARY_DIRS}")
endif()
set(UP_PACKAGE_SDE_HINT "")
if(UP_HAVE_SDE)
  get_filename_component(UP_PACKAGE_SDE_HINT "${SDE_LIBRARY}" DIRECTORY)
endif()
configure_package_config_file(cmake/ultrapoolConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/ultrapoolConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ultrapool
  NO_SET_AND_CHECK_MACRO)
# The version rules, version ranges included, are in the template.
configure_file(cmake/ultrapoolConfigVersion.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/ultrapoolConfigVersion.cmake @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ultrapoolConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/ultrapoolConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ultrapool)

# The .pc files find their prefix from where they lie (${pcfiledir}), so
# they are right for whatever prefix `cmake --install --prefix` is given.
set(UP_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${UP_PC_DIR}")
  set(UP_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH UP_PC_UP "/root/${UP_PC_DIR}" "/root")
  string(REGEX REPLACE "/$" "" UP_PC_UP "${UP_PC_UP}")
  set(UP_PC_PREFIX "\${pcfiledir}/${UP_PC_UP}")
endif()
# What a static link needs beyond the libraries themselves comes from what
# the build links (cmake/PkgConfigDeps.cmake): a dependency with a pkg-config
# module of its own (hwloc) goes into Requires.private, which brings its own
# libraries for a static link and keeps its folders out of these files;
# the rest (a threads flag where the C library needs one, -ldl, libsde)
# into Libs.private. pkg-config reads a Requires.private module for every
# link (for its Cflags), so it needs hwloc's .pc file (Debian:
# libhwloc-dev) wherever ultrapool was built with hwloc; find_package
# (ultrapool) does not.
include(cmake/PkgConfigDeps.cmake)
if(UP_HAVE_HWLOC)
  set_property(TARGET PkgConfig::HWLOC PROPERTY UP_PC_MODULE "hwloc >= ${UP_HWLOC_MIN_VERSION}")
endif()
up_pc_link_deps(ultrapool_static UP_PC_REQUIRES_PRIVATE UP_PC_LIBS_PRIVATE)
up_pc_link_deps(ultrapool_par UP_PC_PAR_REQUIRES_PRIVATE UP_PC_PAR_LIBS_PRIVATE
  COVERED ultrapool_static)
configure_file(cmake/ultrapool.pc.in ${CMAKE_CURRENT_BINARY_DIR}/ultrapool.pc @ONLY)
configure_file(cmake/ultrapool-parallel.pc.in ${CMAKE_CURRENT_BINARY_DIR}/ultrapool-parallel.pc
  @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ultrapool.pc
  ${CMAKE_CURRENT_BINARY_DIR}/ultrapool-parallel.pc DESTINATION ${UP_PC_DIR})
# The MPI mode's module, ultrapool-mpi. libultrapool_mpi is static and calls
# functions of the pool library that libultrapool.so keeps hidden, so it is
# linked with the static pool library, libultrapool.a, like the CMake target
# ultrapool::mpi. The module names both archives, and puts what they link
# in Requires and Libs (not the .private fields): a program linked against
# shared libraries needs them as much as a static one. MPI comes from its
# own pkg-config module where this machine has one for the MPI built with;
# else the program is compiled with that MPI's mpicc (docs/packaging.md).
if(UP_HAVE_MPI)
  up_pc_mpi_module(up_mpi_module)
  if(up_mpi_module)
    message(STATUS "ultrapool: ultrapool-mpi.pc requires MPI's pkg-config module ${up_mpi_module}")
  else()
    message(STATUS "ultrapool: no pkg-config module describes this MPI: programs that use "
                   "ultrapool-mpi.pc are compiled with mpicc")
  endif()
  set_property(TARGET MPI::MPI_C PROPERTY UP_PC_MODULE "${up_mpi_module}")
  up_pc_link_deps(ultrapool_mpi UP_PC_MPI_REQUIRES UP_PC_MPI_LIBS)
  get_target_property(up_pool_archive ultrapool_static OUTPUT_NAME)
  set(UP_PC_MPI_POOL_ARCHIVE
    "${CMAKE_STATIC_LIBRARY_PREFIX}${up_pool_archive}${CMAKE_STATIC_LIBRARY_SUFFIX}")
  configure_file(cmake/ultrapool-mpi.pc.in ${CMAKE_CURRENT_BINARY_DIR}/ultrapool-mpi.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ultrapool-mpi.pc DESTINATION ${UP_PC_DIR})
endif()
if(TARGET ultrapool_gomp)
  up_pc_link_deps(ultrapool_gomp UP_PC_OMP_REQUIRES_PRIVATE UP_PC_OMP_LIBS_PRIVATE
    COVERED ultrapool)
  configure_file(cmake/ultrapool-openmp.pc.in ${CMAKE_CURRENT_BINARY_DIR}/ultrapool-openmp.pc
    @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ultrapool-openmp.pc DESTINATION ${UP_PC_DIR})
endif()

# An Lmod module file, <datadir>/modulefiles/ultrapool/<version>.lua
# (packaging/modules/ultrapool.lua.in): `module use <prefix>/share/modulefiles`
# then `module load ultrapool`. It holds absolute paths, so it is written at
# install time (cmake/InstallModule.cmake), for the prefix installed to.
install(CODE "
  set(UP_MODULE_TEMPLATE \"${PROJECT_SOURCE_DIR}/packaging/modules/ultrapool.lua.in\")
  set(UP_MODULE_STAGE \"${CMAKE_CURRENT_BINARY_DIR}/modulefile\")
  set(UP_MODULE_VERSION \"${PROJECT_VERSION}\")
  set(UP_MODULE_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
  set(UP_MODULE_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
  set(UP_MODULE_DATADIR \"${CMAKE_INSTALL_DATADIR}\")
  set(UP_MODULE_MANDIR \"${CMAKE_INSTALL_MANDIR}\")
  include(\"${PROJECT_SOURCE_DIR}/cmake/InstallModule.cmake\")
")
