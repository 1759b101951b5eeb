// load_tokenizer (see tokenizer_load.h).
#include "zerotrain/cli/tokenizer_load.h"

#include <cstdio>
#include <string>

#include "zerotrain/core/error.h"

namespace zt::cli {

data::Tokenizer load_tokenizer(const std::filesystem::path& file) {
  data::Tokenizer tokenizer = data::Tokenizer::from_file(file);
  const std::vector<uint32_t>& ids = tokenizer.added_tokens().empty_content_ids();
  if (!ids.empty()) {
    std::string list;
    for (size_t i = 0; i < ids.size() && i < 8; ++i)
      list += str(i ? ", " : "", ids[i]);
    if (ids.size() > 8) list += str(" and ", ids.size() - 8, " more");
    std::fprintf(stderr,
                 "[tokenizer] warning: %s: added token(s) with empty content left out, as the "
                 "tokenizers package leaves them out (id %s)\n",
                 file.string().c_str(), list.c_str());
  }
  return tokenizer;
}

}  // namespace zt::cli
