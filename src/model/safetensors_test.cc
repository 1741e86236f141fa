#include "model/safetensors.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>

#include "testing_files.h"

namespace headroom {
namespace {

using testing::LengthPrefix;
using testing::TempDir;
using testing::WriteFile;
using testing::WriteSafetensors;

// Expects an error whose message contains `part`.
#define EXPECT_ERROR(result, part)                                         \
  do {                                                                     \
    const auto& r_ = (result);                                             \
    ASSERT_FALSE(r_.ok());                                                 \
    EXPECT_NE(EnglishText(r_.error().what).find(part), std::string::npos)  \
        << "message: " << EnglishText(r_.error().what);                    \
    EXPECT_EQ(EnglishText(r_.error().what).find('\n'), std::string::npos); \
  } while (0)

constexpr char kTwoTensors[] = R"({"__metadata__":{"format":"pt"},)"
                               R"("b":{"dtype":"F32","shape":[2,2],"data_offsets":[12,28]},)"
                               R"("a":{"dtype":"BF16","shape":[3,2],"data_offsets":[0,12]}})";

TEST(SafetensorsTest, ParsesTensorsMetadataAndTotals) {
  Result<SafetensorsHeader> h = ParseSafetensorsHeader(kTwoTensors, 28);
  ASSERT_TRUE(h.ok()) << EnglishText(h.error().what);
  ASSERT_EQ(h->tensors.size(), 2u);
  EXPECT_EQ(h->tensors[0].name, "b");
  EXPECT_EQ(h->tensors[0].dtype, "F32");
  EXPECT_EQ(h->tensors[0].shape, (std::vector<uint64_t>{2, 2}));
  EXPECT_EQ(h->tensors[0].data_begin, 12u);
  EXPECT_EQ(h->tensors[0].data_end, 28u);
  EXPECT_EQ(h->tensors[1].elements, 6u);
  EXPECT_EQ(h->metadata.at("format"), "pt");
  EXPECT_EQ(h->total_elements, 10u);
  EXPECT_EQ(h->dtype_elements.at("BF16"), 6u);
  EXPECT_EQ(h->dtype_elements.at("F32"), 4u);
  EXPECT_EQ(h->data_bytes, 28u);
}

TEST(SafetensorsTest, AcceptsEdgeShapesAndEscapedNames) {
  // A scalar (shape []) has one element; an empty tensor sits anywhere without bytes; the
  // writer pads the header with spaces to a multiple of 8; names may be escaped or UTF-8.
  const std::string header =
      R"({"s":{"dtype":"I64","shape":[],"data_offsets":[0,8]},)"
      R"("e":{"dtype":"F16","shape":[0,4096],"data_offsets":[8,8]},)"
      R"("q\u00e9\n\"":{"dtype":"F8_E4M3","shape":[3],"data_offsets":[8,11]},)"
      R"("日本":{"dtype":"F4","shape":[2],"data_offsets":[11,12],"extra":[1,{"x":null}]}})"
      "     ";
  Result<SafetensorsHeader> h = ParseSafetensorsHeader(header, 12);
  ASSERT_TRUE(h.ok()) << EnglishText(h.error().what);
  EXPECT_EQ(h->tensors[0].elements, 1u);
  EXPECT_EQ(h->tensors[1].elements, 0u);
  EXPECT_EQ(h->tensors[2].name, "q\xC3\xA9\n\"");
  EXPECT_EQ(h->tensors[3].name, "\xE6\x97\xA5\xE6\x9C\xAC");
  EXPECT_EQ(h->total_elements, 1u + 0u + 3u + 2u);
  EXPECT_EQ(h->dtype_elements.at("F4"), 2u);
  EXPECT_EQ(ParseSafetensorsHeader("{}", 0).value().tensors.size(), 0u);
  EXPECT_TRUE(ParseSafetensorsHeader(R"({"__metadata__":null})", 0).ok());
}

TEST(SafetensorsTest, DtypeBits) {
  const std::pair<const char*, int> cases[] = {
      {"BF16", 16}, {"F8_E5M2", 8}, {"F6_E2M3", 6}, {"F4", 4}, {"U64", 64}, {"bf16", 0}, {"", 0},
  };
  for (const auto& [dtype, bits] : cases) EXPECT_EQ(SafetensorsDtypeBits(dtype), bits) << dtype;
}

TEST(SafetensorsTest, RejectsHostileHeaders) {
  struct Case {
    std::string header;
    uint64_t data_bytes;
    std::string error;
  };
  const std::string t = R"("t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  const Case cases[] = {
      {"", 0, "header is not JSON: unexpected end of input at byte 0"},
      {"{\"t\":", 0, "header is not JSON: unexpected end of input at byte 5"},
      {"garbage", 0, "header is not JSON: expected a value at byte 0"},
      {"[1,2]", 0, "header is not a JSON object"},
      {"42", 0, "header is not a JSON object"},
      {"{" + t + "} x", 8, "trailing characters after the value at byte"},
      {"{" + t + ",}", 8, "expected a string key"},
      {R"({"t":[1]})", 0, "tensor \"t\": entry is not a JSON object"},
      {R"({"t":{"dtype":"F17","shape":[1],"data_offsets":[0,4]}})", 4,
       "dtype \"F17\" is not a safetensors dtype"},
      {R"({"t":{"dtype":7,"shape":[1],"data_offsets":[0,4]}})", 4, "dtype is not a string"},
      {R"({"t":{"shape":[1],"data_offsets":[0,4]}})", 4, "tensor \"t\": missing dtype"},
      {R"({"t":{"dtype":"F32","data_offsets":[0,4]}})", 4, "missing shape"},
      {R"({"t":{"dtype":"F32","shape":[1]}})", 4, "missing data_offsets"},
      {R"({"t":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4,
       "dtype given twice"},
      {R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8,
       "shape [3] of F32 is 12 bytes but data_offsets [0, 8] span 8"},
      {R"({"t":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8,
       "shape holds \"-2\", not a non-negative 64-bit integer"},
      {R"({"t":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}})", 8,
       "not a non-negative 64-bit integer"},
      {R"({"t":{"dtype":"F32","shape":[18446744073709551616],"data_offsets":[0,8]}})", 8,
       "not a non-negative 64-bit integer"},
      {R"({"t":{"dtype":"F32","shape":"2","data_offsets":[0,8]}})", 8, "shape is not an array"},
      {R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8,9]}})", 8,
       "data_offsets has more than 2 entries"},
      {R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[8]}})", 8,
       "data_offsets has 1 entries, not 2"},
      {R"({"t":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", 8,
       "shape [4294967296, 4294967296] overflows 64 bits"},
      {R"({"t":{"dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,8]}})", 8,
       "overflows 64 bits"},
      {R"({"t":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})", 2,
       "is not a whole number of bytes"},
      {R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 8,
       "data_offsets [8, 0] end before they begin"},
      {R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4,
       "reach past the data (4 bytes after the header)"},
      {R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[18446744073709551608,18446744073709551615]}})",
       8, "reach past the data"},
      {"{" + t + R"(,"u":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12,
       "tensors \"t\" and \"u\" overlap (data_offsets [0, 8] and [4, 12])"},
      {"{" + t + R"(,"u":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})", 20,
       "no tensor covers data bytes [8, 12) before tensor \"u\""},
      {R"({"u":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8,
       "no tensor covers data bytes [0, 4)"},
      {"{" + t + "}", 16,
       "tensors end at byte 8 of the data but the file holds 16 bytes after the header"},
      {"{" + t + "," + t + "}", 8, "overlap"},
      {"{" + t + R"(,"t":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", 16,
       "tensor \"t\" appears twice"},
      {R"({"__metadata__":{"a":1}})", 0, "__metadata__ value \"a\" is not a string"},
      {R"({"__metadata__":[1]})", 0, "__metadata__ is not a JSON object"},
      {"{\"a\xFF\":{}}", 0, "header is not JSON: invalid UTF-8 in string at byte 3"},
      {"{\"a\xC0\x80\":{}}", 0, "invalid UTF-8 in string"},          // overlong NUL
      {"{\"a\xED\xA0\x80\":{}}", 0, "invalid UTF-8 in string"},      // UTF-16 surrogate
      {"{\"a\xF4\x90\x80\x80\":{}}", 0, "invalid UTF-8 in string"},  // past U+10FFFF
      {"{\"a\xE6\x97\":{}}", 0, "invalid UTF-8 in string"},          // cut sequence
      {R"({"a\ud800":{}})", 0, "unpaired high surrogate"},
      {R"({"a\udc00":{}})", 0, "lone low surrogate"},
      {"{\"a\tb\":{}}", 0, "control character in string at byte 3"},
      {R"({"a\x":{}})", 0, "invalid escape in string"},
      {"{\"t\":{\"x\":" + std::string(100, '[') + std::string(100, ']') + "}}", 0,
       "nesting deeper than 64 levels"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.header.substr(0, 120));
    EXPECT_ERROR(ParseSafetensorsHeader(c.header, c.data_bytes), c.error);
  }
}

