// Directional finite-difference check of an analytic gradient, shared by the self-check and the
// unit tests. For a random unit direction u over all inputs it compares <grad, u> with the central
// difference (loss(x + h u) - loss(x - h u)) / 2h.
#pragma once

#include <functional>
#include <random>
#include <vector>

namespace zt::selfcheck {

using Inputs = std::vector<std::vector<float>>;

struct FdResult {
  double analytic = 0;
  double numeric = 0;
  // |analytic - numeric| / (|analytic| + 0.1 ||grad|| + 1e-6): relative, but not blown up when the
  // direction happens to be nearly orthogonal to the gradient. NaN when either side is NaN.
  double error = 0;
};

FdResult directional_check(const std::function<double(const Inputs&)>& loss, const Inputs& x,
                           const std::vector<std::vector<double>>& grads, double h,
                           std::mt19937_64& rng);

}  // namespace zt::selfcheck
