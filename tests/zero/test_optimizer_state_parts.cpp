// zero/optimizer_state_parts.h: the parts of an initial optimizer state the device optimizer and
// the host sub-groups take.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "zerotrain/zero/optimizer_state_parts.h"

namespace zt {
namespace {

optim::FlatParam param(const std::string& name) {
  return {name, {2}, DType::f32, true};
}

optim::OptimizerState state() {
  optim::OptimizerState st;
  st.step = 7;
  for (const char* name : {"a.exp_avg", "a.exp_avg_sq", "b.exp_avg", "stray.exp_avg"})
    st.tensors.emplace(name, Tensor::zeros({2}, DType::f32));
  return st;
}

TEST(OptimizerStateParts, ParamOfStateDropsTheSlotSuffix) {
  EXPECT_EQ(zero::param_of_state("blocks.0.w.exp_avg_sq"), "blocks.0.w");
  EXPECT_EQ(zero::param_of_state("blocks.0.w.exp_avg"), "blocks.0.w");
  EXPECT_EQ(zero::param_of_state("no_suffix"), "no_suffix");
}

TEST(OptimizerStateParts, APartTakesItsParametersTensorsAndTheStep) {
  const std::set<std::string> all{"a", "b"};
  const std::vector<optim::FlatParam> mine{param("a")};
  const optim::OptimizerState part = zero::state_part(state(), all, mine, false);
  EXPECT_EQ(part.step, 7);
  std::set<std::string> names;
  for (const auto& [name, t] : part.tensors)
    names.insert(name);
  EXPECT_EQ(names, (std::set<std::string>{"a.exp_avg", "a.exp_avg_sq"}));
}

// The part that takes strays gets the names of no parameter, so that its optimizer refuses them.
TEST(OptimizerStateParts, StraysGoToThePartThatTakesThem) {
  const std::set<std::string> all{"a", "b"};
  const std::vector<optim::FlatParam> mine{param("b")};
  const optim::OptimizerState part = zero::state_part(state(), all, mine, true);
  std::set<std::string> names;
  for (const auto& [name, t] : part.tensors)
    names.insert(name);
  EXPECT_EQ(names, (std::set<std::string>{"b.exp_avg", "stray.exp_avg"}));
}

TEST(OptimizerStateParts, EveryParameterTakesTheWholeState) {
  const std::set<std::string> all{"a", "b"};
  const std::vector<optim::FlatParam> mine{param("a"), param("b")};
  EXPECT_EQ(zero::state_part(state(), all, mine, false).tensors.size(), 4u);
}

}  // namespace
}  // namespace zt
