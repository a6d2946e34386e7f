// Fakes for actor tests: a prover_ops and a gpu::backend that do no maths but
// record what reaches them, in one event log, so tests can assert the order
// of grants, proves and writes. Failures are injected by file name:
//   a key path containing "missing" fails to load; "huge" gives a key whose
//   partitions exceed any small budget; a witness path containing "bad" fails
//   synthesis; a witness listed in fail_prove makes the backend throw; one in
//   bad_proofs gets proofs that fail their self-check that many times; an
//   .r1cs path containing "missing" fails to load, one containing "wide"
//   has 9 wires (the fake key's circuit 8). A
//   backend whose kind is in lost_kinds throws gpu::device_lost; a result
//   changed by the fault-injection decorator (engine/fault_inject.hpp) fails
//   the fake self-check.
// Several fake devices (backend(d)) log what each device prepared and proved
// in device_events; a device can refuse keys (refuses_key: its prepare()
// and prove() throw as a GPU without room would) or stop working after a
// number of proofs (fails_after: every later prove() throws).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "actors/key_cache.hpp"
#include "actors/memory_manager.hpp"
#include "actors/detail/prover_ops.hpp"
#include "gpu/backend.hpp"

namespace proofline::test {

/// Shapes of the fake key: 8 variables (2 public) over a 16-point domain,
/// BN254 sizes, CPU backend footprint (4 domain vectors, 1 witness copy):
/// 8*32 + 3*16*32 + 4*16*32 + 8*32 = 4096 bytes per partition.
inline constexpr uint64_t fake_partition_bytes = 8 * 32 + 3 * 16 * 32 + 4 * 16 * 32 + 8 * 32;
inline constexpr uint64_t fake_bulk_bytes = 3 * 16 * 32;

struct fake_world : std::enable_shared_from_this<fake_world> {
  // Tests may lock here; the rule against locks covers actors/, messages/, memory/.
  mutable std::mutex mtx;
  std::vector<std::string> events;  ///< "load k", "grant w", "synth w", "prove w", "write path"
  std::map<std::string, std::string> files;  ///< path -> contents
  std::vector<std::string> tags;             ///< witness path by tag (w[1])
  std::set<std::string> fail_prove;
  /// Backend kinds whose device is lost: every prove() throws gpu::device_lost.
  std::set<std::string> lost_kinds;
  /// Witness -> how many more of its proofs fail the (fake) pairing check.
  std::map<std::string, int> bad_proofs;
  std::chrono::milliseconds synth_delay{0};
  std::chrono::milliseconds prove_delay{0};
  int key_loads = 0;
  /// Version of each key file as identify() reports it (default 1); bump one
  /// to make the file look changed on disk.
  std::map<std::string, uint64_t> file_versions;
  /// Keys that hold real host bytes: path -> H points (a typed BN254 key).
  std::map<std::string, size_t> key_points;

  void log(std::string e);
  std::vector<std::string> events_of(const std::string& kind) const;
  std::string file(const std::string& path) const;

  prover_ops ops();
  /// A file identity from file_versions (the backend logs "prepare <path>"
  /// and "evict <path>" for keys made ready and forgotten).
  std::function<std::optional<file_identity>(const std::string&)> identify();
  /// A fake backend; it logs "prove <witness>" and "ran <kind> <witness>"
  /// for each partition it proves. Kind "fake" is fake device 0, any other
  /// kind device -1 (in device_events, refuses_key, fails_after, prove_calls).
  std::shared_ptr<gpu::backend> backend(const std::string& kind = "fake");
  /// An on_grant observer that logs "grant <witness>" and checks the budget.
  std::function<void(const grant_event&)> grant_logger(uint64_t budget);
  /// A fake device with backend index `device` ("fake device <d>").
  std::shared_ptr<gpu::backend> backend(int device);
  /// "prepare <d> <key>" and "prove <d> <key> <witness>" (successful proofs only), in order.
  std::vector<std::string> device_events;
  /// Device -> key paths it cannot hold.
  std::map<int, std::set<std::string>> refuses_key;
  /// Device -> proofs after which every prove() on it throws.
  std::map<int, int> fails_after;
  /// Device -> proofs after which it reports window tables for every key it
  /// prepared (key_stats: tables, tables_ms 3, a "key_tables" span); before
  /// that, keys are resident on plain points. Devices not listed report
  /// nothing (key_stats: not resident), as the CPU backend does.
  std::map<int, int> tables_after;
  /// Device -> prove() calls made on it (failed ones included).
  std::map<int, int> prove_calls;
  /// Successful proofs of `witness`, over all devices.
  int proofs_of(const std::string& witness) const;
  /// Devices that proved `witness`.
  std::set<int> devices_of(const std::string& witness) const;
  uint64_t grants_over_budget = 0;
};

}  // namespace proofline::test
