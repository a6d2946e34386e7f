#include "base/paths.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

namespace base = proofline::base;
namespace fs = std::filesystem;

TEST_CASE("path_identity names a directory the same through a symlink, existing or not yet") {
  fs::path dir = fs::temp_directory_path() / ("proofline-paths-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "out" / "existing");
  fs::create_directory_symlink(dir / "out", dir / "alias");

  CHECK(base::path_identity((dir / "alias/existing").string()) ==
        base::path_identity((dir / "out/existing").string()));
  CHECK(base::path_identity((dir / "alias/later/deeper").string()) ==
        base::path_identity((dir / "out/later/deeper").string()));
  CHECK(base::path_identity((dir / "out/existing/").string()) ==
        base::path_identity((dir / "out/./existing").string()));
  CHECK(base::path_identity((dir / "out/existing").string()) !=
        base::path_identity((dir / "out/later").string()));
  CHECK(base::path_identity((dir / "out/a").string()) !=
        base::path_identity((dir / "out/b").string()));
  fs::remove_all(dir);
}
