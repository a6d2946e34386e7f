# Included into CAF's project() by scripts/build-caf-tsan.sh (as
# CMAKE_PROJECT_INCLUDE) for its unity build: two of libcaf_io's files
# (native_socket.cpp and default_multiplexer.cpp) define the same file-local
# port_of(), so native_socket.cpp is compiled on its own. Run at the end of
# CAF's top-level CMakeLists, when libcaf_io's directory exists.
include_guard(GLOBAL)
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL
  set_source_files_properties ${CMAKE_SOURCE_DIR}/libcaf_io/src/io/network/native_socket.cpp
    DIRECTORY ${CMAKE_SOURCE_DIR}/libcaf_io PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
