# Sanitizer builds (scripts/sanitize.sh, docs/RELIABILITY.md).
#
#   -DPROOFLINE_SANITIZE=address   AddressSanitizer + UndefinedBehaviorSanitizer
#   -DPROOFLINE_SANITIZE=thread    ThreadSanitizer
#
# Every target of the tree is compiled and linked with the sanitizer, with
# frame pointers so reports have whole stacks. Both build at -O0 with line
# tables only (-g1): reports keep every frame's function, file and line, and
# compiling CAF's templates costs about a third of -O1 -g; the tests these
# builds run are short enough that their slower run costs less than the
# optimiser would (docs/RELIABILITY.md). Such a build is CPU-only
# (nvcc code is not instrumented, and the CUDA backend cannot run here) and
# links no jemalloc: the sanitizers replace malloc themselves, and memory/
# reaches jemalloc through weak symbols, so the runtime falls back to the
# heap exactly as a build without jemalloc does.
set(PROOFLINE_SANITIZE "" CACHE STRING "Sanitizer build: address (ASan+UBSan), thread (TSan) or empty")
set_property(CACHE PROOFLINE_SANITIZE PROPERTY STRINGS "" address thread)

if(PROOFLINE_SANITIZE STREQUAL "address")
  # UBSan checks stay recoverable so that tests/sanitize/ubsan.supp can
  # silence a report from CAF's headers; UBSAN_OPTIONS=halt_on_error=1
  # (scripts/sanitize.sh) still stops at every report not suppressed.
  set(_proofline_san -fsanitize=address,undefined)
  set(_proofline_san_level -O0 -g1)
elseif(PROOFLINE_SANITIZE STREQUAL "thread")
  set(_proofline_san -fsanitize=thread)
  set(_proofline_san_level -O0 -g1)
elseif(NOT PROOFLINE_SANITIZE STREQUAL "")
  message(FATAL_ERROR "PROOFLINE_SANITIZE must be address, thread or empty, not '${PROOFLINE_SANITIZE}'")
endif()

if(PROOFLINE_SANITIZE)
  set(PROOFLINE_CUDA OFF CACHE BOOL "Build the CUDA backend when a CUDA compiler is found" FORCE)
  add_compile_options(${_proofline_san} -fno-omit-frame-pointer ${_proofline_san_level})
  add_link_options(${_proofline_san})
  message(STATUS "proofline: ${PROOFLINE_SANITIZE} sanitizer build (CPU only, no jemalloc)")
  option(PROOFLINE_SANITIZE_UNITY "Unity build (batches of source files) in a sanitizer build" ON)
  set(PROOFLINE_SANITIZE_UNITY_BATCH 8 CACHE STRING "Source files per unity batch in a sanitizer build")
  if(PROOFLINE_SANITIZE_UNITY)
    set(CMAKE_UNITY_BUILD ON)
    set(CMAKE_UNITY_BUILD_BATCH_SIZE ${PROOFLINE_SANITIZE_UNITY_BATCH})
  endif()
endif()
