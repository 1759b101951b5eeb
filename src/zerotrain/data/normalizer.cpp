// Prepend / Replace / Sequence normalizers (see normalizer.h).
#include "zerotrain/data/normalizer.h"

#include "zerotrain/core/error.h"

namespace zt::data {

std::string replace_all(std::string_view text, std::string_view pattern, std::string_view content) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  for (size_t hit = text.find(pattern); hit != std::string_view::npos;
       hit = text.find(pattern, pos)) {
    out.append(text.substr(pos, hit - pos));
    out.append(content);
    pos = hit + pattern.size();
  }
  out.append(text.substr(pos));
  return out;
}

Normalizer::Normalizer(std::vector<NormalizerStep> steps) : steps_(std::move(steps)) {
  for (size_t i = 0; i < steps_.size(); ++i)
    if (steps_[i].kind == NormalizerStep::Kind::Replace && steps_[i].pattern.empty())
      throw ValueError("normalizer", str("step ", i, ": a Replace pattern must not be empty"));
}

std::string Normalizer::apply(std::string_view text) const {
  std::string s(text);
  for (const NormalizerStep& step : steps_) {
    if (step.kind == NormalizerStep::Kind::Prepend) {
      if (!s.empty()) s.insert(0, step.content);
    } else {
      s = replace_all(s, step.pattern, step.content);
    }
  }
  return s;
}

}  // namespace zt::data
