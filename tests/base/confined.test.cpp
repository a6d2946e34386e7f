#include "base/confined.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace base = proofline::base;
namespace fs = std::filesystem;

namespace {

void put(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

std::string text_of(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string read_fd(int fd) {
  std::string s;
  char buf[256];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) s.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return s;
}

/// root/in/w.txt, outside/secret.txt, and links from the root to outside:
/// root/escape -> outside (a directory), root/in/leaf -> outside/secret.txt,
/// root/inner -> root/in (a link that stays inside, refused all the same).
struct tree {
  fs::path top, root, outside;
  tree() {
    top = fs::temp_directory_path() / ("proofline-confined-" + std::to_string(::getpid()));
    fs::remove_all(top);
    fs::create_directories(top / "root" / "in");
    fs::create_directories(top / "outside");
    top = fs::canonical(top);
    root = top / "root";
    outside = top / "outside";
    put(root / "in" / "w.txt", "inside");
    put(outside / "secret.txt", "secret");
    fs::create_directory_symlink(outside, root / "escape");
    fs::create_symlink(outside / "secret.txt", root / "in" / "leaf");
    fs::create_directory_symlink(root / "in", root / "inner");
  }
  ~tree() { fs::remove_all(top); }
};

}  // namespace

TEST_CASE("a confinement opens files beneath its roots and follows no symbolic link") {
  tree t;
  for (auto mode : {base::resolve_mode::automatic, base::resolve_mode::stepwise}) {
    const bool stepwise = mode == base::resolve_mode::stepwise;
    CAPTURE(stepwise);
    base::confinement c({t.root.string()}, mode);
    if (stepwise) CHECK_FALSE(c.uses_openat2());
    std::string why;

    SUBCASE("a plain file beneath the root is read") {
      int fd = c.open_file((t.root / "in" / "w.txt").string(), O_RDONLY, why);
      REQUIRE_MESSAGE(fd >= 0, why);
      CHECK(read_fd(fd) == "inside");
      // Relative components are normalized first.
      fd = c.open_file((t.root / "in" / "." / ".." / "in" / "w.txt").string(), O_RDONLY, why);
      REQUIRE_MESSAGE(fd >= 0, why);
      CHECK(read_fd(fd) == "inside");
      if (!stepwise) MESSAGE("openat2 in use: " << c.uses_openat2());
    }
    SUBCASE("a symbolic link in the middle of the path is refused, named") {
      CHECK(c.open_file((t.root / "escape" / "secret.txt").string(), O_RDONLY, why) == -1);
      CHECK(why.find("refused: escape beneath " + t.root.string() + " is a symbolic link") !=
            std::string::npos);
      // Even one that stays beneath the root.
      CHECK(c.open_file((t.root / "inner" / "w.txt").string(), O_RDONLY, why) == -1);
      CHECK(why.find("inner beneath") != std::string::npos);
    }
    SUBCASE("a symbolic link at the leaf is refused, named") {
      CHECK(c.open_file((t.root / "in" / "leaf").string(), O_RDONLY, why) == -1);
      CHECK(why.find("refused: in/leaf beneath") != std::string::npos);
      CHECK(why.find("symbolic link") != std::string::npos);
    }
    SUBCASE(".. that climbs out of the root is refused") {
      CHECK(c.open_file(t.root.string() + "/in/../../outside/secret.txt", O_RDONLY, why) == -1);
      CHECK(why.find("outside the allowed roots (" + t.root.string() + ")") !=
            std::string::npos);
    }
    SUBCASE("absolute paths outside every root are refused") {
      CHECK(c.open_file((t.outside / "secret.txt").string(), O_RDONLY, why) == -1);
      CHECK(why.find("outside the allowed roots") != std::string::npos);
      CHECK(c.open_file("/etc/passwd", O_RDONLY, why) == -1);
      // A sibling whose name starts like the root is not beneath it.
      CHECK(c.open_file(t.root.string() + "x/w.txt", O_RDONLY, why) == -1);
      CHECK(why.find("outside the allowed roots") != std::string::npos);
    }
    SUBCASE("a missing file says so") {
      CHECK(c.open_file((t.root / "in" / "nope").string(), O_RDONLY, why) == -1);
      CHECK(why == "No such file or directory");
    }
    SUBCASE("outputs are created beneath the root, atomically, through no link") {
      auto out = t.root / "out" / "a" / "proof.json";
      c.write_atomic(out.string(), "{}");
      CHECK(text_of(out) == "{}");
      c.write_atomic(out.string(), "[1]");
      CHECK(text_of(out) == "[1]");
      size_t files = 0;
      for (auto& e : fs::directory_iterator(out.parent_path())) files += e.is_regular_file();
      CHECK(files == 1);  // no temporary left
      CHECK(c.writable_dir_problem((t.root / "out" / "b").string()).empty());
      CHECK(fs::is_directory(t.root / "out" / "b"));

      // Through a linked directory: refused, nothing written outside.
      CHECK_THROWS_WITH(c.write_atomic((t.root / "escape" / "new" / "p.json").string(), "x"),
                        doctest::Contains("escape beneath"));
      CHECK_THROWS_WITH(c.write_atomic((t.root / "escape" / "p.json").string(), "x"),
                        doctest::Contains("is a symbolic link"));
      CHECK_FALSE(c.writable_dir_problem((t.root / "escape" / "d").string()).empty());
      CHECK_FALSE(fs::exists(t.outside / "new"));
      CHECK_FALSE(fs::exists(t.outside / "p.json"));
      CHECK_FALSE(fs::exists(t.outside / "d"));
      CHECK_THROWS_WITH(c.write_atomic((t.outside / "p.json").string(), "x"),
                        doctest::Contains("outside the allowed roots"));

      // A link at the leaf is replaced by the file, its target untouched.
      c.write_atomic((t.root / "in" / "leaf").string(), "mine");
      CHECK_FALSE(fs::is_symlink(t.root / "in" / "leaf"));
      CHECK(text_of(t.root / "in" / "leaf") == "mine");
      CHECK(text_of(t.outside / "secret.txt") == "secret");

      // So is a hard link: the rename replaces the name, not the other file.
      std::error_code ec;
      fs::create_hard_link(t.outside / "secret.txt", t.root / "in" / "hard", ec);
      if (!ec) {
        c.write_atomic((t.root / "in" / "hard").string(), "mine");
        CHECK(text_of(t.outside / "secret.txt") == "secret");
      }
    }
    SUBCASE("a directory beneath the root opens, a linked one does not") {
      int fd = c.open_dir((t.root / "in").string(), false, why);
      REQUIRE_MESSAGE(fd >= 0, why);
      ::close(fd);
      CHECK(c.open_dir((t.root / "escape").string(), false, why) == -1);
      CHECK(why.find("symbolic link") != std::string::npos);
      fd = c.open_dir((t.root / "new" / "deeper").string(), true, why);
      REQUIRE_MESSAGE(fd >= 0, why);
      ::close(fd);
      CHECK(fs::is_directory(t.root / "new" / "deeper"));
    }
  }
}

TEST_CASE("a directory swapped for a link after the root was opened is refused at the open") {
  tree t;
  for (auto mode : {base::resolve_mode::automatic, base::resolve_mode::stepwise}) {
    base::confinement c({t.root.string()}, mode);
    std::string why;
    int fd = c.open_file((t.root / "in" / "w.txt").string(), O_RDONLY, why);
    REQUIRE(fd >= 0);
    ::close(fd);
    // The swap: in/ becomes a link to outside/, which holds a w.txt too.
    put(t.outside / "w.txt", "stolen");
    fs::rename(t.root / "in", t.root / "in.old");
    fs::create_directory_symlink(t.outside, t.root / "in");
    CHECK(c.open_file((t.root / "in" / "w.txt").string(), O_RDONLY, why) == -1);
    CHECK(why.find("refused: in beneath") != std::string::npos);
    fs::remove(t.root / "in");
    fs::rename(t.root / "in.old", t.root / "in");
  }
}

TEST_CASE("the longest root containing a path is used, and roots are listed") {
  tree t;
  base::confinement c({t.top.string(), t.root.string()});
  CHECK(c.roots() == std::vector<std::string>{t.top.string(), t.root.string()});
  std::string why;
  // Beneath top, outside/secret.txt is a plain file.
  int fd = c.open_file((t.outside / "secret.txt").string(), O_RDONLY, why);
  REQUIRE_MESSAGE(fd >= 0, why);
  CHECK(read_fd(fd) == "secret");
  CHECK(c.open_file((t.root / "escape" / "secret.txt").string(), O_RDONLY, why) == -1);
  CHECK_THROWS_WITH(base::confinement({(t.top / "missing").string()}),
                    doctest::Contains("missing: cannot open the directory"));
}

TEST_CASE("the process confinement is unset until set, and cleared with nullptr") {
  tree t;
  CHECK(base::process_confinement() == nullptr);
  base::set_process_confinement(std::make_unique<base::confinement>(
      std::vector<std::string>{t.root.string()}));
  REQUIRE(base::process_confinement() != nullptr);
  CHECK(base::process_confinement()->roots().front() == t.root.string());
  base::set_process_confinement(nullptr);
  CHECK(base::process_confinement() == nullptr);
}
