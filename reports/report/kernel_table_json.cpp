#include "reports/report/kernel_table_json.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyzer/analysis/correlation.h"
#include "analyzer/util/demangle.h"

namespace tg::internal {

namespace {

struct KernelTotals {
  uint64_t count = 0;
  TimeNs total_ns = 0;
};

struct Places {
  std::set<int64_t> devices, streams;
};

nlohmann::json Ids(const std::set<int64_t>& ids) {
  nlohmann::json arr = nlohmann::json::array();
  for (int64_t id : ids) arr.push_back(id == kUnknownId ? nlohmann::json(nullptr) : nlohmann::json(id));
  return arr;
}

constexpr uint32_t kNoName = UINT32_MAX;

}  // namespace

KernelOps KernelOpsByName(const Trace& trace, const Analysis& analysis) {
  const KernelTable& k = trace.kernels;
  const OpLinks& links = analysis.ops;
  const bool have_ops = links.kernels.size() == k.size() && links.kernel_launch_found.size() == k.size();
  const bool have_classes = analysis.kernel_classes.size() == k.size();
  // Counts per distinct name id (a dense index per id, not a map lookup per row), and per
  // (name, op) pair: few pairs, and most rows repeat the op their name had last (streams
  // interleave names, so the previous row's pair is often another name's).
  // An op counts by its base name (OpBaseName, found once per op id): a trace whose ops are
  // per-step NVTX ranges has an op id per step, and as many (name, op) pairs as steps, but few
  // (name, base) pairs.
  constexpr uint32_t kNoBase = UINT32_MAX;
  struct Counts {
    std::array<uint64_t, kKernelClassCount> cls{};
    uint64_t launched = 0;
    uint64_t graph = 0;  // launched by a graph launch
    StringId last_op = StringTable::kEmpty;
    uint32_t last_base = kNoBase;
    uint64_t* last_count = nullptr;  // pairs' count of (this name, last_base)
  };
  std::vector<uint32_t> dense(trace.strings.size(), kNoName);
  std::vector<StringId> names;
  std::vector<Counts> counts;
  std::vector<uint32_t> base_of(have_ops ? links.NameCount(trace) : 0, kNoBase);
  std::vector<std::string_view> bases;  // views of the trace's or the links' names
  std::unordered_map<std::string_view, uint32_t> base_index;
  auto base = [&](StringId op) {
    uint32_t& b = base_of[op];
    if (b == kNoBase) {
      const std::string_view name = OpBaseName(links.Name(trace, op));
      b = base_index.try_emplace(name, static_cast<uint32_t>(bases.size())).first->second;
      if (b == bases.size()) bases.push_back(name);
    }
    return b;
  };
  std::unordered_map<uint64_t, uint64_t> pairs;  // (name, base): node-based, the counts stay where they are
  for (size_t i = 0; i < k.size(); ++i) {
    uint32_t& d = dense[k.name[i]];
    if (d == kNoName) {
      d = static_cast<uint32_t>(names.size());
      names.push_back(k.name[i]);
      counts.emplace_back();
    }
    Counts& c = counts[d];
    c.cls[static_cast<size_t>(have_classes ? analysis.kernel_classes[i] : KernelClass::kOther)]++;
    if (!have_ops) continue;
    c.launched += links.kernel_launch_found[i] != 0;
    c.graph += links.kernel_launch_found[i] == OpLinks::kGraphLaunched;
    if (links.kernels[i] == StringTable::kEmpty) continue;
    if (c.last_op != links.kernels[i] || !c.last_count) {
      c.last_op = links.kernels[i];
      const uint32_t b = base(c.last_op);
      if (b != c.last_base || !c.last_count) {
        c.last_base = b;
        c.last_count = &pairs[static_cast<uint64_t>(d) << 32 | b];
      }
    }
    ++*c.last_count;
  }
  // Merge the ids that demangle alike, and their ops by base name (an op id's OpBaseName, found
  // once per id: a trace whose ops are per-step NVTX ranges has as many pairs as steps).
  struct Merged {
    Counts counts;
    std::unordered_map<uint32_t, uint64_t> ops;  // base (an index into `bases`) -> launches
  };
  std::map<std::string, Merged> merged;
  std::vector<Merged*> merged_of(names.size());
  for (size_t d = 0; d < names.size(); ++d) {
    Merged& m = merged[Demangle(trace.Name(names[d]))];
    merged_of[d] = &m;
    for (size_t c = 0; c < kKernelClassCount; ++c) m.counts.cls[c] += counts[d].cls[c];
    m.counts.launched += counts[d].launched;
    m.counts.graph += counts[d].graph;
  }
  for (const auto& [key, n] : pairs) merged_of[key >> 32]->ops[static_cast<uint32_t>(key & 0xffffffffu)] += n;
  KernelOps out;
  for (auto& [name, m] : merged) {
    KernelOp& o = out[name];
    uint64_t best = 0;
    uint32_t best_base = kNoBase;
    for (const auto& [b, n] : m.ops)  // the most launches; on a tie the name that sorts first
      if (n > best || (n == best && bases[b] < bases[best_base])) best = n, best_base = b;
    if (best_base != kNoBase) o.op = std::string(bases[best_base]);
    if (o.op.empty())
      o.reason = links.source == OpSource::kNone ? "the trace has no host ops (cpu_op or NVTX ranges)"
                 : m.counts.launched == 0        ? "no launch call of this kernel is in the trace"
                 : m.counts.graph == m.counts.launched
                     ? "a graph replay launched it, and a replay records no op (analyze --capture CAPTURE_TRACE "
                       "maps it to the op that launched it when the graph was captured); classed by its name"
                     : "no host op encloses its launch calls";
    size_t cls = 0;  // on a tie the first class stays
    for (size_t c = 1; c < kKernelClassCount; ++c)
      if (m.counts.cls[c] > m.counts.cls[cls]) cls = c;
    o.cls = static_cast<KernelClass>(cls);
  }
  return out;
}

void SetKernelOp(nlohmann::json& row, const KernelOps& ops, const std::string& name) {
  auto it = ops.find(name);
  if (it == ops.end()) return;
  if (it->second.op.empty()) {
    row["op"] = nullptr;
    row["op_reason"] = it->second.reason;
  } else {
    row["op"] = it->second.op;
  }
  row["class"] = kKernelClassNames[static_cast<size_t>(it->second.cls)];
}

void SetKernelOps(nlohmann::json& rows, const KernelOps& ops) {
  for (nlohmann::json& row : rows) SetKernelOp(row, ops, row["name"].get_ref<const std::string&>());
}

nlohmann::json KernelTableJson(const Trace& trace, const Analysis& analysis) {
  const IterationAnalysis& it = analysis.iterations;
  const KernelTable& k = trace.kernels;
  // Sum per name id first (one demangle per distinct id), then merge ids that demangle alike.
  std::vector<KernelTotals> by_id(trace.strings.size());  // an index per row, not a map lookup
  // Each name's distinct (device, stream) places, a short list per name: places_[head[name]],
  // then each entry's `next`. Most launches repeat the place their name had last.
  struct Place {
    int64_t device, stream;
    uint32_t next;
  };
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> head(trace.strings.size(), kNone);
  std::vector<Place> place;
  for (size_t i = 0; i < k.size() && i < it.kernel_iteration.size(); ++i) {
    if (it.kernel_iteration[i] < 0) continue;
    const StringId name = k.name[i];
    KernelTotals& t = by_id[name];
    const int64_t device = k.device[i], stream = k.stream[i];
    uint32_t p = head[name];
    while (p != kNone && (place[p].device != device || place[p].stream != stream)) p = place[p].next;
    if (p == kNone) {
      place.push_back({device, stream, head[name]});
      head[name] = static_cast<uint32_t>(place.size() - 1);
    }
    t.count++;
    t.total_ns += k.end[i] - k.start[i];
  }
  std::map<std::string, KernelTotals> by_name;
  std::map<std::string, Places> places;
  for (StringId id = 0; id < by_id.size(); ++id) {
    const KernelTotals& t = by_id[id];
    if (t.count == 0) continue;
    const std::string name = Demangle(trace.Name(id));
    KernelTotals& merged = by_name[name];
    merged.count += t.count;
    merged.total_ns += t.total_ns;
    Places& p = places[name];
    for (uint32_t q = head[id]; q != kNone; q = place[q].next) {
      p.devices.insert(place[q].device);
      p.streams.insert(place[q].stream);
    }
  }
  std::vector<std::pair<std::string, KernelTotals>> rows(by_name.begin(), by_name.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second.total_ns > b.second.total_ns; });
  const double iterations = static_cast<double>(it.iterations.size());
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& [name, t] : rows) {
    const double total_ms = static_cast<double>(t.total_ns) / 1e6;
    arr.push_back({{"name", name},
                   {"count", t.count},
                   {"total_ms", total_ms},
                   {"per_iteration_ms", total_ms / iterations},
                   {"mean_us", static_cast<double>(t.total_ns) / static_cast<double>(t.count) / 1e3},
                   {"devices", Ids(places[name].devices)},
                   {"streams", Ids(places[name].streams)}});
  }
  return arr;
}

}  // namespace tg::internal
