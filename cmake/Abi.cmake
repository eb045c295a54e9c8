# up_no_undefined(<target>): a shared library that leaves a symbol
# undefined fails to link instead of failing when a program loads it. This
# is what catches a shared library that calls a hidden function of another
# one. Sanitizer builds are left alone: their runtime's symbols are
# resolved from the executable, so every instrumented library has some.
function(up_no_undefined target)
  if(UP_SANITIZE STREQUAL "" AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
    target_link_options(${target} PRIVATE LINKER:--no-undefined)
  endif()
endfunction()
