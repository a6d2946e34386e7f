// What `serve` keeps on disk and may open: the journal under --state (opened
// before serve listens, so a bad one stops it first), the spool for inline
// and uploaded witnesses, and the process's confinement (base/confined.hpp)
// to the allowed roots and the daemon's own directories.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "actors/journal.hpp"

namespace proofline::app {

struct serve_options;

/// Held for the daemon's life. On destruction the confinement is lifted and
/// a spool of this process's own (neither named with --spool nor under
/// --state) is removed.
class serve_files {
 public:
  serve_files() = default;
  ~serve_files();
  serve_files(const serve_files&) = delete;
  serve_files& operator=(const serve_files&) = delete;

  /// Opens the journal (with --state), makes the spool and confines every
  /// later open to `roots` (canonical), the spool, the state directory and
  /// the directories of `preload`'s keys. Returns a usage error naming the
  /// option, or "".
  std::string open(const serve_options& o, const std::vector<std::string>& roots,
                   const std::vector<std::string>& preload);

  std::shared_ptr<journal_store> store;  ///< null without --state
  std::vector<journaled_job> journaled;  ///< the jobs a restart resumes
  std::string spool;                     ///< canonical

 private:
  bool own_spool_ = false;
  bool confined_ = false;
};

}  // namespace proofline::app
