// Safetensors writer -> reader round trips on the CPU: every dtype, odd shapes (scalars, empty,
// size-1 dims), strided inputs, dtype conversion on read and on write, row and element ranges,
// metadata, determinism, and the writer's argument checks.
#include <gtest/gtest.h>

#include "io/io_test_util.h"
#include "support/test_util.h"
#include "zerotrain/io/safetensors.h"
#include "zerotrain/kernels/cast.h"

namespace zt::io {
namespace {

using test::expect_bitwise_equal;
using test::expect_error;
using test::random_any;
using test::TempDir;

const std::vector<DType> kAllDTypes = {DType::f32, DType::f16, DType::bf16,
                                       DType::i32, DType::i64, DType::u8};
const std::vector<Shape> kOddShapes = {{},     {0},       {1},       {7},
                                       {3, 5}, {2, 0, 3}, {1, 1, 1}, {2, 3, 4, 1}};

TEST(SafetensorsRoundTrip, EveryDtypeAndOddShape) {
  TempDir dir;
  std::vector<NamedTensor> tensors;
  uint64_t seed = 1;
  for (DType dt : kAllDTypes)
    for (const Shape& s : kOddShapes)
      tensors.push_back({str(dtype_name(dt), to_string(s)), random_any(s, dt, seed++)});
  write_safetensors(dir / "all.safetensors", tensors);

  SafetensorsReader r(dir / "all.safetensors");
  ASSERT_EQ(r.entries().size(), tensors.size());
  for (const NamedTensor& nt : tensors) {
    ASSERT_TRUE(r.contains(nt.name)) << nt.name;
    EXPECT_EQ(r.entry(nt.name).shape, nt.tensor.shape()) << nt.name;
    EXPECT_EQ(to_dtype(r.entry(nt.name).dtype), nt.tensor.dtype()) << nt.name;
    expect_bitwise_equal(nt.tensor, r.read(nt.name, nt.tensor.dtype()), nt.name);
  }
  EXPECT_TRUE(r.metadata().empty());
}

TEST(SafetensorsRoundTrip, DataIsAlignedAndOrderedByDtypeThenName) {
  TempDir dir;
  write_safetensors(dir / "t.safetensors", {{"b", random_any({3}, DType::u8, 1)},
                                            {"a", random_any({3}, DType::f16, 2)},
                                            {"c", random_any({2}, DType::i64, 3)},
                                            {"d", random_any({5}, DType::f32, 4)},
                                            {"e", random_any({1}, DType::f32, 5)}});
  SafetensorsReader r(dir / "t.safetensors");
  std::vector<std::string> order;
  for (const SafetensorsEntry& e : r.entries()) {
    order.push_back(e.name);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(r.data(e)) % st_dtype_size(e.dtype), 0u) << e.name;
  }
  EXPECT_EQ(order, (std::vector<std::string>{"c", "d", "e", "a", "b"}));
}

TEST(SafetensorsRoundTrip, StridedInputIsWrittenInLogicalOrder) {
  TempDir dir;
  Tensor t = Tensor::from_floats({0, 1, 2, 3, 4, 5}, {2, 3}, DType::f32);
  write_safetensors(dir / "t.safetensors", {{"t", t.transpose(0, 1)}});
  SafetensorsReader r(dir / "t.safetensors");
  EXPECT_EQ(r.entry("t").shape, (Shape{3, 2}));
  EXPECT_EQ(r.read("t", DType::f32).to_floats(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST(SafetensorsRoundTrip, ReadConvertsBetweenFloatDtypes) {
  TempDir dir;
  const Tensor f32 = test::random_tensor({4, 33}, DType::f32, 7, -100.f, 100.f);
  const Tensor bf16 = test::random_tensor({5}, DType::bf16, 8);
  write_safetensors(dir / "t.safetensors", {{"f32", f32}, {"bf16", bf16}});
  SafetensorsReader r(dir / "t.safetensors");
  for (DType to : {DType::bf16, DType::f16})
    expect_bitwise_equal(kernels::cast_to(f32, to), r.read("f32", to), "f32 read as another dtype");
  // Widening is exact.
  EXPECT_EQ(r.read("bf16", DType::f32).to_floats(), bf16.to_floats());
  // Into an existing destination.
  Tensor dst = Tensor::zeros({4, 33}, DType::f16);
  r.read("f32", dst);
  expect_bitwise_equal(kernels::cast_to(f32, DType::f16), dst, "read into a destination");
}

TEST(SafetensorsRoundTrip, WriteConvertsFloatsOnlyWhenAsked) {
  TempDir dir;
  const Tensor f32 = test::random_tensor({6}, DType::f32, 9);
  const Tensor ints = random_any({4}, DType::i32, 10);
  SafetensorsWriteOptions opt;
  opt.float_dtype = DType::bf16;
  write_safetensors(dir / "t.safetensors", {{"w", f32}, {"ids", ints}}, opt);
  SafetensorsReader r(dir / "t.safetensors");
  EXPECT_EQ(r.entry("w").dtype, StDType::BF16);
  EXPECT_EQ(r.entry("ids").dtype, StDType::I32);
  expect_bitwise_equal(kernels::cast_to(f32, DType::bf16), r.read("w", DType::bf16), "w");
  expect_bitwise_equal(ints, r.read("ids", DType::i32), "ids");
  EXPECT_EQ(stored_nbytes(f32, opt), 12u);
  EXPECT_EQ(stored_nbytes(ints, opt), 16u);
}

TEST(SafetensorsRoundTrip, IntegersDoNotConvert) {
  TempDir dir;
  write_safetensors(dir / "t.safetensors", {{"ids", random_any({4}, DType::i64, 1)},
                                            {"w", random_any({4}, DType::f32, 2)}});
  SafetensorsReader r(dir / "t.safetensors");
  expect_error<DTypeError>([&] { r.read("ids", DType::f32); },
                           {"t.safetensors", "\"ids\"", "i64", "f32"});
  expect_error<DTypeError>([&] { r.read("w", DType::i32); }, {"\"w\"", "f32", "i32"});
}

TEST(SafetensorsRoundTrip, RowsAndElementRanges) {
  TempDir dir;
  const Tensor t = test::random_tensor({5, 3, 2}, DType::f32, 11);
  write_safetensors(dir / "t.safetensors", {{"t", t}});
  SafetensorsReader r(dir / "t.safetensors");

  Tensor rows = Tensor::zeros({3, 3, 2}, DType::f32);
  r.read_rows("t", 1, 4, rows);
  expect_bitwise_equal(t.slice(0, 1, 4).contiguous(), rows, "rows [1, 4)");
  Tensor none = Tensor::zeros({0, 3, 2}, DType::f32);
  r.read_rows("t", 5, 5, none);

  Tensor rows_bf16 = Tensor::zeros({2, 3, 2}, DType::bf16);
  r.read_rows("t", 3, 5, rows_bf16);
  expect_bitwise_equal(kernels::cast_to(t.slice(0, 3, 5).contiguous(), DType::bf16), rows_bf16,
                       "rows [3, 5) as bf16");

  Tensor flat = Tensor::zeros({7}, DType::f32);
  r.read_elements("t", 4, 11, flat);
  expect_bitwise_equal(t.flatten().slice(0, 4, 11).contiguous(), flat, "elements [4, 11)");

  expect_error<ShapeError>([&] { r.read_rows("t", 2, 6, rows); },
                           {"\"t\"", "rows [2, 6) out of range"});
  expect_error<ShapeError>([&] { r.read_rows("t", 0, 2, rows); },
                           {"\"t\"", "[2, 3, 2]", "[3, 3, 2]"});
  expect_error<ShapeError>([&] { r.read_elements("t", 25, 31, flat); },
                           {"elements [25, 31) out of range"});
  expect_error<ShapeError>([&] { r.read_elements("t", 0, 3, flat); }, {"destination", "holds 7"});
  expect_error<ShapeError>(
      [&] {
        r.read("t", Tensor::zeros({5, 6}, DType::f32));
      },
      {"\"t\" is [5, 3, 2]", "f32[5, 6]"});
  expect_error<ShapeError>(
      [&] {
        r.read("t", Tensor::zeros({3, 5, 2}, DType::f32).transpose(0, 1));
      },
      {"not contiguous"});
}

TEST(SafetensorsRoundTrip, ScalarHasNoRows) {
  TempDir dir;
  write_safetensors(dir / "t.safetensors", {{"s", Tensor::from_floats({3.5f}, {}, DType::f32)}});
  SafetensorsReader r(dir / "t.safetensors");
  EXPECT_EQ(r.read("s", DType::f32).to_floats(), (std::vector<float>{3.5f}));
  expect_error<ShapeError>([&] { r.read_rows("s", 0, 1, Tensor::zeros({1}, DType::f32)); },
                           {"scalar has no rows"});
}

TEST(SafetensorsRoundTrip, MetadataAndDeterministicBytes) {
  TempDir dir;
  SafetensorsWriteOptions opt;
  opt.metadata = {{"format", "pt"}, {"zeta", "last"}, {"alpha", "first \"quoted\"\n"}};
  const std::vector<NamedTensor> ts = {{"x", random_any({3, 2}, DType::bf16, 1)},
                                       {"y", random_any({2}, DType::i64, 2)}};
  write_safetensors(dir / "a.safetensors", ts, opt);
  write_safetensors(dir / "b.safetensors", {ts[1], ts[0]}, opt);
  EXPECT_EQ(test::read_bytes(dir / "a.safetensors"), test::read_bytes(dir / "b.safetensors"));
  SafetensorsReader r(dir / "a.safetensors");
  EXPECT_EQ(r.metadata(), opt.metadata);
  const std::string bytes = test::read_bytes(dir / "a.safetensors");
  // Metadata first, keys sorted, JSON escapes as the reference writes them.
  EXPECT_EQ(bytes.find(R"({"__metadata__":{"alpha":"first \"quoted\"\n","format":"pt","zeta":)"),
            8u);
  EXPECT_EQ(r.names(), (std::vector<std::string>{"x", "y"}));
}

TEST(SafetensorsRoundTrip, WriterRefusesBadArguments) {
  TempDir dir;
  const auto path = dir / "t.safetensors";
  const Tensor t = random_any({2}, DType::f32, 1);
  expect_error<ValueError>(
      [&] {
        write_safetensors(path, {{"a", t}, {"a", t}});
      },
      {"\"a\" given twice"});
  expect_error<ValueError>([&] { write_safetensors(path, {{"__metadata__", t}}); }, {"reserved"});
  expect_error<ValueError>(
      [&] {
        write_safetensors(path, {{"u", Tensor()}});
      },
      {"\"u\" is undefined"});
  SafetensorsWriteOptions opt;
  opt.float_dtype = DType::i32;
  expect_error<ValueError>([&] { write_safetensors(path, {{"a", t}}, opt); }, {"float_dtype i32"});
  EXPECT_TRUE(test::list_dir(dir.path()).empty());
}

TEST(SafetensorsRoundTrip, UnknownNameIsNamed) {
  TempDir dir;
  write_safetensors(dir / "t.safetensors", {{"a", random_any({2}, DType::f32, 1)}});
  SafetensorsReader r(dir / "t.safetensors");
  EXPECT_FALSE(r.contains("b"));
  expect_error<ValueError>([&] { r.entry("b"); }, {"t.safetensors", "no tensor \"b\""});
}

}  // namespace
}  // namespace zt::io
