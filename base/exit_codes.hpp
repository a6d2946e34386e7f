// Exit codes of every proofline program (proofline, its benchmarks and the
// baseline engine), so scripts read them one way.
#pragma once

namespace proofline::base {

inline constexpr int exit_ok = 0;      ///< every job done (or help/version printed)
inline constexpr int exit_failed = 1;  ///< at least one job (or measurement) failed
inline constexpr int exit_usage = 2;   ///< bad command line, bad job file, backend unavailable

/// Stopped by signal `signo`, as a shell reports it: 130 for SIGINT, 143 for SIGTERM.
inline constexpr int exit_signal(int signo) { return 128 + signo; }

}  // namespace proofline::base
