// Measuring the share P of the run that an optimisation would speed up, for `tracegate predict`.
// The total is the summed latency of the kept iterations (iterations.h); the part is
//   --kernels REGEX: the summed duration of matching kernels of those iterations (assumes they
//                    are on the critical path, i.e. nothing else runs while they run);
//   --range REGEX:   the union of matching host ranges, clipped to the iterations' spans (right
//                    for CPU work, or when the program waits for the GPU inside the range);
//   --launched-in REGEX: the summed duration of the kernels of those iterations launched inside
//                    matching host ranges (by correlation, same thread): the GPU time of an NVTX
//                    range of asynchronous work, e.g. one stage of a model (same critical-path
//                    assumption as --kernels).
// Regexes are searched, case-insensitive, in the demangled kernel name / range name.
#pragma once

#include <string>

#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/status.h"

namespace tg {

struct MeasuredShare {
  double share = 0;        // part / total, at most 1
  TimeNs part_ns = 0, total_ns = 0;
  uint64_t matched = 0;    // kernels or ranges that matched
};

// InvalidInput for an invalid regex or when nothing matches (the message says which).
Status MeasureKernelShare(const Trace& trace, const IterationAnalysis& iterations, const std::string& regex,
                          MeasuredShare* out);
Status MeasureRangeShare(const Trace& trace, const IterationAnalysis& iterations, const std::string& regex,
                         MeasuredShare* out);
// matched counts the kernels; a kernel inside several matching (nested) ranges counts once.
Status MeasureLaunchedShare(const Trace& trace, const IterationAnalysis& iterations, const std::string& regex,
                            MeasuredShare* out);

}  // namespace tg
