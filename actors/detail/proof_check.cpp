#include "actors/detail/proof_check.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

#include "base/confined.hpp"
#include "zk/curves.hpp"
#include "zk/formats/proof_json.hpp"
#include "zk/groth16/verifier.hpp"
#include "zk/groth16/verifying_key.hpp"

namespace proofline {

namespace {

/// A file's bytes, at most `limit` + 1 of them; nullopt when it cannot be
/// read. Under the process's confinement (serve) it is opened beneath its
/// allowed root without following links.
std::optional<std::string> read_at_most(const std::string& path, std::size_t limit) {
  int fd;
  if (const auto* c = base::process_confinement()) {
    std::string why;
    fd = c->open_file(path, O_RDONLY | O_NONBLOCK, why);
  } else {
    fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  }
  if (fd < 0) return std::nullopt;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return std::nullopt;
  }
  std::string text(limit + 1, '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text.resize(got);
  return text;
}

}  // namespace

std::string check_proof_text(const zk::groth16::key_ptr& key, const std::string& proof_json,
                             const std::string& public_json, const std::string& proof_name,
                             const std::string& public_name) {
  if (!key) return proof_name + ": no proving key to check it against";
  // One decimal string of at most 78 digits per public signal, with quotes,
  // commas and indentation: 100 bytes each is ample.
  const std::size_t public_limit = 1024 + 100 * std::size_t(key->info.n_public);
  if (proof_json.size() > max_proof_text_bytes)
    return proof_name + ": " + std::to_string(proof_json.size()) +
           " bytes, more than any proof.json (" + std::to_string(max_proof_text_bytes) + ")";
  if (public_json.size() > public_limit)
    return public_name + ": " + std::to_string(public_json.size()) + " bytes, more than " +
           std::to_string(key->info.n_public) + " public signals take";
  try {
    return zk::visit_curve(key->info.curve, [&](auto curve) -> std::string {
      using C = decltype(curve);
      const auto proof = zk::formats::read_proof<C>(zk::formats::json_text{proof_name, proof_json},
                                                    /*check_curve=*/false);
      const auto pub = zk::formats::read_public<C>(zk::formats::json_text{public_name, public_json});
      if (pub.size() != key->info.n_public)
        return public_name + ": " + std::to_string(pub.size()) + " public signals, the key has " +
               std::to_string(key->info.n_public);
      const auto& k = zk::groth16::typed<C>(*key);
      std::optional<zk::groth16::prepared_key<C>> own;
      const zk::groth16::prepared_key<C>* vk = nullptr;
      if (k.verifier) {
        vk = static_cast<const zk::groth16::prepared_key<C>*>(k.verifier.get());
      } else {
        own.emplace(zk::groth16::prepare<C>(zk::groth16::verifying_key_of(k)));
        vk = &*own;
      }
      auto v = zk::groth16::verify<C>(*vk, proof, pub.data(), pub.size());
      return v.ok ? std::string() : proof_name + ": " + v.reason;
    });
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::string check_proof_files(const zk::groth16::key_ptr& key, const std::string& proof_file,
                              const std::string& public_file) {
  auto proof = read_at_most(proof_file, max_proof_text_bytes);
  if (!proof) return proof_file + ": cannot open";
  auto pub = read_at_most(public_file, 1024 + 100 * std::size_t(key ? key->info.n_public : 0));
  if (!pub) return public_file + ": cannot open";
  return check_proof_text(key, *proof, *pub, proof_file, public_file);
}

}  // namespace proofline
