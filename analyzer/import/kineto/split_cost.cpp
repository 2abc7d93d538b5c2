#include "analyzer/import/kineto/split_cost.h"

#include <algorithm>

#include "analyzer/import/kineto/kineto_numbers.h"
#include "analyzer/import/kineto/kineto_vocab.h"

namespace tg::internal {

namespace {

// Instructions per event of the import (reader and builder), measured with callgrind on files of
// one category each (40-60 thousand events cut from the generated shapes: serving's kernels,
// copies, runtime calls, ops, step annotations and flows, the stack shape's Python frames, the
// current shape's memsets; 2026-12-01). Bytes per event in those files: kernel 371, copy 275,
// memset 229, runtime 189, op 188, frame 231, annotation 268, flow 107. Driver calls and syncs
// read as runtime calls do; an event the builder does not model is parsed and dropped, as a
// flow that is not a launch's.
uint64_t CostOf(Cat cat) {
  switch (cat) {
    case Cat::kKernel: return 3830;
    case Cat::kMemcpy: return 3270;
    case Cat::kMemset: return 3040;
    case Cat::kRuntime:
    case Cat::kDriver:
    case Cat::kSync: return 2460;
    case Cat::kUserAnnotation:
    case Cat::kGpuUserAnnotation: return 3720;
    case Cat::kCpuOp: return 2340;
    case Cat::kPythonFunction: return 2430;
    case Cat::kUnmodelled: return 1510;
  }
  return 1510;
}

// The table an event of category `cat` adds a row to (TableRows' order), or -1 for none.
int TableOf(Cat cat) {
  switch (cat) {
    case Cat::kKernel: return 0;
    case Cat::kMemcpy: return 1;
    case Cat::kMemset: return 2;
    case Cat::kSync: return 3;
    case Cat::kRuntime:
    case Cat::kDriver: return 4;
    case Cat::kUserAnnotation:
    case Cat::kGpuUserAnnotation:
    case Cat::kCpuOp:
    case Cat::kPythonFunction: return 5;
    case Cat::kUnmodelled: break;
  }
  return -1;
}

// The first byte of stretch i of k equal stretches of a `size`-byte file.
double StretchBegin(uint64_t size, size_t i, size_t k) {
  return static_cast<double>(size) * static_cast<double>(i) / static_cast<double>(k);
}

}  // namespace

uint64_t EstimatedReadCost(std::string_view text, uint64_t* events, TableRows* rows) {
  static constexpr std::string_view kKey = "\"cat\"";
  uint64_t cost = 0, n = 0;
  for (size_t at = text.find(kKey); at != std::string_view::npos; at = text.find(kKey, at + 1)) {
    size_t i = at + kKey.size();
    while (i < text.size() && IsJsonSpace(text[i])) ++i;
    if (i >= text.size() || text[i] != ':') continue;  // "cat" as a value, not a member name
    ++i;
    while (i < text.size() && IsJsonSpace(text[i])) ++i;
    if (i >= text.size() || text[i] != '"') continue;
    const size_t end = text.find('"', i + 1);
    if (end == std::string_view::npos) break;  // cut by the window's end
    const Cat cat = Classify(text.substr(i + 1, end - i - 1));
    cost += CostOf(cat);
    if (const int table = TableOf(cat); rows && table >= 0) ++(*rows)[static_cast<size_t>(table)];
    ++n;
  }
  if (events) *events = n;
  return cost;
}

uint64_t CostMiddle(std::span<const uint64_t> costs, uint64_t window, uint64_t size) {
  const uint64_t middle = size / 2;
  const size_t k = costs.size();
  if (k == 0 || window == 0 || size / k < window) return middle;
  double known = 0;
  size_t counted = 0;
  for (uint64_t c : costs) {
    if (c == 0) continue;
    known += static_cast<double>(c);
    ++counted;
  }
  if (counted == 0) return middle;
  const double mean = known / static_cast<double>(counted);
  // Stretch i covers bytes [i * size / k, (i + 1) * size / k); its cost is its window's per byte.
  auto stretch_begin = [&](size_t i) { return StretchBegin(size, i, k); };
  auto stretch_cost = [&](size_t i) {
    const double per_byte = (costs[i] != 0 ? static_cast<double>(costs[i]) : mean) / static_cast<double>(window);
    return per_byte * (stretch_begin(i + 1) - stretch_begin(i));
  };
  double total = 0;
  for (size_t i = 0; i < k; ++i) total += stretch_cost(i);
  double before = 0;
  for (size_t i = 0; i < k; ++i) {
    const double c = stretch_cost(i);
    if (before + c >= total / 2) {
      const double into = c > 0 ? (total / 2 - before) / c : 0;
      const double at = stretch_begin(i) + into * (stretch_begin(i + 1) - stretch_begin(i));
      return std::min<uint64_t>(size - 1, static_cast<uint64_t>(at));
    }
    before += c;
  }
  return middle;
}

TableRows EstimatedRows(std::span<const TableRows> rows, uint64_t window, uint64_t size, uint64_t from) {
  TableRows out{};
  const size_t k = rows.size();
  if (k == 0 || window == 0 || size / k < window) return out;
  std::array<double, std::tuple_size_v<TableRows>> sum{};
  for (size_t i = 0; i < k; ++i) {
    const double begin = StretchBegin(size, i, k), end = StretchBegin(size, i + 1, k);
    const double bytes = end - std::clamp(static_cast<double>(from), begin, end);
    for (size_t t = 0; t < sum.size(); ++t)
      sum[t] += static_cast<double>(rows[i][t]) * bytes / static_cast<double>(window);
  }
  for (size_t t = 0; t < sum.size(); ++t) out[t] = static_cast<uint64_t>(sum[t] + 0.5);
  return out;
}

}  // namespace tg::internal
