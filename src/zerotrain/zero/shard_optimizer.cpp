// The optimizer of a ZeRO stage, on the device or offloaded; see shard_optimizer.h and
// [Note: optimizer offload].
#include "zerotrain/zero/shard_optimizer.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <functional>
#include <set>
#include <string>

#include "zerotrain/core/error.h"
#include "zerotrain/zero/grad_norm.h"
#include "zerotrain/zero/host_buffer.h"

namespace zt::zero {

// Lamb's norm segments must not straddle two ranks' shards: see [Note: Lamb across shards].
static_assert(kNormChunk % optim::kLambNormChunk == 0);

namespace {

// Sums Lamb's norm slots over the ranks: each slot has one writer and zeros elsewhere, so adding
// the f64 bit patterns as integers gives that writer's value exactly (the communicators reduce
// no f64); on `device`, where the collectives work.
optim::NormSum norm_sum_over(comm::Communicator& comm, Device device) {
  return [&comm, device](std::span<double> slots, Stream stream) {
    static_assert(sizeof(double) == sizeof(int64_t));
    Tensor host = Tensor::empty({static_cast<int64_t>(slots.size())}, DType::i64);
    std::memcpy(host.data(), slots.data(), slots.size_bytes());
    const Tensor send = host.to(device, stream);
    Tensor sum = Tensor::empty({send.numel()}, DType::i64, device, stream);
    comm.all_reduce(send.data(), sum.data(), slots.size(), DType::i64, comm::ReduceOp::sum,
                    stream);
    const Tensor back = sum.to(Device::cpu(), stream);
    synchronize(stream);
    std::memcpy(slots.data(), back.data(), slots.size_bytes());
  };
}

// The parameters and the run of one group, its params numbered from `first`.
void add_group_run(const ParamGroup& g, RunExtent extent, Tensor value,
                   std::vector<optim::FlatParam>& params, std::vector<optim::FlatRun>& runs) {
  const size_t first = params.size();
  for (const nn::Parameter* p : g.params())
    params.push_back({p->name, p->shape, g.value_dtype(), decays(*p)});
  ZT_ASSERT(extent == RunExtent::shard || (g.world() == 1 && g.replicated()), "zero",
            "whole-parameter runs need a replicated group of a world of one");
  optim::FlatRun run;
  run.value = std::move(value);
  const int64_t base = g.shard_offset();
  for (const ShardPiece& piece : g.shard_pieces()) {
    size_t i = 0;
    while (g.params()[i] != piece.param)
      ++i;
    run.pieces.push_back({first + i, piece.begin - piece.param_offset,
                          piece.end - piece.param_offset, piece.begin - base});
  }
  runs.push_back(std::move(run));
}

// The parameter a state tensor belongs to: its name without the slot suffix (state_slots.h).
std::string param_of_state(const std::string& name) {
  for (const std::string_view suffix : optim::all_state_suffixes())
    if (name.ends_with(suffix))
      return name.substr(0, name.size() - suffix.size());
  return name;
}

}  // namespace

struct ShardOptimizer::HostGroup {
  size_t group = 0;
  Tensor value;  // [run] value dtype: what the CPU optimizer steps, copied to the device run after
  Tensor grad;   // [run] gradient dtype, once a gradient arrived
  bool has_grad = false;
  // GPU only: the gradient is final on its stream; copied to the host; values copied back.
  std::optional<CudaEvent> grad_ready, copied_in, copied_out;
};

ShardOptimizer::ShardOptimizer(const std::vector<ParamGroup*>& groups, RunExtent extent,
                               const OptimizerOptions& options, const OffloadPolicy& policy,
                               bool values_on_host, const optim::OptimizerState& initial,
                               const ZeroContext& ctx, Stream stream)
    : groups_(groups),
      extent_(extent),
      device_(ctx.device()),
      pin_key_(policy.optimizer.pin_memory ? "offload_optimizer.pin_memory" : ""),
      values_on_host_(values_on_host) {
  const OptimizerOffload& offload = policy.optimizer;
  if (options.config.kind == optim::OptimizerKind::lamb && offload.device != OffloadDevice::none)
    throw ValueError("zero",
                     str("optimizer Lamb with zero_optimization.offload_optimizer.device ",
                         config::offload_device_name(offload.device), ": the host sub-groups are ",
                         "stepped apart, and Lamb's trust ratio needs the norms of every ",
                         "piece of a parameter first; offload Adam, Lion or SGD"));
  // Host groups: the first ones, up to `ratio` of the elements (all with ratio 1).
  int64_t total = 0;
  for (const ParamGroup* g : groups_)
    total += g->shard_numel();
  const bool offloaded = offload.device != OffloadDevice::none;
  int64_t host_elements = 0;
  for (const ParamGroup* g : groups_) {
    const bool host = offloaded && (offload.ratio >= 1.0 ||
                                    static_cast<double>(host_elements + g->shard_numel()) <=
                                        offload.ratio * static_cast<double>(total));
    place_.push_back(host ? RunPlace::host : RunPlace::device);
    if (host) host_elements += g->shard_numel();
  }
  if (device_.is_cuda() && offloaded) {
    to_host_ = ctx.streams().to_host();
    to_device_ = ctx.streams().to_device();
  }
  // The device groups' optimizer, and the host groups with their host copies.
  std::vector<optim::FlatParam> device_params;
  std::vector<optim::FlatRun> device_runs;
  for (const ParamGroup* g : groups_)
    values_swapped_ = values_swapped_ || g->shard_swapped();
  for (size_t g = 0; g < groups_.size(); ++g) {
    const Tensor value = groups_[g]->shard_swapped() ? Tensor() : run_value(g);
    if (place_[g] == RunPlace::device) {
      index_.push_back(device_runs.size());
      Tensor run = value;
      if (groups_[g]->shard_swapped()) {  // stepped on a device copy of the swapped shard
        const Tensor home = Tensor::empty({run_numel(g)}, groups_[g]->value_dtype());
        groups_[g]->read_shard(home);
        run = home.to(device_, stream);
        device_mirrors_.push_back({run, Tensor(), groups_[g]});
      } else if (value.device() != device_) {  // offload_param alone: stepped on a device copy
        run = Tensor::empty({value.numel()}, value.dtype(), device_, stream);
        run.copy_from(value, stream);
        device_mirrors_.push_back({run, value, groups_[g]});
      }
      add_group_run(*groups_[g], extent, run, device_params, device_runs);
      continue;
    }
    index_.push_back(host_.size());
    auto h = std::make_unique<HostGroup>();
    h->group = g;
    if (values_on_host_) {  // offload_param: the CPU optimizer steps the host value shard itself
      h->value = value;  // swapped: a view of swapped_values_, set below
    } else {
      h->value = host_buffer(value.numel(), value.dtype(), pin_key_);
      h->value.copy_from(value, stream);
    }
    if (to_host_) {
      h->grad_ready.emplace(device_);
      h->copied_in.emplace(device_);
      h->copied_out.emplace(device_);
    }
    host_.push_back(std::move(h));
  }
  synchronize(stream);  // the host values are complete before the host Adam reads them
  // Sub-groups: consecutive host groups of about sub_group_size elements, whole groups each.
  for (size_t first = 0; first < host_.size();) {
    size_t last = first;
    int64_t n = 0;
    while (last < host_.size() &&
           (last == first || n + run_numel(host_[last]->group) <= policy.sub_group_size))
      n += run_numel(host_[last++]->group);
    sub_groups_.push_back({first, last});
    first = last;
  }
  if (values_swapped_) lend_swapped_values();
  // The precision guard samples one optimizer's state: the first host sub-group's when there is
  // one.
  const bool any_host = !host_.empty();
  // Each optimizer takes its part of the full state: its parameters' tensors (the first one also
  // any stray name, so that it is refused there).
  std::set<std::string> all_params;
  for (const ParamGroup* g : groups_)
    for (const nn::Parameter* p : g->params())
      all_params.insert(p->name);
  const auto part = [&](const std::vector<optim::FlatParam>& mine, bool strays) {
    if (all_params.size() == mine.size()) return initial;
    std::set<std::string> names;
    for (const optim::FlatParam& p : mine)
      names.insert(p.name);
    optim::OptimizerState st;
    st.step = initial.step;
    for (const auto& [name, t] : initial.tensors) {
      const std::string param = param_of_state(name);
      if (names.contains(param) || (strays && !all_params.contains(param)))
        st.tensors.emplace(name, t);
    }
    return st;
  };
  if (!device_runs.empty() || !any_host)
    device_adam_ = std::make_unique<optim::FlatOptimizer>(
        device_params, std::move(device_runs), options.config, options.precision,
        any_host ? nullptr : options.guard, part(device_params, true), stream);
  // Lamb's norms add over the ranks that hold the other pieces of each parameter.
  if (device_adam_ && !groups_.empty() && groups_.front()->world() > 1)
    device_adam_->set_norm_sum(norm_sum_over(ctx.comm(), device_));
  std::vector<std::vector<StateSwap::Slot>> layout;
  for (size_t s = 0; s < sub_groups_.size(); ++s) {
    std::vector<optim::FlatParam> params;
    std::vector<optim::FlatRun> runs;
    for (size_t i = sub_groups_[s].first; i < sub_groups_[s].second; ++i)
      add_group_run(*groups_[host_[i]->group], extent, host_[i]->value, params, runs);
    read_swapped_values(s);  // the masters start from them
    host_adams_.push_back(std::make_unique<optim::FlatOptimizer>(
        params, std::move(runs), options.config, options.precision,
        s == 0 ? options.guard : nullptr, part(params, s == 0 && device_params.empty())));
    write_swapped_values(s);  // a loaded state rounded the masters into them
    if (offload.device == OffloadDevice::nvme) {  // this sub-group's state goes to its swap file
      std::vector<StateSwap::Slot> slots;
      for (const optim::FlatRun& r : host_adams_.back()->runs())
        for (const optim::StateSlot& slot :
             optim::state_slots(r.value.dtype(), options.precision, options.config))
          slots.push_back({r.value.numel(), slot.dtype});
      layout.push_back(std::move(slots));
    }
  }
  copy_mirrors_home(stream);  // a loaded state rounded the masters into them
  if (offload.device == OffloadDevice::nvme) {
    swap_ = std::make_unique<StateSwap>(offload.nvme_path, layout, offload.buffer_count,
                                        policy.aio);
    for (size_t s = 0; s < host_adams_.size(); ++s)
      swap_->store(s, host_adams_[s]->evict_state());
  }
  if (any_host) {
    if (to_device_) {
      step_begun_.emplace(device_);
      step_begun_->record(stream);
      step_begun_->wait(*to_device_);
    }
    for (size_t i = 0; i < host_.size(); ++i)  // a loaded state rounded the masters into them
      push_values(i, stream);
    if (!to_device_) synchronize(stream);
  }
}

ShardOptimizer::~ShardOptimizer() {
  if (worker_.joinable()) worker_.join();  // an error of its update is lost with the engine
  // Copies in flight read or write host memory this object owns.
  if (to_host_) synchronize(*to_host_);
  if (to_device_) synchronize(*to_device_);
}

int64_t ShardOptimizer::run_numel(size_t g) const {
  return extent_ == RunExtent::shard ? groups_[g]->shard_numel() : groups_[g]->numel();
}

void ShardOptimizer::lend_swapped_values() {
  // Every sub-group's runs view the front of one buffer, read in before its update and written
  // back after: only one sub-group's values are in host memory at a time.
  constexpr int64_t kAlign = 64;
  int64_t largest = 0;
  for (const auto& [first, last] : sub_groups_) {
    int64_t at = 0;
    for (size_t i = first; i < last; ++i) {
      const size_t g = host_[i]->group;
      const auto bytes = run_numel(g) * static_cast<int64_t>(dtype_size(groups_[g]->value_dtype()));
      at += (bytes + kAlign - 1) / kAlign * kAlign;
    }
    largest = std::max(largest, at);
  }
  swapped_values_ = Tensor::empty({largest}, DType::u8, Device::cpu());
  for (const auto& [first, last] : sub_groups_) {
    int64_t at = 0;
    for (size_t i = first; i < last; ++i) {
      const size_t g = host_[i]->group;
      const DType dtype = groups_[g]->value_dtype();
      host_[i]->value = Tensor::wrap(static_cast<std::byte*>(swapped_values_.data()) + at,
                                     {run_numel(g)}, dtype, Device::cpu());
      const auto bytes = run_numel(g) * static_cast<int64_t>(dtype_size(dtype));
      at += (bytes + kAlign - 1) / kAlign * kAlign;
    }
  }
}

void ShardOptimizer::read_swapped_values(size_t s) {
  if (!values_swapped_) return;
  for (size_t i = sub_groups_[s].first; i < sub_groups_[s].second; ++i)
    groups_[host_[i]->group]->read_shard(host_[i]->value);
}

void ShardOptimizer::write_swapped_values(size_t s) {
  if (!values_swapped_) return;
  for (size_t i = sub_groups_[s].first; i < sub_groups_[s].second; ++i)
    groups_[host_[i]->group]->write_shard(host_[i]->value, {});
}

Tensor ShardOptimizer::run_value(size_t g) const {
  const ParamGroup& group = *groups_[g];
  if (extent_ == RunExtent::shard) return group.value_shard();
  return group.value_shard().slice(0, 0, group.numel());
}

void ShardOptimizer::gradient_ready(size_t g, const Tensor& grad, Stream ready) {
  if (place_.at(g) != RunPlace::host) return;
  wait_stepped(index_[g]);  // the host update of the last step has read this group's gradient
  copy_gradient(g, grad, ready);
}

void ShardOptimizer::copy_gradient(size_t g, const Tensor& grad, Stream ready) {
  HostGroup& h = *host_[index_[g]];
  if (!h.grad.defined() || h.grad.dtype() != grad.dtype() || h.grad.numel() != grad.numel()) {
    if (h.copied_in) h.copied_in->synchronize();  // the old buffer may still be written
    h.grad = host_buffer(grad.numel(), grad.dtype(), pin_key_);
  }
  if (to_host_) {
    h.grad_ready->record(ready);
    h.grad_ready->wait(*to_host_);
    h.grad.copy_from(grad, *to_host_);
    h.copied_in->record(*to_host_);
  } else {
    h.grad.copy_from(grad, ready);
    synchronize(ready);
  }
  h.has_grad = true;
}

void ShardOptimizer::push_values(size_t i, Stream after) {
  if (values_on_host_) return;  // the host shard is the group's value shard
  HostGroup& h = *host_[i];
  Tensor dst = run_value(h.group);
  if (to_device_) {
    dst.copy_from(h.value, *to_device_);  // after step_begun_ (compute work on the old values)
    h.copied_out->record(*to_device_);
  } else {
    dst.copy_from(h.value, after);
  }
}

void ShardOptimizer::step(std::span<const Tensor> grads, float lr, float grad_scale,
                          Stream stream) {
  drain();  // the last step's host update is complete
  if (grads.size() != groups_.size())
    throw ValueError("zero", str(grads.size(), " gradients for ", groups_.size(), " groups"));
  // Every gradient is checked before anything is stepped.
  std::vector<Tensor> device_grads;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const Tensor& grad = grads[g];
    if (!grad.defined() || grad.numel() != run_numel(g) || !grad.is_contiguous() ||
        grad.device() != device_)
      throw ValueError("zero", str("block ", groups_[g]->block(), ": gradient ",
                                   grad.defined() ? grad.describe() : "undefined",
                                   " for a value run of ", run_numel(g), " elements"));
    if (place_[g] == RunPlace::device) device_grads.push_back(grad);
  }
  // Both count the step after the same checks of lr and grad_scale.
  if (device_adam_) device_adam_->begin_step(lr, grad_scale);
  for (size_t k = 0; k < host_adams_.size(); ++k) {
    try {
      host_adams_[k]->begin_step(lr, grad_scale);
    } catch (...) {
      if (device_adam_) device_adam_->cancel_step();
      for (size_t j = 0; j < k; ++j)
        host_adams_[j]->cancel_step();
      throw;
    }
  }
  if (device_adam_) {
    device_adam_->step_runs(0, device_grads.size(), device_grads, stream);
    device_adam_->finish_step(stream);
    copy_mirrors_home(stream);
  }
  if (host_adams_.empty()) return;
  for (auto& h : host_) {
    if (!h->has_grad) copy_gradient(h->group, grads[h->group], stream);
    // Later compute work (stage 1's zero_grad of the buffer the shard views) waits for the copy.
    if (h->copied_in) h->copied_in->wait(stream);
  }
  if (to_device_) {
    step_begun_->record(stream);  // the copies back come after the compute work queued so far
    step_begun_->wait(*to_device_);
  }
  // offload_param: gathers copy the host shards to the device; they are done once the compute
  // stream that waited for them is, and only then may the CPU optimizer write the shards.
  if (values_on_host_) synchronize(stream);
  {
    std::lock_guard lock(mu_);
    stepped_.assign(host_.size(), false);
  }
  worker_ = std::thread([this, stream] { update_host_groups(stream); });
}

