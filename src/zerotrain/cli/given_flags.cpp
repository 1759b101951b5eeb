// given_flags (given_flags.h).
#include "zerotrain/cli/given_flags.h"

namespace zt::cli {

config::GivenFlags given_flags(const CLI::App& cmd) {
  config::GivenFlags given;
  for (const CLI::Option* o : cmd.get_options())
    if (o->count() > 0) given.insert(o->get_name());
  return given;
}

}  // namespace zt::cli
