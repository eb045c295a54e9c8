# The README's quick starts, as printed there: every ```c block of
# README.md that holds a whole program (an int main) is cut out when CMake
# runs, built with the project's warnings and run as test_readme_N (N:
# the program's place in the README). Quick start 3 also runs with a
# malformed OMP_* variable, which only warns (the same result), and with
# a malformed UP_* one, for which it must say so and exit non-zero.
set(readme_file ${PROJECT_SOURCE_DIR}/README.md)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${readme_file})
file(READ ${readme_file} readme_rest)
set(fence "```")
set(readme_n 0)
while(TRUE)
  # Quoted everywhere: C code holds semicolons, CMake's list separator.
  string(FIND "${readme_rest}" "${fence}c\n" at)
  if(at EQUAL -1)
    break()
  endif()
  math(EXPR at "${at} + 5")
  string(SUBSTRING "${readme_rest}" ${at} -1 readme_rest)
  string(FIND "${readme_rest}" "\n${fence}" end)
  if(end EQUAL -1)
    message(FATAL_ERROR "README.md: a ${fence}c block without its end")
  endif()
  string(SUBSTRING "${readme_rest}" 0 ${end} block)
  string(SUBSTRING "${readme_rest}" ${end} -1 readme_rest)
  if(NOT block MATCHES "int main\\(")
    continue()
  endif()
  math(EXPR readme_n "${readme_n} + 1")
  set(src ${CMAKE_CURRENT_BINARY_DIR}/readme_${readme_n}.c)
  file(CONFIGURE OUTPUT ${src} CONTENT "${block}\n" @ONLY)
  add_executable(test_readme_${readme_n} ${src})
  target_link_libraries(test_readme_${readme_n} PRIVATE ultrapool_par ultrapool_static)
  add_test(NAME test_readme_${readme_n} COMMAND test_readme_${readme_n})
  set_tests_properties(test_readme_${readme_n} PROPERTIES TIMEOUT 120 LABELS "unit")
endwhile()
if(readme_n LESS 3)
  message(FATAL_ERROR "README.md: ${readme_n} whole programs, expected the 3 quick starts")
endif()
set_tests_properties(test_readme_3 PROPERTIES PASS_REGULAR_EXPRESSION "fib\\(30\\) = 832040")
add_test(NAME test_readme_3_omp_bad COMMAND test_readme_3)
set_tests_properties(test_readme_3_omp_bad PROPERTIES TIMEOUT 120 LABELS "unit"
                     ENVIRONMENT "OMP_NUM_THREADS=abc;OMP_SCHEDULE=bogus"
                     PASS_REGULAR_EXPRESSION "fib\\(30\\) = 832040")
# Must exit non-zero with a message naming the variable.
foreach(bad "UP_NUM_THREADS=abc" "UP_BACKEND=native")
  string(REGEX REPLACE "=.*" "" var "${bad}")
  add_test(NAME test_readme_3_${var}
    COMMAND sh -c "out=$(\"$0\" 2>&1); rc=$?; echo \"exit $rc: $out\"; [ $rc -ne 0 ] && echo \"$out\" | grep -q \"$1\""
            $<TARGET_FILE:test_readme_3> ${var})
  set_tests_properties(test_readme_3_${var} PROPERTIES TIMEOUT 120 LABELS "unit"
                       ENVIRONMENT "${bad}")
endforeach()
