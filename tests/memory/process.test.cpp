// Resident memory and thread identity from /proc, as the memory manager
// reports them.
#include <doctest/doctest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "memory/process.hpp"

using namespace proofline::memory;

TEST_CASE("resident memory grows by the pages touched and the peak remembers it") {
  constexpr std::size_t bytes = 48u << 20;
  uint64_t before = current_rss();
  REQUIRE(before > 0);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(p != MAP_FAILED);
  std::memset(p, 1, bytes);
  uint64_t during = current_rss();
  CHECK(during >= before + bytes - (4u << 20));
  munmap(p, bytes);
  uint64_t after = current_rss();
  CHECK(after + bytes - (4u << 20) <= during);
  CHECK(peak_rss() >= during);  // VmHWM saw the touched pages

  if (reset_peak_rss()) {  // the peak restarts from the current RSS
    CHECK(peak_rss() < during);
    CHECK(peak_rss() + (4u << 20) >= current_rss());
  }
}

TEST_CASE("a thread's name and kernel id are its own") {
  uint64_t main_id = thread_id();
  CHECK(main_id == static_cast<uint64_t>(getpid()));  // the main thread's id is the pid
  uint64_t other_id = 0;
  std::string other_name;
  std::thread([&] {
    set_thread_name("pl.a-long-thread-name");
    other_id = thread_id();
    other_name = thread_name();
  }).join();
  CHECK(other_id != main_id);
  CHECK(other_name == "pl.a-long-threa");  // the kernel keeps 15 characters
}
