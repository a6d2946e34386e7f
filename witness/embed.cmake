# Writes OUT: entry.cpp, abi.h and capture.hpp of DIR as C++ string literals
# (witness/build.hpp: entry_source, abi_header, capture_header).
set(text "// Generated from witness/entry.cpp, abi.h and capture.hpp by embed.cmake.\n")
string(APPEND text "namespace proofline::witness {\n")
foreach(pair "entry.cpp;entry_source" "abi.h;abi_header" "capture.hpp;capture_header")
  list(GET pair 0 file)
  list(GET pair 1 fn)
  file(READ ${DIR}/${file} body)
  string(APPEND text "const char* ${fn}() {\n  return R\"PLWG(${body})PLWG\";\n}\n")
endforeach()
string(APPEND text "}  // namespace proofline::witness\n")
file(WRITE ${OUT} "${text}")