TEST(SafetensorsTest, RejectsAShapeOfAbsurdRank) {
  // 33 dimensions of 1: bounded so that "[1,1,1,...]" of 100 MB cannot allocate 400 MB.
  std::string shape = "1";
  for (int i = 0; i < 32; ++i) shape += ",1";
  EXPECT_ERROR(ParseSafetensorsHeader(
                   R"({"t":{"dtype":"U8","shape":[)" + shape + R"(],"data_offsets":[0,1]}})", 1),
               "shape has more than 32 entries");
}

TEST(SafetensorsTest, LengthPrefixChecks) {
  struct LengthCase {
    std::string prefix;
    uint64_t file_bytes;
    std::string error;  // "" for accepted
    uint64_t want = 0;  // the header length, when accepted
  };
  const LengthCase cases[] = {
      {"", 0, "file is empty"},
      {"\x01\x02\x03\x04\x05", 5, "file is 5 bytes, shorter than the 8-byte header length"},
      {LengthPrefix(9223372036854775807ULL), 4096,
       "header length 9223372036854775807 is larger than the file (4096 bytes)"},
      {LengthPrefix(~0ULL), 4096, "is larger than the file"},
      {LengthPrefix(4089), 4096, "larger than the file"},
      {LengthPrefix(100'000'001), 1ULL << 40,
       "header length 100000001 is over the format's limit of 100000000 bytes"},
      {LengthPrefix(4088), 4096, "", 4088},
      {LengthPrefix(100'000'000), 1ULL << 40, "", 100'000'000},
  };
  for (const LengthCase& c : cases) {
    SCOPED_TRACE(c.error.empty() ? std::to_string(c.want) : c.error);
    if (c.error.empty()) {
      EXPECT_EQ(ParseSafetensorsLength(c.prefix, c.file_bytes).value(), c.want);
    } else {
      EXPECT_ERROR(ParseSafetensorsLength(c.prefix, c.file_bytes), c.error);
    }
  }
}

