// `proofline witness build|calc|info`: witness generators from circom's C++
// output (witness/build.hpp, witness/generator.hpp).
#pragma once

namespace proofline::app {

class cli;

/// Registers `proofline witness`.
void add_witness_command(cli& c);

}  // namespace proofline::app
