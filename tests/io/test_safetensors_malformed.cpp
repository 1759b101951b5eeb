// Every malformed safetensors file is refused on open with a FormatError naming the file, the
// tensor where there is one, and the problem.
#include <gtest/gtest.h>

#include <cstring>

#include "io/io_test_util.h"
#include "zerotrain/core/io_error.h"
#include "zerotrain/io/safetensors.h"

namespace zt::io {
namespace {

using test::expect_error;
using test::TempDir;

// 8-byte little-endian length (the JSON's own unless given), the JSON, then `data`.
std::string file_image(const std::string& json, const std::string& data, int64_t length = -1) {
  const uint64_t n = length < 0 ? json.size() : static_cast<uint64_t>(length);
  std::string out(8, '\0');
  std::memcpy(out.data(), &n, 8);
  return out + json + data;
}

class SafetensorsMalformed : public ::testing::Test {
 protected:
  // Writes the bytes and expects opening them to fail with every one of `parts`.
  void expect_refused(const std::string& bytes, std::vector<std::string> parts) {
    const auto path = dir_ / "bad.safetensors";
    test::write_bytes(path, bytes);
    parts.push_back(path.string());
    parts.push_back("[safetensors]");
    expect_error<FormatError>([&] { SafetensorsReader r(path); }, parts);
  }
  TempDir dir_;
};

const std::string k16(16, 'x');  // data of one F32 [4] or [2, 2] tensor

TEST_F(SafetensorsMalformed, TooShortForTheLength) {
  expect_refused("abc", {"3 bytes", "8-byte header length"});
}

TEST_F(SafetensorsMalformed, HeaderLengthPastTheFile) {
  expect_refused(file_image("{}", "", 4096), {"header length 4096 exceeds the file"});
}

TEST_F(SafetensorsMalformed, HeaderLengthPastTheLimit) {
  expect_refused(file_image("{}", "", int64_t{1} << 40), {"exceeds the 100000000-byte limit"});
}

TEST_F(SafetensorsMalformed, BadJson) {
  expect_refused(file_image(R"({"a": {"dtype": "F32", )", k16), {"not valid JSON"});
  expect_refused(file_image("[1, 2]", ""), {"expected a JSON object"});
}

// safetensors pads a header with spaces; NUL bytes are not JSON whitespace.
TEST_F(SafetensorsMalformed, NulPaddedHeader) {
  const std::string json = R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})";
  expect_refused(file_image(json + std::string(6, '\0'), k16),
                 {"header: a NUL byte at offset " + std::to_string(8 + json.size())});
  expect_refused(file_image(json + "  " + std::string(1, '\0') + "   ", k16), {"a NUL byte"});
}

// 70,000 nested arrays used to overflow the stack while the error message printed them.
TEST_F(SafetensorsMalformed, DeeplyNestedHeader) {
  const std::string deep = std::string(70000, '[') + std::string(70000, ']');
  expect_refused(file_image(R"({"w":)" + deep + "}", k16),
                 {"header: not valid JSON: nested deeper than 64 levels"});
}

// Names and dtypes from the file are quoted escaped and short, and so is the text around a syntax
// error: no raw bytes on the terminal.
TEST_F(SafetensorsMalformed, RawBytesAreEscaped) {
  const auto path = dir_ / "bad.safetensors";
  const auto expect_printable = [&](const std::string& header, const std::string& part) {
    test::write_bytes(path, file_image(header, k16));
    try {
      SafetensorsReader r(path);
      FAIL() << "accepted";
    } catch (const FormatError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(part), std::string::npos) << msg;
      for (unsigned char ch : msg)
        EXPECT_TRUE(ch >= 0x20 && ch < 0x7f) << int(ch) << " in " << msg;
      EXPECT_LT(msg.size(), 400u);
    }
  };
  const std::string long_name = R"(\u001b]0;pwned\u0007)" + std::string(3000, 'n');
  expect_printable(R"({")" + long_name +
                       R"(":{"dtype":"F\u0000","shape":[4],)"
                       R"("data_offsets":[0,16]}})",
                   R"(tensor "\u001b]0;pwned\u0007nnn)");
  expect_printable(R"({"w":{"dtype":"F\u0000\u00ff","shape":[4],"data_offsets":[0,16]}})",
                   R"(unknown dtype "F\u0000\u00ff")");
  const std::string raw_name = std::string("\x1b]0;\xff\xfe", 6) + std::string(3000, 'n');
  expect_printable(R"({")" + raw_name + R"(":{}})", "not valid JSON");
  expect_printable(R"({"w":)" + std::string(3000, 'x') + "}", "not valid JSON");
}

