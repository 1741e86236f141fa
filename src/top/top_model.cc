#include "top/top_model.h"

#include <algorithm>
#include <tuple>

namespace headroom {

std::string_view SortOrderName(SortOrder order) {
  switch (order) {
    case SortOrder::kMemory:
      return "mem";
    case SortOrder::kPid:
      return "pid";
    case SortOrder::kName:
      return "name";
  }
  return "mem";
}

std::optional<SortOrder> ParseSortOrder(std::string_view text) {
  for (SortOrder o : {SortOrder::kMemory, SortOrder::kPid, SortOrder::kName}) {
    if (text == SortOrderName(o)) return o;
  }
  return std::nullopt;
}

SortOrder NextSortOrder(SortOrder order) {
  switch (order) {
    case SortOrder::kMemory:
      return SortOrder::kPid;
    case SortOrder::kPid:
      return SortOrder::kName;
    case SortOrder::kName:
      return SortOrder::kMemory;
  }
  return SortOrder::kMemory;
}

HolderRow MakeHolderRow(const PoolHolder& h, const HolderCap& cap) {
  HolderRow row;
  row.pid = h.facts.pid;
  row.user = h.user;
  row.kind = std::string(HolderKindName(h.kind));
  row.in_proc = h.in_proc;
  if (h.in_proc) row.command = DisplayCommand(h.facts);
  row.rss_bytes = h.facts.rss_bytes;
  row.pss_bytes = h.facts.pss_bytes;
  row.gpu_bytes = h.gpu_bytes;
  row.part_of = h.part_of;
  // A part (a server's worker) has no cap of its own: its holder's counts (as in `ps`).
  if (!h.part_of) {
    row.cap_fraction = cap.pool_fraction;
    row.cap_bytes = cap.cap_bytes;
    row.cap_source = cap.source;
    row.fixed_after_load = cap.fixed_after_load;
  }
  return row;
}

// NVML first: on GB10 a CUDA allocation lowers MemAvailable but appears in no process's
// RSS or PSS (docs/architecture.md), so the GPU figure is the one that says who holds the pool.
uint64_t HolderMemoryBytes(const HolderRow& row) {
  if (row.gpu_bytes) return *row.gpu_bytes;
  if (row.pss_bytes) return *row.pss_bytes;
  return row.rss_bytes.value_or(0);
}

// stable_sort with pid as the last key: rows with the same memory (or kind) keep one order
// from refresh to refresh, so the table does not shuffle under the reader's eyes.
void SortHolders(std::vector<HolderRow>& rows, SortOrder order) {
  switch (order) {
    case SortOrder::kMemory:
      std::stable_sort(rows.begin(), rows.end(), [](const HolderRow& a, const HolderRow& b) {
        const uint64_t ma = HolderMemoryBytes(a), mb = HolderMemoryBytes(b);
        return ma != mb ? ma > mb : a.pid < b.pid;
      });
      break;
    case SortOrder::kPid:
      std::stable_sort(rows.begin(), rows.end(),
                       [](const HolderRow& a, const HolderRow& b) { return a.pid < b.pid; });
      break;
    case SortOrder::kName:
      std::stable_sort(rows.begin(), rows.end(), [](const HolderRow& a, const HolderRow& b) {
        return std::tie(a.kind, a.command, a.pid) < std::tie(b.kind, b.command, b.pid);
      });
      break;
  }
}

void EventLog::Add(TopEvent event) {
  events_.push_back(std::move(event));
  ++total_;
  while (events_.size() > capacity_) events_.pop_front();
}

}  // namespace headroom
