#include "zk/formats/proof_json.hpp"

#include <nlohmann/json.hpp>
#include <type_traits>

#include "zk/formats/decimal.hpp"
#include "zk/formats/json_limits.hpp"
#include "zk/formats/primes.hpp"
#include "zk/formats/snarkjs_json.hpp"
#include "zk/formats/whole_file.hpp"

namespace proofline::zk::formats {

namespace {

// Insertion-ordered, so keys come out in snarkjs's order.
using json = snarkjs_json;

// What messages call each kind of file past its size limit.
constexpr const char* vk_kind = "a verification key";
constexpr const char* proof_kind = "a proof.json";
constexpr const char* public_kind = "a public.json";

// ---- reading ---------------------------------------------------------------

/// A reader of one JSON file that names the file and the JSON path in errors.
/// The file is refused by its size before it is read, and parsed within
/// `limits` (json_limits.hpp), so a bomb costs what the limits allow.
class json_file {
 public:
  json_file(std::string path, const json_limits& limits, const char* kind)
      : path_(std::move(path)) {
    // read_whole_file refuses what is not a regular file (a FIFO is never
    // waited on) and a file over the limit by its size, before reading it.
    std::string text = read_whole_file(path_, limits.max_bytes);
    parse(text, limits, kind);
  }
  /// JSON text given in memory, named text.name in errors.
  json_file(const json_text& text, const json_limits& limits, const char* kind)
      : path_(text.name) {
    parse(text.text, limits, kind);
  }

  const json& root() const { return root_; }
  void parse(const std::string& text, const json_limits& limits, const char* kind) {
    if (text.size() > limits.max_bytes) fail(json_size_problem(text.size(), limits.max_bytes, kind));
    try {
      root_ = parse_json_limited<json>(text, limits);
    } catch (const json_limit_error& e) {
      fail(e.what());
    } catch (const json::exception& e) {
      fail(std::string("not valid JSON: ") + e.what());
    }
  }
  [[noreturn]] void fail(const std::string& problem) const { throw format_error(path_, problem); }

  /// The member `key` of the top-level object.
  const json& member(const std::string& key) const {
    if (!root_.is_object()) fail("expected a JSON object at the top level");
    auto it = root_.find(key);
    if (it == root_.end()) fail("missing \"" + key + "\"");
    return *it;
  }

  /// Checks "protocol" and "curve" against what C needs. A proof may leave
  /// "curve" out (rapidsnark writes none; snarkjs takes the curve from the
  /// verification key), a verification key may not.
  template <class C>
  void expect_groth16(bool curve_optional = false) const {
    const json& proto = member("protocol");
    if (proto != "groth16") fail("protocol is " + proto.dump() + ", expected \"groth16\"");
    if (curve_optional && root_.is_object() && !root_.contains("curve")) return;
    const json& curve = member("curve");
    if (curve != C::snarkjs_name)
      fail("curve is " + curve.dump() + ", expected \"" + C::snarkjs_name + "\"");
  }

  template <unsigned N>
  ff::bigint<N> decimal(const json& v, const std::string& where) const {
    ff::bigint<N> out;
    if (!v.is_string() || !parse_decimal(v.get_ref<const std::string&>(), out))
      fail(where + ": " + v.dump() + " is not a decimal string");
    return out;
  }

  template <class P>
  void field(const json& v, const std::string& where, ff::fp<P>& out) const {
    using F = ff::fp<P>;
    auto x = decimal<F::N>(v, where);
    if (!(x < F::modulus())) fail(where + ": " + v.dump() + " is not below the field prime");
    out = F::from_standard(x);
  }
  template <class F>
  void field(const json& v, const std::string& where, ff::fp2<F>& out) const {
    if (!v.is_array() || v.size() != 2) fail(where + ": expected [c0, c1]");
    field(v[0], where + "[0]", out.c0);
    field(v[1], where + "[1]", out.c1);
  }

  /// A point [x, y, z] with z = 1 (affine) or z = 0 (infinity), on its curve.
  template <class C, class A>
  A point(const json& v, const std::string& where, bool check_curve = true) const {
    using field_t = typename A::field;
    if (!v.is_array() || v.size() != 3) fail(where + ": expected [x, y, z]");
    A p;
    field_t z;
    field(v[0], where + "[0]", p.x);
    field(v[1], where + "[1]", p.y);
    field(v[2], where + "[2]", z);
    if (z.is_zero()) return A::infinity();
    if (z != field_t::one()) fail(where + ": z is neither 1 nor 0 (only affine points are read)");
    if (check_curve && !p.is_on_curve())
      fail(where + " is not on the " + detail::display_name(C::id) + " " +
           (std::is_same_v<A, typename C::g1_affine> ? "G1" : "G2") + " curve");
    return p;
  }

