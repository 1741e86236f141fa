// Implementation notes: the header is scanned with JsonReader (json_reader.h says why not
// nlohmann). Checks follow Metadata::validate in safetensors/src/tensor.rs: tensors sorted
// by data_offsets must start at 0 and follow each other with no gap or overlap, each span
// must equal elements x bits / 8 (sub-byte dtypes such as F4 must fill whole bytes), shape
// products must not overflow 64 bits, and the last tensor must end where the file ends.
// Two things the reference leaves to serde we refuse as well: a tensor name given twice
// (serde keeps one, we would count both) and a shape of more than kMaxRank dimensions
// (a hostile `[1,1,1,...]` would otherwise allocate 8 bytes per 2 header bytes).
#include "model/safetensors.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>

#include "base/json_reader.h"
#include "base/message.h"

namespace headroom {
namespace {

// PyTorch tensors rarely pass 8 dimensions; 32 leaves room and bounds the allocation.
constexpr size_t kMaxRank = 32;
// model.safetensors.index.json lists every tensor: a few MB for the largest MoE models
// (DeepSeek-V3 names about 91,000 tensors).
constexpr uint64_t kMaxIndexBytes = 64ULL << 20;

struct DtypeBits {
  std::string_view name;
  int bits;
};
// The Dtype enum of safetensors/src/tensor.rs (0.6: MX formats F4, F6, F8_E8M0 and C64 added),
// with its bitsize().
constexpr DtypeBits kDtypes[] = {
    {"BOOL", 8}, {"F4", 4},      {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"U8", 8},
    {"I8", 8},   {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"I16", 16},
    {"U16", 16}, {"F16", 16},    {"BF16", 16},   {"I32", 32},    {"U32", 32},
    {"F32", 32}, {"F64", 64},    {"C64", 64},    {"I64", 64},    {"U64", 64},
};

constexpr size_t kDtypeCount = std::size(kDtypes);

// Index of `dtype` in kDtypes, or kDtypeCount when unknown.
size_t DtypeIndex(std::string_view dtype) {
  size_t i = 0;
  while (i < kDtypeCount && kDtypes[i].name != dtype) ++i;
  return i;
}

std::string ShapeText(const std::vector<uint64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// Reads [u64, ...] into out[0..max_items), setting *count.
bool ReadUintArray(JsonReader& r, uint64_t* out, size_t max_items, size_t* count,
                   std::string* error) {
  if (!r.BeginArray()) return false;
  std::string_view literal;
  *count = 0;
  while (r.NextElement()) {
    if (!r.ReadNumber(&literal)) return false;
    const std::optional<uint64_t> v = JsonUint64(literal);
    if (!v) {
      *error =
          fmt::format("holds {}, not a non-negative 64-bit integer", QuoteForMessage(literal, 40));
      return false;
    }
    if (*count == max_items) {
      *error = fmt::format("has more than {} entries", max_items);
      return false;
    }
    out[(*count)++] = *v;
  }
  return !r.failed();
}

// One "name": {...} entry. Returns false with r.failed() for bad JSON, else with `error`.
bool ReadTensor(JsonReader& r, SafetensorsTensor* t, std::string* error) {
  auto who = [&]() { return "tensor " + QuoteForMessage(t->name); };
  if (r.Peek() != JsonReader::Type::kObject) {
    *error = who() + ": entry is not a JSON object";
    return false;
  }
  if (!r.BeginObject()) return false;
  bool have_dtype = false, have_shape = false, have_offsets = false;
  std::string key;
  uint64_t dims[kMaxRank], offsets[2];
  size_t rank = 0, offset_count = 0;
  while (r.NextMember(&key)) {
    std::string field_error;
    bool* seen = key == "dtype"          ? &have_dtype
                 : key == "shape"        ? &have_shape
                 : key == "data_offsets" ? &have_offsets
                                         : nullptr;
    if (seen == nullptr) {  // serde ignores unknown fields; so do we
      if (!r.Skip()) return false;
      continue;
    }
    if (*seen) {
      *error = fmt::format("{}: {} given twice", who(), key);
      return false;
    }
    *seen = true;
    if (key == "dtype") {
      if (r.Peek() != JsonReader::Type::kString) {
        *error = who() + ": dtype is not a string";
        return false;
      }
      if (!r.ReadString(&t->dtype)) return false;
    } else if (r.Peek() != JsonReader::Type::kArray) {
      *error = fmt::format("{}: {} is not an array", who(), key);
      return false;
    } else if (!(key == "shape" ? ReadUintArray(r, dims, kMaxRank, &rank, &field_error)
                                : ReadUintArray(r, offsets, 2, &offset_count, &field_error))) {
      if (!field_error.empty()) *error = fmt::format("{}: {} {}", who(), key, field_error);
      return false;
    }
  }
  if (r.failed()) return false;
  for (auto [have, name] :
       {std::pair{have_dtype, "dtype"}, {have_shape, "shape"}, {have_offsets, "data_offsets"}}) {
    if (!have) {
      *error = fmt::format("{}: missing {}", who(), name);
      return false;
    }
  }
  if (offset_count != 2) {
    *error = fmt::format("{}: data_offsets has {} entries, not 2", who(), offset_count);
    return false;
  }
  t->shape.assign(dims, dims + rank);
  t->data_begin = offsets[0];
  t->data_end = offsets[1];
  return true;
}

bool ReadMetadata(JsonReader& r, std::map<std::string, std::string>* out, std::string* error) {
  if (r.Peek() == JsonReader::Type::kNull) return r.ReadNull();  // Option<HashMap>: None
  if (r.Peek() != JsonReader::Type::kObject) {
    *error = "__metadata__ is not a JSON object";
    return false;
  }
  if (!r.BeginObject()) return false;
  std::string key, value;
  while (r.NextMember(&key)) {
    if (r.Peek() != JsonReader::Type::kString) {
      *error = fmt::format("__metadata__ value {} is not a string", QuoteForMessage(key));
      return false;
    }
    if (!r.ReadString(&value)) return false;
    (*out)[key] = value;
  }
  return !r.failed();
}

// Element count, byte span and dtype checks of one tensor; "" when it is sound.
std::string CheckTensor(SafetensorsTensor* t, size_t dtype_index, uint64_t data_bytes) {
  auto who = [&]() { return "tensor " + QuoteForMessage(t->name); };
  const int bits = dtype_index < kDtypeCount ? kDtypes[dtype_index].bits : 0;
  if (bits == 0) {
    return fmt::format("{}: dtype {} is not a safetensors dtype", who(),
                       QuoteForMessage(t->dtype, 20));
  }
  // A zero dimension makes an empty tensor whatever the other dimensions are.
  uint64_t elements = 1;
  const bool empty = std::find(t->shape.begin(), t->shape.end(), 0) != t->shape.end();
  for (uint64_t d : t->shape) {
    if (empty) {
      elements = 0;
      break;
    }
    if (__builtin_mul_overflow(elements, d, &elements)) {
      return fmt::format("{}: shape {} overflows 64 bits", who(), ShapeText(t->shape));
    }
  }
  t->elements = elements;
  uint64_t bit_count = 0;
  if (__builtin_mul_overflow(elements, static_cast<uint64_t>(bits), &bit_count)) {
    return fmt::format("{}: shape {} overflows 64 bits", who(), ShapeText(t->shape));
  }
  if (bit_count % 8 != 0) {
    return fmt::format("{}: shape {} of {} is not a whole number of bytes", who(),
                       ShapeText(t->shape), t->dtype);
  }
  if (t->data_end < t->data_begin) {
    return fmt::format("{}: data_offsets [{}, {}] end before they begin", who(), t->data_begin,
                       t->data_end);
  }
  if (t->data_end > data_bytes) {
    return fmt::format("{}: data_offsets [{}, {}] reach past the data ({} bytes after the header)",
                       who(), t->data_begin, t->data_end, data_bytes);
  }
  const uint64_t span = t->data_end - t->data_begin;
  if (span != bit_count / 8) {
    return fmt::format("{}: shape {} of {} is {} bytes but data_offsets [{}, {}] span {}", who(),
                       ShapeText(t->shape), t->dtype, bit_count / 8, t->data_begin, t->data_end,
                       span);
  }
  return "";
}

// A tensor name with the file (shard) it came from, hashed: sorting (hash, name) pairs
// measured 3x faster than an unordered_set for the 15,000 names of a 30-shard checkpoint.
struct NameRef {
  size_t hash;
  std::string_view name;
  size_t file;
};

// Sorts `refs`; returns a pair of equal names (the later file second), or nullopt.
std::optional<std::pair<NameRef, NameRef>> FindDuplicate(std::vector<NameRef>* refs) {
  std::sort(refs->begin(), refs->end(), [](const NameRef& a, const NameRef& b) {
    return a.hash != b.hash ? a.hash < b.hash : a.name < b.name;
  });
  for (size_t i = 1; i < refs->size(); ++i) {
    const NameRef& a = (*refs)[i - 1];
    const NameRef& b = (*refs)[i];
    if (a.hash == b.hash && a.name == b.name) {
      return a.file <= b.file ? std::pair(a, b) : std::pair(b, a);
    }
  }
  return std::nullopt;
}

// Offsets must tile [0, data_bytes): sorted by (begin, end), each begins where the last ended.
std::string CheckLayout(const std::vector<SafetensorsTensor>& tensors, uint64_t data_bytes) {
  std::vector<const SafetensorsTensor*> order;
  order.reserve(tensors.size());
  for (const auto& t : tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return std::pair(a->data_begin, a->data_end) < std::pair(b->data_begin, b->data_end);
  });
  uint64_t expected = 0;
  const SafetensorsTensor* previous = nullptr;
  for (const auto* t : order) {
    if (t->data_begin < expected) {
      return fmt::format("tensors {} and {} overlap (data_offsets [{}, {}] and [{}, {}])",
                         QuoteForMessage(previous->name), QuoteForMessage(t->name),
                         previous->data_begin, previous->data_end, t->data_begin, t->data_end);
    }
    if (t->data_begin > expected) {
      return fmt::format("no tensor covers data bytes [{}, {}) before tensor {}", expected,
                         t->data_begin, QuoteForMessage(t->name));
    }
    expected = t->data_end;
    previous = t;
  }
  if (expected != data_bytes) {
    return fmt::format(
        "tensors end at byte {} of the data but the file holds {} bytes after "
        "the header",
        expected, data_bytes);
  }
  // Names: JSON allows a key twice; the reference keeps one tensor, a sum would count two.
  std::vector<NameRef> names;
  names.reserve(tensors.size());
  for (const auto& t : tensors) names.push_back({std::hash<std::string_view>{}(t.name), t.name, 0});
  if (const auto dup = FindDuplicate(&names)) {
    return fmt::format("tensor {} appears twice", QuoteForMessage(dup->first.name));
  }
  return "";
}

// Reads exactly `size` bytes at `offset`; false with errno set, or errno 0 at end of file.
bool PreadExact(int fd, char* out, size_t size, uint64_t offset) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, out + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = 0;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

// Closes the descriptor on every return path.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

int SafetensorsDtypeBits(std::string_view dtype) {
  const size_t i = DtypeIndex(dtype);
  return i < kDtypeCount ? kDtypes[i].bits : 0;
}

Result<uint64_t> ParseSafetensorsLength(std::string_view first_bytes, uint64_t file_bytes) {
  if (file_bytes == 0) return Error{Msg("file is empty")};
  if (file_bytes < 8 || first_bytes.size() < 8) {
    return Error{Msg("file is {} bytes, shorter than the 8-byte header length", file_bytes)};
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(first_bytes[i]);
  if (n > file_bytes - 8) {
    return Error{Msg("header length {} is larger than the file ({} bytes)", n, file_bytes)};
  }
  if (n > kMaxSafetensorsHeaderBytes) {
    return Error{Msg("header length {} is over the format's limit of {} bytes", n,
                     kMaxSafetensorsHeaderBytes)};
  }
  return n;
}

Result<SafetensorsHeader> ParseSafetensorsHeader(std::string_view header_json,
                                                 uint64_t data_bytes) {
  SafetensorsHeader h;
  // An entry is ~100-150 bytes (reserving short made the vector grow and copy once per
  // header); the cap keeps a header of blanks from reserving much.
  h.tensors.reserve(std::min<size_t>(header_json.size() / 96, 1 << 16));
  JsonReader r(header_json);
  std::string error;
  auto not_json = [&]() { return Error{Msg("header is not JSON: {}", r.error())}; };
  if (r.Peek() != JsonReader::Type::kObject) {
    if (!r.Skip() || !r.Finish()) return not_json();
    return Error{Msg("header is not a JSON object")};
  }
  r.BeginObject();
  std::string key;
  while (r.NextMember(&key)) {
    bool ok = false;
    if (key == "__metadata__") {
      ok = ReadMetadata(r, &h.metadata, &error);
    } else {
      SafetensorsTensor& t = h.tensors.emplace_back();
      t.name = std::move(key);
      ok = ReadTensor(r, &t, &error);
    }
    if (!ok) return r.failed() ? not_json() : Error{error};
  }
  if (r.failed() || !r.Finish()) return not_json();
  // Per-dtype sums in an array first: a map update per tensor was 5 % of the parse.
  uint64_t per_dtype[kDtypeCount] = {};
  for (auto& t : h.tensors) {
    const size_t dtype = DtypeIndex(t.dtype);
    error = CheckTensor(&t, dtype, data_bytes);
    if (!error.empty()) return Error{error};
    h.total_elements += t.elements;  // <= 2 x data_bytes (F4), far below 2^64
    per_dtype[dtype] += t.elements;
    h.data_bytes += t.data_end - t.data_begin;
  }
  for (size_t i = 0; i < kDtypeCount; ++i) {
    if (per_dtype[i] > 0) h.dtype_elements[std::string(kDtypes[i].name)] = per_dtype[i];
  }
  error = CheckLayout(h.tensors, data_bytes);
  if (!error.empty()) return Error{error};
  return h;
}

Result<SafetensorsHeader> ReadSafetensorsHeader(const std::filesystem::path& path) {
  const std::string name = path.string();
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
  FdCloser fd{::open(name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (fd.fd < 0) return ErrnoError(name + ": open");
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) return ErrnoError(name + ": fstat");
  if (!S_ISREG(st.st_mode)) return Error{Msg("{}: not a regular file", name)};
  const uint64_t file_bytes = static_cast<uint64_t>(st.st_size);
  char first[8] = {};
  const size_t first_size = file_bytes < 8 ? static_cast<size_t>(file_bytes) : 8;
  if (!PreadExact(fd.fd, first, first_size, 0)) {
    if (errno != 0) return ErrnoError(name + ": read");
    return Error{Msg("{}: file is shorter than its size", name)};
  }
  Result<uint64_t> n = ParseSafetensorsLength(std::string_view(first, first_size), file_bytes);
  if (!n) return InContext(name, n.error());
  std::string header(*n, '\0');
  if (!PreadExact(fd.fd, header.data(), header.size(), 8)) {
    if (errno != 0) return ErrnoError(name + ": read");
    return Error{Msg("{}: header is truncated (the file shrank while read)", name)};
  }
  Result<SafetensorsHeader> h = ParseSafetensorsHeader(header, file_bytes - 8 - *n);
  if (!h) return InContext(name, h.error());
  return h;
}

Result<std::vector<std::string>> ParseSafetensorsIndex(std::string_view index_json) {
  JsonReader r(index_json);
  auto not_json = [&]() { return Error{Msg("not JSON: {}", r.error())}; };
  if (r.Peek() != JsonReader::Type::kObject) {
    if (!r.Skip() || !r.Finish()) return not_json();
    return Error{Msg("not a JSON object")};
  }
  r.BeginObject();
  std::set<std::string> shards;
  bool have_map = false;
  std::string key, file;
  while (r.NextMember(&key)) {
    if (key != "weight_map") {
      if (!r.Skip()) return not_json();
      continue;
    }
    if (r.Peek() != JsonReader::Type::kObject) return Error{Msg("weight_map is not a JSON object")};
    have_map = true;
    r.BeginObject();
    std::string last;
    while (r.NextMember(&key)) {
      if (r.Peek() != JsonReader::Type::kString) {
        return Error{Msg("weight_map entry {} is not a file name", QuoteForMessage(key))};
      }
      if (!r.ReadString(&file)) break;
      // Neighbouring tensors mostly share a shard: skip the set lookup for a repeat.
      if (shards.empty() || file != last) {
        shards.insert(file);
        last = file;
      }
    }
    if (r.failed()) return not_json();
  }
  if (r.failed() || !r.Finish()) return not_json();
  if (!have_map) return Error{Msg("missing key weight_map")};
  if (shards.empty()) return Error{Msg("weight_map names no shard file")};
  for (const std::string& s : shards) {
    const std::string quoted = QuoteForMessage(s);
    if (s.empty()) return Error{Msg("weight_map names an empty shard path")};
    if (s.find('\0') != std::string::npos)
      return Error{Msg("shard path {} holds a NUL byte", quoted)};
    if (s.front() == '/') return Error{Msg("shard path {} is absolute", quoted)};
    for (const auto& part : std::filesystem::path(s)) {
      if (part == "..") return Error{Msg("shard path {} leaves the model folder", quoted)};
    }
  }
  return std::vector<std::string>(shards.begin(), shards.end());
}

Result<SafetensorsCheckpoint> ReadSafetensorsCheckpoint(const std::filesystem::path& dir) {
  SafetensorsCheckpoint c;
  std::error_code ec;
  const auto index = dir / "model.safetensors.index.json";
  const auto single = dir / "model.safetensors";
  if (std::filesystem::exists(index, ec)) {
    Result<FileText> text = ReadJsonFileText(index, kMaxIndexBytes);
    if (!text) return text.error();
    Result<std::vector<std::string>> shards = ParseSafetensorsIndex(text->text());
    if (!shards) return InContext(index.string(), shards.error());
    for (const std::string& s : *shards) c.files.push_back(dir / s);
  } else if (std::filesystem::exists(single, ec)) {
    c.files.push_back(single);
  } else {
    // No index and no model.safetensors: e.g. Mistral's consolidated.safetensors.
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".safetensors") c.files.push_back(entry.path());
    }
    if (ec) return Error{Msg("{}: list folder: {}", dir.string(), ec.message()), ec.value()};
    std::sort(c.files.begin(), c.files.end());
  }
  // Only the names outlive each header: keeping whole headers touched 2 MB more of fresh
  // memory for a 30-shard checkpoint, and page faults are what a first read pays for most.
  std::vector<std::string> names;
  std::vector<size_t> name_files;
  for (size_t i = 0; i < c.files.size(); ++i) {
    Result<SafetensorsHeader> h = ReadSafetensorsHeader(c.files[i]);
    if (!h) return h.error();
    c.total_elements += h->total_elements;
    c.data_bytes += h->data_bytes;
    for (const auto& [dtype, n] : h->dtype_elements) c.dtype_elements[dtype] += n;
    for (auto& t : h->tensors) {
      names.push_back(std::move(t.name));
      name_files.push_back(i);
    }
  }
  // A tensor in two shards would be counted twice.
  std::vector<NameRef> refs;
  refs.reserve(names.size());
  for (size_t k = 0; k < names.size(); ++k) {
    refs.push_back({std::hash<std::string_view>{}(names[k]), names[k], name_files[k]});
  }
  if (const auto dup = FindDuplicate(&refs)) {
    return Error{Msg("{}: tensor {} is also in another shard", c.files[dup->second.file].string(),
                     QuoteForMessage(dup->second.name))};
  }
  return c;
}

}  // namespace headroom
