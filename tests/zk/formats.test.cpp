// zkey, wtns, decimal and proof/public JSON against the snarkjs fixtures:
// header values against the r1cs sizes in info.json and the counts
// `snarkjs zkey export json` reports, key points against the exported
// verification key, witnesses against public_<i>.json, and every error case
// on a broken copy made in a temporary directory.
#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "oracle.hpp"
#include "zk/formats/decimal.hpp"
#include "zk/formats/proof_json.hpp"
#include "zk/formats/wtns.hpp"
#include "zk/formats/zkey.hpp"

using namespace proofline::zk;
namespace fs = std::filesystem;
using formats::format_error;

namespace {

// ---- fixtures --------------------------------------------------------------

std::string fixture(const std::string& curve_circuit, const std::string& file) {
  return test::fixtures_dir() + "/" + curve_circuit + "/" + file;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(),
                  "cannot open fixture " << path << " (scripts/make-fixtures.sh makes it)");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<unsigned char> read_bytes(const std::string& path) {
  std::string s = read_text(path);
  return {s.begin(), s.end()};
}

void write_bytes(const std::string& path, const std::vector<unsigned char>& b) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  REQUIRE(out.good());
}

nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(read_text(path)); }

/// A directory under the system's temp directory, removed with its contents.
class temp_dir {
 public:
  temp_dir() {
    std::string tmpl = (fs::temp_directory_path() / "proofline-zk-test-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// ---- an independent reader/writer of the binfile container, for editing ----

struct raw_section {
  uint32_t id;
  std::vector<unsigned char> bytes;
};

struct raw_file {
  char magic[4];
  uint32_t version;
  std::vector<raw_section> sections;

  static raw_file parse(const std::vector<unsigned char>& b) {
    raw_file f;
    std::memcpy(f.magic, b.data(), 4);
    std::memcpy(&f.version, b.data() + 4, 4);
    uint32_t n;
    std::memcpy(&n, b.data() + 8, 4);
    std::size_t pos = 12;
    for (uint32_t i = 0; i < n; ++i) {
      raw_section s;
      uint64_t size;
      std::memcpy(&s.id, b.data() + pos, 4);
      std::memcpy(&size, b.data() + pos + 4, 8);
      pos += 12;
      s.bytes.assign(b.begin() + pos, b.begin() + pos + size);
      pos += size;
      f.sections.push_back(std::move(s));
    }
    return f;
  }
  std::vector<unsigned char> bytes() const {
    std::vector<unsigned char> b(12);
    std::memcpy(b.data(), magic, 4);
    std::memcpy(b.data() + 4, &version, 4);
    uint32_t n = static_cast<uint32_t>(sections.size());
    std::memcpy(b.data() + 8, &n, 4);
    for (const auto& s : sections) {
      unsigned char h[12];
      uint64_t size = s.bytes.size();
      std::memcpy(h, &s.id, 4);
      std::memcpy(h + 4, &size, 8);
      b.insert(b.end(), h, h + 12);
      b.insert(b.end(), s.bytes.begin(), s.bytes.end());
    }
    return b;
  }
  raw_section& section(uint32_t id) {
    auto it = std::find_if(sections.begin(), sections.end(),
                           [&](const raw_section& s) { return s.id == id; });
    REQUIRE_MESSAGE(it != sections.end(), "fixture has no section " << id);
    return *it;
  }
  /// File offset of the first byte of section `id`'s contents.
  std::size_t offset_of(uint32_t id) const {
    std::size_t pos = 12;
    for (const auto& s : sections) {
      if (s.id == id) return pos + 12;
      pos += 12 + s.bytes.size();
    }
    return 0;
  }
};

template <class T>
void put(std::vector<unsigned char>& b, std::size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

/// Runs f, which must throw format_error for `file` whose problem contains
/// every one of `words`.
template <class F>
void expect_error(F&& f, const std::string& file, std::initializer_list<std::string> words) {
  try {
    f();
  } catch (const format_error& e) {
    INFO("message: ", std::string(e.what()));
    CHECK(e.file() == file);
    CHECK(std::string(e.what()) == file + ": " + e.problem());
    for (const auto& w : words)
      CHECK_MESSAGE(e.problem().find(w) != std::string::npos, "expected \"" << w << "\"");
    return;
  }
  FAIL("no format_error for ", file);
}

// ---- expectations verified with snarkjs 0.7.6 -------------------------------
//
// `snarkjs zkey export json` on each fixture key reports nVars, nPublic,
// domainSize and the coefficient list (ccoefs); the counts below are its
// answers, the sizes it shares with info.json come from the r1cs.

struct key_expectation {
  const char* dir;
  uint64_t n_coefs, n_a, n_b;
  uint32_t last_constraint, last_signal;  ///< of the last coefficient (A, value 1)
};
constexpr key_expectation bn254_small{"bn254/small", 747, 393, 354, 456, 5};
constexpr key_expectation bn254_medium{"bn254/medium", 5321, 2696, 2625, 3922, 6};
constexpr key_expectation bls12_381_small{"bls12_381/small", 747, 393, 354, 456, 5};

/// The integer c a coefficient stands for: its raw limbs are c * R^2 mod r.
template <class C>
std::string coef_value(const typename C::fr& raw) {
  test::mpz v(raw.montgomery_limbs()), r(C::fr::modulus()), R, t;
  mpz_ui_pow_ui(R.get(), 2, 64 * C::fr::N);
  mpz_mul(R.get(), R.get(), R.get());
  mpz_invert(t.get(), R.get(), r.get());
  mpz_mul(t.get(), t.get(), v.get());
  mpz_mod(t.get(), t.get(), r.get());
  return t.dec();
}

template <class C>
std::string r_minus(unsigned k) {
  test::mpz r(C::fr::modulus());
  mpz_sub_ui(r.get(), r.get(), k);
  return r.dec();
}

template <class C>
bool in_subgroup_g1(const typename C::g1_affine& p) {
  return C::g1_jacobian::from_affine(p).mul(C::fr::modulus()).is_infinity();
}
template <class C>
bool in_subgroup_g2(const typename C::g2_affine& p) {
  return C::g2_jacobian::from_affine(p).mul(C::fr::modulus()).is_infinity();
}

/// Index of the first point that is not infinity.
template <class V>
std::size_t first_finite(const V& v) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!v[i].is_infinity()) return i;
  return v.size();
}

template <class C>
void check_key(const key_expectation& e) {
  const std::string path = fixture(e.dir, "circuit.zkey");
  INFO(path);
  const nlohmann::json info = read_json(fixture(e.dir, "info.json"));
  const auto vk = formats::read_verification_key<C>(fixture(e.dir, "verification_key.json"));

  // Header alone
  const groth16::key_info hi = formats::read_zkey_info(path);
  CHECK(hi.curve == C::id);
  CHECK(hi.n8q == C::fq_bytes);
  CHECK(hi.n8r == C::fr_bytes);
  CHECK(hi.n_vars == info.at("wires").get<uint32_t>());
  CHECK(hi.n_public == info.at("n_public").get<uint32_t>());
  CHECK(hi.n_public == vk.n_public);
  CHECK(hi.domain_size == info.at("domain_size").get<uint32_t>());
  CHECK(hi.log_domain == info.at("power").get<uint32_t>());
  CHECK(hi.n_coefs == e.n_coefs);

  // Whole key
  const groth16::key_ptr kp = formats::load_zkey(path);
  REQUIRE(kp);
  REQUIRE(kp->info.curve == C::id);
  const auto& key = groth16::typed<C>(*kp);
  CHECK(key.path == path);
  CHECK(key.info.n_vars == hi.n_vars);
  CHECK(key.info.n_coefs == hi.n_coefs);

  // Points snarkjs exported into the verification key, decoded independently
  // from decimal text: the key's copies must be the same points.
  CHECK(key.alpha1 == vk.alpha1);
  CHECK(key.beta2 == vk.beta2);
  CHECK(key.gamma2 == vk.gamma2);
  CHECK(key.delta2 == vk.delta2);
  REQUIRE(key.ic.size() == vk.ic.size());
  for (std::size_t i = 0; i < key.ic.size(); ++i) CHECK(key.ic[i] == vk.ic[i]);
  CHECK(key.gamma2 == C::g2_generator());
  CHECK(in_subgroup_g1<C>(key.beta1));
  CHECK(in_subgroup_g1<C>(key.delta1));

  // Section sizes
  const std::size_t n_vars = hi.n_vars, n_private = n_vars - hi.n_public - 1;
  CHECK(key.points_a.size() == n_vars);
  CHECK(key.points_b1.size() == n_vars);
  CHECK(key.points_b2.size() == n_vars);
  CHECK(key.points_c.size() == n_private);
  CHECK(key.points_h.size() == hi.domain_size);
  CHECK(key.coefs_a.size() == e.n_a);
  CHECK(key.coefs_b.size() == e.n_b);

  // Sample points of every section lie in the r-torsion (a wrong decoding
  // that still lands on the curve would not).
  for (const auto* v : {&key.points_a, &key.points_b1, &key.points_c, &key.points_h}) {
    std::size_t i = first_finite(*v);
    REQUIRE(i < v->size());
    CHECK(in_subgroup_g1<C>((*v)[i]));
    CHECK(in_subgroup_g1<C>(v->back()));
  }
  std::size_t i2 = first_finite(key.points_b2);
  REQUIRE(i2 < key.points_b2.size());
  CHECK(in_subgroup_g2<C>(key.points_b2[i2]));

  // Coefficients: what `snarkjs zkey export json` lists first and last.
  const auto& first = key.coefs_a.front();
  CHECK(first.constraint == 0);
  CHECK(first.signal == 0);
  CHECK(coef_value<C>(first.value) == r_minus<C>(1));
  const auto& last = key.coefs_a.back();
  CHECK(last.constraint == e.last_constraint);
  CHECK(last.signal == e.last_signal);
  CHECK(coef_value<C>(last.value) == "1");
  // The public-input rows snarkjs appends: A[nConstraints + s][s] = 1.
  const std::size_t n_constraints = info.at("constraints").get<std::size_t>();
  for (uint32_t s = 0; s <= hi.n_public; ++s) {
    const auto& c = key.coefs_a[key.coefs_a.size() - 1 - hi.n_public + s];
    CHECK(c.constraint == n_constraints + s);
    CHECK(c.signal == s);
    CHECK(coef_value<C>(c.value) == "1");
  }
  // B has no public-input rows.
  CHECK(std::count_if(key.coefs_b.begin(), key.coefs_b.end(),
                      [&](const auto& c) { return c.constraint >= n_constraints; }) == 0);

  // One thread and many read the same key.
  const auto k1 = formats::load_zkey(path, 1);
  const auto& key1 = groth16::typed<C>(*k1);
  CHECK(std::memcmp(key1.points_h.data(), key.points_h.data(),
                    key.points_h.size() * sizeof(key.points_h[0])) == 0);
  CHECK(std::memcmp(key1.points_b2.data(), key.points_b2.data(),
                    key.points_b2.size() * sizeof(key.points_b2[0])) == 0);
}

}  // namespace

TEST_CASE("zkey headers and points match the circuit and its verification key") {
  SUBCASE("BN254 small") { check_key<bn254>(bn254_small); }
  SUBCASE("BN254 medium") { check_key<bn254>(bn254_medium); }
  SUBCASE("BLS12-381 small") { check_key<bls12_381>(bls12_381_small); }
}

namespace {

template <class C>
void check_witnesses(const std::string& dir, int count) {
  const std::string key_path = fixture(dir, "circuit.zkey");
  const auto kp = formats::load_zkey(key_path);
  for (int i = 0; i < count; ++i) {
    const std::string w = fixture(dir, "witness_" + std::to_string(i) + ".wtns");
    INFO(w);
    const formats::wtns_info wi = formats::read_wtns_info(w);
    CHECK(wi.n8 == C::fr_bytes);
    CHECK(wi.count == kp->info.n_vars);
    REQUIRE(wi.prime.size() == C::fr_bytes);
    CHECK(std::memcmp(wi.prime.data(), C::fr::modulus().l, C::fr_bytes) == 0);

    std::vector<typename C::scalar> values(kp->info.n_vars);
    formats::read_witness<C>(w, *kp, values.data());
    CHECK(values[0] == C::scalar::from_u64(1));
    const auto pub = formats::read_public<C>(fixture(dir, "public_" + std::to_string(i) + ".json"));
    REQUIRE(pub.size() == kp->info.n_public);
    for (std::size_t s = 0; s < pub.size(); ++s) {
      INFO("public signal ", s);
      CHECK(formats::to_decimal(values[s + 1]) == formats::to_decimal(pub[s]));
    }
  }
}

}  // namespace

TEST_CASE("witness values start with 1 and carry the public signals snarkjs wrote") {
  SUBCASE("BN254 small") { check_witnesses<bn254>("bn254/small", 4); }
  SUBCASE("BN254 medium") { check_witnesses<bn254>("bn254/medium", 3); }
  SUBCASE("BLS12-381 small") { check_witnesses<bls12_381>("bls12_381/small", 4); }
}

TEST_CASE("zkey and wtns sections are found in any order") {
  temp_dir tmp;
  const std::string orig = fixture("bn254/small", "circuit.zkey");
  raw_file f = raw_file::parse(read_bytes(orig));
  std::reverse(f.sections.begin(), f.sections.end());
  const std::string reversed = tmp.file("reversed.zkey");
  write_bytes(reversed, f.bytes());

  const auto a = formats::load_zkey(orig);
  const auto b = formats::load_zkey(reversed);
  const auto& ka = groth16::typed<bn254>(*a);
  const auto& kb = groth16::typed<bn254>(*b);
  CHECK(kb.path == reversed);
  CHECK(kb.alpha1 == ka.alpha1);
  CHECK(kb.delta2 == ka.delta2);
  CHECK(kb.ic == ka.ic);
  CHECK(kb.points_h == ka.points_h);
  CHECK(kb.points_b2 == ka.points_b2);
  REQUIRE(kb.coefs_b.size() == ka.coefs_b.size());
  CHECK(std::memcmp(kb.coefs_b.data(), ka.coefs_b.data(),
                    ka.coefs_b.size() * sizeof(ka.coefs_b[0])) == 0);

  raw_file w = raw_file::parse(read_bytes(fixture("bn254/small", "witness_1.wtns")));
  std::reverse(w.sections.begin(), w.sections.end());
  write_bytes(tmp.file("reversed.wtns"), w.bytes());
  std::vector<bn254::scalar> x(a->info.n_vars), y(a->info.n_vars);
  formats::read_witness<bn254>(fixture("bn254/small", "witness_1.wtns"), *a, x.data());
  formats::read_witness<bn254>(tmp.file("reversed.wtns"), *a, y.data());
  CHECK(std::memcmp(x.data(), y.data(), x.size() * sizeof(x[0])) == 0);
}

TEST_CASE("a broken zkey is rejected with the file and the problem") {
  temp_dir tmp;
  const std::string orig = fixture("bn254/small", "circuit.zkey");
  const std::vector<unsigned char> good = read_bytes(orig);
  const raw_file layout = raw_file::parse(good);
  const auto info = formats::read_zkey_info(orig);
  const std::string bad = tmp.file("circuit.zkey");
  auto load = [&] { formats::load_zkey(bad); };
  auto header = [&] { formats::read_zkey_info(bad); };
  // Section 2's fields: n8q, q, n8r, r, nVars, nPublic, domainSize, points.
  const std::size_t s2 = layout.offset_of(2);
  const std::size_t domain_at = s2 + 4 + 32 + 4 + 32 + 8;
  const std::size_t alpha1_at = domain_at + 4;

  SUBCASE("wrong magic") {
    auto b = good;
    std::memcpy(b.data(), "wtns", 4);
    write_bytes(bad, b);
    expect_error(load, bad, {"not a zkey file (magic 'wtns')"});
    expect_error(header, bad, {"not a zkey file (magic 'wtns')"});
  }
  SUBCASE("unsupported version") {
    auto b = good;
    put<uint32_t>(b, 4, 2);
    write_bytes(bad, b);
    expect_error(load, bad, {"unsupported zkey version 2"});
  }
  SUBCASE("unsupported protocol") {
    auto b = good;
    put<uint32_t>(b, layout.offset_of(1), 2);
    write_bytes(bad, b);
    expect_error(load, bad, {"unsupported protocol 2 (PLONK)", "Groth16"});
    expect_error(header, bad, {"unsupported protocol 2"});
  }
  SUBCASE("truncated file") {
    // Cut inside the H points, wherever snarkjs put them.
    auto b = good;
    b.resize(layout.offset_of(9) + 100);
    write_bytes(bad, b);
    expect_error(load, bad,
                 {"truncated: section 9 (H points) runs past the end of the file",
                  "file size " + std::to_string(b.size())});
    expect_error(header, bad, {"truncated"});
  }
  SUBCASE("truncated file header") {
    write_bytes(bad, {good.begin(), good.begin() + 8});
    expect_error(load, bad, {"truncated", "8 bytes"});
  }
  SUBCASE("truncated section table") {
    write_bytes(bad, {good.begin(), good.begin() + 18});  // half of section 1's header
    expect_error(load, bad, {"truncated", "header of section 1"});
  }
  SUBCASE("missing section") {
    raw_file f = layout;
    f.section(8).id = 11;
    write_bytes(bad, f.bytes());
    expect_error(load, bad, {"missing section 8 (C points)"});
    expect_error(header, bad, {"missing section 8"});
  }
  SUBCASE("duplicated section") {
    raw_file f = layout;
    f.sections.push_back(f.section(3));
    write_bytes(bad, f.bytes());
    expect_error(load, bad, {"section 3 (IC points) appears 2 times"});
  }
  SUBCASE("section size does not match the header") {
    raw_file f = layout;
    auto& b2 = f.section(7).bytes;
    b2.resize(b2.size() - 4 * 32);  // one G2 point short
    write_bytes(bad, f.bytes());
    const std::size_t expected = std::size_t(info.n_vars) * 4 * 32;
    expect_error(
        load, bad,
        {"section 7 (B2 points) is " + std::to_string(expected - 128) + " bytes, expected " +
         std::to_string(expected) + " for " + std::to_string(info.n_vars) + " variables"});
    expect_error(header, bad, {"section 7 (B2 points)"});
  }
  SUBCASE("H section size does not match the domain") {
    raw_file f = layout;
    f.section(9).bytes.resize(64 * 100);
    write_bytes(bad, f.bytes());
    expect_error(load, bad,
                 {"section 9 (H points) is 6400 bytes, expected 32768 for domain size 512"});
  }
  SUBCASE("coefficient section size does not match its count") {
    raw_file f = layout;
    f.section(4).bytes.resize(f.section(4).bytes.size() - 1);
    write_bytes(bad, f.bytes());
    expect_error(load, bad, {"section 4 (coefficients)", "expected 32872 for 747 coefficients"});
  }
  SUBCASE("point not on the curve") {
    const auto key = formats::load_zkey(orig);
    const auto& k = groth16::typed<bn254>(*key);
    const std::size_t i = first_finite(k.points_a);
    REQUIRE(i < k.points_a.size());
    auto b = good;
    b[layout.offset_of(5) + i * 64 + 3] ^= 0x01;  // a low byte of x: stays below q
    write_bytes(bad, b);
    expect_error(
        load, bad,
        {"point " + std::to_string(i) + " of section 5 (A points) is not on the BN254 G1 curve"});
  }
  SUBCASE("G2 point not on the curve") {
    auto b = good;
    const std::size_t i = info.n_vars - 1;
    b[layout.offset_of(7) + i * 128 + 64 + 5] ^= 0x10;  // inside y.c0
    write_bytes(bad, b);
    expect_error(
        load, bad,
        {"point " + std::to_string(i) + " of section 7 (B2 points) is not on the BN254 G2 curve"});
  }
  SUBCASE("coordinate not below q") {
    auto b = good;
    std::memset(b.data() + layout.offset_of(6) + 2 * 64, 0xff, 32);  // x of point 2
    write_bytes(bad, b);
    expect_error(
        load, bad,
        {"point 2 of section 6 (B1 points) has a coordinate not below the BN254 base field prime"});
  }
  SUBCASE("header point not on the curve") {
    auto b = good;
    b[alpha1_at + 40] ^= 0x04;  // inside alpha1's y
    write_bytes(bad, b);
    expect_error(load, bad, {"alpha1 in section 2 (Groth16 header) is not on the BN254 G1 curve"});
  }
  SUBCASE("coefficient matrix out of range") {
    auto b = good;
    put<uint32_t>(b, layout.offset_of(4) + 4 + 5 * 44, 2);
    write_bytes(bad, b);
    expect_error(load, bad, {"coefficient 5 of section 4 (coefficients)", "matrix 2"});
  }
  SUBCASE("coefficient signal out of range") {
    auto b = good;
    put<uint32_t>(b, layout.offset_of(4) + 4 + 9 * 44 + 8, info.n_vars);
    write_bytes(bad, b);
    expect_error(
        load, bad,
        {"coefficient 9 of section 4", "signal " + std::to_string(info.n_vars) +
                                           " is not below nVars " + std::to_string(info.n_vars)});
  }
  SUBCASE("coefficient constraint out of range") {
    auto b = good;
    put<uint32_t>(b, layout.offset_of(4) + 4 + 0 * 44 + 4, info.domain_size);
    write_bytes(bad, b);
    expect_error(load, bad,
                 {"coefficient 0 of section 4", "constraint 512 is not below the domain size 512"});
  }
  SUBCASE("coefficient value not below r") {
    auto b = good;
    std::memset(b.data() + layout.offset_of(4) + 4 + 3 * 44 + 12, 0xff, 32);
    write_bytes(bad, b);
    expect_error(load, bad,
                 {"coefficient 3 of section 4", "value is not below the BN254 scalar field prime"});
  }
  SUBCASE("unsupported prime") {
    auto b = good;
    b[s2 + 4] ^= 0x02;  // q's low byte
    write_bytes(bad, b);
    expect_error(load, bad, {"unsupported prime q", "BN254 and BLS12-381"});
  }
  SUBCASE("domain size not a power of two") {
    auto b = good;
    put<uint32_t>(b, domain_at, 500);
    write_bytes(bad, b);
    expect_error(header, bad, {"domain size 500 is not a power of two"});
  }
  SUBCASE("no such file") { expect_error(load, bad, {"cannot open", "No such file"}); }
}

TEST_CASE("a BLS12-381 key with a point off its G2 curve names that curve") {
  temp_dir tmp;
  const std::string orig = fixture("bls12_381/small", "circuit.zkey");
  auto b = read_bytes(orig);
  const raw_file layout = raw_file::parse(b);
  b[layout.offset_of(7) + 3 * 192 + 7] ^= 0x01;  // point 3, x.c0
  const std::string bad = tmp.file("bls.zkey");
  write_bytes(bad, b);
  expect_error([&] { formats::load_zkey(bad); }, bad,
               {"point 3 of section 7 (B2 points) is not on the BLS12-381 G2 curve"});
}

TEST_CASE("a witness that does not fit the key is rejected with both files named") {
  temp_dir tmp;
  const std::string key_path = fixture("bn254/small", "circuit.zkey");
  const auto bn_key = formats::load_zkey(key_path);
  const auto bls_key = formats::load_zkey(fixture("bls12_381/small", "circuit.zkey"));
  std::vector<bn254::scalar> out(bn_key->info.n_vars + 4000);
  std::vector<bls12_381::scalar> bls_out(bls_key->info.n_vars);
  const std::string good_w = fixture("bn254/small", "witness_0.wtns");
  const auto good = read_bytes(good_w);
  const raw_file layout = raw_file::parse(good);
  const std::string bad = tmp.file("w3.wtns");

  SUBCASE("witness count differs from nVars") {
    const std::string other = fixture("bn254/medium", "witness_0.wtns");
    const auto n = formats::read_wtns_info(other).count;
    expect_error([&] { formats::read_witness<bn254>(other, *bn_key, out.data()); }, other,
                 {std::to_string(n) + " witness values, " + key_path + " expects " +
                  std::to_string(bn_key->info.n_vars)});
  }
  SUBCASE("witness prime differs from the key's") {
    const std::string bls_w = fixture("bls12_381/small", "witness_0.wtns");
    expect_error(
        [&] { formats::read_witness<bn254>(bls_w, *bn_key, out.data()); }, bls_w,
        {"witness is for the BLS12-381 scalar field, " + key_path + " is a BN254 circuit"});
    expect_error([&] { formats::read_witness<bls12_381>(good_w, *bls_key, bls_out.data()); },
                 good_w, {"witness is for the BN254 scalar field", "is a BLS12-381 circuit"});
  }
  SUBCASE("truncated witness") {
    write_bytes(bad, {good.begin(), good.end() - 32});
    expect_error([&] { formats::read_witness<bn254>(bad, *bn_key, out.data()); }, bad,
                 {"truncated: section 2 (witness values) runs past the end of the file"});
    expect_error([&] { formats::read_wtns_info(bad); }, bad, {"truncated"});
  }
  SUBCASE("wrong magic") {
    expect_error([&] { formats::read_witness<bn254>(key_path, *bn_key, out.data()); }, key_path,
                 {"not a wtns file (magic 'zkey')"});
  }
  SUBCASE("unsupported version") {
    auto b = good;
    put<uint32_t>(b, 4, 1);
    write_bytes(bad, b);
    expect_error([&] { formats::read_wtns_info(bad); }, bad, {"unsupported wtns version 1"});
  }
  SUBCASE("value not below the prime") {
    auto b = good;
    const auto r = bn254::fr::modulus();
    std::memcpy(b.data() + layout.offset_of(2) + 3 * 32, r.l, 32);
    write_bytes(bad, b);
    expect_error([&] { formats::read_witness<bn254>(bad, *bn_key, out.data()); }, bad,
                 {"witness value 3 is not below the BN254 scalar field prime"});
  }
  SUBCASE("missing value section") {
    raw_file f = layout;
    f.sections.pop_back();
    write_bytes(bad, f.bytes());
    expect_error([&] { formats::read_wtns_info(bad); }, bad, {"missing section 2"});
  }
}

TEST_CASE_TEMPLATE("decimal strings round-trip against GMP", N, std::integral_constant<unsigned, 4>,
                   std::integral_constant<unsigned, 6>) {
  constexpr unsigned L = N::value;
  using B = ff::bigint<L>;
  const uint64_t seed = test::test_seed();
  INFO("limbs ", L, ", seed ", seed);
  std::mt19937_64 rng(seed + 11);
  std::vector<B> values{B::zero(),
                        B::from_u64(1),
                        B::from_u64(9),
                        B::from_u64(10),
                        B::from_u64(10000000000000000000ull),
                        B::from_u64(~0ull)};
  B max;
  for (unsigned i = 0; i < L; ++i) max.l[i] = ~0ull;
  values.push_back(max);
  for (int i = 0; i < 2000; ++i) {
    B x;
    for (unsigned j = 0; j < L; ++j) x.l[j] = rng();
    unsigned top = 1 + rng() % L;  // short and long values
    for (unsigned j = top; j < L; ++j) x.l[j] = 0;
    values.push_back(x);
  }
  for (const B& x : values) {
    const std::string expected = test::mpz(x).dec();
    CHECK(formats::to_decimal(x) == expected);
    B back;
    REQUIRE(formats::parse_decimal(expected, back));
    CHECK(back == x);
  }
  B out = B::from_u64(42);
  test::mpz too_big;
  mpz_ui_pow_ui(too_big.get(), 2, 64 * L);
  CHECK_FALSE(formats::parse_decimal(too_big.dec(), out));
  CHECK_FALSE(formats::parse_decimal("", out));
  CHECK_FALSE(formats::parse_decimal("-1", out));
  CHECK_FALSE(formats::parse_decimal("+1", out));
  CHECK_FALSE(formats::parse_decimal("12a", out));
  CHECK_FALSE(formats::parse_decimal(" 1", out));
  CHECK(out == B::from_u64(42));  // untouched on failure
  REQUIRE(formats::parse_decimal("007", out));
  CHECK(out == B::from_u64(7));
}

TEST_CASE_TEMPLATE("proof.json and public.json are written exactly as snarkjs writes them", C,
                   bn254, bls12_381) {
  const std::string dir = std::string(C::name) + "/small";
  const std::string proof_path = fixture(dir, "snarkjs_proof_0.json");
  const std::string public_path = fixture(dir, "public_0.json");

  // Byte for byte: read snarkjs's files, write them back.
  const auto p = formats::read_proof<C>(proof_path);
  CHECK(formats::proof_to_json<C>(p) == read_text(proof_path));
  const auto pub = formats::read_public<C>(public_path);
  CHECK(formats::public_to_json<C>(pub.data(), pub.size()) == read_text(public_path));
  CHECK(formats::public_to_json<C>(nullptr, 0) == "[]");

  // Shape, on a proof made of the generators.
  groth16::proof<C> g{C::g1_generator(), C::g2_generator(), C::g1_affine::infinity()};
  const auto j = nlohmann::ordered_json::parse(formats::proof_to_json<C>(g));
  std::vector<std::string> keys;
  for (const auto& item : j.items()) keys.push_back(item.key());
  CHECK(keys == std::vector<std::string>{"pi_a", "pi_b", "pi_c", "protocol", "curve"});
  CHECK(j["protocol"] == "groth16");
  CHECK(j["curve"] == C::snarkjs_name);
  REQUIRE(j["pi_a"].size() == 3);
  CHECK(j["pi_a"][2] == "1");
  REQUIRE(j["pi_b"].size() == 3);
  CHECK(j["pi_b"][2] == nlohmann::ordered_json::array({"1", "0"}));
  CHECK(j["pi_c"] == nlohmann::ordered_json::array({"0", "1", "0"}));  // infinity, as snarkjs
  const auto gamma = read_json(fixture(dir, "verification_key.json"))["vk_gamma_2"];
  CHECK(j["pi_b"][0] == gamma[0]);  // gamma2 is the G2 generator
  CHECK(j["pi_b"][1] == gamma[1]);
  if constexpr (std::is_same_v<C, bn254>) {
    CHECK(j["pi_a"] == nlohmann::ordered_json::array({"1", "2", "1"}));  // BN254 G1 generator
  }
}

TEST_CASE("JSON readers name the file and the field") {
  const std::string vk = fixture("bn254/small", "verification_key.json");
  expect_error([&] { formats::read_verification_key<bls12_381>(vk); }, vk,
               {"curve is \"bn128\", expected \"bls12381\""});
  const std::string pub = fixture("bn254/small", "public_0.json");
  expect_error([&] { formats::read_proof<bn254>(pub); }, pub, {"expected a JSON object"});
  const std::string wtns = fixture("bn254/small", "witness_0.wtns");
  expect_error([&] { formats::read_public<bn254>(wtns); }, wtns, {"not valid JSON"});
}

TEST_CASE("a proof without \"curve\", as rapidsnark writes it, reads; a key without it does not") {
  const std::string proof_path = fixture("bn254/small", "snarkjs_proof_0.json");
  auto j = read_json(proof_path);
  REQUIRE(j.contains("curve"));
  const auto with_curve = formats::read_proof<bn254>(proof_path);
  j.erase("curve");
  const auto without = formats::read_proof<bn254>(formats::json_text{"rapidsnark proof", j.dump()});
  CHECK(without.a == with_curve.a);
  CHECK(without.b == with_curve.b);
  CHECK(without.c == with_curve.c);
  // A curve that is there must still be the right one.
  j["curve"] = "bls12381";
  expect_error([&] { formats::read_proof<bn254>(formats::json_text{"proof", j.dump()}); }, "proof",
               {"curve is \"bls12381\", expected \"bn128\""});
  // A verification key names its curve: snarkjs takes the proof's from it.
  auto vk = read_json(fixture("bn254/small", "verification_key.json"));
  vk.erase("curve");
  expect_error(
      [&] { formats::read_verification_key<bn254>(formats::json_text{"vk", vk.dump()}); }, "vk",
      {"curve"});
}

TEST_CASE("JSON bombs are refused by their size, depth or values while they are read") {
  const std::string dir =
      (fs::temp_directory_path() / ("pl-json-bombs-" + std::to_string(getpid()))).string();
  fs::create_directories(dir);
  const std::string deep = dir + "/deep.json";
  std::ofstream(deep) << std::string(4'000'000, '[');
  expect_error([&] { formats::read_verification_key<bn254>(deep); }, deep,
               {"nested deeper than 6 arrays and objects"});
  expect_error([&] { formats::read_public<bn254>(deep); }, deep, {"nested deeper than 6"});
  // Longer than any proof.json: refused by its size, before it is read.
  expect_error([&] { formats::read_proof<bn254>(deep); }, deep,
               {"4000000 bytes, more than the 65536"});
  expect_error([&] { formats::verification_key_curve(deep); }, deep, {"nested deeper than 6"});
  const std::string huge = dir + "/huge.json";
  std::ofstream(huge) << "{";
  fs::resize_file(huge, formats::verification_key_limits.max_bytes + 1);
  expect_error([&] { formats::read_verification_key<bn254>(huge); }, huge, {"bytes, more than"});
  // Within the size limit, an IC of more values than any key has.
  std::string values = R"({"protocol": "groth16", "curve": "bn128", "IC": [)";
  for (int i = 0; i < (1 << 20); ++i) values += "1,";
  values += "1]}";
  expect_error(
      [&] { formats::read_verification_key<bn254>(formats::json_text{"vk.json", values}); },
      "vk.json", {"more than 1048576 JSON values"});
  // Text in memory has the limits of its file.
  expect_error(
      [&] { formats::read_proof<bn254>(formats::json_text{"proof.json", std::string(70000, ' ')}); },
      "proof.json", {"70000 bytes, more than the 65536 a proof.json may hold"});
  fs::remove_all(dir);
}

namespace {

/// log2 of the synthetic key's domain: PROOFLINE_TEST_ZKEY_LOG (e.g. 20 for
/// a realistic size, with timings printed), else 15: 32768 points, enough
/// for the point checks of one section to split over two jobs.
unsigned synthetic_log() {
  if (const char* s = std::getenv("PROOFLINE_TEST_ZKEY_LOG"))
    return static_cast<unsigned>(std::atoi(s));
  return 15;
}

/// Coefficient entries the synthetic key holds at least: several of the
/// loader's chunks (2^14 entries), so A's and B's of many chunks are placed.
constexpr std::size_t synthetic_coefs = 3 * (std::size_t(1) << 14) + 5;

/// Writes a key with domain and nVars 2^log built from a fixture key: its
/// header and IC, its coefficients repeated to at least synthetic_coefs
/// (blocks of A's and B's in turn, as the fixture has them), and sections 5-9
/// filled by cycling the fixture's H points (G1) and B2 points (G2), all
/// valid. Returns nVars.
uint32_t write_synthetic_key(const std::string& fixture_dir, const std::string& out, unsigned log) {
  raw_file f = raw_file::parse(read_bytes(fixture(fixture_dir, "circuit.zkey")));
  const auto info = formats::read_zkey_info(fixture(fixture_dir, "circuit.zkey"));
  const uint32_t n = uint32_t(1) << log;
  const std::size_t g1 = 2 * info.n8q, g2 = 4 * info.n8q;
  auto& h = f.section(2).bytes;
  const std::size_t counts = 4 + info.n8q + 4 + info.n8r;
  put<uint32_t>(h, counts, n);      // nVars
  put<uint32_t>(h, counts + 8, n);  // domainSize
  const std::vector<unsigned char> g1_src = f.section(9).bytes, g2_src = f.section(7).bytes;
  auto cycle = [](const std::vector<unsigned char>& src, std::size_t bytes) {
    std::vector<unsigned char> out(bytes);
    for (std::size_t at = 0; at < bytes; at += src.size())
      std::memcpy(out.data() + at, src.data(), std::min(src.size(), bytes - at));
    return out;
  };
  f.section(5).bytes = cycle(g1_src, std::size_t(n) * g1);
  f.section(6).bytes = cycle(g1_src, std::size_t(n) * g1);
  f.section(7).bytes = cycle(g2_src, std::size_t(n) * g2);
  f.section(8).bytes = cycle(g1_src, std::size_t(n - info.n_public - 1) * g1);
  f.section(9).bytes = cycle(g1_src, std::size_t(n) * g1);
  auto& coefs = f.section(4).bytes;
  const std::size_t entry = 12 + info.n8r;
  const std::vector<unsigned char> one(coefs.begin() + 4, coefs.end());
  const std::size_t copies = (synthetic_coefs + info.n_coefs - 1) / info.n_coefs;
  coefs.resize(4);
  for (std::size_t k = 0; k < copies; ++k) coefs.insert(coefs.end(), one.begin(), one.end());
  put<uint32_t>(coefs, 0, static_cast<uint32_t>((coefs.size() - 4) / entry));
  write_bytes(out, f.bytes());
  return n;
}

template <class C>
void check_synthetic_key(const std::string& fixture_dir) {
  using clock = std::chrono::steady_clock;
  temp_dir tmp;
  const std::string path = tmp.file("synthetic.zkey");
  const unsigned log = synthetic_log();
  const uint32_t n = write_synthetic_key(fixture_dir, path, log);
  const auto small = formats::load_zkey(fixture(fixture_dir, "circuit.zkey"));
  const auto& ks = groth16::typed<C>(*small);

  const auto t0 = clock::now();
  const auto many = formats::load_zkey(path);
  const auto t1 = clock::now();
  const auto one = formats::load_zkey(path, 1);
  const auto t2 = clock::now();
  const auto& km = groth16::typed<C>(*many);
  const auto& k1 = groth16::typed<C>(*one);
  if (std::getenv("PROOFLINE_TEST_ZKEY_LOG")) {
    const double mib = static_cast<double>(fs::file_size(path)) / (1 << 20);
    MESSAGE(std::string(C::name), " 2^", log, " key, ", mib, " MiB: load_zkey ",
            std::chrono::duration<double, std::milli>(t1 - t0).count(),
            " ms with every hardware thread (", std::thread::hardware_concurrency(), "), ",
            std::chrono::duration<double, std::milli>(t2 - t1).count(), " ms with one");
  }
  REQUIRE(km.points_h.size() == n);
  REQUIRE(km.points_b2.size() == n);
  for (std::size_t i : {std::size_t(0), std::size_t(n / 2 + 3), std::size_t(n - 1)}) {
    CHECK(km.points_h[i] == ks.points_h[i % ks.points_h.size()]);
    CHECK(km.points_a[i] == ks.points_h[i % ks.points_h.size()]);
    CHECK(km.points_b2[i] == ks.points_b2[i % ks.points_b2.size()]);
  }
  CHECK(km.points_h == k1.points_h);
  CHECK(km.points_b2 == k1.points_b2);
  CHECK(km.points_c == k1.points_c);
  // The coefficients are the fixture's, repeated, in file order.
  const std::size_t copies = km.info.n_coefs / ks.info.n_coefs;
  REQUIRE(km.info.n_coefs >= synthetic_coefs);
  REQUIRE(km.coefs_a.size() == copies * ks.coefs_a.size());
  REQUIRE(km.coefs_b.size() == copies * ks.coefs_b.size());
  auto same = [](const auto& x, const auto& y) {
    return x.constraint == y.constraint && x.signal == y.signal && x.value == y.value;
  };
  bool all_same = true;
  for (std::size_t i = 0; i < km.coefs_a.size(); ++i)
    all_same = all_same && same(km.coefs_a[i], ks.coefs_a[i % ks.coefs_a.size()]);
  for (std::size_t i = 0; i < km.coefs_b.size(); ++i)
    all_same = all_same && same(km.coefs_b[i], ks.coefs_b[i % ks.coefs_b.size()]);
  CHECK(all_same);
  CHECK(std::memcmp(k1.coefs_b.data(), km.coefs_b.data(),
                    km.coefs_b.size() * sizeof(km.coefs_b[0])) == 0);

  // Two bad points in different threads' chunks: the first one is reported,
  // whichever thread finds its point first.
  auto b = read_bytes(path);
  const raw_file layout = raw_file::parse(b);
  const std::size_t g1 = 2 * C::fq_bytes;
  const std::size_t early = n / 2 + 1, late = n - 2;
  b[layout.offset_of(9) + late * g1 + 1] ^= 1;
  write_bytes(path, b);
  expect_error([&] { formats::load_zkey(path, 4); }, path,
               {"point " + std::to_string(late) + " of section 9 (H points) is not on the " +
                (C::id == curve_id::bn254 ? "BN254" : "BLS12-381") + " G1 curve"});
  b[layout.offset_of(9) + early * g1 + 1] ^= 1;
  write_bytes(path, b);
  expect_error([&] { formats::load_zkey(path, 4); }, path,
               {"point " + std::to_string(early) + " of section 9 (H points)"});
  expect_error([&] { formats::load_zkey(path, 1); }, path,
               {"point " + std::to_string(early) + " of section 9 (H points)"});

  // A bad coefficient in a late chunk is reported with its index, before
  // any bad point (the coefficients are checked first).
  const std::size_t entry = 12 + C::fr_bytes, bad_coef = km.info.n_coefs - 3;
  put<uint32_t>(b, layout.offset_of(4) + 4 + bad_coef * entry, 7);  // matrix 7
  write_bytes(path, b);
  expect_error([&] { formats::load_zkey(path, 4); }, path,
               {"coefficient " + std::to_string(bad_coef) +
                " of section 4 (coefficients): matrix 7, expected 0 (A) or 1 (B)"});
}

/// Writes a witness of `count` values for the scalar field of C: value i is
/// i + 1, except that values at `bad` are the prime itself (not below it).
template <class C>
void write_witness(const std::string& path, uint32_t count, const std::vector<uint32_t>& bad) {
  const uint32_t n8 = C::fr_bytes;
  std::vector<unsigned char> b(12);
  std::memcpy(b.data(), "wtns", 4);
  put<uint32_t>(b, 4, 2);
  put<uint32_t>(b, 8, 2);
  auto section = [&](uint32_t id, uint64_t size) {
    std::size_t at = b.size();
    b.resize(at + 12);
    put<uint32_t>(b, at, id);
    put<uint64_t>(b, at + 4, size);
  };
  section(1, 8 + n8);
  std::size_t at = b.size();
  b.resize(at + 8 + n8);
  put<uint32_t>(b, at, n8);
  const auto r = C::fr::modulus();
  std::memcpy(b.data() + at + 4, r.l, n8);
  put<uint32_t>(b, at + 4 + n8, count);
  section(2, uint64_t(count) * n8);
  at = b.size();
  b.resize(at + std::size_t(count) * n8, 0);
  for (uint32_t i = 0; i < count; ++i) put<uint64_t>(b, at + std::size_t(i) * n8, i + 1);
  for (uint32_t i : bad) std::memcpy(b.data() + at + std::size_t(i) * n8, r.l, n8);
  write_bytes(path, b);
}

}  // namespace

TEST_CASE("a large key loads on several threads and reports its first bad point") {
  SUBCASE("BN254") { check_synthetic_key<bn254>("bn254/small"); }
  SUBCASE("BLS12-381") { check_synthetic_key<bls12_381>("bls12_381/small"); }
}

TEST_CASE("a large witness reads on several threads and reports its first bad value") {
  temp_dir tmp;
  const std::string key_path = tmp.file("synthetic.zkey");
  const uint32_t n = write_synthetic_key("bn254/small", key_path, synthetic_log());
  const auto key = formats::load_zkey(key_path);
  const std::string w = tmp.file("big.wtns");
  write_witness<bn254>(w, n, {});
  std::vector<bn254::scalar> many(n), one(n);
  formats::read_witness<bn254>(w, *key, many.data(), 4);
  formats::read_witness<bn254>(w, *key, one.data(), 1);
  CHECK(std::memcmp(many.data(), one.data(), n * sizeof(bn254::scalar)) == 0);
  CHECK(many[n - 1].l[0] == n);
  // Bad values in two chunks: the earlier one is named, on any thread count.
  const uint32_t early = n / 4, late = n - 2;
  write_witness<bn254>(w, n, {early, late});
  for (unsigned threads : {1u, 4u})
    expect_error([&] { formats::read_witness<bn254>(w, *key, many.data(), threads); }, w,
                 {"witness value " + std::to_string(early) +
                  " is not below the BN254 scalar field prime"});
}

TEST_CASE("a FIFO or a device named as zkey or witness is refused at once") {
  // Opening a FIFO for reading waits for a writer; the readers must refuse
  // it instead of hanging the job (or the daemon's key loader) forever.
  temp_dir tmp;
  const std::string fifo = tmp.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto started = std::chrono::steady_clock::now();
  expect_error([&] { formats::load_zkey(fifo); }, fifo, {"not a regular file (a FIFO)"});
  expect_error([&] { formats::read_zkey_info(fifo); }, fifo, {"not a regular file (a FIFO)"});
  expect_error([&] { formats::read_wtns_info(fifo); }, fifo, {"not a regular file (a FIFO)"});
  expect_error([&] { formats::read_wtns_info("/dev/zero"); }, "/dev/zero",
               {"not a regular file (a device)"});
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
}

TEST_CASE("a key, a witness and proof JSON given as bytes read as their files do") {
  const std::string key_path = fixture("bn254/small", "circuit.zkey");
  const std::string w_path = fixture("bn254/small", "witness_1.wtns");
  const auto key_bytes = read_bytes(key_path);
  const auto w_bytes = read_bytes(w_path);
  const auto from_file = formats::load_zkey(key_path);
  const auto from_bytes =
      formats::load_zkey(formats::memory_file{"zkey buffer", key_bytes.data(), key_bytes.size()});
  CHECK(from_bytes->path == "zkey buffer");
  const auto& a = groth16::typed<bn254>(*from_file);
  const auto& b = groth16::typed<bn254>(*from_bytes);
  CHECK(b.info.n_vars == a.info.n_vars);
  CHECK(b.points_h.size() == a.points_h.size());
  CHECK(std::memcmp(b.points_h.data(), a.points_h.data(),
                    a.points_h.size() * sizeof a.points_h[0]) == 0);
  CHECK(std::memcmp(b.coefs_a.data(), a.coefs_a.data(), a.coefs_a.size() * sizeof a.coefs_a[0]) ==
        0);

  std::vector<bn254::scalar> w1(a.info.n_vars), w2(a.info.n_vars);
  formats::read_witness<bn254>(w_path, *from_file, w1.data());
  formats::read_witness<bn254>(formats::memory_file{"witness", w_bytes.data(), w_bytes.size()},
                               *from_file, w2.data(), 2);
  CHECK(std::memcmp(w1.data(), w2.data(), w1.size() * sizeof w1[0]) == 0);
  CHECK(formats::read_wtns_info(formats::memory_file{"witness", w_bytes.data(), w_bytes.size()})
            .count == a.info.n_vars);

  // Errors name the bytes as the caller named them.
  expect_error([&] {
    formats::read_witness<bn254>(formats::memory_file{"witness", w_bytes.data(), w_bytes.size() - 1},
                                 *from_file, w2.data());
  },
               "witness", {"truncated"});
  expect_error([&] { formats::load_zkey(formats::memory_file{"zkey buffer", key_bytes.data(), 40}); },
               "zkey buffer", {"truncated"});
  expect_error([&] { formats::read_wtns_info(formats::memory_file{"witness", nullptr, 12}); },
               "witness", {"no bytes"});

  const auto proof_text = read_bytes(fixture("bn254/small", "snarkjs_proof_0.json"));
  const auto via_text = formats::read_proof<bn254>(
      formats::json_text{"proof", std::string(proof_text.begin(), proof_text.end())});
  const auto via_file = formats::read_proof<bn254>(fixture("bn254/small", "snarkjs_proof_0.json"));
  CHECK(via_text.a == via_file.a);
  expect_error([&] { formats::read_public<bn254>(formats::json_text{"inputs", "[\"x\"]"}); },
               "inputs", {"is not a decimal string"});
}