void ShardOptimizer::update_host_groups(Stream stream) {
  try {
    for (size_t s = 0; s < sub_groups_.size(); ++s) {
      const auto [first, last] = sub_groups_[s];
      optim::FlatOptimizer& adam = *host_adams_[s];
      if (swap_) {  // the next sub-groups' reads overlap this one's update
        for (size_t ahead = s + 1; ahead < sub_groups_.size() && ahead < s + swap_buffers();
             ++ahead)
          swap_->prefetch(ahead);
        adam.restore_state(swap_->load(s));
      }
      std::vector<Tensor> host_grads;
      for (size_t i = first; i < last; ++i) {
        HostGroup& h = *host_[i];
        if (h.copied_in) h.copied_in->synchronize();
        if (h.copied_out) h.copied_out->synchronize();  // the last step's values left the host
        host_grads.push_back(h.grad);
      }
      read_swapped_values(s);
      adam.step_runs(0, last - first, host_grads);
      adam.finish_step();
      write_swapped_values(s);
      if (swap_) {
        adam.evict_state();
        swap_->write_back(s);
      }
      for (size_t i = first; i < last; ++i) {
        host_[i]->has_grad = false;
        push_values(i, stream);
      }
      {
        std::lock_guard lock(mu_);
        for (size_t i = first; i < last; ++i)
          stepped_[i] = true;
      }
      stepped_cv_.notify_all();
    }
    if (swap_) swap_->finish();
  } catch (...) {
    std::lock_guard lock(mu_);
    error_ = std::current_exception();
    stepped_.assign(host_.size(), true);  // nobody waits forever; drain() rethrows
  }
  stepped_cv_.notify_all();
}