 private:
  std::string path_;
  json root_;
};

}  // namespace

template <class C>
std::string proof_to_json(const groth16::proof<C>& p) {
  json j;
  j["pi_a"] = point_json(p.a);
  j["pi_b"] = point_json(p.b);
  j["pi_c"] = point_json(p.c);
  j["protocol"] = "groth16";
  j["curve"] = C::snarkjs_name;
  return j.dump(snarkjs_indent);
}

template <class C>
std::string public_to_json(const typename C::scalar* values, std::size_t count) {
  json j = json::array();
  for (std::size_t i = 0; i < count; ++i) j.push_back(to_decimal(values[i]));
  return j.dump(snarkjs_indent);
}

namespace {

template <class C>
verification_key<C> verification_key_from(const json_file& f) {
  f.expect_groth16<C>();
  verification_key<C> vk;
  const json& n = f.member("nPublic");
  if (!n.is_number_unsigned() || n.get<uint64_t>() > UINT32_MAX)
    f.fail("nPublic is " + n.dump() + ", expected a non-negative integer");
  vk.n_public = n.get<uint32_t>();
  using g1 = typename C::g1_affine;
  using g2 = typename C::g2_affine;
  vk.alpha1 = f.point<C, g1>(f.member("vk_alpha_1"), "vk_alpha_1");
  vk.beta2 = f.point<C, g2>(f.member("vk_beta_2"), "vk_beta_2");
  vk.gamma2 = f.point<C, g2>(f.member("vk_gamma_2"), "vk_gamma_2");
  vk.delta2 = f.point<C, g2>(f.member("vk_delta_2"), "vk_delta_2");
  const json& ic = f.member("IC");
  if (!ic.is_array() || ic.size() != vk.n_public + std::size_t(1))
    f.fail("IC has " + std::to_string(ic.is_array() ? ic.size() : 0) + " points, expected " +
           std::to_string(vk.n_public + std::size_t(1)) + " (nPublic + 1)");
  for (std::size_t i = 0; i < ic.size(); ++i)
    vk.ic.push_back(f.point<C, g1>(ic[i], "IC[" + std::to_string(i) + "]"));
  return vk;
}

template <class C>
groth16::proof<C> proof_from(const json_file& f, bool check_curve) {
  f.expect_groth16<C>(/*curve_optional=*/true);
  groth16::proof<C> p;
  p.a = f.point<C, typename C::g1_affine>(f.member("pi_a"), "pi_a", check_curve);
  p.b = f.point<C, typename C::g2_affine>(f.member("pi_b"), "pi_b", check_curve);
  p.c = f.point<C, typename C::g1_affine>(f.member("pi_c"), "pi_c", check_curve);
  return p;
}

template <class C>
std::vector<typename C::scalar> public_from(const json_file& f) {
  const json& root = f.root();
  if (!root.is_array()) f.fail("expected a JSON array of decimal strings");
  std::vector<typename C::scalar> out;
  out.reserve(root.size());
  const auto r = C::fr::modulus();
  for (std::size_t i = 0; i < root.size(); ++i) {
    std::string where = "public signal " + std::to_string(i);
    auto v = f.decimal<C::fr::N>(root[i], where);
    if (!(v < r))
      f.fail(where + " is not below the " + detail::display_name(C::id) + " scalar field prime");
    out.push_back(v);
  }
  return out;
}

}  // namespace

template <class C>
verification_key<C> read_verification_key(const std::string& path) {
  return verification_key_from<C>(json_file(path, verification_key_limits, vk_kind));
}
template <class C>
verification_key<C> read_verification_key(const json_text& text) {
  return verification_key_from<C>(json_file(text, verification_key_limits, vk_kind));
}
template <class C>
groth16::proof<C> read_proof(const std::string& path, bool check_curve) {
  return proof_from<C>(json_file(path, proof_limits, proof_kind), check_curve);
}
template <class C>
groth16::proof<C> read_proof(const json_text& text, bool check_curve) {
  return proof_from<C>(json_file(text, proof_limits, proof_kind), check_curve);
}
template <class C>
std::vector<typename C::scalar> read_public(const std::string& path) {
  return public_from<C>(json_file(path, public_limits, public_kind));
}
template <class C>
std::vector<typename C::scalar> read_public(const json_text& text) {
  return public_from<C>(json_file(text, public_limits, public_kind));
}

curve_id verification_key_curve(const std::string& path) {
  json_file f(path, verification_key_limits, vk_kind);
  const json& curve = f.member("curve");
  if (curve == bn254::snarkjs_name) return curve_id::bn254;
  if (curve == bls12_381::snarkjs_name) return curve_id::bls12_381;
  f.fail("curve is " + curve.dump() + ", expected \"bn128\" (BN254) or \"bls12381\" (BLS12-381)");
}

#define PL_INSTANTIATE(C)                                                    \
  template std::string proof_to_json<C>(const groth16::proof<C>&);           \
  template std::string public_to_json<C>(const C::scalar*, std::size_t);     \
  template verification_key<C> read_verification_key<C>(const std::string&); \
  template groth16::proof<C> read_proof<C>(const std::string&, bool);              \
  template std::vector<C::scalar> read_public<C>(const std::string&);   \
  template verification_key<C> read_verification_key<C>(const json_text&);   \
  template groth16::proof<C> read_proof<C>(const json_text&, bool);          \
  template std::vector<C::scalar> read_public<C>(const json_text&);
PL_INSTANTIATE(bn254)
PL_INSTANTIATE(bls12_381)
#undef PL_INSTANTIATE

}  // namespace proofline::zk::formats
