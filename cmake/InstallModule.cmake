# Run at install time (cmake/Install.cmake includes it in install(CODE)):
# writes the Lmod module file for the prefix being installed to, which
# `cmake --install --prefix` may have changed since the configure, and
# installs it as <datadir>/modulefiles/ultrapool/<version>.lua.
#
# In: UP_MODULE_TEMPLATE, UP_MODULE_STAGE (a build-tree folder),
# UP_MODULE_VERSION, UP_MODULE_BINDIR, UP_MODULE_LIBDIR, UP_MODULE_DATADIR,
# UP_MODULE_MANDIR
# (GNUInstallDirs' values: relative to the prefix, or absolute), and
# CMAKE_INSTALL_PREFIX, which CMake sets for the install.

# up_module_path(<var> <dir>): <dir> under the prefix unless it is
# absolute, as a Lua string's contents.
function(up_module_path var dir)
  if(IS_ABSOLUTE "${dir}")
    set(path "${dir}")
  else()
    set(path "${CMAKE_INSTALL_PREFIX}/${dir}")
  endif()
  string(REPLACE "\\" "\\\\" path "${path}")
  string(REPLACE "\"" "\\\"" path "${path}")
  set(${var} "${path}" PARENT_SCOPE)
endfunction()

up_module_path(UP_MODULE_ROOT "${CMAKE_INSTALL_PREFIX}")
up_module_path(UP_MODULE_BINDIR "${UP_MODULE_BINDIR}")
up_module_path(UP_MODULE_LIBDIR "${UP_MODULE_LIBDIR}")
up_module_path(UP_MODULE_MANDIR "${UP_MODULE_MANDIR}")
configure_file("${UP_MODULE_TEMPLATE}" "${UP_MODULE_STAGE}/${UP_MODULE_VERSION}.lua" @ONLY)

if(IS_ABSOLUTE "${UP_MODULE_DATADIR}")
  set(up_module_dest "${UP_MODULE_DATADIR}/modulefiles/ultrapool")
else()
  set(up_module_dest "${CMAKE_INSTALL_PREFIX}/${UP_MODULE_DATADIR}/modulefiles/ultrapool")
endif()
# file(INSTALL) adds DESTDIR and records the file in install_manifest.txt.
file(INSTALL DESTINATION "${up_module_dest}" TYPE FILE
  FILES "${UP_MODULE_STAGE}/${UP_MODULE_VERSION}.lua")
