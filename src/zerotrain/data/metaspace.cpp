// The Metaspace pre-tokenizer (see metaspace.h).
#include "zerotrain/data/metaspace.h"

#include "zerotrain/data/normalizer.h"

namespace zt::data {

std::vector<std::string> metaspace_words(std::string_view text, bool at_input_start,
                                         const MetaspaceOptions& options) {
  const std::string_view rep = options.replacement;
  std::string s = replace_all(text, " ", rep);
  const bool prepend = options.prepend_scheme == PrependScheme::Always ||
                       (options.prepend_scheme == PrependScheme::First && at_input_start);
  if (prepend && !s.starts_with(rep)) s.insert(0, rep);
  if (!options.split) return {std::move(s)};

  // Cut before each run of meta spaces, the run staying with the text after it (tokenizers'
  // SplitDelimiterBehavior::MergedWithNext).
  std::vector<std::string> words;
  size_t begin = 0;
  bool previous_was_rep = false;
  for (size_t pos = 0; pos < s.size();) {
    const bool is_rep = s.compare(pos, rep.size(), rep) == 0;
    if (is_rep && !previous_was_rep && pos > begin) {
      words.push_back(s.substr(begin, pos - begin));
      begin = pos;
    }
    previous_was_rep = is_rep;
    pos += is_rep ? rep.size() : 1;
  }
  if (begin < s.size()) words.push_back(s.substr(begin));
  return words;
}

}  // namespace zt::data
