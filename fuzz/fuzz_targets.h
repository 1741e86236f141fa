// The bodies of the model/ fuzz targets, shared by the libFuzzer entry points in fuzz/*.cc
// and by tests/fuzz_corpus_test.cc, which replays fuzz/corpus/ through them in every build
// (g++ included), so CI runs the seeds without clang. Each body returns false when an
// invariant breaks; the fuzzers trap on that, the test fails. Crashes, UB and leaks are
// the sanitizers' to find.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/json_reader.h"
#include "model/hf_config.h"
#include "model/model_spec.h"
#include "model/safetensors.h"
#include "samples/samples_csv.h"

namespace headroom::fuzz {

// An error message must be one line that starts with the given prefix.
inline bool OneLine(const Error& e, std::string_view prefix) {
  const std::string text = EnglishText(e.what);
  return !text.empty() && text.find('\n') == std::string::npos && text.starts_with(prefix);
}

// A SAX handler that accepts everything and keeps the id of the error nlohmann stops on.
struct NlohmannVerdict {
  using json = nlohmann::json;
  int error_id = 0;
  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(json::number_integer_t) { return true; }
  bool number_unsigned(json::number_unsigned_t) { return true; }
  bool number_float(json::number_float_t, const json::string_t&) { return true; }
  bool string(json::string_t&) { return true; }
  bool binary(json::binary_t&) { return true; }
  bool start_object(std::size_t) { return true; }
  bool key(json::string_t&) { return true; }
  bool end_object() { return true; }
  bool start_array(std::size_t) { return true; }
  bool end_array() { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    error_id = e.id;
    return false;
  }
};

// Whether JsonReader's verdict on `ours` matches nlohmann's on `theirs`.
inline bool SameVerdict(std::string_view ours, std::string_view theirs) {
  JsonReader r(ours);
  const bool accepted = r.Skip() && r.Finish();
  if (accepted != r.error().empty()) return false;
  if (r.depth_exceeded()) return true;
  NlohmannVerdict verdict;
  const bool nlohmann_accepted = nlohmann::json::sax_parse(theirs, &verdict);
  if (accepted && !nlohmann_accepted && verdict.error_id == 406) return true;
  return accepted == nlohmann_accepted;
}

// JsonReader accepts exactly the texts nlohmann::json accepts, with four known differences:
// our depth cap; a leading byte-order mark (nlohmann skips it; Python's json and serde, the
// real consumers, refuse it, and so do we); numbers past the range of a double (nlohmann
// error 406; the grammar allows them and we never convert them to double); and a NUL byte,
// where nlohmann's lexer stops as at the end of the input (found by this fuzzer: "80 \0").
inline bool JsonReaderAgrees(std::string_view text) {
  const size_t nul = text.find('\0');
  if (nul == std::string_view::npos && !text.starts_with("\xEF\xBB\xBF")) {
    return SameVerdict(text, text);
  }
  JsonReader r(text);
  if (r.Skip() && r.Finish()) return false;  // neither a BOM nor a NUL is valid JSON
  if (text.starts_with("\xEF\xBB\xBF") || nul == std::string_view::npos) return true;
  return SameVerdict(text.substr(0, nul), text);
}

inline bool HfConfigHolds(std::string_view text) {
  Result<ModelSpec> spec = ParseHfConfig(text, "fuzz");
  if (!spec.ok()) return OneLine(spec.error(), "fuzz: ");
  ModelSpec s = *spec;
  // A spec that came out valid stays valid and unchanged under a second validation.
  if (!CompleteAndValidate(&s).empty()) return false;
  if (s.head_dim != spec->head_dim || s.num_kv_heads != spec->num_kv_heads) return false;
  if (s.hidden_size <= 0 || s.num_layers <= 0 || s.num_heads <= 0 || s.vocab_size <= 0)
    return false;
  (void)ArchitectureParams(s);  // for UBSan: no signed overflow on any accepted spec
  (void)ActiveParams(s);
  (void)LinearParams(s);
  return true;
}

// The input as a whole safetensors file, then as a bare header, then as an index.
inline bool SafetensorsHolds(std::string_view data) {
  auto header_holds = [](const Result<SafetensorsHeader>& h, uint64_t data_bytes) {
    if (!h.ok()) return OneLine(h.error(), "");
    uint64_t elements = 0, bytes = 0;
    for (const auto& t : h->tensors) {
      const int bits = SafetensorsDtypeBits(t.dtype);
      if (bits == 0 || t.data_end < t.data_begin || t.data_end > data_bytes) return false;
      if ((t.data_end - t.data_begin) * 8 != t.elements * static_cast<uint64_t>(bits)) return false;
      elements += t.elements;
      bytes += t.data_end - t.data_begin;
    }
    return elements == h->total_elements && bytes == h->data_bytes && bytes == data_bytes;
  };
  Result<uint64_t> n = ParseSafetensorsLength(data.substr(0, 8), data.size());
  if (!n.ok()) {
    if (!OneLine(n.error(), "")) return false;
  } else if (!header_holds(ParseSafetensorsHeader(data.substr(8, *n), data.size() - 8 - *n),
                           data.size() - 8 - *n)) {
    return false;
  }
  if (!header_holds(ParseSafetensorsHeader(data, data.size()), data.size())) return false;
  Result<std::vector<std::string>> shards = ParseSafetensorsIndex(data);
  if (!shards.ok()) return OneLine(shards.error(), "");
  for (const std::string& s : *shards) {
    if (s.empty() || s.front() == '/' || s.find('\0') != std::string::npos) return false;
    if (s == ".." || s.starts_with("../") || s.find("/../") != std::string::npos ||
        s.ends_with("/..")) {
      return false;
    }
  }
  return true;
}

// The samples reader (samples/samples_csv.h): an error is one line; a parsed series keeps its
// shape (every sample has one value per extra column); and writing a parsed sample back and
// parsing that row again gives the same row (the first read normalises, the second is exact).
inline bool SamplesCsvHolds(std::string_view text) {
  Result<SampleSeries> series = ParseSamplesCsv(text);
  if (!series.ok()) return OneLine(series.error(), "samples: ");
  SamplesHeader header;
  for (const auto& c : series->extra_columns) {
    // Names a hand-made file may hold but our writer would never produce.
    if (c.name.empty() || c.name.find_first_of(",\"\r#") != std::string::npos) return true;
    for (const auto& f : kSampleColumns) {
      if (f.name == c.name) return false;  // a fixed column taken for an extra one
    }
    header.extra_columns.push_back(c);
  }
  const size_t extra = series->extra_columns.size();
  for (const Sample& s : series->samples) {
    if (s.extra.size() != extra) return false;
    const std::string row = FormatSampleRow(s, extra);
    Result<SampleSeries> again = ParseSamplesCsv(FormatSamplesHeader(header) + row);
    if (!again.ok()) return false;
    if (again->samples.empty()) continue;  // a timestamp out of the 4-digit-year range
    if (again->samples.size() != 1 || FormatSampleRow(again->samples[0], extra) != row)
      return false;
  }
  return true;
}

}  // namespace headroom::fuzz