void ShardOptimizer::copy_mirrors_home(Stream stream) {
  if (device_mirrors_.empty()) return;
  for (auto& m : device_mirrors_)
    if (m.group->shard_swapped())
      m.group->write_shard(m.run, stream);
    else
      m.home.copy_from(m.run, stream);
  synchronize(stream);  // the next gathers read the host shards
}

void ShardOptimizer::drain() {
  if (worker_.joinable()) worker_.join();
  if (error_) {
    std::exception_ptr e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

void ShardOptimizer::wait_stepped(size_t i) {
  if (!worker_.joinable()) return;
  std::unique_lock lock(mu_);
  stepped_cv_.wait(lock, [&] { return bool(stepped_[i]); });
  if (error_) {
    lock.unlock();
    drain();
  }
}

void ShardOptimizer::await_values(size_t g, Stream stream) {
  if (place_.at(g) != RunPlace::host) return;
  wait_stepped(index_[g]);
  if (to_device_ && !values_on_host_) host_[index_[g]]->copied_out->wait(stream);
}

void ShardOptimizer::set_betas(double beta1, double beta2) {
  drain();
  if (device_adam_) device_adam_->set_betas(beta1, beta2);
  for (auto& a : host_adams_)
    a->set_betas(beta1, beta2);
}

int64_t ShardOptimizer::step_count() const {
  return device_adam_ ? device_adam_->step_count() : host_adams_.front()->step_count();
}

size_t ShardOptimizer::swap_buffers() const {
  return swap_ ? swap_->buffers() : 0;
}

void ShardOptimizer::with_state(size_t s, const std::function<void(optim::FlatOptimizer&)>& use) {
  optim::FlatOptimizer& adam = *host_adams_[s];
  if (!swap_) return use(adam);
  adam.restore_state(swap_->load(s));
  try {
    use(adam);
  } catch (...) {
    adam.evict_state();
    throw;
  }
  adam.evict_state();  // read only: the staging buffer still equals the file, nothing to write
}

optim::OptimizerState ShardOptimizer::full_state(comm::Communicator& comm, bool keep,
                                                 Stream stream) {
  drain();
  optim::OptimizerState st;
  st.step = step_count();
  // A world of one: every parameter whole in one run; views of the state unless it is swapped.
  if (groups_.empty() || groups_.front()->world() == 1) {
    const auto take = [&](optim::FlatOptimizer& a) {
      optim::OptimizerState part = a.full_state();
      for (auto& [name, t] : part.tensors)
        st.tensors.emplace(name, swap_ ? t.clone() : t);
    };
    if (device_adam_) take(*device_adam_);
    for (size_t s = 0; s < host_adams_.size(); ++s)
      with_state(s, take);
    return st;
  }
  if (st.step == 0) return st;
  // Gathers one state tensor of a group and, when kept, copies each parameter's part out.
  const auto gather = [&](const ParamGroup& g, const optim::FlatOptimizer::SlotTensor& t) {
    const Tensor mine = t.tensor.to(device_, stream);  // the collectives work on the device
    Tensor full = Tensor::empty({g.padded_numel()}, mine.dtype(), device_, stream);
    comm.all_gather(mine.data(), full.data(), static_cast<size_t>(g.shard_numel()), mine.dtype(),
                    stream);
    if (!keep) return;
    const Tensor host = full.to(Device::cpu(), stream);
    synchronize(stream);
    for (size_t k = 0; k < g.params().size(); ++k) {
      const nn::Parameter& p = *g.params()[k];
      const int64_t o = g.offsets()[k], n = numel_of(p.shape);
      st.tensors.emplace(p.name + t.slot.suffix, host.slice(0, o, o + n).clone().view(p.shape));
    }
  };
  // Every rank walks the groups in the same order, so the collectives match.
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (place_[g] == RunPlace::device) {
      for (const optim::FlatOptimizer::SlotTensor& t : device_adam_->run_state(index_[g]))
        gather(*groups_[g], t);
      continue;
    }
    const size_t i = index_[g];
    size_t s = 0;
    while (i >= sub_groups_[s].second)
      ++s;
    with_state(s, [&](optim::FlatOptimizer& a) {
      for (const optim::FlatOptimizer::SlotTensor& t : a.run_state(i - sub_groups_[s].first))
        gather(*groups_[g], t);
    });
  }
  synchronize(stream);
  return st;
}

void ShardOptimizer::for_each_piece(
    bool fill, const std::function<void(optim::FlatOptimizer::PieceTensor&)>& use) {
  drain();
  if (device_adam_)
    for (optim::FlatOptimizer::PieceTensor& t : device_adam_->piece_tensors())
      use(t);
  for (size_t s = 0; s < host_adams_.size(); ++s) {
    optim::FlatOptimizer& adam = *host_adams_[s];
    if (swap_) adam.restore_state(swap_->load(s));
    try {
      read_swapped_values(s);
      for (optim::FlatOptimizer::PieceTensor& t : adam.piece_tensors())
        use(t);
      if (fill) write_swapped_values(s);
    } catch (...) {
      if (swap_) adam.evict_state();
      throw;
    }
    if (swap_) {
      adam.evict_state();
      if (fill) swap_->write_back(s);
    }
  }
}

void ShardOptimizer::shard_loaded(int64_t step, Stream stream) {
  drain();
  copy_mirrors_home(stream);
  if (device_adam_) device_adam_->set_step_count(step);
  for (auto& a : host_adams_)
    a->set_step_count(step);
  if (to_device_) {
    step_begun_->record(stream);
    step_begun_->wait(*to_device_);
  }
  for (size_t i = 0; i < host_.size(); ++i)
    push_values(i, stream);
}

int64_t ShardOptimizer::device_state_bytes() const {
  int64_t b = device_adam_ ? device_adam_->bytes() : 0;
  for (const auto& m : device_mirrors_)
    b += static_cast<int64_t>(m.run.nbytes());  // the optimizer's copy of offloaded values
  return b;
}

int64_t ShardOptimizer::host_state_bytes() const {
  int64_t b = swap_ ? swap_->buffer_bytes() : 0;
  for (const auto& a : host_adams_)
    b += a->bytes();
  return b;
}

int64_t ShardOptimizer::nvme_bytes() const {
  return swap_ ? swap_->file_bytes() : 0;
}

int64_t ShardOptimizer::host_value_bytes() const {
  if (values_on_host_)  // the groups' own shards, counted by them; swapped: one sub-group's
    return swapped_values_.defined() ? static_cast<int64_t>(swapped_values_.nbytes()) : 0;
  int64_t b = 0;
  for (const auto& h : host_)
    b += static_cast<int64_t>(h->value.nbytes());
  return b;
}

int64_t ShardOptimizer::host_grad_bytes() const {
  int64_t b = 0;
  for (const auto& h : host_)
    if (h->grad.defined()) b += static_cast<int64_t>(h->grad.nbytes());
  return b;
}

}  // namespace zt::zero
