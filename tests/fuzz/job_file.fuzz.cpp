// Fuzz target: job files (jobs/job_file), the text `proofline run` reads and
// a server receives in every submission. Any input must either parse into
// jobs that satisfy the schema's promises or throw job_file_error naming the
// file; any other exception, crash, leak or hang is a finding.
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "jobs/job_file.hpp"

using proofline::jobs::job_file_error;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // With the default limit and with one of 4 partitions, whose count of
  // JSON values (64) inputs of the fuzzer's lengths pass.
  for (std::size_t max_partitions : {proofline::jobs::default_max_partitions, std::size_t{4}}) {
    try {
      auto jobs =
          proofline::jobs::parse_job_file(text, "jobs.json", "/base", "/out", max_partitions);
      if (jobs.empty()) std::abort();
      std::set<std::string> ids;
      for (const auto& j : jobs) {
        if (j.id.empty() || j.zkey.empty() || j.out.empty() || j.witnesses.empty()) std::abort();
        if (j.single && j.witnesses.size() != 1) std::abort();
        if (!ids.insert(j.id).second) std::abort();  // ids are unique
        for (const auto* s : {&j.id, &j.zkey, &j.out})
          if (s->find('\0') != std::string::npos) std::abort();
      }
    } catch (const job_file_error& e) {
      if (std::string_view(e.what()).substr(0, 9) != "jobs.json") std::abort();
    }
  }
  return 0;
}
