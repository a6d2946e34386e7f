// confined: opening and creating files beneath a set of allowed directories,
// checked by the kernel at the moment of the open.
//
// Problem: a path checked when a job is accepted is opened later, after the
// job waited in the queue. Whoever can write beneath an allowed directory
// can, in between, replace a directory or the file on the path with a
// symbolic link to anywhere, and a plain open() follows it.
//
// Design: each root is held open as a directory descriptor. A path is
// mapped to the root that contains it (by its normalized text) and opened
// relative to that descriptor without following any symbolic link:
//  * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
//    where the kernel has it (Linux 5.6);
//  * otherwise (ENOSYS, or EPERM from a seccomp filter) a walk from the
//    root's descriptor, one component at a time, each opened with
//    O_NOFOLLOW (and O_DIRECTORY for the directories).
// Directories are created the same way (mkdirat, then opened with
// O_NOFOLLOW), and files are written atomically through the descriptor of
// their directory: a temporary file made with O_EXCL | O_NOFOLLOW, fsync,
// renameat over the name. A symbolic link met on the way fails the open
// with a message naming it; nothing outside the roots is read or written.
//
// Not defended here: a hard link beneath a root to a file elsewhere is that
// file (see docs/CLUSTER.md). Writes are not affected by hard links: the
// rename replaces the name, never the linked file's contents.
//
// The process's confinement (set_process_confinement) is what the file
// readers and writers of zk/formats and witness/ consult; `serve` sets it
// before its runtime starts, `run` and `prove` leave it unset (paths are
// then opened as given).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace proofline::base {

/// How paths are resolved beneath a root.
enum class resolve_mode : uint8_t {
  automatic,  ///< openat2 when the kernel has it, else stepwise
  stepwise,   ///< always one component at a time with O_NOFOLLOW (tests)
};

class confinement {
 public:
  /// Opens each of `roots` (absolute directories, symlinks resolved, as
  /// control's canonical_root makes them). Throws std::runtime_error naming
  /// a root that cannot be opened.
  explicit confinement(const std::vector<std::string>& roots,
                       resolve_mode mode = resolve_mode::automatic);
  ~confinement();
  confinement(const confinement&) = delete;
  confinement& operator=(const confinement&) = delete;

  /// Opens `path` (absolute, or relative to the working directory) beneath
  /// its root with open flags `flags` (O_RDONLY plus e.g. O_NONBLOCK;
  /// O_CLOEXEC and O_NOFOLLOW are added). Returns the descriptor, or -1 with
  /// `why` set to the problem, without the path: "outside the allowed roots
  /// (/a, /b)", "refused: in/w.wtns beneath /a is a symbolic link (...)",
  /// "No such file or directory".
  int open_file(const std::string& path, int flags, std::string& why) const;

  /// Opens the directory `path` beneath its root (O_RDONLY | O_DIRECTORY),
  /// with `create`, making it and its missing parents first (mode 0755).
  /// -1 with `why` set as open_file does.
  int open_dir(const std::string& path, bool create, std::string& why) const;

  /// Writes `contents` to `path` atomically, creating its directory beneath
  /// the root. Throws std::runtime_error("<path>: <problem>"), leaving no
  /// temporary file.
  void write_atomic(const std::string& path, std::string_view contents) const;

  /// Why files cannot be created in directory `dir` (which is created as
  /// write_atomic would): "<dir>: <problem>"; empty when they can.
  std::string writable_dir_problem(const std::string& dir) const;

  /// The roots, as given.
  std::vector<std::string> roots() const;
  /// Whether opens go through openat2 (false: stepwise, forced or because
  /// the kernel or a seccomp filter refused openat2).
  bool uses_openat2() const { return openat2_.load(std::memory_order_relaxed); }

 private:
  struct root {
    std::string path;
    int fd = -1;
  };
  /// The root containing `path` and the components below it; nullptr with
  /// `why` set when none does.
  const root* locate(const std::string& path, std::vector<std::string>& parts,
                     std::string& why) const;
  /// Opens parts[0..n) beneath `r` as directories (creating them with
  /// `create`) one at a time; -1 with `why` set.
  int walk_dirs(const root& r, const std::vector<std::string>& parts, size_t n, bool create,
                std::string& why) const;
  /// openat2 of parts (joined) beneath `r`; -1 with errno set; ENOSYS when
  /// openat2 is unavailable (and then never tried again).
  int beneath(const root& r, const std::vector<std::string>& parts, int flags) const;
  std::string problem(const root& r, const std::vector<std::string>& parts, int err) const;

  std::vector<root> roots_;
  mutable std::atomic<bool> openat2_;
};

/// The confinement of this process's file access; nullptr when paths are
/// opened as given. Read by every file reader and writer of zk/formats and
/// witness/.
const confinement* process_confinement();

/// Sets (or with nullptr clears) the process's confinement. Called before
/// threads that open files start (serve's set-up, tests), never while they
/// run: the previous confinement is destroyed here.
void set_process_confinement(std::unique_ptr<const confinement> c);

}  // namespace proofline::base
