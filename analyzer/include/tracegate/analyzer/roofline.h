// Per-kernel bytes and FLOPs, and the roofline placement behind the memory_bound rule.
//
// Costs come from, in order: a costs file (--costs costs.json), then NVTX annotations. A costs
// file is a JSON array of {"kernel": REGEX, "bytes": N, "flops": N} (per launch; regex searched
// in the demangled name; first match wins; "flops" may be omitted = 0). An annotation is a range
// whose name carries "bytes=N" and/or "flops=N" tokens (e.g. "add_relu_fused bytes=8388608
// flops=1048576", as kernels/ writes them): the counts are the totals of the kernels launched
// inside it (same thread, by correlation). One roofline item per costs pattern (kernels grouped)
// or per distinct annotated range name.
//
// Details:
// - Costs regexes are ECMAScript and case-sensitive (a cost is for one precise kernel family).
// - A token is a whitespace-separated word "bytes=N" / "flops=N", N a non-negative integer; the
//   item's label is the rest of the name (words joined by one space), or the whole name when
//   nothing is left. Ranges with the same label are one item.
// - A kernel is inside a range when the runtime / driver call that launched it (same correlation
//   id) starts in [range start, range end) on the range's pid and tid. Nested annotated ranges
//   each count every kernel inside them (their items overlap, as their counts do).
// - A range counts whole or not at all: one launching no kernel, or launching a kernel that a
//   costs entry covers or that kernel_included leaves out, adds nothing (its bytes and FLOPs are
//   for all its kernels, so counting a part would overstate the rates). GPU-projected ranges
//   (Kineto gpu_user_annotation) are skipped: their host range carries the same name.
#pragma once

#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include "tracegate/analyzer/gpu_specs.h"
#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/status.h"

namespace tg {

struct KernelCost {
  std::string pattern;
  std::regex regex;
  double bytes = 0;  // per launch
  double flops = 0;  // per launch
};

// Reads a costs file; NotFound "<path>: cannot open" when it cannot be read; InvalidInput
// "<path>: <problem>" for bad JSON, a bad entry ("entry 3: ..."; entries count from 1), regex or
// number. Keys other than kernel, bytes and flops are errors (a typo must not drop a count).
Status LoadKernelCosts(const std::string& path, std::vector<KernelCost>* out);

struct RooflineItem {
  std::string label;          // costs pattern or annotated range name (tokens stripped)
  std::string source;         // "costs" or "nvtx"
  uint64_t launches = 0;
  TimeNs time_ns = 0;         // summed kernel time
  double bytes = 0, flops = 0;
  double achieved_gbs = 0;    // bytes / time
  double achieved_tflops = 0;
  double intensity = 0;       // flops / byte (0 when bytes == 0)
  bool has_peak = false;      // the fields below need PeakRates with bandwidth and FLOP/s
  double bandwidth_share = 0; // achieved_gbs / peak bandwidth
  double flops_share = 0;     // achieved_tflops / peak tflops
  bool memory_bound = false;  // intensity below the ridge point (peak flops / peak bandwidth)
  std::vector<size_t> kernel_rows;  // rows of trace.kernels counted in this item
};

// kernel_included[i] == 0 leaves kernel row i out (e.g. outside every kept iteration); empty = all.
std::vector<RooflineItem> BuildRoofline(const Trace& trace, const std::vector<KernelCost>& costs,
                                        const PeakRates& peak, const std::vector<uint8_t>& kernel_included);

}  // namespace tg
