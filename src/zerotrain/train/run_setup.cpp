#include "zerotrain/train/run_setup.h"

#include "zerotrain/checkpoint/checkpoint_store.h"
#include "zerotrain/comm/agreed_checks.h"
#include "zerotrain/core/error.h"
#include "zerotrain/core/process_clock.h"
#include "zerotrain/io/hf_config.h"
#include "zerotrain/io/hf_model.h"
#include "zerotrain/optim/precision_guard.h"
#include "zerotrain/train/model_fit.h"
#include "zerotrain/train/step_measures.h"

namespace zt::train {

namespace fs = std::filesystem;

RunInputs::RunInputs(const TrainConfig& c, const TrainCallbacks& cb)
    : rank(c.comm ? c.comm->rank() : 0),
      world(c.comm ? c.comm->size() : 1),
      resuming(!c.paths.resume.empty()),
      // A resumed run reads its weights from the checkpoint; otherwise the source is decided once.
      source(
          io::resolve_model_source(c.paths.model, resuming ? io::ModelInit::random : c.paths.init)),
      model(io::read_hf_config(source.config)) {
  // gpt2's learned positions end there; RoPE models were not trained past it either.
  if (c.data.seq_len > model.max_position_embeddings)
    throw ValueError("train", str("seq_len ", c.data.seq_len, " (--seq-len) exceeds the model's ",
                                  io::hf_config_key(model.family, "max_position_embeddings"), " ",
                                  model.max_position_embeddings));
  check_model_fits_machine(c, model, world);
  // The held-out file is checked before anything is built ([Note: evaluation]).
  if (c.eval.enabled()) evaluator.emplace(c.eval, c.data, model, rank, world);
  if (evaluator && rank == 0 && cb.on_eval_set) cb.on_eval_set(evaluator->describe());
  if (!resuming) return;
  std::string note;
  const fs::path dir = checkpoint::resolve_checkpoint(c.paths.resume, &note);
  if (!note.empty() && rank == 0) cb.warn(str("[train] warning: ", note));
  saved.emplace(dir);
  if (c.eval.only)
    check_checkpoint_model(saved->manifest(), c, model, dir);
  else
    check_resume(saved->manifest(), c, model, world, dir);
  resumed = train_state_of(saved->manifest(), dir);
}

std::string RunInputs::init_description() const {
  return resuming ? str("the checkpoint ", saved->dir().string()) : source.description;
}

namespace {

// Stages 0-2 generate a seeded init straight into their group buffers, the model getting no
// values either ([Note: values built in place] in zero/shard_init.h).
bool seeded_in_place(const TrainConfig& c, const RunInputs& in) {
  return c.zero.stage < 3 && !in.resuming && in.source.weights.empty();
}

nn::TransformerOptions model_options(const TrainConfig& c, bool allocate) {
  nn::TransformerOptions options;
  options.param_dtype = c.precision.dtype;
  options.grad_dtype = c.precision.grad_accum_dtype;
  options.device = c.device;
  options.allocate_grads = false;  // the ZeRO stage's buffers hold the gradients
  options.allocate = allocate;
  return options;
}

// Where the stage's values come from when the model holds none; otherwise the model's values are
// set here (pretrained or seeded) and nullptr is returned. A resume's values and optimizer state
// come from the shards (ZeroStage::load_shard).
std::unique_ptr<zero::ShardSource> initial_values(const TrainConfig& c, RunInputs& in,
                                                  bool zero_init, nn::Transformer& model,
                                                  Stream stream) {
  if (in.resuming) {
    if (!zero_init) return nullptr;
    return std::make_unique<zero::SavedShardSource>(
        *in.saved, str("the checkpoint ", in.saved->dir().string()));
  }
  if (zero_init) {
    if (!in.source.weights.empty())
      return std::make_unique<zero::PretrainedSource>(in.model, model.parameters(),
                                                      in.source.weights);
    return std::make_unique<zero::SeededInitSource>(in.model, c.data.seed);
  }
  if (seeded_in_place(c, in))
    return std::make_unique<zero::SeededInitSource>(in.model, c.data.seed);
  if (!in.source.weights.empty())
    io::load_pretrained(model, in.source.weights, stream);
  else
    model.init_random(c.data.seed);
  return nullptr;
}

zero::ZeroOptions zero_options(const TrainConfig& c, const TrainCallbacks& cb, int rank,
                               zero::ShardSource* values) {
  zero::ZeroOptions options;
  options.config = c.zero;
  options.grad_dtype = c.precision.grad_accum_dtype;
  options.comm_dtype = c.precision.comm_dtype;
  options.initial_values = values;
  options.initial_values_dtype = c.precision.dtype;
  options.optimizer.config = c.optimizer;
  options.optimizer.precision = c.precision.mode;
  if (rank == 0) options.optimizer.guard = optim::make_precision_guard(cb.on_warning);
  return options;
}

}  // namespace

RunModel::RunModel(const TrainConfig& c, const TrainCallbacks& cb, RunInputs& in, const Task& task)
    : zero_init(c.zero.stage == 3 && c.zero.zero_init) {
  // The token file's checks first, agreed on by the ranks ([Note: one line per error across
  // ranks] in comm/agreed_checks.h).
  comm::agree_on_checks(c.comm, c.device, [&] {
    if (!c.eval.only)
      loader.emplace(
          task.open_data(c.paths.data, c.data, in.model, in.rank, in.world, in.resumed.data));
  });
  model = std::make_unique<nn::Transformer>(
      in.model, model_options(c, !zero_init && !seeded_in_place(c, in)));
  stream = c.device.is_cuda() ? Stream::default_for(c.device) : Stream{};
  values = initial_values(c, in, zero_init, *model, stream);
  // The ZeRO stage, chosen once, with the optimizer it steps; one process runs it with a one-rank
  // communicator. A resume then reads this rank's shard of the checkpoint into it.
  context.emplace(c.comm ? zero::ZeroContext(*c.comm, c.device, stream)
                         : zero::ZeroContext::one_process(c.device, stream));
  engine =
      zero::make_zero_stage(zero_options(c, cb, in.rank, values.get()), model->blocks(), *context);
  if (in.saved) {
    StepTimer load_timer;
    engine->load_shard(*in.saved);
    resume_load_s = load_timer.lap();
  }
  if (c.comm) engine->check_parameters_identical();
}

}  // namespace zt::train
