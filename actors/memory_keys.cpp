// The memory manager's proving keys: a loaded key's host bytes are charged to
// the ledger like a partition's (the key cache reports them), an idle warm key
// may be evicted to make room for the ledger's head, and that eviction is a
// request to the key cache. The behaviour that calls these is in
// actors/memory_manager.cpp.
#include "actors/memory_manager.hpp"

#include <caf/event_based_actor.hpp>

#include <algorithm>

#include <spdlog/spdlog.h>

#include "memory/size.hpp"

namespace proofline {

using memory::format_bytes;

void key_memory(memory_manager_pointer self, const std::string& path, uint64_t bytes) {
  auto& st = self->state;
  bool idle = false;
  if (auto it = st.keys.find(path); it != st.keys.end()) {
    idle = it->second.idle;
    st.ledger->release_all(it->second.id);
    st.key_bytes -= it->second.bytes;
    st.keys.erase(it);
  }
  if (bytes > 0) {
    uint64_t id = st.next_id++;
    st.ledger->charge(id, bytes);
    st.keys.emplace(path, key_charge{id, bytes, idle});
    st.key_bytes += bytes;
    st.peak_key_bytes = std::max(st.peak_key_bytes, st.key_bytes);
    if (st.ledger->reserved() > st.ledger->budget())
      spdlog::warn("memory: proving key {} ({}) takes the reservations to {} of {}: grants wait",
                   path, format_bytes(bytes), format_bytes(st.ledger->reserved()),
                   format_bytes(st.ledger->budget()));
    else
      spdlog::debug("memory: proving key {} holds {}", path, format_bytes(bytes));
  }
  try_grant(self);
}

void key_idle(memory_manager_pointer self, const std::string& path, bool idle) {
  auto& st = self->state;
  auto it = st.keys.find(path);
  if (it == st.keys.end()) return;
  it->second.idle = idle;
  if (idle) try_grant(self);
}

bool ask_key_room(memory_manager_pointer self) {
  auto& st = self->state;
  if (st.room_asked) return true;
  if (!st.key_cache) return false;
  uint64_t idle_bytes = 0;
  for (const auto& [path, k] : st.keys)
    if (k.idle) idle_bytes += k.bytes;
  auto head = st.ledger->head();
  if (idle_bytes == 0 || !head) return false;
  uint64_t room = st.ledger->budget() > st.ledger->reserved()
                      ? st.ledger->budget() - st.ledger->reserved()
                      : 0;
  uint64_t need = head->bytes > room ? head->bytes - room : 1;
  st.room_asked = true;
  spdlog::debug("memory: {} more needed for the next partition; asking to evict idle keys",
                format_bytes(need));
  // The cache's key_memory messages for what it evicts arrive before its reply.
  self->request(st.key_cache, caf::infinite, evict_bytes_atom::value, need)
      .then(
          [=](uint64_t) {
            self->state.room_asked = false;
            try_grant(self);
          },
          [=](caf::error&) {
            self->state.room_asked = false;
            self->state.key_cache = nullptr;  // gone: shutting down
          });
  return true;
}

}  // namespace proofline
