// ExpertBlock ([Note: experts as one unit] in nn/expert_block.h): a block of experts lists the
// router's, its other and every expert's parameters, each once (check_expert_unit), names each
// expert's parameters under it, and refuses no experts, a null expert, an expert index out of
// range and a block that leaves an expert's parameters out of its list.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "nn/expert_toy.h"
#include "zerotrain/core/error.h"

namespace zt {
namespace {

TEST(NnExpertBlock, ListsEveryExpertOnce) {
  auto block = test::make_expert_toy("model.layers.0", 3, 4);
  EXPECT_EQ(block->num_experts(), 3);
  EXPECT_NO_THROW(nn::check_expert_unit(*block));
  const std::vector<nn::Parameter*> all = block->parameters();
  ASSERT_EQ(all.size(), 2u + 3u);
  const std::set<nn::Parameter*> listed(all.begin(), all.end());
  for (int64_t e = 0; e < block->num_experts(); ++e) {
    const auto ps = block->expert_parameters(e);
    ASSERT_EQ(ps.size(), 1u);
    EXPECT_TRUE(listed.count(ps[0]));
    EXPECT_EQ(ps[0]->name, "model.layers.0.mlp.experts." + std::to_string(e) + ".weight");
  }
  EXPECT_THROW(block->expert(3), ValueError);
  EXPECT_THROW(block->expert(-1), ValueError);
}

// A block whose parameters() forgets its experts: its ZeRO group would not hold them.
class ForgetfulExperts : public nn::ExpertBlock {
 public:
  explicit ForgetfulExperts(std::vector<std::unique_ptr<nn::Sublayer>> experts)
      : ExpertBlock(std::move(experts)) {}
  std::string name() const override { return "forgetful"; }
  std::vector<nn::Parameter*> parameters() override { return {}; }
  Tensor forward(const Tensor& x, const nn::StepContext&) override { return x; }
  Tensor backward(const Tensor& dy, const nn::StepContext&) override { return dy; }
  void release_saved() override {}
};

TEST(NnExpertBlock, RefusesWhatIsNotOneUnit) {
  EXPECT_THROW(ForgetfulExperts({}), ValueError);
  std::vector<std::unique_ptr<nn::Sublayer>> one_null;
  one_null.push_back(nullptr);
  EXPECT_THROW(ForgetfulExperts(std::move(one_null)), ValueError);
  std::vector<std::unique_ptr<nn::Sublayer>> two;
  for (int e = 0; e < 2; ++e)
    two.push_back(test::make_scale_expert("experts." + std::to_string(e), 4));
  ForgetfulExperts forgetful(std::move(two));
  EXPECT_THROW(nn::check_expert_unit(forgetful), ValueError);
}

}  // namespace
}  // namespace zt
