# ctest body of bench_memory_cuda (CUDA builds): a perf binary run with --memory cuda (PERF, the ;-list ARGS).
# Without a GPU or driver it must exit 77 with one line saying why ("--memory cuda: ...; skipped"), never
# crash; with one it must run on device memory and every checked value must be right.
#   cmake -DPERF=... -DARGS=... -P check_memory_cuda.cmake
execute_process(COMMAND "${PERF}" ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(rc EQUAL 77)
  if(NOT err MATCHES "--memory cuda: [^\n]+; skipped\n$")
    message(FATAL_ERROR "${PERF} exited with 77 without the one-line '--memory cuda: <reason>; skipped'")
  endif()
  if(NOT out STREQUAL "")
    message(FATAL_ERROR "${PERF} exited with 77 but printed a table")
  endif()
  return()
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PERF} exited with ${rc} (want 77 without a GPU, 0 with one)")
endif()
if(NOT out MATCHES "memory cuda \\(" OR NOT out MATCHES "# Out of bounds values : 0 OK")
  message(FATAL_ERROR "${PERF}: exit 0 but no 'memory cuda (...)' header or no '# Out of bounds values : 0 OK'")
endif()
