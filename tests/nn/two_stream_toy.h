// A toy two-stack model for the block runner's second stream ([Note: second stream] in
// nn/second_stream.h), in host f64 math on f32 tensors [rows, width]:
//   encoder: e = held input; e = tanh(e A_i + b_i) per layer, the last one writing the stream s;
//   decoder: d = its own held input (or, with side_tap, the encoder's output itself);
//            d = d + tanh(d A_j + s B_j + b_j) per layer, each reading s;
//   loss   = sum(c * d) + 0.5 * sum(d * d) for a fixed c.
// Every encoder and decoder layer is checkpointable. Used by tests/nn/test_second_stream.cpp and
// tests/zero/test_zero_second_stream.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "zerotrain/nn/block.h"

namespace zt::test {

struct TwoStreamToy {
  // side_tap: no decoder input; the decoder's main stream starts from the encoder's output.
  TwoStreamToy(int64_t encoder_layers, int64_t decoder_layers, bool side_tap = false);

  std::vector<std::unique_ptr<nn::Block>> blocks;
  // The held inputs (f32 [rows, width]) and, after a backward, their gradients. The decoder's is
  // undefined with side_tap.
  Tensor* encoder_input = nullptr;
  Tensor* encoder_input_grad = nullptr;
  Tensor* decoder_input = nullptr;
  Tensor* decoder_input_grad = nullptr;
  // Forward calls of the layers (recomputations included).
  std::shared_ptr<int64_t> layer_forwards = std::make_shared<int64_t>(0);

  std::vector<nn::Parameter*> parameters();
  static constexpr int64_t kRows = 3, kWidth = 4;
};

}  // namespace zt::test
