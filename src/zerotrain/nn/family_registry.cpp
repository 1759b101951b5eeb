// The family list (see family_registry.h): one line per family.
#include "zerotrain/nn/family_registry.h"

#include "zerotrain/core/error.h"

namespace zt::nn {

// Defined in nn/family_<name>.cpp.
const FamilyTraits& llama_family();
const FamilyTraits& mistral_family();
const FamilyTraits& qwen2_family();
const FamilyTraits& gpt2_family();

const std::vector<const FamilyTraits*>& all_families() {
  static const std::vector<const FamilyTraits*> families = {
      &llama_family(),
      &mistral_family(),
      &qwen2_family(),
      &gpt2_family(),
  };
  return families;
}

const FamilyTraits& family_traits(Family family) {
  for (const FamilyTraits* f : all_families())
    if (f->family == family) return *f;
  throw ValueError("family", str("family ", static_cast<int>(family), " is not registered"));
}

const FamilyTraits* find_family(std::string_view model_type) {
  for (const FamilyTraits* f : all_families())
    if (model_type == f->name) return f;
  return nullptr;
}

std::string family_names() {
  std::string out;
  for (const FamilyTraits* f : all_families())
    out += (out.empty() ? "" : ", ") + std::string(f->name);
  return out;
}

}  // namespace zt::nn
