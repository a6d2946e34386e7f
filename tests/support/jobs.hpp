// Job specifications as a job file would give them, for tests of what runs
// jobs (tests/actors, tests/bench).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "messages/catalogue.hpp"

namespace proofline::test {

/// Job `id` of one partition per witness on key `zkey`, written to
/// "out/<id>".
inline job_spec make_job(std::string id, std::vector<std::string> witnesses,
                         priority prio = priority::normal, std::string zkey = "circuit.zkey") {
  job_spec s;
  s.id = id;
  s.zkey = std::move(zkey);
  s.single = witnesses.size() == 1;
  s.witnesses = std::move(witnesses);
  s.out = "out/" + id;
  s.prio = prio;
  return s;
}

}  // namespace proofline::test
