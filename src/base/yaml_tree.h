// A YAML (or JSON) document read into a small tree, for the run configuration files that
// `plan --from` takes from outside (docs/plan.md "Plan from the run's config").
//
// yaml-cpp (Debian's libyaml-cpp-dev) does the parsing; its event interface is used rather
// than YAML::Load, because yaml-cpp 0.7 has no limit on alias expansion that a caller can set:
// a "billion laughs" file is a few hundred bytes whose aliases, walked as a tree, are 10^9
// nodes. Here the tree is built from the events with three bounds, checked as it grows: at most
// `max_nodes` nodes and `max_bytes` bytes of text (aliases are copied, and each copy counts) and
// at most `max_depth` levels of nesting. A file past one is an error naming its line, in bounded
// time and memory.
// yaml-cpp parses JSON too (JSON is YAML 1.2's flow style), so a JSON file comes here as well.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace headroom {

struct YamlMember;

struct YamlNode {
  enum class Kind { kNull, kScalar, kSequence, kMap };
  Kind kind = Kind::kNull;
  std::string scalar;           // kScalar: the text as written, quotes removed
  bool quoted = false;          // kScalar: written in quotes (so text, never a number or a bool)
  int line = 0;                 // 1-based line where the node starts
  std::vector<YamlNode> items;  // kSequence
  std::vector<YamlMember> members;  // kMap, in the file's order

  // The member `key` of a map; nullptr when absent or when this is no map.
  const YamlNode* Find(std::string_view key) const;
  bool IsNull() const;  // null, "~", "null" (plain), or an empty plain scalar
};

// A map's member. Its own type, not a std::pair: a pair needs YamlNode complete where
// YamlNode's members are declared (clang refuses it).
struct YamlMember {
  std::string key;
  YamlNode value;
};

struct YamlLimits {
  size_t max_nodes = 100'000;          // real run configs have 50-300
  size_t max_bytes = size_t{4} << 20;  // scalars' and keys' text; real ones have a few KiB
  int max_depth = 32;                  // real ones nest 3-4 levels
};

// The first document of `text`. Errors name the line: "line 3: ...", a key given twice, a key
// that is not a scalar, nesting past max_depth, more than max_nodes nodes or max_bytes bytes of
// text once aliases are expanded, an empty document.
Result<YamlNode> ParseYaml(std::string_view text, const YamlLimits& limits = {});

// A node's kind for messages, as a message value (translated where it is shown): "a mapping",
// "a sequence", "a scalar", "null".
Message KindName(YamlNode::Kind kind);

}  // namespace headroom
