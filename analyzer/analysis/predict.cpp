#include "tracegate/analyzer/predict.h"

#include <algorithm>
#include <regex>
#include <vector>

#include "analyzer/analysis/correlation.h"
#include "analyzer/util/demangle.h"
#include "analyzer/util/intervals.h"

namespace tg {

using internal::Demangle;
using internal::KernelsLaunchedIn;
using internal::UnionLength;

namespace {

Status Compile(const std::string& flag, const std::string& pattern, std::regex* re) {
  try {
    *re = std::regex(pattern, std::regex::ECMAScript | std::regex::icase | std::regex::optimize);
  } catch (const std::regex_error& e) {
    return InvalidInput(flag + ": invalid regular expression '" + pattern + "': " + e.what());
  }
  return Status::Ok();
}

// Matches every distinct name once.
std::vector<uint8_t> MatchNames(const Trace& trace, const std::regex& re) {
  std::vector<uint8_t> match(trace.strings.size(), 0);
  for (StringId id = 0; id < trace.strings.size(); ++id)
    match[id] = std::regex_search(Demangle(trace.Name(id)), re) ? 1 : 0;
  return match;
}

// Compiles the regex, matches every name and resets `out`.
Status Prepare(const Trace& trace, const IterationAnalysis& iterations, const std::string& flag,
               const std::string& regex, std::vector<uint8_t>* match, MeasuredShare* out) {
  std::regex re;
  TG_RETURN_IF_ERROR(Compile(flag, regex, &re));
  *match = MatchNames(trace, re);
  *out = MeasuredShare{};
  out->total_ns = iterations.total_ns;
  return Status::Ok();
}

Status Finish(const std::string& what, const std::string& regex, MeasuredShare* out) {
  if (out->matched == 0) return InvalidInput(what + " matches '" + regex + "'");
  if (out->total_ns <= 0) return InvalidInput("the analysed iterations have zero length: nothing to take a share of");
  out->share = std::min(1.0, static_cast<double>(out->part_ns) / static_cast<double>(out->total_ns));
  return Status::Ok();
}

}  // namespace

Status MeasureKernelShare(const Trace& trace, const IterationAnalysis& iterations, const std::string& regex,
                          MeasuredShare* out) {
  std::vector<uint8_t> match;
  TG_RETURN_IF_ERROR(Prepare(trace, iterations, "--kernels", regex, &match, out));
  const KernelTable& k = trace.kernels;
  for (size_t i = 0; i < k.size(); ++i) {
    if (iterations.kernel_iteration[i] < 0 || !match[k.name[i]]) continue;
    out->matched++;
    out->part_ns += k.end[i] - k.start[i];
  }
  return Finish("--kernels: no kernel of the analysed iterations", regex, out);
}

Status MeasureRangeShare(const Trace& trace, const IterationAnalysis& iterations, const std::string& regex,
                         MeasuredShare* out) {
  std::vector<uint8_t> match;
  TG_RETURN_IF_ERROR(Prepare(trace, iterations, "--range", regex, &match, out));
  const RangeTable& r = trace.ranges;
  // Clip every matching range to every iteration span it overlaps, then take the union.
  std::vector<Interval> pieces;
  for (size_t i = 0; i < r.size(); ++i) {
    if (!match[r.name[i]] || r.on_gpu[i]) continue;
    bool counted = false;
    for (const Iteration& it : iterations.iterations) {
      TimeNs a = std::max(r.start[i], it.start), b = std::min(r.end[i], it.end);
      if (a >= b) continue;
      pieces.emplace_back(a, b);
      counted = true;
    }
    out->matched += counted;
  }
  out->part_ns = UnionLength(pieces);
  return Finish("--range: no range inside the analysed iterations", regex, out);
}

Status MeasureLaunchedShare(const Trace& trace, const IterationAnalysis& iterations, const std::string& regex,
                            MeasuredShare* out) {
  std::vector<uint8_t> match;
  TG_RETURN_IF_ERROR(Prepare(trace, iterations, "--launched-in", regex, &match, out));
  const RangeTable& r = trace.ranges;
  std::vector<size_t> rows;
  for (size_t i = 0; i < r.size(); ++i)
    if (match[r.name[i]] && !r.on_gpu[i]) rows.push_back(i);
  if (rows.empty()) return InvalidInput("--launched-in: no host range matches '" + regex + "'");
  std::vector<uint8_t> counted(trace.kernels.size(), 0);
  for (const auto& [k, row] : KernelsLaunchedIn(trace, rows)) {
    if (counted[row] || iterations.kernel_iteration[row] < 0) continue;
    counted[row] = 1;
    out->matched++;
    out->part_ns += trace.kernels.end[row] - trace.kernels.start[row];
  }
  return Finish("--launched-in: no kernel of the analysed iterations was launched inside a range that", regex, out);
}

}  // namespace tg
