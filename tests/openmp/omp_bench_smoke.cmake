# scripts/bench --omp's pieces at a tiny size (no timing is checked):
# omp_epcc with a few repetitions on ultrapool's libgomp.so.1, on GCC's
# libgomp as linked and on libomp's GOMP layer (when libomp.so.5 is
# installed), each line parseable, on the runtime asked for and with
# finite numbers, every row of `omp_epcc --list` printed once; and the
# runner's --help. CMake before 3.29 cannot exit 77 from a script, so a
# missing libomp prints the skip line the test's SKIP_REGULAR_EXPRESSION
# matches, after the other legs passed.
#   cmake -DPROG=omp_epcc -DOURS=<dir of our libgomp.so.1> -DRUNNER=omp_run.py
#         -DPYTHON=python3 -DWORK=<scratch dir> -P omp_bench_smoke.cmake
cmake_minimum_required(VERSION 3.16) # policies of a project (quoted if() arguments)
foreach(v PROG OURS RUNNER PYTHON WORK)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "omp_bench_smoke: -D${v}= is missing")
  endif()
endforeach()

set(args --threads 2 --innerreps 4 --sched-innerreps 2 --iters 4 --outer 1 --chunks 1,4)
execute_process(COMMAND ${PROG} ${args} --list OUTPUT_VARIABLE listed RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "omp_bench_smoke: omp_epcc --list failed (${rc})")
endif()
string(REGEX MATCHALL "[^\n]+" expected "${listed}")
list(LENGTH expected nexpected)

set(num "-?[0-9]+(\\.[0-9]+)?") # printf's %.1f of a finite value; not inf or nan
set(legs ultrapool libgomp)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(libomp_path "")
foreach(f /usr/lib/x86_64-linux-gnu/libomp.so.5 /usr/lib/aarch64-linux-gnu/libomp.so.5)
  if(EXISTS ${f} AND libomp_path STREQUAL "")
    set(libomp_path ${f})
  endif()
endforeach()
if(libomp_path STREQUAL "")
  file(GLOB libomp_found /usr/lib/llvm-*/lib/libomp.so.5)
  if(libomp_found)
    list(GET libomp_found 0 libomp_path)
  endif()
endif()
if(NOT libomp_path STREQUAL "")
  file(CREATE_LINK ${libomp_path} ${WORK}/libgomp.so.1 SYMBOLIC)
  list(APPEND legs libomp)
endif()

foreach(leg ${legs})
  if(leg STREQUAL "ultrapool")
    set(env LD_LIBRARY_PATH=${OURS})
  elseif(leg STREQUAL "libomp")
    set(env LD_LIBRARY_PATH=${WORK})
  else()
    set(env --unset=LD_LIBRARY_PATH)
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=LD_PRELOAD ${env} ${PROG} ${args}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "omp_bench_smoke: omp_epcc on ${leg} failed (${rc}):\n${out}${err}")
  endif()
  string(REPLACE ";" "," out "${out}") # a counter note may hold one: CMake's list separator
  string(REGEX MATCHALL "[^\n]+" lines "${out}")
  set(seen 0)
  set(counters 0)
  foreach(line ${lines})
    if(line MATCHES "^omp_epcc counters runtime=([a-z]+)( PAPI_[A-Z0-9_]+=([0-9]+|missing))+ note=")
      math(EXPR counters "${counters} + 1")
    elseif(line MATCHES "^omp_epcc runtime=([a-z]+) group=([a-z]+) row=([A-Z0-9_]+) threads=2 innerreps=[0-9]+ delay_ns=${num} ref_ns=${num} test_ns=${num} overhead_ns=${num} min_ns=${num} max_ns=${num}$")
      list(FIND expected "${CMAKE_MATCH_2} ${CMAKE_MATCH_3}" at)
      if(at EQUAL -1)
        message(FATAL_ERROR "omp_bench_smoke: ${leg}: a row --list does not name: ${line}")
      endif()
      math(EXPR seen "${seen} + 1")
    else()
      message(FATAL_ERROR "omp_bench_smoke: ${leg}: a line not parseable or not finite: ${line}")
    endif()
    if(NOT CMAKE_MATCH_1 STREQUAL leg)
      message(FATAL_ERROR "omp_bench_smoke: the ${leg} leg ran on ${CMAKE_MATCH_1}")
    endif()
  endforeach()
  if(NOT seen EQUAL nexpected OR NOT counters EQUAL 1)
    message(FATAL_ERROR "omp_bench_smoke: ${leg}: ${seen} rows of ${nexpected}, ${counters} "
                        "counter lines of 1:\n${out}")
  endif()
  message(STATUS "ok ${leg}: ${seen} rows")
endforeach()

execute_process(COMMAND ${PYTHON} ${RUNNER} --help OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "scripts/bench --omp")
  message(FATAL_ERROR "omp_bench_smoke: ${RUNNER} --help failed (${rc}):\n${out}")
endif()
execute_process(COMMAND ${PYTHON} ${RUNNER} --check-args --rows NO_SUCH_ROW
                OUTPUT_QUIET ERROR_QUIET RESULT_VARIABLE rc)
if(rc EQUAL 0)
  message(FATAL_ERROR "omp_bench_smoke: the runner took an unknown row")
endif()
if(libomp_path STREQUAL "")
  message("omp_bench_smoke: skip: libomp.so.5 not installed (Debian: libomp-dev); its leg left out")
endif()
