// A reader block's single-stream entry points (see second_stream.h).
#include "zerotrain/nn/second_stream.h"

#include "zerotrain/core/error.h"

namespace zt::nn {

Tensor StreamReaderBlock::forward(const Tensor&, const StepContext&) {
  throw ValueError("second_stream",
                   name() + " reads the second stream: run it through nn::BlockRunner");
}

Tensor StreamReaderBlock::backward(const Tensor&, const StepContext&) {
  throw ValueError("second_stream",
                   name() + " reads the second stream: run it through nn::BlockRunner");
}

}  // namespace zt::nn
