// Implementation notes: a yaml-cpp EventHandler builds the tree on a stack of open containers.
// Every node, an alias's copy included, is counted against YamlLimits::max_nodes before it is
// made, its text (scalars and keys) against max_bytes, and every container opened against
// max_depth, so a hostile file stops at the first node past a bound: an alias bomb's cost is
// the budget, not its expansion. Counting nodes alone is not enough: one alias to a 600,000-byte
// scalar is one node, and 4,000 of them were 2.4 GB (docs/plan.md "Plan from the run's
// config"). A node kept for its anchor is a second copy, so it is charged again. yaml-cpp's own
// depth guard (2,000 levels, yaml-cpp/depthguard.h) is far above ours and never reached.
// A map's keys are also kept in a hash set while it is open, so the check for a key given twice
// is linear in the map's size (a scan of the members was quadratic: docs/plan.md, "Bad files").
// Failures inside the handler are thrown as Stop and caught in ParseYaml, with yaml-cpp's own
// exceptions; none leaves this file.
#include "base/yaml_tree.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include <map>
#include <sstream>
#include <unordered_set>

namespace headroom {
namespace {

struct Stop {
  Message message;
};

class TreeBuilder final : public YAML::EventHandler {
 public:
  explicit TreeBuilder(const YamlLimits& limits) : limits_(limits) {}

  bool done() const { return done_; }
  YamlNode& root() { return root_; }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    YamlNode node;
    node.line = mark.line + 1;
    Complete(std::move(node), anchor, {1, 0});
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const auto it = anchors_.find(anchor);
    if (it == anchors_.end()) throw Stop{Msg("line {}: an alias to no anchor", mark.line + 1)};
    Charge(it->second.cost, mark.line + 1);
    YamlNode copy = it->second.node;
    Complete(std::move(copy), 0, {});
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    Charge({1, value.size()}, mark.line + 1);
    YamlNode node;
    node.kind = YamlNode::Kind::kScalar;
    node.scalar = value;
    node.quoted = tag == "!";  // yaml-cpp tags a quoted scalar "!", a plain one "?"
    node.line = mark.line + 1;
    Complete(std::move(node), anchor, {1, value.size()});
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(YamlNode::Kind::kSequence, mark, anchor);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(YamlNode::Kind::kMap, mark, anchor);
  }
  void OnMapEnd() override { Close(); }

 private:
  // What a node costs against the limits: its nodes and the bytes of their text.
  struct Cost {
    size_t nodes = 0;
    size_t bytes = 0;
  };
  struct Frame {
    YamlNode node;
    YAML::anchor_t anchor = 0;
    Cost first;  // used_ when the container opened
    bool have_key = false;
    std::string key;
    std::unordered_set<std::string> keys;  // kMap: the keys so far
  };
  struct Anchored {
    YamlNode node;
    Cost cost;
  };

  void Charge(Cost cost, int line) {
    if (cost.nodes > limits_.max_nodes || used_.nodes > limits_.max_nodes - cost.nodes) {
      throw Stop{Msg("line {}: more than {} YAML nodes (aliases count once per use)", line,
                     limits_.max_nodes)};
    }
    if (cost.bytes > limits_.max_bytes || used_.bytes > limits_.max_bytes - cost.bytes) {
      throw Stop{Msg("line {}: the text expands to more than {} bytes (aliases count once per use)",
                     line, limits_.max_bytes)};
    }
    used_.nodes += cost.nodes;
    used_.bytes += cost.bytes;
  }

  void Open(YamlNode::Kind kind, const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (static_cast<int>(stack_.size()) >= limits_.max_depth) {
      throw Stop{Msg("line {}: nested deeper than {} levels", mark.line + 1, limits_.max_depth)};
    }
    Charge({1, 0}, mark.line + 1);
    Frame frame;
    frame.node.kind = kind;
    frame.node.line = mark.line + 1;
    frame.anchor = anchor;
    frame.first = {used_.nodes - 1, used_.bytes};
    stack_.push_back(std::move(frame));
  }

  void Close() {
    Frame frame = std::move(stack_.back());
    stack_.pop_back();
    if (frame.have_key) {
      throw Stop{Msg("line {}: key '{}' has no value", frame.node.line, frame.key)};
    }
    const Cost cost{used_.nodes - frame.first.nodes, used_.bytes - frame.first.bytes};
    Complete(std::move(frame.node), frame.anchor, cost);
  }

  // A finished node: kept for its anchor, then placed in the open container (or as the root).
  // `cost`: what the node took from the limits, charged again when it is kept for an anchor.
  void Complete(YamlNode node, YAML::anchor_t anchor, Cost cost) {
    if (anchor != 0) {
      Charge(cost, node.line);
      anchors_[anchor] = {node, cost};
    }
    if (stack_.empty()) {
      if (!done_) root_ = std::move(node);
      done_ = true;
      return;
    }
    Frame& top = stack_.back();
    if (top.node.kind == YamlNode::Kind::kSequence) {
      top.node.items.push_back(std::move(node));
      return;
    }
    if (!top.have_key) {
      if (node.kind != YamlNode::Kind::kScalar) {
        throw Stop{
            Msg("line {}: a key that is {}, not a plain name", node.line, KindName(node.kind))};
      }
      top.key = std::move(node.scalar);
      top.have_key = true;
      return;
    }
    if (!top.keys.insert(top.key).second) {
      throw Stop{Msg("line {}: key '{}' given twice", node.line, top.key)};
    }
    top.node.members.push_back(YamlMember{std::move(top.key), std::move(node)});
    top.key.clear();
    top.have_key = false;
  }

  const YamlLimits& limits_;
  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, Anchored> anchors_;
  Cost used_;
  YamlNode root_;
  bool done_ = false;
};

}  // namespace

const YamlNode* YamlNode::Find(std::string_view key) const {
  for (const auto& [k, v] : members) {
    if (k == key) return &v;
  }
  return nullptr;
}

bool YamlNode::IsNull() const {
  if (kind == Kind::kNull) return true;
  if (kind != Kind::kScalar || quoted) return false;
  return scalar.empty() || scalar == "~" || scalar == "null" || scalar == "Null" ||
         scalar == "NULL";
}

Message KindName(YamlNode::Kind kind) {
  switch (kind) {
    case YamlNode::Kind::kNull:
      return MsgFrom(N_("null"));
    case YamlNode::Kind::kScalar:
      return MsgFrom(N_("a scalar"));
    case YamlNode::Kind::kSequence:
      return MsgFrom(N_("a sequence"));
    case YamlNode::Kind::kMap:
      return MsgFrom(N_("a mapping"));
  }
  return MsgFrom(N_("null"));
}

Result<YamlNode> ParseYaml(std::string_view text, const YamlLimits& limits) {
  std::istringstream in{std::string(text)};
  TreeBuilder builder(limits);
  try {
    YAML::Parser parser(in);
    parser.HandleNextDocument(builder);  // the first document only
  } catch (const Stop& stop) {
    return Error{stop.message};
  } catch (const YAML::Exception& e) {
    // e.msg is yaml-cpp's English reason ("end of map not found"); e.mark its place.
    return Error{Msg("line {}: not YAML: {}", e.mark.line + 1, e.msg)};
  } catch (const std::exception& e) {
    return Error{Msg("not YAML: {}", e.what())};
  }
  if (!builder.done()) return Error{Msg("no YAML document (the file is empty)")};
  return std::move(builder.root());
}

}  // namespace headroom
