// The order in which a data loader visits sequences: for each epoch, a permutation of [0, n) that
// depends only on (seed, epoch), with random access and O(1) memory, so that any rank can compute
// its share of any step and a resumed run can jump straight to a position.
// Tested in tests/data/test_sequence_sampler.cpp.
#pragma once

#include <cstdint>

namespace zt::data {

// A bijection of [0, n): a balanced Feistel network over the smallest power of four >= n (four
// rounds of a 64-bit mixing function), cycle-walking outputs that fall outside [0, n). Each index
// takes fewer than four network evaluations on average.
class FeistelPermutation {
 public:
  FeistelPermutation(uint64_t n, uint64_t key);
  uint64_t operator()(uint64_t i) const;
  uint64_t size() const { return n_; }

 private:
  uint64_t encrypt(uint64_t x) const;

  uint64_t n_;
  unsigned half_bits_;  // each half of the network works on this many bits
  uint64_t half_mask_;
  uint64_t round_keys_[4];
};

// Maps a position within an epoch to a sequence index: a FeistelPermutation keyed by (seed, epoch)
// when shuffling, the identity otherwise.
class SequenceSampler {
 public:
  SequenceSampler(uint64_t num_sequences, uint64_t seed, bool shuffle);
  uint64_t sequence_at(uint64_t epoch, uint64_t position) const;
  uint64_t size() const { return n_; }

 private:
  uint64_t n_;
  uint64_t seed_;
  bool shuffle_;
};

// A well-mixed 64-bit value of x (splitmix64's finalizer).
uint64_t mix64(uint64_t x);

}  // namespace zt::data
