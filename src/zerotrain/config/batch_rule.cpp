// resolve_batch_triple (see batch_rule.h).
#include "zerotrain/config/batch_rule.h"

#include "zerotrain/config/json_walk.h"
#include "zerotrain/core/error.h"

namespace zt::config {

namespace {

// a * b * c, or an error naming the product when it does not fit in 64 bits.
int64_t product(int64_t a, int64_t b, int64_t c) {
  int64_t ab = 0, abc = 0;
  if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc))
    fail("train_batch_size", str(a, " * ", b, " * ", c, " does not fit in 64 bits"));
  return abc;
}

}  // namespace

BatchTriple resolve_batch_triple(std::optional<int64_t> train, std::optional<int64_t> micro,
                                 std::optional<int64_t> gas, int64_t world) {
  if (world < 1) throw ValueError("config", str("world size must be >= 1, got ", world));
  BatchTriple b;
  std::string derived;  // how a derived value came about, for the error below
  if (train && micro && gas) {
    b = {*train, *micro, *gas};
  } else if (train && micro) {
    b = {*train, *micro, *micro > 0 ? *train / *micro / world : 0};
    derived = str("gradient_accumulation_steps = train_batch_size ", *train,
                  " / train_micro_batch_size_per_gpu ", *micro, " / world_size ", world);
  } else if (train && gas) {
    b = {*train, *gas > 0 ? *train / world / *gas : 0, *gas};
    derived = str("train_micro_batch_size_per_gpu = train_batch_size ", *train, " / world_size ",
                  world, " / gradient_accumulation_steps ", *gas);
  } else if (micro && gas) {
    b = {product(*micro, *gas, world), *micro, *gas};
  } else if (train) {
    b = {*train, *train / world, 1};
    derived =
        str("train_micro_batch_size_per_gpu = train_batch_size ", *train, " / world_size ", world);
  } else if (micro) {
    b = {product(*micro, 1, world), *micro, 1};
  } else {
    fail("train_batch_size",
         "missing: give train_batch_size or train_micro_batch_size_per_gpu (or both)");
  }
  const std::string how = derived.empty() ? "" : str(" (", derived, ")");
  if (b.train_batch_size <= 0)
    fail("train_batch_size", str("must be > 0, got ", b.train_batch_size));
  if (b.micro_batch_per_gpu <= 0)
    fail("train_micro_batch_size_per_gpu", str("must be > 0, got ", b.micro_batch_per_gpu, how));
  if (b.gradient_accumulation_steps <= 0)
    fail("gradient_accumulation_steps",
         str("must be > 0, got ", b.gradient_accumulation_steps, how));
  if (b.train_batch_size != product(b.micro_batch_per_gpu, b.gradient_accumulation_steps, world))
    fail("train_batch_size",
         str("train_batch_size ", b.train_batch_size, " != train_micro_batch_size_per_gpu ",
             b.micro_batch_per_gpu, " * gradient_accumulation_steps ",
             b.gradient_accumulation_steps, " * world_size ", world, how));
  return b;
}

}  // namespace zt::config
