// The definition of a function that comes after the executable's own in the
// dynamic linker's lookup: the library's, for the functions proofline's
// executables define in place of a library's (net/net_tls_fix.cpp,
// net/basp_guard.cpp, net/decode_limits.cpp) and call from there.
#pragma once

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace proofline::net {

/// The next definition of the function whose (mangled) name is `name`, as
/// a pointer of type F. Aborts, naming it, when no library defines it: the
/// wrapper would have nothing to call.
template <class F>
F next_definition(const char* name) {
  void* fn = dlsym(RTLD_NEXT, name);
  if (fn == nullptr) {
    std::fprintf(stderr, "proofline: no library defines %s (%s)\n", name, dlerror());
    std::abort();
  }
  return reinterpret_cast<F>(fn);
}

}  // namespace proofline::net
