#include "app/serve_files.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "actors/control.hpp"
#include "app/serve_command.hpp"
#include "base/confined.hpp"

namespace proofline::app {

namespace fs = std::filesystem;

serve_files::~serve_files() {
  if (confined_) base::set_process_confinement(nullptr);
  std::error_code ec;
  if (own_spool_) fs::remove_all(spool, ec);
}

std::string serve_files::open(const serve_options& o, const std::vector<std::string>& roots,
                              const std::vector<std::string>& preload) {
  if (!o.state.empty()) {
    try {
      store = std::make_shared<journal_store>(o.state);
      journaled = store->pending();
    } catch (const std::exception& e) {
      return std::string("--state: ") + e.what();
    }
    spdlog::info("serve: state journal {}: {} unfinished job(s) to resume", store->path(),
                 journaled.size());
  }
  // With --state, inline witnesses are spooled where a restart finds them.
  spool = !o.spool.empty() ? o.spool
          : store ? (fs::path(o.state) / "spool" / std::to_string(getpid())).string()
                  : (fs::temp_directory_path() / ("proofline-spool-" + std::to_string(getpid())))
                        .string();
  if (store && o.spool.empty()) remove_stale_spools(*store, journaled);
  {
    std::error_code ec;
    fs::create_directories(spool, ec);
    if (ec) return "--spool " + spool + ": " + ec.message();
    spool = fs::canonical(spool).string();
  }
  // The default spool is this process's own, removed on every way out; a
  // --spool the user named is kept, and so is the spool under --state,
  // which holds journaled jobs' witnesses.
  own_spool_ = o.spool.empty() && !store;
  // Every file the daemon opens for a job, or writes, is opened beneath one
  // of these directories without following links, checked when it is
  // opened: the allowed roots, and what the daemon owns itself (spool,
  // state directory, preloaded keys' directories).
  try {
    std::vector<std::string> open_roots = roots;
    open_roots.push_back(spool);
    if (!o.state.empty()) open_roots.push_back(canonical_root(o.state));
    for (const auto& k : preload) {
      std::error_code ec;
      auto dir = fs::canonical(fs::path(k).parent_path(), ec);
      if (!ec) open_roots.push_back(dir.string());
    }
    const char* stepwise = std::getenv("PROOFLINE_CONFINED_STEPWISE");
    base::set_process_confinement(std::make_unique<base::confinement>(
        open_roots, stepwise && *stepwise == '1' ? base::resolve_mode::stepwise
                                                 : base::resolve_mode::automatic));
    confined_ = true;
  } catch (const std::exception& e) {
    return std::string("--allow-root ") + e.what();
  }
  return {};
}

}  // namespace proofline::app
