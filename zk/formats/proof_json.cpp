#include "zk/formats/proof_json.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <iterator>
#include <type_traits>

#include "zk/formats/decimal.hpp"
#include "zk/formats/primes.hpp"
#include "zk/formats/snarkjs_json.hpp"

namespace proofline::zk::formats {

namespace {

// Insertion-ordered, so keys come out in snarkjs's order.
using json = snarkjs_json;

// ---- reading ---------------------------------------------------------------

/// A reader of one JSON file that names the file and the JSON path in errors.
class json_file {
 public:
  explicit json_file(std::string path) : path_(std::move(path)) {
    std::ifstream in(path_, std::ios::binary);
    if (!in) fail("cannot open");
    parse(std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()});
  }
  /// The same for text already in memory, named `name` in errors.
  json_file(std::string name, const std::string& text) : path_(std::move(name)) { parse(text); }

  void parse(const std::string& text) {
    try {
      root_ = json::parse(text);
    } catch (const json::parse_error& e) {
      fail(std::string("not valid JSON: ") + e.what());
    }
  }

  const json& root() const { return root_; }
  [[noreturn]] void fail(const std::string& problem) const { throw format_error(path_, problem); }

  /// The member `key` of the top-level object.
  const json& member(const std::string& key) const {
    if (!root_.is_object()) fail("expected a JSON object at the top level");
    auto it = root_.find(key);
    if (it == root_.end()) fail("missing \"" + key + "\"");
    return *it;
  }

  /// Checks "protocol" and "curve" against what C needs.
  template <class C>
  void expect_groth16() const {
    const json& proto = member("protocol");
    if (proto != "groth16") fail("protocol is " + proto.dump() + ", expected \"groth16\"");
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

template <class C>
verification_key<C> read_verification_key(const std::string& path) {
  json_file f(path);
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

namespace {

template <class C>
groth16::proof<C> proof_of(const json_file& f, bool check_curve) {
  f.expect_groth16<C>();
  groth16::proof<C> p;
  p.a = f.point<C, typename C::g1_affine>(f.member("pi_a"), "pi_a", check_curve);
  p.b = f.point<C, typename C::g2_affine>(f.member("pi_b"), "pi_b", check_curve);
  p.c = f.point<C, typename C::g1_affine>(f.member("pi_c"), "pi_c", check_curve);
  return p;
}

template <class C>
std::vector<typename C::scalar> public_of(const json_file& f) {
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
groth16::proof<C> read_proof(const std::string& path, bool check_curve) {
  return proof_of<C>(json_file(path), check_curve);
}

template <class C>
groth16::proof<C> parse_proof(const std::string& text, const std::string& name, bool check_curve) {
  return proof_of<C>(json_file(name, text), check_curve);
}

template <class C>
std::vector<typename C::scalar> read_public(const std::string& path) {
  return public_of<C>(json_file(path));
}

template <class C>
std::vector<typename C::scalar> parse_public(const std::string& text, const std::string& name) {
  return public_of<C>(json_file(name, text));
}

#define PL_INSTANTIATE(C)                                                    \
  template std::string proof_to_json<C>(const groth16::proof<C>&);           \
  template std::string public_to_json<C>(const C::scalar*, std::size_t);     \
  template verification_key<C> read_verification_key<C>(const std::string&); \
  template groth16::proof<C> read_proof<C>(const std::string&, bool);              \
  template std::vector<C::scalar> read_public<C>(const std::string&);                \
  template groth16::proof<C> parse_proof<C>(const std::string&, const std::string&, bool); \
  template std::vector<C::scalar> parse_public<C>(const std::string&, const std::string&);
PL_INSTANTIATE(bn254)
PL_INSTANTIATE(bls12_381)
#undef PL_INSTANTIATE

}  // namespace proofline::zk::formats
