// A run the machine cannot hold is refused before anything is built: this rank's share of the
// parameters (the model's checked size, nn/model_size.h, in the run's dtype; a stage-3 rank holds
// 1/world of them; none when offloaded to NVMe) plus one micro-batch's activations (the
// estimator's peak, estimate/activation_memory.h) against all the memory of this machine (the
// GPU's plus the host's physical memory; the allocator caps that rehearse a smaller machine are
// left to the out-of-memory path, [Note: out of memory]). One line names the config.json key that
// scales the largest part of the model, or the micro-batch and sequence length when the
// activations are the larger part. Gradients and optimizer state are the estimator's business;
// this check only stops a run that could never fit from being built until bad_alloc.
// Tested by tests/train/test_model_fit.cpp.
#pragma once

#include "zerotrain/nn/model_config.h"
#include "zerotrain/train/trainer.h"

namespace zt::train {

// ValueError("[train] <key>: ...") when the parameters cannot fit; `world` ranks on this machine.
void check_model_fits_machine(const TrainConfig& config, const nn::ModelConfig& model, int world);

}  // namespace zt::train
