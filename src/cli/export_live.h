// `headroom export --node URL`: the other machines whose live page data the page at / shows
// beside this one's, one column each (export/live.h LiveNodes), fetched on a thread of their
// own that this object starts and stops.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "export/live.h"

namespace CLI {
class App;
}

namespace headroom {

void AddLiveNodeFlag(CLI::App& app, std::vector<std::string>& nodes);

class LiveNodesThread {
 public:
  // Usage errors (UsageError): a URL ParseNodeUrl refuses, more than LiveNodes::kMaxNodes.
  LiveNodesThread(const std::vector<std::string>& urls, std::chrono::microseconds interval);
  ~LiveNodesThread();
  LiveNodesThread(const LiveNodesThread&) = delete;
  LiveNodesThread& operator=(const LiveNodesThread&) = delete;
  // Starts the fetching thread: after the stop signals are blocked (export/http.h
  // OpenStopSignalFd), so that the thread inherits the mask.
  void Start();
  // nullptr without --node.
  const LiveNodes* nodes() const { return nodes_.get(); }

 private:
  std::unique_ptr<LiveNodes> nodes_;
  std::thread thread_;
};

}  // namespace headroom
