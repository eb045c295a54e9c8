# Sanitizer builds: UP_SANITIZE=thread or UP_SANITIZE=address (the latter
# is ASan + UBSan). Any report aborts the run (-fno-sanitize-recover=all),
# so a test cannot pass with a finding in it.
if(UP_SANITIZE STREQUAL "thread")
  set(up_san_flags -fsanitize=thread -fno-omit-frame-pointer -fno-sanitize-recover=all)
elseif(UP_SANITIZE STREQUAL "address")
  set(up_san_flags -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
elseif(NOT UP_SANITIZE STREQUAL "")
  message(FATAL_ERROR "UP_SANITIZE must be empty, 'thread' or 'address', not '${UP_SANITIZE}'")
endif()
if(up_san_flags)
  add_compile_options(${up_san_flags})
  add_link_options(${up_san_flags})
  add_compile_definitions(UP_SANITIZER_BUILD=1)
  if(UP_SANITIZE STREQUAL "thread")
    add_compile_definitions(UP_TSAN_BUILD=1)
  endif()
endif()
