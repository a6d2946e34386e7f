#include "messages/pipeline.hpp"

#include <filesystem>

namespace proofline {

std::string job_context::proof_name(uint32_t index) const {
  return spec.single ? std::string("proof.json") : "proof_" + std::to_string(index) + ".json";
}

std::string job_context::public_name(uint32_t index) const {
  return spec.single ? std::string("public.json") : "public_" + std::to_string(index) + ".json";
}

std::string job_context::out_path(const std::string& name) const {
  return (std::filesystem::path(spec.out) / name).string();
}

}  // namespace proofline
