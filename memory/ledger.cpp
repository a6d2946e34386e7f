#include "memory/ledger.hpp"

#include <algorithm>
#include <stdexcept>

#include "memory/size.hpp"

namespace proofline::memory {

ledger::ledger(uint64_t budget) : budget_(budget) {
  if (budget == 0) throw std::invalid_argument("memory budget must be positive");
}

bool ledger::submit(uint64_t id, grant_order order, uint64_t bytes) {
  if (bytes > request_limit()) return false;
  if (queued_at_.count(id) || held_.count(id))
    throw std::logic_error("ledger: request id " + std::to_string(id) + " is already live");
  queue_.emplace(queue_key{order, id}, bytes);
  queued_at_.emplace(id, order);
  return true;
}

std::optional<ledger::granted> ledger::grant_next(bool over_budget) {
  if (queue_.empty()) return std::nullopt;
  auto head = queue_.begin();
  uint64_t bytes = head->second;
  if (!over_budget && bytes > available()) return std::nullopt;
  granted g{head->first.id, head->first.order, bytes};
  queue_.erase(head);
  queued_at_.erase(g.id);
  held_.emplace(g.id, bytes);
  reserved_ += bytes;
  peak_ = std::max(peak_, reserved_);
  return g;
}

void ledger::charge(uint64_t id, uint64_t bytes, bool permanent) {
  if (queued_at_.count(id) || held_.count(id))
    throw std::logic_error("ledger: charge id " + std::to_string(id) + " is already live");
  held_.emplace(id, bytes);
  reserved_ += bytes;
  peak_ = std::max(peak_, reserved_);
  if (permanent) {
    if (bytes > request_limit())
      throw std::invalid_argument("ledger: permanent charges exceed the budget");
    permanent_ids_.emplace(id, bytes);
    permanent_ += bytes;
  }
}

uint64_t ledger::release(uint64_t id, uint64_t bytes) {
  auto it = held_.find(id);
  if (it == held_.end()) return 0;
  uint64_t n = std::min(bytes, it->second);
  it->second -= n;
  reserved_ -= n;
  if (auto p = permanent_ids_.find(id); p != permanent_ids_.end()) {
    p->second -= n;
    permanent_ -= n;
  }
  return n;
}

uint64_t ledger::release_all(uint64_t id) {
  auto it = held_.find(id);
  if (it == held_.end()) return 0;
  uint64_t n = it->second;
  reserved_ -= n;
  held_.erase(it);
  if (auto p = permanent_ids_.find(id); p != permanent_ids_.end()) {
    permanent_ -= p->second;
    permanent_ids_.erase(p);
  }
  return n;
}

bool ledger::cancel(uint64_t id) {
  auto it = queued_at_.find(id);
  if (it == queued_at_.end()) return false;
  queue_.erase(queue_key{it->second, id});
  queued_at_.erase(it);
  return true;
}

std::optional<uint64_t> ledger::head_bytes() const {
  if (queue_.empty()) return std::nullopt;
  return queue_.begin()->second;
}

std::optional<ledger::head_request> ledger::head() const {
  if (queue_.empty()) return std::nullopt;
  return head_request{queue_.begin()->first.id, queue_.begin()->second};
}

bool ledger::head_fits() const { return !queue_.empty() && queue_.begin()->second <= available(); }

std::string too_large_message(uint64_t bytes, uint64_t budget) {
  return "partition needs " + format_bytes(bytes) + ", the memory budget is " +
         format_bytes(budget);
}

std::string refusal_message(uint64_t bytes, uint64_t key_bytes, uint64_t budget,
                            uint64_t permanent) {
  if (permanent == 0 && key_bytes == 0) return too_large_message(bytes, budget);
  std::string message = "partition needs " + format_bytes(bytes);
  if (key_bytes) message += " beside its proving key (" + format_bytes(key_bytes) + ")";
  message += ", the memory budget is " + format_bytes(budget);
  if (permanent)
    message += ", of which " + format_bytes(permanent) +
               " is held by the pinned pool and the backends' buffers";
  return message;
}

}  // namespace proofline::memory
