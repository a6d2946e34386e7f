// The real prover operations (actors/detail/prover_ops.hpp) on a fixture circuit:
// what a synthesis reports of itself (synthesis_timing), with a, b, c
// computed there and left to the backends, as the SYNTH_TIMING line, the
// witness span and the summary read it.
#include <doctest/doctest.h>

#include <string>

#include "actors/detail/prover_ops.hpp"
#include "helpers.hpp"
#include "zk/curves.hpp"

using namespace proofline;

TEST_CASE("a synthesis reports its witness read with a, b, c computed and left to the backends") {
  using C = zk::bn254;
  const std::string dir = test::fixture_dir<C>("small");
  prover_ops ops = real_prover_ops(1);
  auto key = ops.load_key(dir + "/circuit.zkey");
  for (bool abc : {true, false}) {
    CAPTURE(abc);
    synthesis_request req;
    req.witness.name = dir + "/witness_0.wtns";
    req.buffers = memory::heap_source();
    req.threads = 1;
    req.abc = abc;
    synthesis_timing t;
    auto part = ops.synthesize(key, req, t);
    REQUIRE(part);
    CHECK(t.recorded);
    CHECK_FALSE(t.generated);  // read from a .wtns
    CHECK(t.generator_bytes == 0);
    CHECK(t.read_witness_us > 0);
    CHECK(t.threads == 1);
    if (abc)
      CHECK(t.abc_us > 0);
    else
      CHECK(t.abc_us == 0);  // the backends compute them
  }
}
