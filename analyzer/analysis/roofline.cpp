// Roofline items from a costs file and from NVTX ranges that carry bytes= / flops= tokens.
// O(n log n) in kernels + API calls + annotated ranges (KernelsLaunchedIn, correlation.h).
#include "tracegate/analyzer/roofline.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>

#include "analyzer/analysis/correlation.h"
#include "analyzer/util/json_file.h"
#include "analyzer/util/demangle.h"

namespace tg {

using internal::Demangle;
using internal::KernelsLaunchedIn;
using internal::ReadJsonFile;

namespace {

TimeNs Duration(TimeNs start, TimeNs end) { return end > start ? end - start : 0; }

bool Included(const std::vector<uint8_t>& kernel_included, size_t row) {
  return kernel_included.empty() || (row < kernel_included.size() && kernel_included[row]);
}

// The number under `key` of one costs entry; absent and optional = 0.
Status ReadCount(const nlohmann::json& entry, const char* key, bool required, const std::string& where, double* out) {
  auto it = entry.find(key);
  if (it == entry.end()) {
    if (required) return InvalidInput(where + "'" + key + "' is missing");
    *out = 0;
    return Status::Ok();
  }
  if (!it->is_number() || it->get<double>() < 0)
    return InvalidInput(where + "'" + key + "' must be a non-negative number");
  *out = it->get<double>();
  return Status::Ok();
}

Status ReadEntry(const nlohmann::json& entry, const std::string& where, KernelCost* out) {
  if (!entry.is_object())
    return InvalidInput(where + "expected an object {\"kernel\": REGEX, \"bytes\": N, \"flops\": N}");
  for (const auto& [key, value] : entry.items()) {
    if (key != "kernel" && key != "bytes" && key != "flops")
      return InvalidInput(where + "unknown key '" + key + "' (an entry has kernel, bytes, flops)");
  }
  auto kernel = entry.find("kernel");
  if (kernel == entry.end() || !kernel->is_string() || kernel->get<std::string>().empty())
    return InvalidInput(where + "'kernel' must be a non-empty regular expression string");
  out->pattern = kernel->get<std::string>();
  try {
    out->regex = std::regex(out->pattern, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    return InvalidInput(where + "invalid regular expression '" + out->pattern + "': " + e.what());
  }
  TG_RETURN_IF_ERROR(ReadCount(entry, "bytes", true, where, &out->bytes));
  return ReadCount(entry, "flops", false, where, &out->flops);
}

// Counts from a range name; false when it has no token. See roofline.h for the token syntax.
bool ParseAnnotation(std::string_view name, double* bytes, double* flops, std::string* label) {
  bool any = false;
  *bytes = *flops = 0;
  label->clear();
  size_t i = 0;
  while (i < name.size()) {
    while (i < name.size() && std::isspace(static_cast<unsigned char>(name[i]))) ++i;
    size_t end = i;
    while (end < name.size() && !std::isspace(static_cast<unsigned char>(name[end]))) ++end;
    if (end == i) break;
    std::string_view word = name.substr(i, end - i);
    i = end;
    double* target = word.starts_with("bytes=") ? bytes : word.starts_with("flops=") ? flops : nullptr;
    if (target) {
      std::string_view digits = word.substr(6);
      uint64_t n = 0;
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
      if (!digits.empty() && ec == std::errc() && ptr == digits.data() + digits.size()) {
        *target = static_cast<double>(n);
        any = true;
        continue;
      }
    }
    if (!label->empty()) *label += ' ';
    *label += word;
  }
  if (label->empty()) *label = std::string(name);
  return any;
}

RooflineItem NewItem(std::string label, const char* source) {
  RooflineItem item;
  item.label = std::move(label);
  item.source = source;
  return item;
}

void AddKernel(const Trace& trace, size_t row, RooflineItem* item) {
  item->launches++;
  item->time_ns += Duration(trace.kernels.start[row], trace.kernels.end[row]);
  item->kernel_rows.push_back(row);
}

void Finish(const PeakRates& peak, RooflineItem* item) {
  std::sort(item->kernel_rows.begin(), item->kernel_rows.end());
  if (item->time_ns > 0) {
    double t = static_cast<double>(item->time_ns);
    item->achieved_gbs = item->bytes / t;            // bytes per ns = GB/s
    item->achieved_tflops = item->flops / t / 1000;  // FLOP per ns = GFLOP/s
  }
  item->intensity = item->bytes > 0 ? item->flops / item->bytes : 0;
  if (peak.has_bandwidth && peak.bandwidth_gbs > 0) item->bandwidth_share = item->achieved_gbs / peak.bandwidth_gbs;
  if (peak.has_flops && peak.tflops > 0) item->flops_share = item->achieved_tflops / peak.tflops;
  item->has_peak = peak.has_bandwidth && peak.has_flops && peak.bandwidth_gbs > 0 && peak.tflops > 0;
  if (item->has_peak) {
    double ridge = peak.tflops * 1000 / peak.bandwidth_gbs;  // FLOP per byte
    item->memory_bound = item->bytes > 0 && item->intensity < ridge;
  }
}

// The first costs entry matching a kernel row's name, -1 for none: one search per name, when a row
// of that name is first asked about, kept per name (O(names), not a column per kernel row).
class CostOfKernel {
 public:
  CostOfKernel(const Trace& trace, const std::vector<KernelCost>& costs) : trace_(trace), costs_(costs) {
    if (!costs.empty()) of_name_.assign(trace.strings.size(), kUnset);
  }
  int32_t operator()(size_t row) {
    if (costs_.empty()) return -1;
    int32_t& c = of_name_[trace_.kernels.name[row]];
    if (c == kUnset) {
      c = -1;
      std::string name = Demangle(trace_.Name(trace_.kernels.name[row]));
      for (size_t k = 0; k < costs_.size() && c < 0; ++k) {
        if (std::regex_search(name, costs_[k].regex)) c = static_cast<int32_t>(k);
      }
    }
    return c;
  }

 private:
  static constexpr int32_t kUnset = -2;
  const Trace& trace_;
  const std::vector<KernelCost>& costs_;
  std::vector<int32_t> of_name_;
};

struct Annotated {
  size_t range;  // row of trace.ranges
  double bytes, flops;
  std::string label;
  uint64_t launches = 0;
  bool spoiled = false;  // launched a kernel that is left out or costed
};

void AddAnnotatedItems(const Trace& trace, CostOfKernel& cost_of_row,
                       const std::vector<uint8_t>& kernel_included, std::vector<RooflineItem>* items) {
  std::vector<Annotated> ranges;
  std::vector<int8_t> has_tokens(trace.strings.size(), -1);  // per name: -1 unknown, 0 no, 1 yes
  for (size_t i = 0; i < trace.ranges.size(); ++i) {
    if (trace.ranges.on_gpu[i]) continue;
    int8_t& known = has_tokens[trace.ranges.name[i]];
    if (known == 0) continue;
    Annotated a{i, 0, 0, {}, 0, false};
    known = ParseAnnotation(trace.Name(trace.ranges.name[i]), &a.bytes, &a.flops, &a.label) ? 1 : 0;
    if (known) ranges.push_back(std::move(a));
  }
  if (ranges.empty()) return;
  std::vector<size_t> rows;
  rows.reserve(ranges.size());
  for (const Annotated& a : ranges) rows.push_back(a.range);
  std::vector<std::pair<size_t, size_t>> pairs = KernelsLaunchedIn(trace, rows);
  for (const auto& [k, row] : pairs) {
    ranges[k].launches++;
    if (!Included(kernel_included, row) || cost_of_row(row) >= 0) ranges[k].spoiled = true;
  }
  // Items in the order of their first counted range.
  std::vector<size_t> order(ranges.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::make_pair(trace.ranges.start[ranges[a].range], a) <
           std::make_pair(trace.ranges.start[ranges[b].range], b);
  });
  std::vector<int64_t> item_of_range(ranges.size(), -1);
  std::map<std::string, size_t, std::less<>> item_of_label;
  for (size_t k : order) {
    Annotated& a = ranges[k];
    if (a.launches == 0 || a.spoiled) continue;
    auto [it, inserted] = item_of_label.emplace(a.label, items->size());
    if (inserted) items->push_back(NewItem(a.label, "nvtx"));
    item_of_range[k] = static_cast<int64_t>(it->second);
    (*items)[it->second].bytes += a.bytes;
    (*items)[it->second].flops += a.flops;
  }
  for (const auto& [k, row] : pairs) {
    if (item_of_range[k] >= 0) AddKernel(trace, row, &(*items)[static_cast<size_t>(item_of_range[k])]);
  }
}

}  // namespace

Status LoadKernelCosts(const std::string& path, std::vector<KernelCost>* out) {
  nlohmann::json doc;
  TG_RETURN_IF_ERROR(ReadJsonFile(path, "costs file", &doc));
  if (!doc.is_array())
    return InvalidInput(path + ": a costs file is a JSON array of {\"kernel\": REGEX, \"bytes\": N, \"flops\": N}");
  std::vector<KernelCost> costs(doc.size());
  for (size_t i = 0; i < doc.size(); ++i) {
    std::string where = path + ": entry " + std::to_string(i + 1) + ": ";
    TG_RETURN_IF_ERROR(ReadEntry(doc[i], where, &costs[i]));
  }
  *out = std::move(costs);
  return Status::Ok();
}

std::vector<RooflineItem> BuildRoofline(const Trace& trace, const std::vector<KernelCost>& costs, const PeakRates& peak,
                                        const std::vector<uint8_t>& kernel_included) {
  std::vector<RooflineItem> items;
  CostOfKernel cost_of_row(trace, costs);
  std::vector<int64_t> item_of_cost(costs.size(), -1);
  for (size_t i = 0; i < (costs.empty() ? 0 : trace.kernels.size()); ++i) {
    const int32_t c = cost_of_row(i);
    if (c < 0) continue;
    if (!Included(kernel_included, i)) continue;
    const KernelCost& cost = costs[static_cast<size_t>(c)];
    int64_t& item = item_of_cost[static_cast<size_t>(c)];
    if (item < 0) {
      item = static_cast<int64_t>(items.size());
      items.push_back(NewItem(cost.pattern, "costs"));
    }
    RooflineItem& it = items[static_cast<size_t>(item)];
    AddKernel(trace, i, &it);
    it.bytes += cost.bytes;
    it.flops += cost.flops;
  }
  // Costs items in file order, whatever order their kernels ran in.
  std::vector<RooflineItem> ordered;
  for (int64_t item : item_of_cost) {
    if (item >= 0) ordered.push_back(std::move(items[static_cast<size_t>(item)]));
  }
  AddAnnotatedItems(trace, cost_of_row, kernel_included, &ordered);
  for (RooflineItem& item : ordered) Finish(peak, &item);
  return ordered;
}

}  // namespace tg
