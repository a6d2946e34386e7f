// result.json rendering: field order, nulls, the self-check fields and a
// failed partition's error.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "actors/detail/result_file.hpp"

using namespace proofline;

TEST_CASE("result.json of a failed job lists the done partition and the failed one's error") {
  job_report r;
  r.id = "b";
  r.state = job_state::failed;
  r.has_error = true;
  r.error = {"w1.wtns", "w1.wtns: 1520 witness values, circuit.zkey expects 1521"};
  partition_report done;
  done.index = 0;
  done.state = partition_state::done;
  done.proof_file = "proof_0.json";
  done.public_file = "public_0.json";
  done.spans.memory = {0.1, 0.3};
  done.spans.synthesize = {0.4, 12.5};
  done.spans.prove = {12.6, 42.8};
  done.spans.finalize = {42.9, 44.2};
  done.verified = true;
  done.verify_ms = 2.1234;
  done.retries = 1;
  done.spans.backend = "cpu:fallback";
  partition_report failed;
  failed.index = 1;
  failed.state = partition_state::failed;
  failed.spans.synthesize = {0.5, 1.0004};
  failed.error = r.error;
  r.partitions = {done, failed};
  r.total = {0.0, 95.0};

  auto text = result_json(r);
  CHECK(text.back() == '\n');
  auto j = nlohmann::ordered_json::parse(text);
  CHECK(
      j.dump() ==
      R"({"id":"b","status":"failed","error":{"file":"w1.wtns","message":"w1.wtns: 1520 witness values, circuit.zkey expects 1521"},)"
      R"("partitions":[{"index":0,"status":"done","proof":"proof_0.json","public":"public_0.json",)"
      R"("spans_ms":{"memory":[0.1,0.3],"synthesize":[0.4,12.5],"prove":[12.6,42.8],"finalize":[42.9,44.2]},)"
      R"("verified":true,"verify_ms":2.123,"retries":1,"backend":"cpu:fallback"},)"
      R"({"index":1,"status":"failed","proof":null,"public":null,"spans_ms":{"synthesize":[0.5,1.0]},)"
      R"("verified":false,"verify_ms":0.0,"retries":0,"backend":null,)"
      R"("error":{"file":"w1.wtns","message":"w1.wtns: 1520 witness values, circuit.zkey expects 1521"}}],)"
      R"("spans_ms":{"total":[0.0,95.0]}})");
}
