// Force-included (-include) into the sources of `circom --c` by
// `proofline witness build`: the generated code prints a failed assert's
// message on std::cout; here std::cout names proofline_wg_cout() instead, a
// stream of the calling thread that witness/entry.cpp reads back, so the
// message becomes the failed input's error and concurrent computations do
// not mix their text.
#pragma once
#include <iostream>
#include <ostream>

namespace std {
ostream& proofline_wg_cout();
}
#define cout proofline_wg_cout()
