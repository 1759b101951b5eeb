// The model configs of tests/fixtures/estimate/ (see its README.md), read as zerotrain reads them.
#pragma once

#include <string>

#include "support/test_util.h"
#include "zerotrain/io/hf_config.h"

namespace zt::estimate {

inline nn::ModelConfig estimate_config(const std::string& file) {
  return io::read_hf_config(test::fixtures_dir() / "estimate" / file);
}

}  // namespace zt::estimate