TEST(SafetensorsTest, ReadsOnlyTheHeaderOfASparse16GBFile) {
  TempDir dir("st");
  const uint64_t data = 16ULL << 30;  // 2^33 BF16 elements
  WriteSafetensors(
      dir / "big.safetensors",
      fmt::format(R"({{"w":{{"dtype":"BF16","shape":[65536,131072],"data_offsets":[0,{}]}}}})",
                  data),
      data);
  const auto start = std::chrono::steady_clock::now();
  Result<SafetensorsHeader> h = ReadSafetensorsHeader(dir / "big.safetensors");
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(h.ok()) << EnglishText(h.error().what);
  EXPECT_EQ(h->total_elements, 65536ULL * 131072ULL);
  EXPECT_EQ(h->data_bytes, data);
  EXPECT_LT(elapsed, std::chrono::milliseconds(500));  // reading 16 GB of zeros would not
}

TEST(SafetensorsTest, ReadErrorsNameTheFile) {
  TempDir dir("st");
  const std::string p = (dir / "m.safetensors").string();
  EXPECT_ERROR(ReadSafetensorsHeader(dir / "absent.safetensors"),
               (dir / "absent.safetensors").string() + ": open: No such file");
  WriteFile(p, "");
  EXPECT_ERROR(ReadSafetensorsHeader(p), p + ": file is empty");
  WriteFile(p, "abc");
  EXPECT_ERROR(ReadSafetensorsHeader(p), p + ": file is 3 bytes, shorter than");
  WriteFile(p, LengthPrefix(100) + "{\"a\":");  // the length promises more than the file holds
  EXPECT_ERROR(ReadSafetensorsHeader(p),
               p + ": header length 100 is larger than the file (13 bytes)");
  WriteFile(p, LengthPrefix(9223372036854775807ULL) + "{}");
  EXPECT_ERROR(ReadSafetensorsHeader(p),
               "header length 9223372036854775807 is larger than the file (10 bytes)");
  WriteFile(p, LengthPrefix(5) + "[1,2]");
  EXPECT_ERROR(ReadSafetensorsHeader(p), p + ": header is not a JSON object");
  WriteFile(p, LengthPrefix(4) + "{\"\xFF\"");
  EXPECT_ERROR(ReadSafetensorsHeader(p), p + ": header is not JSON: invalid UTF-8");
  EXPECT_ERROR(ReadSafetensorsHeader(dir.path()), ": not a regular file");
  // A FIFO must not block the reader waiting for a writer.
  const auto fifo = dir / "fifo.safetensors";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_ERROR(ReadSafetensorsHeader(fifo), fifo.string() + ": not a regular file");
}

