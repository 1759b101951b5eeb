// The block runner's second stream ([Note: second stream] in nn/second_stream.h) on a toy
// encoder-decoder (tests/nn/two_stream_toy.h): the gradients of every parameter and of both
// inputs match central finite differences, with and without activation checkpointing, both when
// the decoder starts from its own input and when it starts from the encoder's output; the
// checkpointed run recomputes every layer and gives bitwise the plain run's gradients, also under
// hooks that fetch each block's parameters before every use and release them after (as ZeRO-3
// does); block lists that misuse the stream are refused; the forward-only pass of evaluation
// carries the stream, gives the training forward's loss bitwise and keeps nothing.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "nn/nn_test_util.h"
#include "nn/two_stream_toy.h"
#include "support/test_util.h"
#include "zerotrain/core/error.h"
#include "zerotrain/nn/block_runner.h"

namespace zt {
namespace {

using test::TwoStreamToy;

constexpr int64_t kEncoderLayers = 2, kDecoderLayers = 3;

void prepare(TwoStreamToy& toy, uint64_t seed) {
  test::allocate(toy.parameters(), DType::f32, DType::f32);
  test::randomize(toy.parameters(), seed, 0.6f);
  const Shape shape{TwoStreamToy::kRows, TwoStreamToy::kWidth};
  *toy.encoder_input = test::random_tensor(shape, DType::f32, seed + 1);
  if (toy.decoder_input) *toy.decoder_input = test::random_tensor(shape, DType::f32, seed + 2);
}

// The held inputs, then the parameters: as host vectors.
std::vector<std::vector<float>> inputs_of(TwoStreamToy& toy) {
  std::vector<std::vector<float>> out{toy.encoder_input->to_floats()};
  if (toy.decoder_input) out.push_back(toy.decoder_input->to_floats());
  for (const auto& v : test::values_of(toy.parameters()))
    out.push_back(v);
  return out;
}

void set_inputs(TwoStreamToy& toy, const std::vector<std::vector<float>>& v) {
  const Shape shape{TwoStreamToy::kRows, TwoStreamToy::kWidth};
  size_t k = 0;
  *toy.encoder_input = Tensor::from_floats(v[k++], shape, DType::f32);
  if (toy.decoder_input) *toy.decoder_input = Tensor::from_floats(v[k++], shape, DType::f32);
  test::set_values(toy.parameters(), {v.begin() + static_cast<std::ptrdiff_t>(k), v.end()});
}

std::vector<std::vector<double>> grads_of(TwoStreamToy& toy) {
  auto doubles = [](const Tensor& t) {
    const std::vector<float> f = t.to_floats();
    return std::vector<double>(f.begin(), f.end());
  };
  std::vector<std::vector<double>> out{doubles(*toy.encoder_input_grad)};
  if (toy.decoder_input) out.push_back(doubles(*toy.decoder_input_grad));
  for (const auto& g : test::grads_of(toy.parameters()))
    out.push_back(g);
  return out;
}

std::string label(bool side_tap, bool checkpoint) {
  return std::string(side_tap ? "side tap" : "encoder-decoder") +
         (checkpoint ? ", checkpointed" : ", plain");
}

TEST(NnSecondStream, GradientsMatchFiniteDifferences) {
  for (bool side_tap : {false, true})
    for (bool checkpoint : {false, true}) {
      const std::string what = label(side_tap, checkpoint);
      TwoStreamToy toy(kEncoderLayers, kDecoderLayers, side_tap);
      prepare(toy, 21);
      nn::BlockRunner runner(toy.blocks, {checkpoint});
      const nn::StepContext ctx;
      test::zero_grads(toy.parameters());
      runner.forward_backward(ctx);
      const auto grads = grads_of(toy);
      const auto inputs = inputs_of(toy);
      auto loss = [&](const std::vector<std::vector<float>>& v) {
        set_inputs(toy, v);
        return static_cast<double>(runner.forward(ctx).to_floats()[0]);
      };
      test::expect_gradients_match_fd(loss, inputs, grads, what + " (all inputs)", 1e-2, 1e-2, 6,
                                      31);
      for (size_t k = 0; k < inputs.size(); ++k) {
        auto one = [&](const std::vector<std::vector<float>>& v) {
          auto all = inputs;
          all[k] = v[0];
          return loss(all);
        };
        test::expect_gradients_match_fd(one, {inputs[k]}, {grads[k]},
                                        what + " input " + std::to_string(k), 1e-2, 1e-2, 2,
                                        40 + k);
      }
    }
}

TEST(NnSecondStream, CheckpointingRecomputesAndIsBitwiseIdentical) {
  for (bool side_tap : {false, true}) {
    TwoStreamToy toy(kEncoderLayers, kDecoderLayers, side_tap);
    prepare(toy, 5);
    std::vector<std::vector<double>> grads[2];
    for (int ck = 0; ck < 2; ++ck) {
      test::zero_grads(toy.parameters());
      *toy.layer_forwards = 0;
      nn::BlockRunner(toy.blocks, {ck == 1}).forward_backward({});
      EXPECT_EQ(*toy.layer_forwards, (kEncoderLayers + kDecoderLayers) * (ck + 1));
      grads[ck] = grads_of(toy);
    }
    EXPECT_EQ(grads[0], grads[1]) << label(side_tap, true);
  }
}

// As ZeRO-3: a block's parameters hold values only between its before_* and after_* hooks.
TEST(NnSecondStream, FetchReleaseHooksSeeEveryUse) {
  TwoStreamToy toy(kEncoderLayers, kDecoderLayers);
  prepare(toy, 9);
  test::zero_grads(toy.parameters());
  nn::BlockRunner(toy.blocks).forward_backward({});
  const auto plain = grads_of(toy);

  std::vector<std::vector<Tensor>> stash(toy.blocks.size());
  for (size_t b = 0; b < toy.blocks.size(); ++b)
    for (nn::Parameter* p : toy.blocks[b]->parameters())
      stash[b].push_back(std::exchange(p->value, Tensor()));
  std::vector<std::pair<char, size_t>> events;
  auto fetch = [&](char what) {
    return [&, what](size_t b) {
      events.emplace_back(what, b);
      auto ps = toy.blocks[b]->parameters();
      for (size_t i = 0; i < ps.size(); ++i)
        ps[i]->value = stash[b][i];
    };
  };
  auto release = [&](size_t b) {
    for (nn::Parameter* p : toy.blocks[b]->parameters())
      p->value = Tensor();
  };
  nn::BlockRunner runner(toy.blocks, {true});
  runner.set_hooks({fetch('f'), release, fetch('b'), release});
  test::zero_grads(toy.parameters());
  runner.forward_backward({});
  EXPECT_EQ(grads_of(toy), plain);
  const size_t n = toy.blocks.size();
  ASSERT_EQ(events.size(), 2 * n);
  for (size_t b = 0; b < n; ++b) {
    EXPECT_EQ(events[b], std::make_pair('f', b));
    EXPECT_EQ(events[n + b], std::make_pair('b', n - 1 - b));
  }
}

// Evaluation's pass (BlockRunner::forward_only): the last block goes to the callback, the stream
// reaches every reader (the loss is bitwise the training forward's), each block runs once between
// its hooks, and no block keeps anything a backward could use.
TEST(NnSecondStream, ForwardOnlyCarriesTheStreamAndKeepsNothing) {
  for (bool side_tap : {false, true}) {
    TwoStreamToy toy(kEncoderLayers, kDecoderLayers, side_tap);
    prepare(toy, 13);
    const std::vector<float> trained = nn::BlockRunner(toy.blocks).forward({}).to_floats();
    nn::BlockRunner runner(toy.blocks);
    std::vector<std::pair<char, size_t>> events;
    runner.set_hooks({[&](size_t b) { events.emplace_back('f', b); },
                      [&](size_t b) { events.emplace_back('a', b); }, nullptr, nullptr});
    std::string last_name;
    *toy.layer_forwards = 0;
    const Tensor loss =
        runner.forward_only({}, [&](nn::Block& last, const Tensor& x, const nn::StepContext& ctx) {
          last_name = last.name();
          return last.forward(x, ctx);
        });
    EXPECT_EQ(loss.to_floats(), trained) << label(side_tap, false);
    EXPECT_EQ(last_name, toy.blocks.back()->name());
    EXPECT_EQ(*toy.layer_forwards, kEncoderLayers + kDecoderLayers);
    const size_t n = toy.blocks.size();
    ASSERT_EQ(events.size(), 2 * n);
    for (size_t b = 0; b < n; ++b) {
      EXPECT_EQ(events[2 * b], std::make_pair('f', b));
      EXPECT_EQ(events[2 * b + 1], std::make_pair('a', b));
    }
    EXPECT_THROW(runner.backward({}), ValueError);  // nothing to run a backward on
    const Tensor dy =
        test::random_tensor({TwoStreamToy::kRows, TwoStreamToy::kWidth}, DType::f32, 4);
    EXPECT_THROW(toy.blocks[1]->backward(dy, {}), ValueError);  // its activations were released
  }
}

TEST(NnSecondStream, MisusedStreamIsRefused) {
  auto refused = [](TwoStreamToy& toy) {
    EXPECT_THROW(nn::BlockRunner runner(toy.blocks), ValueError);
  };
  {  // blocks: input, encoder.0 (writer), decoder.0 (reader), loss
    TwoStreamToy toy(1, 1, true);
    std::swap(toy.blocks[1], toy.blocks[2]);
    refused(toy);  // a reader before the writer
  }
  {
    TwoStreamToy toy(1, 1, true);
    toy.blocks.erase(toy.blocks.begin() + 2);
    refused(toy);  // a writer without readers
  }
  {
    TwoStreamToy toy(1, 1, true), other(1, 1, true);
    toy.blocks.insert(toy.blocks.begin() + 2, std::move(other.blocks[1]));
    refused(toy);  // two writers
  }
  TwoStreamToy toy(1, 1, true);
  prepare(toy, 3);
  EXPECT_THROW(toy.blocks[2]->forward(*toy.encoder_input, {}), ValueError);
}

}  // namespace
}  // namespace zt