TEST_F(SafetensorsMalformed, RepeatedName) {
  expect_refused(file_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                            R"("a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                            k16),
                 {"key \"a\" appears more than once"});
}

TEST_F(SafetensorsMalformed, BadEntries) {
  expect_refused(file_image(R"({"w":{"dtype":"F7","shape":[4],"data_offsets":[0,16]}})", k16),
                 {"tensor \"w\"", "unknown dtype \"F7\""});
  expect_refused(file_image(R"({"w":{"dtype":"F32","shape":[4]}})", k16),
                 {"tensor \"w\"", "missing \"data_offsets\""});
  expect_refused(file_image(R"({"w":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}})", k16),
                 {"tensor \"w\"", "shape", "non-negative integer", "-4"});
  expect_refused(file_image(R"({"w":{"dtype":"F32","shape":"4","data_offsets":[0,16]}})", k16),
                 {"tensor \"w\"", "shape: expected an array"});
  expect_refused(file_image(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0]}})", k16),
                 {"tensor \"w\"", "expected [begin, end]"});
  expect_refused(file_image(R"({"w":7})", k16), {"tensor \"w\"", "expected an object"});
  expect_refused(file_image(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],)"
                            R"("data_offsets":[0,16]}})",
                            k16),
                 {"tensor \"w\"", "overflows 64 bits"});
}

TEST_F(SafetensorsMalformed, SizeDisagreesWithShape) {
  expect_refused(file_image(R"({"w":{"dtype":"BF16","shape":[4],"data_offsets":[0,16]}})", k16),
                 {"tensor \"w\"", "hold 16 bytes", "BF16 [4] needs 8"});
}

TEST_F(SafetensorsMalformed, OffsetsEndBeforeTheyBegin) {
  expect_refused(file_image(R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[16,0]}})", k16),
                 {"tensor \"w\"", "end before they begin"});
}

TEST_F(SafetensorsMalformed, OffsetsOutOfRange) {
  expect_refused(file_image(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[16,32]}})", k16),
                 {"tensor \"w\"", "[16, 32]", "out of range", "16 bytes"});
}

TEST_F(SafetensorsMalformed, OverlappingOffsets) {
  expect_refused(file_image(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},)"
                            R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                            k16),
                 {"tensor \"b\"", "[8, 16]", "overlap tensor \"a\" [0, 12]"});
}

TEST_F(SafetensorsMalformed, GapBetweenTensors) {
  expect_refused(file_image(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                            R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                            k16),
                 {"tensor \"b\"", "bytes [4, 8) unused", "not contiguous"});
  expect_refused(file_image(R"({"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", k16),
                 {"tensor \"b\"", "bytes [0, 8) unused"});
}

TEST_F(SafetensorsMalformed, TrailingBytes) {
  expect_refused(file_image(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", k16),
                 {"cover 8 bytes", "data section has 16", "8 trailing bytes"});
}

TEST_F(SafetensorsMalformed, BadMetadata) {
  expect_refused(file_image(R"({"__metadata__":{"format":1}})", ""),
                 {"__metadata__ key \"format\"", "expected a string", "integer 1"});
  expect_refused(file_image(R"({"__metadata__":"pt"})", ""), {"__metadata__: expected an object"});
}

TEST_F(SafetensorsMalformed, TruncatedWrittenFile) {
  const auto good = dir_ / "good.safetensors";
  write_safetensors(good,
                    {{"a", Tensor::zeros({4}, DType::f32)}, {"b", Tensor::zeros({8}, DType::f32)}});
  std::string bytes = test::read_bytes(good);
  SafetensorsReader ok(good);
  expect_refused(bytes.substr(0, bytes.size() - 3), {"tensor \"b\"", "out of range", "truncated"});
  expect_refused(bytes.substr(0, 20), {"header length", "exceeds the file"});
}

TEST_F(SafetensorsMalformed, MissingFileIsAnIoError) {
  expect_error<IoError>([&] { SafetensorsReader r(dir_ / "absent.safetensors"); },
                        {"[io]", "absent.safetensors", "No such file"});
}

}  // namespace
}  // namespace zt::io
