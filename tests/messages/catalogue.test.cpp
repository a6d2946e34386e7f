// The wire encoding of the payloads that carry file bytes from peers:
// inline witnesses (submit --inline) and leased partitions (nodes). They
// round-trip through CAF's binary format, and a declared length larger than
// the bytes present fails without allocating it. Doubles cross finite.
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "messages/catalogue.hpp"

using namespace proofline;

namespace {

template <class T>
std::vector<char> encode(T x) {
  std::vector<char> out;
  caf::binary_serializer sink{nullptr, out};
  REQUIRE(!sink(x));
  return out;
}

template <class T>
caf::error decode(const std::vector<char>& bytes, T& x) {
  caf::binary_deserializer source{nullptr, bytes.data(), bytes.size()};
  return source(x);
}

/// CAF's varbyte encoding of 0xFFFFFFFF: the largest length a peer can declare.
const std::vector<char> four_gib = {'\xff', '\xff', '\xff', '\xff', '\x0f'};

}  // namespace

TEST_CASE("inline witnesses and leased partitions round-trip through CAF's binary format") {
  std::vector<uint8_t> wtns(3 << 20);  // spans several read steps
  for (size_t i = 0; i < wtns.size(); ++i) wtns[i] = static_cast<uint8_t>(i * 7);

  inline_witness w{"/data/w.wtns", wtns};
  inline_witness w2;
  REQUIRE(!decode(encode(w), w2));
  CHECK(w2.path == w.path);
  CHECK(w2.bytes == w.bytes);

  remote_partition p{9, 4, 2, "job", "/k.zkey", "", wtns, priority::critical};
  remote_partition p2;
  REQUIRE(!decode(encode(p), p2));
  CHECK(p2.lease == 9);
  CHECK(p2.job_seq == 4);
  CHECK(p2.index == 2);
  CHECK(p2.job_id == "job");
  CHECK(p2.zkey == "/k.zkey");
  CHECK(p2.witness_bytes == wtns);
  CHECK(p2.prio == priority::critical);
}

TEST_CASE("a witness declared 4 GiB long with 3 bytes sent fails without allocating 4 GiB") {
  // Prepare: an inline witness whose length field says 2^32 - 1 bytes.
  std::vector<char> bytes = encode(std::string("/data/w.wtns"));
  bytes.insert(bytes.end(), four_gib.begin(), four_gib.end());
  bytes.insert(bytes.end(), {'w', 't', 'n'});

  inline_witness w;
  CHECK(decode(bytes, w));
  CHECK(w.bytes.capacity() <= (size_t(2) << 20));  // at most one 1 MiB step, doubled

  // The same inside a submission, the message `submit --inline` sends.
  std::vector<char> sub = encode(std::string("/data/jobs.json"));
  auto text = encode(std::string("{}"));
  sub.insert(sub.end(), text.begin(), text.end());
  sub.push_back(1);  // inline_witnesses = true
  sub.push_back(1);  // one witness
  sub.insert(sub.end(), bytes.begin(), bytes.end());
  job_submission s;
  CHECK(decode(sub, s));
}

TEST_CASE("a leased partition declaring more witness bytes than it holds fails") {
  remote_partition p{1, 2, 0, "j", "/k.zkey", "", {}, priority::normal};
  std::vector<char> bytes = encode(p);
  // The empty witness is the varbyte 0 before the priority byte at the end.
  REQUIRE(bytes.size() >= 2);
  REQUIRE(bytes[bytes.size() - 2] == 0);
  bytes.erase(bytes.end() - 2, bytes.end());
  bytes.insert(bytes.end(), four_gib.begin(), four_gib.end());
  bytes.push_back(1);

  remote_partition q;
  CHECK(decode(bytes, q));
  CHECK(q.witness_bytes.capacity() <= (size_t(2) << 20));
}

TEST_CASE("a span with an infinite end encodes (as never happened) instead of hanging") {
  span_ms s{1.5, std::numeric_limits<double>::infinity()};
  span_ms back;
  REQUIRE(!decode(encode(s), back));
  CHECK(back.start == 1.5);
  CHECK(back.end == -1);

  memory_stats m;
  m.purge_ms_max = std::numeric_limits<double>::quiet_NaN();
  memory_stats m2;
  REQUIRE(!decode(encode(m), m2));
  CHECK(m2.purge_ms_max == -1);
}

TEST_CASE("a peer's double that decodes to infinity is refused") {
  // CAF packs a double as a big-endian IEEE 754 word; exponent all ones.
  const std::vector<char> inf = {'\x7f', '\xf0', 0, 0, 0, 0, 0, 0};
  std::vector<char> bytes = encode(span_ms{0, 1});
  std::copy(inf.begin(), inf.end(), bytes.end() - 8);
  span_ms s;
  CHECK(decode(bytes, s));

  named_span n{"msm_h", 0, 1};
  std::vector<char> nb = encode(n);
  std::copy(inf.begin(), inf.end(), nb.end() - 16);
  CHECK(decode(nb, n));
}
