// circom .r1cs files (zk/formats/r1cs.hpp, zk/dev circom_r1cs): a file
// written here term by term reads back as the same constraints, and every
// kind of damage is refused naming the file and the problem.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "tests/zk/dev/helpers.hpp"
#include "zk/dev/r1cs.hpp"
#include "zk/formats/error.hpp"
#include "zk/formats/r1cs.hpp"

using namespace proofline;

namespace {

using fr = zk::bn254::fr;

struct lc_term {
  uint32_t wire;
  zk::ff::bigint<4> coef;  // standard form, written as is
};
using lc = std::vector<lc_term>;
struct constraint {
  lc a, b, c;
};

/// An .r1cs file as circom writes it: header, constraints, wire map, and
/// optionally a custom-gates section.
struct r1cs_writer {
  uint32_t n_wires = 4, n_pub_out = 1, n_pub_in = 1, n_prv_in = 1;
  std::vector<constraint> constraints;
  bool custom_gates = false;
  int64_t constraint_size_delta = 0;  // lie about section 2's size
  std::vector<uint8_t> bytes;

  void u32(std::vector<uint8_t>& b, uint32_t v) { b.insert(b.end(), (uint8_t*)&v, (uint8_t*)&v + 4); }
  void u64(std::vector<uint8_t>& b, uint64_t v) { b.insert(b.end(), (uint8_t*)&v, (uint8_t*)&v + 8); }
  void section(uint32_t id, const std::vector<uint8_t>& body, int64_t delta = 0) {
    u32(bytes, id);
    u64(bytes, uint64_t(int64_t(body.size()) + delta));
    bytes.insert(bytes.end(), body.begin(), body.end());
  }
  void write(const std::string& path) {
    bytes.clear();
    bytes.insert(bytes.end(), {'r', '1', 'c', 's'});
    u32(bytes, 1);
    u32(bytes, custom_gates ? 4 : 3);
    std::vector<uint8_t> h;
    u32(h, 32);
    const auto p = fr::modulus();
    h.insert(h.end(), (const uint8_t*)p.l, (const uint8_t*)p.l + 32);
    u32(h, n_wires), u32(h, n_pub_out), u32(h, n_pub_in), u32(h, n_prv_in);
    u64(h, n_wires);
    u32(h, uint32_t(constraints.size()));
    section(1, h);
    std::vector<uint8_t> c;
    for (const auto& k : constraints)
      for (const lc* m : {&k.a, &k.b, &k.c}) {
        u32(c, uint32_t(m->size()));
        for (const auto& t : *m) {
          u32(c, t.wire);
          c.insert(c.end(), (const uint8_t*)t.coef.l, (const uint8_t*)t.coef.l + 32);
        }
      }
    if (constraint_size_delta > 0) c.resize(c.size() + size_t(constraint_size_delta), 0);
    section(2, c);
    std::vector<uint8_t> map;
    for (uint32_t w = 0; w < n_wires; ++w) u64(map, w);
    section(3, map);
    if (custom_gates) section(4, std::vector<uint8_t>(4, 0));
    std::ofstream(path, std::ios::binary).write((const char*)bytes.data(), std::streamsize(bytes.size()));
  }
};

zk::ff::bigint<4> small(uint64_t v) { return zk::ff::bigint<4>::from_u64(v); }

/// out = a * b with a, b public: wires 0 = 1, 1 = out, 2 = a (public in), 3 = b.
r1cs_writer product_circuit() {
  r1cs_writer w;
  w.constraints.push_back({{{2, small(1)}}, {{3, small(1)}}, {{1, small(1)}}});
  auto minus_one = fr::modulus();
  minus_one.l[0] -= 1;
  w.constraints.push_back({{{0, small(5)}, {3, minus_one}}, {{0, small(1)}}, {}});
  return w;
}

std::string refusal(const std::string& path) {
  try {
    zk::formats::read_r1cs_constraints<zk::bn254>(path, zk::formats::read_r1cs_info(path));
  } catch (const zk::formats::format_error& e) {
    CHECK(e.file() == path);
    return e.problem();
  }
  return "";
}

}  // namespace

TEST_CASE("an .r1cs file reads back as its constraints, coefficients in Montgomery form") {
  test::temp_dir dir;
  const std::string path = dir / "c.r1cs";
  product_circuit().write(path);
  const auto info = zk::formats::read_r1cs_info(path);
  CHECK(info.curve == zk::curve_id::bn254);
  CHECK(info.n_wires == 4);
  CHECK(info.n_public() == 2);
  CHECK(info.n_constraints == 2);

  const auto cs = zk::dev::circom_r1cs<zk::bn254>(path);
  CHECK(cs.n_vars == 4);
  CHECK(cs.n_public == 2);
  CHECK(cs.n_constraints == 2);
  REQUIRE(cs.offsets.size() == 7);
  CHECK(cs.end(0, 0) - cs.begin(0, 0) == 1);
  CHECK(cs.begin(0, 1)->signal == 3);
  CHECK(cs.end(1, 2) == cs.begin(1, 2));  // an empty C
  CHECK(cs.begin(1, 0)[0].coef == fr::from_u64(5));
  CHECK(cs.begin(1, 0)[1].coef == -fr::one());

  // w = (1, out, a, b) = (1, 15, 3, 5) satisfies both rows; b = 4 breaks row 1.
  std::vector<zk::bn254::scalar> w = {small(1), small(15), small(3), small(5)};
  CHECK(zk::dev::first_unsatisfied<zk::bn254>(cs, w.data()) == 2);
  w[3] = small(4);
  w[1] = small(12);
  CHECK(zk::dev::first_unsatisfied<zk::bn254>(cs, w.data()) == 1);
}

TEST_CASE("damaged .r1cs files are refused naming the file and the problem") {
  test::temp_dir dir;
  const std::string path = dir / "bad.r1cs";

  auto w = product_circuit();
  w.constraints[1].a[0].wire = 4;
  w.write(path);
  CHECK(refusal(path).find("constraint 1 (A) names wire 4, but the circuit has 4") != std::string::npos);

  w = product_circuit();
  w.constraints[0].c[0].coef = fr::modulus();
  w.write(path);
  CHECK(refusal(path).find("constraint 0 (C) has a coefficient not below the field's prime") !=
        std::string::npos);

  w = product_circuit();
  w.constraint_size_delta = 8;
  w.write(path);
  CHECK(refusal(path).find("8 bytes after the last of its 2 constraints") != std::string::npos);

  w = product_circuit();
  w.constraints.pop_back();
  w.write(path);
  {
    // The header says 2 constraints, the section holds 1.
    auto bytes = w.bytes;
    bytes[12 + 12 + 4 + 32 + 24] = 2;
    std::ofstream(path, std::ios::binary).write((const char*)bytes.data(), std::streamsize(bytes.size()));
  }
  CHECK(refusal(path).find("ends inside constraint 1") != std::string::npos);

  w = product_circuit();
  w.custom_gates = true;
  w.write(path);
  CHECK(refusal(path).find("PLONK custom gates") != std::string::npos);

  w = product_circuit();
  w.n_pub_out = 3;
  w.n_pub_in = 1;
  w.write(path);
  CHECK(refusal(path).find("4 public signals but only 4 wires") != std::string::npos);
}
