// Feistel permutation with cycle walking, keyed per epoch.
#include "zerotrain/data/sequence_sampler.h"

#include <algorithm>
#include <bit>

#include "zerotrain/core/error.h"

namespace zt::data {

uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

FeistelPermutation::FeistelPermutation(uint64_t n, uint64_t key) : n_(n) {
  if (n == 0) throw ValueError("sampler", "a permutation needs at least one element, got n = 0");
  // Bits needed for n - 1, rounded up to an even count (at least 2) and halved.
  const unsigned bits = std::max(2u, static_cast<unsigned>(std::bit_width(n - 1)));
  half_bits_ = (bits + 1) / 2;
  half_mask_ = (uint64_t{1} << half_bits_) - 1;
  uint64_t k = key;
  for (uint64_t& rk : round_keys_)
    rk = k = mix64(k);
}

uint64_t FeistelPermutation::encrypt(uint64_t x) const {
  uint64_t left = x >> half_bits_, right = x & half_mask_;
  for (uint64_t rk : round_keys_) {
    const uint64_t next = left ^ (mix64(right ^ rk) & half_mask_);
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

uint64_t FeistelPermutation::operator()(uint64_t i) const {
  if (i >= n_) throw ValueError("sampler", str("index ", i, " is outside the permutation of ", n_));
  uint64_t x = encrypt(i);
  while (x >= n_)
    x = encrypt(x);
  return x;
}

SequenceSampler::SequenceSampler(uint64_t num_sequences, uint64_t seed, bool shuffle)
    : n_(num_sequences), seed_(seed), shuffle_(shuffle) {}

uint64_t SequenceSampler::sequence_at(uint64_t epoch, uint64_t position) const {
  if (position >= n_)
    throw ValueError("sampler",
                     str("position ", position, " is outside the epoch of ", n_, " sequences"));
  if (!shuffle_) return position;
  // A new permutation object per call is cheap (four mixes); keeps the sampler stateless.
  return FeistelPermutation(n_, mix64(seed_) ^ mix64(epoch + 0x632BE59BD9B4E019ull))(position);
}

}  // namespace zt::data
