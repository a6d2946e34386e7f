// The progress line of submit and await (net/client_progress.hpp): its
// format (its ETA's rate is base::finish_rate, tests/base).
#include <doctest/doctest.h>

#include "base/text.hpp"
#include "net/client_progress.hpp"

using proofline::net::client_progress_line;
using proofline::base::duration_text;
using proofline::net::job_count;

TEST_CASE("durations") {
  CHECK(duration_text(850) == "850 ms");
  CHECK(duration_text(3240) == "3.2 s");
  CHECK(duration_text(245000) == "4 min 05 s");
  CHECK(duration_text(7380000) == "2 h 03 min");
}

TEST_CASE("the line: counts and ETA first, unfinished jobs after, cut to the width") {
  std::vector<job_count> jobs{{"batch", 2, 4, false}, {"single", 1, 1, true}, {"x\ny", 0, 3, false}};
  CHECK(client_progress_line(jobs, std::nullopt) == "[3/8 proofs, ETA -] batch 2/4 x\\x0ay 0/3");
  CHECK(client_progress_line(jobs, 4100.0) == "[3/8 proofs, ETA 4.1 s] batch 2/4 x\\x0ay 0/3");
  const auto cut = client_progress_line(jobs, 4100.0, 30);
  CHECK(cut.size() == 30);
  CHECK(cut == "[3/8 proofs, ETA 4.1 s] bat...");
}
