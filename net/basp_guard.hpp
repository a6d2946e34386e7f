// The process's guard around CAF 0.17.6's BASP decoder (net/basp_guard.cpp):
// it closes a connection whose message the decoder would throw on, whose
// header announces no payload for an operation that needs one, or whose
// header announces a payload over the limit set here (over 64 KiB, what a
// handshake needs, before the connection's handshake is done); it reads a
// payload over 1 MiB in steps of 1 MiB, so that its memory grows with the
// bytes that arrive rather than with the length announced.
#pragma once

#include <cstdint>

namespace proofline::net {

/// The largest payload one BASP message may announce; a header announcing
/// more closes its connection before anything is allocated for it. Without
/// a call the limit is 4 GiB - 1 (what the header's 32-bit field can say).
void set_basp_payload_limit(uint64_t bytes);

/// Drops what arrived of a payload being read in steps on the connection
/// whose handle is `connection` (its socket), which is being closed.
void forget_payload_steps(int64_t connection);

}  // namespace proofline::net