TEST(SafetensorsTest, ParsesIndexShardNames) {
  Result<std::vector<std::string>> shards = ParseSafetensorsIndex(
      R"({"metadata":{"total_size":28},"weight_map":{"a":"model-00002-of-00002.safetensors",)"
      R"("b":"model-00001-of-00002.safetensors","c":"model-00002-of-00002.safetensors",)"
      R"("d":"sub/./x.safetensors"}})");
  ASSERT_TRUE(shards.ok()) << EnglishText(shards.error().what);
  EXPECT_EQ(*shards,
            (std::vector<std::string>{"model-00001-of-00002.safetensors",
                                      "model-00002-of-00002.safetensors", "sub/./x.safetensors"}));
  EXPECT_ERROR(ParseSafetensorsIndex(R"({"weight_map":{"a":"../x.safetensors"}})"),
               "shard path \"../x.safetensors\" leaves the model folder");
  EXPECT_ERROR(ParseSafetensorsIndex(R"({"weight_map":{"a":"sub/../../x"}})"),
               "leaves the model folder");
  EXPECT_ERROR(ParseSafetensorsIndex(R"({"weight_map":{"a":"/etc/passwd"}})"),
               "\"/etc/passwd\" is absolute");
  EXPECT_ERROR(ParseSafetensorsIndex(R"({"weight_map":{"a":"x\u0000y"}})"), "holds a NUL byte");
  EXPECT_ERROR(ParseSafetensorsIndex(R"({"weight_map":{"a":""}})"), "an empty shard path");
  EXPECT_ERROR(ParseSafetensorsIndex(R"({"weight_map":{"a":3}})"),
               "weight_map entry \"a\" is not a file name");
  EXPECT_ERROR(ParseSafetensorsIndex(R"({"weight_map":{}})"), "weight_map names no shard file");
  EXPECT_ERROR(ParseSafetensorsIndex(R"({"weight_map":[]})"), "weight_map is not a JSON object");
  EXPECT_ERROR(ParseSafetensorsIndex(R"({"metadata":{}})"), "missing key weight_map");
  EXPECT_ERROR(ParseSafetensorsIndex("[]"), "not a JSON object");
  EXPECT_ERROR(ParseSafetensorsIndex("{\"weight_map\":{\"a\":\"x\"}"),
               "not JSON: unexpected end of input");
}

