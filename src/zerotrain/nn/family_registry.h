// The model families zerotrain knows, each by its FamilyTraits (nn/family_traits.h), in the order
// messages list them. Adding a family: its nn/family_<name>.cpp, one line in family_registry.cpp
// and their tests. Tested by tests/nn/test_family_registry.cpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "zerotrain/nn/family_traits.h"

namespace zt::nn {

const std::vector<const FamilyTraits*>& all_families();  // llama, mistral, qwen2, gpt2
const FamilyTraits& family_traits(Family family);
// The family whose model_type is `model_type`, or nullptr.
const FamilyTraits* find_family(std::string_view model_type);
// "llama, mistral, qwen2, gpt2", for messages.
std::string family_names();

}  // namespace zt::nn
