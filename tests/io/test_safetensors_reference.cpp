// zerotrain against the reference `safetensors` package: files it wrote
// (tests/fixtures/safetensors/, made by tools/gen_safetensors_fixtures.py) read back to the
// expected values, and the same tensors written by zerotrain give the same bytes.
#include <gtest/gtest.h>

#include "io/io_test_util.h"
#include "io/safetensors_fixtures.h"
#include "zerotrain/io/safetensors.h"

namespace zt::io {
namespace {

using test::expect_bitwise_equal;
using test::expect_error;
using test::safetensors_fixture;
using test::TempDir;

TEST(SafetensorsReference, ReadsEveryTensorOfAReferenceFile) {
  SafetensorsReader r(safetensors_fixture("mixed.safetensors"));
  EXPECT_EQ(r.metadata(), (std::map<std::string, std::string>{{"format", "pt"}}));
  const auto expected = test::mixed_fixture_tensors();
  ASSERT_EQ(r.entries().size(), expected.size());
  for (const NamedTensor& nt : expected) {
    ASSERT_TRUE(r.contains(nt.name)) << nt.name;
    EXPECT_EQ(r.entry(nt.name).shape, nt.tensor.shape()) << nt.name;
    expect_bitwise_equal(nt.tensor, r.read(nt.name, nt.tensor.dtype()), nt.name);
  }
}

TEST(SafetensorsReference, WritesTheReferenceBytes) {
  TempDir dir;
  SafetensorsWriteOptions opt;
  opt.metadata = {{"format", "pt"}};
  write_safetensors(dir / "mixed.safetensors", test::mixed_fixture_tensors(), opt);
  EXPECT_EQ(test::read_bytes(dir / "mixed.safetensors"),
            test::read_bytes(safetensors_fixture("mixed.safetensors")));

  write_safetensors(dir / "no_metadata.safetensors",
                    {{"attn.0", test::seq(6, 1.0, 0, DType::f32, {1, 2, 3})}});
  EXPECT_EQ(test::read_bytes(dir / "no_metadata.safetensors"),
            test::read_bytes(safetensors_fixture("no_metadata.safetensors")));

  write_safetensors(dir / "empty.safetensors", {});
  EXPECT_EQ(test::read_bytes(dir / "empty.safetensors"),
            test::read_bytes(safetensors_fixture("empty.safetensors")));
  EXPECT_TRUE(SafetensorsReader(dir / "empty.safetensors").entries().empty());
}

TEST(SafetensorsReference, OtherDtypesListButFailOnlyWhenRead) {
  SafetensorsReader r(safetensors_fixture("unsupported_dtypes.safetensors"));
  EXPECT_EQ(r.names(), (std::vector<std::string>{"bool", "f32", "f64", "i16", "i8"}));
  EXPECT_EQ(r.entry("f64").dtype, StDType::F64);
  EXPECT_EQ(r.entry("bool").dtype, StDType::BOOL);
  EXPECT_EQ(r.read("f32", DType::f32).to_floats(), (std::vector<float>{1.5f, -2.0f}));
  for (const char* name : {"f64", "i8", "i16", "bool"})
    expect_error<DTypeError>(
        [&] { r.read(name, DType::f32); },
        {"unsupported_dtypes.safetensors", str("\"", name, "\""), "cannot hold"});
}

}  // namespace
}  // namespace zt::io
