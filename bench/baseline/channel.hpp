// Blocking hand-offs between the baseline's threads, as a thread-based
// prover builds them: a queue with a mutex and a condition variable, and a
// counter of partitions allowed in flight.
//
//   channel<T>   unbounded FIFO; pop() blocks until an item or close()
//   slots        at most N holders; acquire() blocks while all are taken
//
// These are plumbing, not the tracker: each has its own mutex, held only for
// a push or pop, never while work runs.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

namespace proofline::bench::baseline {

template <class T>
class channel {
 public:
  /// Appends `item`; false (item dropped) once closed. O(1).
  bool push(T item) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_) return false;
      items_.push_back(std::move(item));
    }
    ready_.notify_one();
    return true;
  }

  /// The oldest item; blocks while the channel is empty and open; nullopt
  /// once it is closed and drained.
  std::optional<T> pop() {
    std::unique_lock<std::mutex> lock(mu_);
    ready_.wait(lock, [&] { return closed_ || !items_.empty(); });
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    return item;
  }

  /// No more pushes; poppers drain what is left, then get nullopt.
  void close() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
    }
    ready_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<T> items_;
  bool closed_ = false;
};

class slots {
 public:
  /// `count` > 0 holders at once.
  explicit slots(std::size_t count) : free_(count) {}

  /// Takes a slot, waiting while none is free.
  void acquire() {
    std::unique_lock<std::mutex> lock(mu_);
    freed_.wait(lock, [&] { return free_ > 0; });
    --free_;
  }

  /// Gives a slot back (any thread).
  void release() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++free_;
    }
    freed_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable freed_;
  std::size_t free_;
};

}  // namespace proofline::bench::baseline