TEST(SafetensorsTest, ReadsACheckpointFolder) {
  TempDir dir("st");
  // No checkpoint at all: not an error, no files.
  Result<SafetensorsCheckpoint> none = ReadSafetensorsCheckpoint(dir.path());
  ASSERT_TRUE(none.ok()) << EnglishText(none.error().what);
  EXPECT_TRUE(none->files.empty());
  // Without an index or model.safetensors, every *.safetensors counts.
  WriteSafetensors(dir / "consolidated.safetensors",
                   R"({"w":{"dtype":"BF16","shape":[4,4],"data_offsets":[0,32]}})", 32);
  WriteFile(dir / "notes.txt", "not a checkpoint");
  Result<SafetensorsCheckpoint> c = ReadSafetensorsCheckpoint(dir.path());
  ASSERT_TRUE(c.ok()) << EnglishText(c.error().what);
  EXPECT_EQ(c->files.size(), 1u);
  EXPECT_EQ(c->total_elements, 16u);
  // model.safetensors wins over the others.
  WriteSafetensors(dir / "model.safetensors",
                   R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8);
  c = ReadSafetensorsCheckpoint(dir.path());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->total_elements, 2u);
  EXPECT_EQ(c->dtype_elements.at("F32"), 2u);
  // An index wins over both; a shard it names must exist.
  WriteFile(dir / "model.safetensors.index.json",
            R"({"weight_map":{"w":"model.safetensors","v":"missing.safetensors"}})");
  EXPECT_ERROR(ReadSafetensorsCheckpoint(dir.path()),
               (dir / "missing.safetensors").string() + ": open: No such file or directory");
  // The same tensor in two shards would be counted twice.
  WriteFile(dir / "model.safetensors.index.json",
            R"({"weight_map":{"w":"model.safetensors","v":"consolidated.safetensors"}})");
  EXPECT_ERROR(ReadSafetensorsCheckpoint(dir.path()), "tensor \"w\" is also in another shard");
  WriteFile(dir / "model.safetensors.index.json", R"({"weight_map":{"w":"../model.safetensors"}})");
  EXPECT_ERROR(
      ReadSafetensorsCheckpoint(dir.path()),
      "model.safetensors.index.json: shard path \"../model.safetensors\" leaves the model folder");
}

// The lead's budget: a sharded 70B checkpoint, 30 shard headers of ~60 KB, planned in under
// 10 ms. The bound here is loose (sanitizer builds, shared CPUs); the figure is printed.
TEST(SafetensorsTest, ThirtyShardHeadersReadQuickly) {
  TempDir dir("st");
  std::string index = R"({"metadata":{"total_size":0},"weight_map":{)";
  uint64_t expected = 0;
  for (int shard = 1; shard <= 30; ++shard) {
    const std::string file = fmt::format("model-{:05d}-of-00030.safetensors", shard);
    std::string header = R"({"__metadata__":{"format":"pt"})";
    uint64_t offset = 0;
    for (int i = 0; header.size() < 60000; ++i) {
      const std::string name =
          fmt::format("model.layers.{}.mlp.expert_{}.down_proj.weight", shard, i);
      header +=
          fmt::format(R"(,"{}":{{"dtype":"BF16","shape":[8192,1024],"data_offsets":[{},{}]}})",
                      name, offset, offset + 8192 * 1024 * 2);
      offset += 8192 * 1024 * 2;
      expected += 8192 * 1024;
      index += fmt::format(R"({}"{}":"{}")", index.back() == '{' ? "" : ",", name, file);
    }
    header += "}";
    WriteSafetensors(dir / file, header, offset);
  }
  WriteFile(dir / "model.safetensors.index.json", index + "}}");
  const auto start = std::chrono::steady_clock::now();
  Result<SafetensorsCheckpoint> c = ReadSafetensorsCheckpoint(dir.path());
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(c.ok()) << EnglishText(c.error().what);
  EXPECT_EQ(c->files.size(), 30u);
  EXPECT_EQ(c->total_elements, expected);
  std::printf("30 shard headers of ~60 KB + index: %.2f ms\n", ms);
  EXPECT_LT(ms, 2000.0);  // guards against reading tensor data: 240 GB here
}

}  // namespace
}  // namespace headroom
