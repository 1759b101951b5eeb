// [Note: packed documents] (nn/row_documents.h) over whole models of every family: a row packing
// two documents gives the summed losses and gradients of the two documents run as rows of their
// own, and each document's loss alone (the other's targets masked), within f32 rounding (1e-5
// relative: the packed run's GEMMs and sums group the tokens differently, so not bitwise); doc_starts
// of one document per row change nothing (bitwise); row_documents' position ids and refusals.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nn/nn_test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/nn/block_runner.h"
#include "zerotrain/nn/loss_targets.h"
#include "zerotrain/nn/row_documents.h"

namespace zt {
namespace {

// One row of tokens and targets, a slice of it, or the documents of a packed row.
nn::StepContext step_of(const std::vector<int64_t>& tokens, const std::vector<int64_t>& targets,
                        int64_t items, const std::vector<int64_t>& doc_starts = {}) {
  const auto n = static_cast<int64_t>(tokens.size());
  nn::StepContext ctx;
  ctx.tokens = Tensor::from_ints(tokens, {1, n}, DType::i32);
  ctx.targets = Tensor::from_ints(targets, {1, n}, DType::i32);
  ctx.num_items_in_batch = items;
  if (!doc_starts.empty())
    ctx.documents =
        nn::row_documents(Tensor::from_ints(doc_starts, {1, n}, DType::i32), Device::cpu());
  return ctx;
}

std::vector<int64_t> part(const std::vector<int64_t>& v, int64_t first, int64_t n) {
  return {v.begin() + first, v.begin() + first + n};
}

void expect_near_all(const std::vector<std::vector<double>>& got,
                     const std::vector<std::vector<double>>& want, const std::string& what) {
  EXPECT_LT(test::relative_l2(got, want), 1e-5) << what;
}

TEST(PackedRows, TwoDocumentsInOneRowEqualTwoRows) {
  const int64_t first_len = 5, second_len = 9, S = first_len + second_len;
  for (nn::Family family : test::all_families()) {
    const nn::ModelConfig c = test::tiny_config(family);
    nn::Transformer model(c, {});
    model.init_random(3);
    std::vector<int64_t> tokens(S), targets(S), starts(S);
    for (int64_t i = 0; i < S; ++i) {
      tokens[i] = (i * 17 + 4) % c.vocab_size;
      targets[i] = i % 4 == 3 ? nn::kIgnoreIndex : (i * 29 + 7) % c.vocab_size;
      starts[i] = i < first_len ? 0 : first_len;
    }
    const std::string name = nn::family_name(family);
    const int64_t items = nn::count_loss_targets(Tensor::from_ints(targets, {1, S}, DType::i32));

    const double packed = test::model_loss_and_grads(model, step_of(tokens, targets, items, starts));
    const auto packed_grads = test::grads_of(model.parameters());
    const double first = test::model_loss_and_grads(
        model, step_of(part(tokens, 0, first_len), part(targets, 0, first_len), items));
    const auto first_grads = test::grads_of(model.parameters());
    const double second = test::model_loss_and_grads(
        model, step_of(part(tokens, first_len, second_len), part(targets, first_len, second_len),
                       items));
    auto summed = test::grads_of(model.parameters());
    for (size_t p = 0; p < summed.size(); ++p)
      for (size_t e = 0; e < summed[p].size(); ++e)
        summed[p][e] += first_grads[p][e];
    EXPECT_NEAR(packed, first + second, 1e-5 * packed) << name;
    expect_near_all(packed_grads, summed, name + " gradients");

    // Each document alone: the other's targets masked, the same divisor.
    for (bool keep_first : {true, false}) {
      std::vector<int64_t> masked = targets;
      for (int64_t i = 0; i < S; ++i)
        if ((i < first_len) != keep_first) masked[i] = nn::kIgnoreIndex;
      const double one = test::model_loss(model, step_of(tokens, masked, items, starts));
      EXPECT_NEAR(one, keep_first ? first : second, 1e-5 * packed) << name << " " << keep_first;
    }
    // Without the boundaries the second document reads the first: the test can tell.
    EXPECT_GT(std::abs(test::model_loss(model, step_of(tokens, targets, items)) - packed),
              1e-4 * packed)
        << name;
  }
}

TEST(PackedRows, OneDocumentPerRowIsBitwiseUnchanged) {
  for (nn::Family family : test::all_families()) {
    const nn::ModelConfig c = test::tiny_config(family);
    nn::Transformer model(c, {});
    model.init_random(8);
    nn::StepContext plain = test::make_step(c, 2, 7, 5);
    nn::StepContext packed = plain;
    packed.documents = nn::row_documents(
        Tensor::from_ints(std::vector<int64_t>(14, 0), {2, 7}, DType::i32), Device::cpu());
    const double a = test::model_loss_and_grads(model, plain);
    const auto ga = test::grads_of(model.parameters());
    const double b = test::model_loss_and_grads(model, packed);
    EXPECT_EQ(a, b) << nn::family_name(family);
    EXPECT_TRUE(ga == test::grads_of(model.parameters())) << nn::family_name(family);
  }
}

TEST(PackedRows, PositionIdsRestartAndBadStartsAreRefused) {
  const nn::RowDocuments d = nn::row_documents(
      Tensor::from_ints({0, 0, 0, 3, 3, 5}, {1, 6}, DType::i32), Device::cpu());
  EXPECT_EQ(d.position_ids.to_ints(), (std::vector<int64_t>{0, 1, 2, 0, 1, 0}));
  EXPECT_FALSE(nn::row_documents({}, Device::cpu()).packed());
  for (const std::vector<int64_t>& bad : {std::vector<int64_t>{1, 1, 1}, {0, 0, 1}, {0, 1, 0},
                                          {0, 0, 3}}) {
    try {
      nn::row_documents(Tensor::from_ints(bad, {1, 3}, DType::i32), Device::cpu());
      ADD_FAILURE() << "accepted " << bad[0] << bad[1] << bad[2];
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("doc_starts["), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(nn::row_documents(Tensor::from_ints({0, 0}, {2}, DType::i32), Device::cpu()),
               ValueError);
}

}  // namespace
}  // namespace zt
