// proofline-fuzz-seeds OUT_DIR JOB_FILE WTNS_FILE PROOF_JSON: writes the
// seed corpus of fuzz_net_message, one file per message the control actor
// accepts, built from the fixtures and encoded as CAF encodes them, each
// prefixed by its net_kind byte (tests/fuzz/net_message.hpp).
#include <caf/binary_serializer.hpp>
#include <caf/make_message.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/net_message.hpp"

using namespace proofline;
using fuzz::net_kind;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "proofline-fuzz-seeds: cannot read %s\n", path.c_str());
    std::exit(1);
  }
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

template <class T>
void write(const std::string& dir, const std::string& name, net_kind kind, T x) {
  std::vector<char> bytes{static_cast<char>(kind)};
  caf::binary_serializer sink{fuzz::net_system(), bytes};
  if (sink(x)) std::exit(1);
  std::ofstream(dir + "/" + name, std::ios::binary).write(bytes.data(), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s OUT_DIR JOB_FILE WTNS_FILE PROOF_JSON\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const std::string text = slurp(argv[2]);
  const std::string wtns = slurp(argv[3]);

  job_submission by_path{"/data/jobs.json", text, false, {}};
  job_submission inline_one{
      "/data/jobs.json",
      R"({"jobs": [{"id": "a", "zkey": "k.zkey", "witness": "w.wtns", "out": "out/a"}]})", true,
      {inline_witness{"/data/w.wtns", std::vector<uint8_t>(wtns.begin(), wtns.end())}}};
  std::vector<watch_cursor> cursors{{1, 0}, {2, 3}};
  node_info node{"host:42", {"cpu (2 threads)"}, uint64_t(1) << 30, 2};
  partition_result result{7, 3, true, slurp(argv[4]), "[\"33\"]", {}, {}};
  partition_result failure{7, 4, false, "", "", {}, {"w.wtns", "truncated"}};

  write(dir, "msg_submit", net_kind::message, caf::make_message(submit_atom::value, by_path));
  write(dir, "msg_submit_inline", net_kind::message,
        caf::make_message(submit_atom::value, inline_one));
  write(dir, "msg_status", net_kind::message, caf::make_message(status_atom::value));
  write(dir, "msg_cancel", net_kind::message,
        caf::make_message(cancel_atom::value, std::string("a")));
  write(dir, "msg_watch", net_kind::message,
        caf::make_message(watch_atom::value, cursors, uint32_t(1000)));
  write(dir, "msg_metrics", net_kind::message, caf::make_message(metrics_atom::value));
  write(dir, "msg_credit", net_kind::message,
        caf::make_message(credit_atom::value, uint64_t(1), uint32_t(2)));
  write(dir, "msg_result", net_kind::message, caf::make_message(result_atom::value, result));
  write(dir, "msg_result_failed", net_kind::message,
        caf::make_message(result_atom::value, failure));
  write(dir, "submission", net_kind::job_submission, by_path);
  write(dir, "submission_inline", net_kind::job_submission, inline_one);
  write(dir, "watch_cursors", net_kind::watch_cursors, cursors);
  write(dir, "node_info", net_kind::node_info, node);
  write(dir, "partition_result", net_kind::partition_result, result);
  return 0;
}
