# up_dep_option(<name> <help>): a tri-state cache variable for an optional
# part: AUTO (the default: on when what it needs is found), ON (required:
# configure fails when it is missing) or OFF. cmake/Deps.cmake reads it.
function(up_dep_option name help)
  set(full_help "${help}: AUTO (when found), ON (required) or OFF")
  # A cache made before these were tri-state holds ON from a plain option()
  # whose ON meant "when found". Such an entry carries that option's help
  # text (<help> exactly); it becomes AUTO, so that reconfiguring an old
  # build directory on a machine without X does not start to fail. A value
  # given with -D keeps its meaning: its help text is CMake's own.
  if(DEFINED CACHE{${name}})
    get_property(old_help CACHE ${name} PROPERTY HELPSTRING)
    get_property(old_type CACHE ${name} PROPERTY TYPE)
    if(old_type STREQUAL "BOOL" AND old_help STREQUAL help AND "${${name}}")
      set(${name} AUTO CACHE STRING "${full_help}" FORCE)
    endif()
  endif()
  set(${name} AUTO CACHE STRING "${full_help}")
  set_property(CACHE ${name} PROPERTY HELPSTRING "${full_help}")
  set_property(CACHE ${name} PROPERTY STRINGS AUTO ON OFF)
endfunction()
