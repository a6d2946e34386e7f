// The limits every proofline executable puts on CAF's decoder
// (net/decode_limits.cpp), tested through CAF's own binary deserializer as
// the BASP broker uses it: messages nested deeper than max_message_depth and
// elements of refused built-in types throw decode_refused (the BASP guard
// then closes the peer's connection); what proofline itself sends, an error
// with its context included, still decodes. The actor system is the fuzz
// target's (tests/fuzz/net_message.hpp): proofline's message types, no
// worker threads.
#include <doctest/doctest.h>

#include <caf/actor_system.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/message.hpp>
#include <caf/sec.hpp>

#include <string>
#include <vector>

#include "messages/catalogue.hpp"
#include "net/decode_limits.hpp"
#include "tests/fuzz/net_message.hpp"

namespace proofline::test {

namespace {

std::vector<char> encode(const caf::message& m) {
  std::vector<char> out;
  caf::binary_serializer sink{fuzz::net_system(), out};
  REQUIRE_FALSE(sink(const_cast<caf::message&>(m)));
  return out;
}

/// Decodes a message; true when CAF accepted it, false on CAF's own error.
bool decode(const std::vector<char>& bytes, caf::message& out) {
  caf::binary_deserializer source{fuzz::net_system(), bytes};
  return !source(out);
}

/// A message header as CAF writes it: no type number, then the type names.
void append_header(std::vector<char>& out, const std::string& type_names) {
  out.push_back(0);
  out.push_back(0);
  if (type_names.size() >= 128) FAIL("type names longer than one varbyte can say");
  out.push_back(static_cast<char>(type_names.size()));
  out.insert(out.end(), type_names.begin(), type_names.end());
}

/// `depth` messages, each the first element of the one around it (a
/// message alone would not nest: make_message(m) is m).
caf::message nested(int depth) {
  auto m = caf::make_message(std::string("innermost"));
  for (int i = 1; i < depth; ++i) m = caf::make_message(m, i);
  return m;
}

}  // namespace

TEST_CASE("messages nested up to the limit decode, and one level more is refused") {
  caf::message out;
  CHECK(decode(encode(nested(net::max_message_depth)), out));
  CHECK_THROWS_AS(decode(encode(nested(net::max_message_depth + 1)), out), net::decode_refused);
  // The counter unwinds with the exception: the next message decodes.
  CHECK(decode(encode(nested(2)), out));
}

TEST_CASE("100,000 nested messages are refused, not decoded down the stack") {
  std::vector<char> bytes;
  for (int i = 0; i < 100000; ++i) append_header(bytes, "@<>+@message");
  append_header(bytes, "@<>");
  caf::message out;
  CHECK_THROWS_AS(decode(bytes, out), net::decode_refused);
}

TEST_CASE("an element of a refused built-in type is refused before it is read") {
  for (const char* name : {"@config_value", "@downstream_msg", "@upstream_msg", "@open_stream_msg",
                           "@group", "@group_down"}) {
    CAPTURE(name);
    CHECK(net::refused_type_name(name));
    std::vector<char> bytes;
    append_header(bytes, std::string("@<>+") + name);
    bytes.push_back(0x7f);  // what would be read next: a variant tag, a module name
    caf::message out;
    CHECK_THROWS_AS(decode(bytes, out), net::decode_refused);
  }
  CHECK_FALSE(net::refused_type_name("@message"));
  CHECK_FALSE(net::refused_type_name("proofline::job_submission"));
}

TEST_CASE("what proofline sends still decodes: a submission, an error with its context") {
  job_submission s;
  s.name = "/jobs/a.json";
  s.text = R"({"jobs": []})";
  caf::message out;
  REQUIRE(decode(encode(caf::make_message(submit_atom::value, s)), out));
  REQUIRE(out.match_elements<submit_atom, job_submission>());
  CHECK(out.get_as<job_submission>(1).text == s.text);

  auto reply = caf::make_message(
      caf::make_error(caf::sec::unexpected_message, caf::make_message(std::string("hello"), 42)));
  REQUIRE(decode(encode(reply), out));
  REQUIRE(out.match_elements<caf::error>());
  CHECK(out.get_as<caf::error>(0).code() == static_cast<uint8_t>(caf::sec::unexpected_message));
  CHECK(out.get_as<caf::error>(0).context().match_elements<std::string, int>());
}

}  // namespace proofline::test
