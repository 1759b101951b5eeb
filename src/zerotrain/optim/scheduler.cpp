// Scheduler state as JSON; see scheduler.h. Tested by tests/optim/test_schedulers.cpp.
#include "zerotrain/optim/scheduler.h"

#include "zerotrain/core/error.h"
#include "zerotrain/core/json_util.h"

namespace zt::optim {

namespace {
constexpr std::string_view kComponent = "scheduler";
}  // namespace

nlohmann::json Scheduler::state() const {
  nlohmann::json j = {
      {"type", std::string(type())}, {"last_batch_iteration", last_batch_iteration_}, {"lr", lr()}};
  if (const auto b = betas()) j["betas"] = {b->beta1, b->beta2};
  return j;
}

void Scheduler::load_state(const nlohmann::json& state) {
  if (!state.is_object())
    throw ValueError(kComponent, str("state: expected a JSON object, got ", describe_json(state)));
  const auto t = state.find("type");
  if (t == state.end() || !t->is_string() || t->get<std::string>() != type())
    throw ValueError(kComponent,
                     str("state type ", t == state.end() ? "(missing)" : describe_json(*t),
                         ": this scheduler is ", type()));
  const auto it = state.find("last_batch_iteration");
  if (it == state.end() || !it->is_number_integer() || it->get<int64_t>() < -1)
    throw ValueError(kComponent,
                     str("state last_batch_iteration ",
                         it == state.end() ? std::string("(missing)") : describe_json(*it),
                         ": expected an integer >= -1"));
  last_batch_iteration_ = it->get<int64_t>();
}

}  // namespace zt::optim
