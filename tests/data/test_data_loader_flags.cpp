// DataLoader over version 2 token files: -100 targets where the loss mask says so, document starts
// of packed rows, one example per padded row (cut and counted when too long), the padded layout's
// resumable state, and a version 1 file's batches unchanged by the flags path.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "data/temp_dir.h"
#include "zerotrain/data/batch_rows.h"
#include "zerotrain/data/data_loader.h"

namespace zt::data {
namespace {

constexpr int32_t X = kIgnoredTarget;

std::vector<int32_t> values(const Tensor& t) {
  const auto* p = t.data_as<int32_t>();
  return std::vector<int32_t>(p, p + t.numel());
}

DataLoaderConfig config(int64_t S, int64_t B, bool packing = true) {
  DataLoaderConfig c;
  c.seq_len = S;
  c.micro_batch = B;
  c.shuffle = false;
  c.packing = packing;
  return c;
}

// Documents of tokens 10*d + k; the mask counts every token from `prompt` on.
struct Doc {
  int length;
  int prompt;
};
std::shared_ptr<const TokenFile> chat_file(const test::TempDir& dir, const std::vector<Doc>& docs,
                                           std::optional<uint32_t> eos = std::nullopt) {
  const auto path = dir / "chat.bin";
  TokenFileWriter w(path, 1000, eos, true);
  for (size_t d = 0; d < docs.size(); ++d) {
    std::vector<uint32_t> t;
    std::vector<uint8_t> m;
    for (int k = 0; k < docs[d].length; ++k) {
      t.push_back(static_cast<uint32_t>(10 * (d + 1) + k));
      m.push_back(k >= docs[d].prompt);
    }
    w.write_document(t, m);
  }
  w.finish();
  return std::make_shared<const TokenFile>(path);
}

TEST(DataLoaderFlags, PackedRowsMaskPromptsAndMarkDocuments) {
  test::TempDir dir;
  // Stream: 10 11 12 13 | 20 21 22 | 30 31 32 33 34 (prompts of 2, 1 and 3 tokens).
  auto file = chat_file(dir, {{4, 2}, {3, 1}, {5, 3}});
  DataLoader loader(file, config(5, 2));
  ASSERT_EQ(loader.sequences_per_epoch(), 2u);  // (12 - 1) / 5
  const Batch b = loader.next();
  ASSERT_TRUE(b.doc_starts.defined());
  EXPECT_EQ(b.doc_starts.shape(), (Shape{2, 5}));
  // Row 0 is tokens [0, 6), row 1 tokens [5, 11).
  EXPECT_EQ(values(b.inputs), (std::vector<int32_t>{10, 11, 12, 13, 20, 21, 22, 30, 31, 32}));
  // 11 is prompt, 20 and 30 start documents, 31 and 32 are prompt: -100; the rest count.
  EXPECT_EQ(values(b.targets), (std::vector<int32_t>{X, 12, 13, X, 21, 22, X, X, X, 33}));
  // Row 1 begins inside document 2 (position 0), document 3 starts at position 2.
  EXPECT_EQ(values(b.doc_starts), (std::vector<int32_t>{0, 0, 0, 0, 4, 0, 0, 2, 2, 2}));
}

TEST(DataLoaderFlags, AVersion1FileKeepsItsBatches) {
  test::TempDir dir;
  const auto path = dir / "v1.bin";
  TokenFileWriter w(path, 1000, 7u);
  w.write_document(std::vector<uint32_t>{1, 2, 3, 4, 5, 6});
  w.write_document(std::vector<uint32_t>{8, 9, 10});
  w.finish();
  DataLoader loader(std::make_shared<const TokenFile>(path), config(4, 2));
  const Batch b = loader.next();
  EXPECT_FALSE(b.doc_starts.defined());
  EXPECT_EQ(values(b.inputs), (std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(values(b.targets), (std::vector<int32_t>{2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_THROW(DataLoader(std::make_shared<const TokenFile>(path), config(4, 1, false)),
               ValueError);
}

TEST(DataLoaderFlags, PaddedRowsHoldOneExampleEach) {
  test::TempDir dir;
  // With eos 999: 10 11 12 999 | 20 21 22 23 24 25 26 999 | 30 999.
  auto file = chat_file(dir, {{3, 1}, {7, 2}, {1, 0}}, 999u);
  DataLoader loader(file, config(4, 3, false));
  EXPECT_EQ(loader.sequences_per_epoch(), 3u);
  EXPECT_EQ(loader.examples_cut(), 1u);  // 8 tokens > S + 1
  const Batch b = loader.next();
  EXPECT_FALSE(b.doc_starts.defined());
  EXPECT_EQ(values(b.inputs),
            (std::vector<int32_t>{10, 11, 12, 999, 20, 21, 22, 23, 30, 999, 999, 999}));
  EXPECT_EQ(values(b.targets), (std::vector<int32_t>{11, 12, 999, X,  //
                                                     X, 22, 23, 24,   //
                                                     X, X, X, X}));
  // The eos after a one-token document does not count (its only token is a start).
}

TEST(DataLoaderFlags, PaddedStateResumesAndRefusesTheOtherLayout) {
  test::TempDir dir;
  auto file = chat_file(dir, {{3, 1}, {4, 2}, {2, 1}, {5, 1}, {3, 0}, {6, 2}}, 999u);
  DataLoaderConfig c = config(4, 2, false);
  c.shuffle = true;
  DataLoader a(file, c);
  a.next();
  const DataLoaderState saved = a.state();
  EXPECT_TRUE(saved.padded_rows);
  const nlohmann::json j = to_json(saved);
  EXPECT_EQ(j.at("padded_rows"), true);
  EXPECT_EQ(data_loader_state_from_json(j), saved);
  const Batch want = a.next();
  DataLoader b(file, c, data_loader_state_from_json(j));
  const Batch got = b.next();
  EXPECT_EQ(values(got.inputs), values(want.inputs));
  EXPECT_EQ(values(got.targets), values(want.targets));
  // A packed loader cannot take a padded position, nor the reverse; an epoch's start is either.
  EXPECT_THROW(DataLoader(file, config(4, 1), saved), ValueError);
  DataLoaderState packed{0, 1};
  EXPECT_THROW(DataLoader(file, c, packed), ValueError);
  EXPECT_NO_THROW(DataLoader(file, c, DataLoaderState{1, 0}));
  // A packed state's JSON is as it always was.
  EXPECT_EQ(to_json(DataLoaderState{2, 5}), (nlohmann::json{{"epoch", 2}, {"next_index", 5}}));
  EXPECT_THROW(data_loader_state_from_json({{"epoch", 0}, {"next_index", 0}, {"padded_rows", 1}}),
               ValueError);
}

}  // namespace
}  // namespace zt::data
