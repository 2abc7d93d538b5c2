// Collective metadata for the kernels of an Nsight Systems export from NCCL's own NVTX ranges.
//
// NCCL annotates each API call with a push/pop range in NVTX domain "NCCL", named after the
// function ("ncclAllReduce", "ncclGroupEnd", ...); since 2.19 with a payload that nsys renders as
// JSON: "NCCL communicator ID" and "Message size [bytes]" on collectives (count x type size; the
// per-rank part for all-gather and reduce-scatter), "No. of ranks" on communicator creation.
// A collective called alone launches its kernel inside its own range; inside
// ncclGroupStart/ncclGroupEnd the kernel is launched by the outermost ncclGroupEnd. Kineto traces
// get the same facts from PyTorch's "Collective name", "In/Out msg nelems", "Group size" and
// "Process Group Name" kernel args, so they land in the same columns, in PyTorch's vocabulary
// (docs/RULES.md, "Communication").
#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

#include "analyzer/import/nsys/sqlite_read.h"

namespace tg::internal {

namespace {

// How a collective's message relates to NCCL's "Message size [bytes]" (m) with n ranks:
// PyTorch's In / Out msg nelems are m / m, m / m x n (all-gather), m x n / m (reduce-scatter).
enum class Shape : uint8_t { kSame, kGather, kScatter };

struct NcclApi {
  std::string_view function;    // the range's name
  std::string_view collective;  // PyTorch's "Collective name" for it
  Shape shape;
};
constexpr NcclApi kNcclApis[] = {
    {"ncclAllReduce", "allreduce", Shape::kSame},          {"ncclAllGather", "allgather", Shape::kGather},
    {"ncclReduceScatter", "reduce_scatter", Shape::kScatter}, {"ncclBroadcast", "broadcast", Shape::kSame},
    {"ncclBcast", "broadcast", Shape::kSame},              {"ncclReduce", "reduce", Shape::kSame},
    {"ncclSend", "send", Shape::kSame},                    {"ncclRecv", "recv", Shape::kSame},
    {"ncclAlltoAll", "all_to_all", Shape::kSame},
};

const NcclApi* FindApi(std::string_view function) {
  for (const NcclApi& a : kNcclApis)
    if (a.function == function) return &a;
  return nullptr;
}

// A payload's non-negative integer `key`, wherever it sits in the rendered JSON: as a member
// ({"Message size [bytes]": 4096}) or as a named entry ({"name": ..., "value": 4096}).
std::optional<uint64_t> PayloadNumber(const nlohmann::json& j, std::string_view key) {
  auto number = [](const nlohmann::json& v) -> std::optional<uint64_t> {
    if (v.is_number_unsigned()) return v.get<uint64_t>();
    if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
    if (v.is_string()) {
      const std::string& s = v.get_ref<const std::string&>();
      uint64_t out = 0;
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
      if (ec == std::errc() && end == s.data() + s.size() && !s.empty()) return out;
    }
    return std::nullopt;
  };
  if (j.is_object()) {
    if (auto it = j.find(key); it != j.end())
      if (auto v = number(*it)) return v;
    if (auto n = j.find("name"), v = j.find("value"); n != j.end() && v != j.end() && n->is_string() && *n == key)
      if (auto got = number(*v)) return got;
  }
  if (j.is_structured())
    for (const auto& child : j)
      if (auto v = PayloadNumber(child, key)) return v;
  return std::nullopt;
}

// What one launching range says of the kernels it launches.
struct Info {
  const NcclApi* api = nullptr;
  std::optional<uint64_t> bytes, comm;
  int64_t pid = kUnknownId;
};

struct Event {
  enum Kind : uint8_t { kCall, kGroupStart, kGroupEnd } kind;
  TimeNs start, end;
  Info info;
};

struct Window {
  TimeNs start, end;
  Info info;
};

// The calls of one group as one launch: one collective kind, bytes summed (the kernel carries
// them all) when every call has them, the communicator when they share one. Mixed kinds (a
// group of sends and receives) say nothing: the kernel's name classifies it.
std::optional<Info> MergeGroup(const std::vector<Info>& calls) {
  Info out = calls.front();
  for (size_t i = 1; i < calls.size(); ++i) {
    const Info& c = calls[i];
    if (c.api->collective != out.api->collective) return std::nullopt;
    out.bytes = out.bytes && c.bytes ? std::optional<uint64_t>(*out.bytes + *c.bytes) : std::nullopt;
    if (out.comm != c.comm) out.comm.reset();
  }
  return out;
}

// The launching windows of one thread from its NCCL ranges in start order (outer first on ties).
void Windows(std::vector<Event>& events, std::vector<Window>& out) {
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  });
  int depth = 0;
  std::vector<Info> pending;
  TimeNs last_end = 0, last_start = 0;
  for (const Event& e : events) {
    switch (e.kind) {
      case Event::kGroupStart:
        if (depth++ == 0) pending.clear();
        break;
      case Event::kGroupEnd:
        if (depth > 0 && --depth == 0 && !pending.empty())
          if (std::optional<Info> merged = MergeGroup(pending)) out.push_back({e.start, e.end, *merged});
        break;
      case Event::kCall:
        if (depth == 0) {
          out.push_back({e.start, e.end, e.info});
        } else if (pending.empty() || e.start < last_start || e.end > last_end) {
          // A call nested in the previous one (ncclBcast calls ncclBroadcast) is the same call.
          pending.push_back(e.info);
          last_start = e.start;
          last_end = e.end;
        }
        break;
    }
  }
}

