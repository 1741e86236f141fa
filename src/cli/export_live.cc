#include "cli/export_live.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <utility>

#include "cli/cli.h"
#include "cli/i18n.h"
#include "cli/message_text.h"

namespace headroom {

void AddLiveNodeFlag(CLI::App& app, std::vector<std::string>& nodes) {
  app.add_option("--node", nodes,
                 Tr("another machine's headroom export, http://HOST:PORT (repeatable): a column "
                    "of its own on the live page at /"));
}

LiveNodesThread::LiveNodesThread(const std::vector<std::string>& urls,
                                 std::chrono::microseconds interval) {
  if (urls.empty()) return;
  if (urls.size() > LiveNodes::kMaxNodes)
    throw UsageError{TrFormat("--node: at most {} nodes", LiveNodes::kMaxNodes)};
  std::vector<NodeUrl> parsed;
  for (const auto& text : urls) {
    auto url = ParseLiveNodeUrl(text);
    if (!url) throw UsageError{"--node: " + TranslatedText(url.error().what)};
    parsed.push_back(std::move(*url));
  }
  // Every interval, but not more than once a second: the page polls at most that often.
  const auto period = std::max(std::chrono::duration_cast<std::chrono::milliseconds>(interval),
                               std::chrono::milliseconds(1000));
  nodes_ = std::make_unique<LiveNodes>(std::move(parsed), period);
}

void LiveNodesThread::Start() {
  if (nodes_ && !thread_.joinable()) thread_ = std::thread([this] { nodes_->Run(); });
}

LiveNodesThread::~LiveNodesThread() {
  if (!thread_.joinable()) return;
  nodes_->Stop();
  thread_.join();
}

}  // namespace headroom