std::string PayloadText(const Source& src, const Source::NcclRange& r, internal::Stmt& lookup, bool& prepared,
                        Status& s) {
  if (!r.json.empty() || r.json_id == kUnknownId || !src.Has("StringIds")) return r.json;
  if (!prepared && !(s = lookup.Prepare(src.db, "SELECT value FROM StringIds WHERE id = ?")).ok()) return {};
  prepared = true;
  lookup.Int(1, r.json_id);
  std::string text = lookup.Next(s) ? std::string(lookup.Text(0)) : std::string();
  lookup.Reset();
  return text;
}

// Rewrites one sparse kernel column with the patched rows' values (sorted by row).
template <auto Field, class Column>
void PatchColumn(Column& column, const std::vector<std::pair<size_t, Kernel>>& patches) {
  Column out(Kernel{}.*Field);
  size_t p = 0;
  for (size_t i = 0; i < column.size(); ++i)
    out.push_back(p < patches.size() && patches[p].first == i ? patches[p++].second.*Field : column[i]);
  column = std::move(out);
}

}  // namespace

Status MarkNcclCollectives(Source& src) {
  if (src.nccl_ranges.empty()) return Status::Ok();
  Trace& t = src.trace;
  const RangeTable& ranges = t.ranges;
  std::map<std::pair<int64_t, int64_t>, std::vector<Event>> threads;  // (pid, tid)
  std::map<std::pair<int64_t, uint64_t>, uint64_t> comm_ranks;       // (pid, communicator) -> ranks
  internal::Stmt lookup;
  bool prepared = false;
  Status s;
  for (const Source::NcclRange& nr : src.nccl_ranges) {
    const size_t row = nr.row;
    const std::string_view name = t.Name(ranges.name[row]);
    const std::string text = PayloadText(src, nr, lookup, prepared, s);
    TG_RETURN_IF_ERROR(s);
    // A payload that is not JSON says nothing; the range's name still does.
    const nlohmann::json payload = text.empty() ? nlohmann::json() : nlohmann::json::parse(text, nullptr, false);
    const std::optional<uint64_t> comm = PayloadNumber(payload, "NCCL communicator ID");
    if (std::optional<uint64_t> n = PayloadNumber(payload, "No. of ranks"); n && comm)
      comm_ranks[{ranges.pid[row], *comm}] = *n;
    Event e{Event::kCall, ranges.start[row], ranges.end[row], {}};
    if (name == "ncclGroupStart") {
      e.kind = Event::kGroupStart;
    } else if (name == "ncclGroupEnd") {
      e.kind = Event::kGroupEnd;
    } else if (const NcclApi* api = FindApi(name)) {
      e.info = {api, PayloadNumber(payload, "Message size [bytes]"), comm, ranges.pid[row]};
    } else {
      continue;  // communicator management and the like launch no collective
    }
    threads[{ranges.pid[row], ranges.tid[row]}].push_back(e);
  }

  // Each thread's windows, and its API calls inside them, innermost window first.
  std::map<std::pair<int64_t, int64_t>, Info> by_correlation;  // (pid, correlation)
  std::map<std::pair<int64_t, int64_t>, std::vector<Window>> windows;
  for (auto& [thread, events] : threads) {
    std::vector<Window> w;
    Windows(events, w);
    if (!w.empty()) windows.emplace(thread, std::move(w));
  }
  if (windows.empty()) return Status::Ok();
  const ApiTable& api = t.api_calls;
  std::map<std::pair<int64_t, int64_t>, std::vector<size_t>> calls;
  for (size_t i = 0; i < api.size(); ++i)
    if (api.correlation[i] != kUnknownId)
      if (auto it = windows.find({api.pid[i], api.tid[i]}); it != windows.end()) calls[it->first].push_back(i);
  for (auto& [thread, rows] : calls) {
    std::sort(rows.begin(), rows.end(), [&](size_t a, size_t b) { return api.start[a] < api.start[b]; });
    const std::vector<Window>& w = windows[thread];  // sorted by start, outer first
    std::vector<const Window*> open;                 // NVTX ranges of a thread nest
    size_t next = 0;
    for (size_t i : rows) {
      while (next < w.size() && w[next].start <= api.start[i]) {
        while (!open.empty() && open.back()->end < w[next].start) open.pop_back();
        open.push_back(&w[next++]);
      }
      while (!open.empty() && open.back()->end < api.start[i]) open.pop_back();
      if (!open.empty() && api.end[i] <= open.back()->end)
        by_correlation.emplace(std::pair{api.pid[i], api.correlation[i]}, open.back()->info);
    }
  }
  if (by_correlation.empty()) return Status::Ok();

  KernelTable& k = t.kernels;
  std::vector<std::pair<size_t, Kernel>> patches;
  const StringId bytes_dtype = t.strings.Intern("Byte");  // NCCL counts bytes, not elements
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.collective[i] != StringTable::kEmpty) continue;  // a store keeps what its source said
    auto it = by_correlation.find({k.pid[i], k.correlation[i]});
    if (it == by_correlation.end()) continue;
    const Info& info = it->second;
    Kernel row{};
    row.collective = t.strings.Intern(info.api->collective);
    std::optional<uint64_t> ranks;
    if (info.comm) {
      row.coll_group = t.strings.Intern(std::to_string(*info.comm));
      if (auto r = comm_ranks.find({info.pid, *info.comm}); r != comm_ranks.end()) ranks = r->second;
    }
    if (ranks && *ranks <= INT32_MAX) row.coll_group_size = static_cast<int32_t>(*ranks);
    constexpr uint64_t kMax = INT64_MAX;
    if (info.bytes && *info.bytes <= kMax) {
      const auto m = static_cast<int64_t>(*info.bytes);
      std::optional<int64_t> whole;  // m x ranks, for the side that holds every rank's part
      if (row.coll_group_size > 0 && m <= INT64_MAX / row.coll_group_size) whole = m * row.coll_group_size;
      const Shape shape = info.api->shape;
      if (shape == Shape::kSame || whole) {
        row.coll_dtype = bytes_dtype;
        row.coll_in_nelems = shape == Shape::kScatter ? *whole : m;
        row.coll_out_nelems = shape == Shape::kGather ? *whole : m;
      }
    }
    patches.emplace_back(i, row);
  }
  if (patches.empty()) return Status::Ok();
  PatchColumn<&Kernel::collective>(k.collective, patches);
  PatchColumn<&Kernel::coll_dtype>(k.coll_dtype, patches);
  PatchColumn<&Kernel::coll_in_nelems>(k.coll_in_nelems, patches);
  PatchColumn<&Kernel::coll_out_nelems>(k.coll_out_nelems, patches);
  PatchColumn<&Kernel::coll_group_size>(k.coll_group_size, patches);
  PatchColumn<&Kernel::coll_group>(k.coll_group, patches);
  return Status::Ok();
}

}  // namespace tg::internal
