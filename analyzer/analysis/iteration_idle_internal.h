// AttributeIterationIdle (tracegate/analyzer/iteration_idle.h), internal to the analyzer: it needs
// the summary's idle-cause finder.
#pragma once

#include <cstddef>
#include <vector>

#include "analyzer/analysis/summary_internal.h"
#include "tracegate/analyzer/iteration_idle.h"
#include "tracegate/analyzer/iterations.h"

namespace tg::internal {

// Attributes every GPU-idle instant of the kept iterations of `its` (its spans, stage pieces and
// markers), fills each iteration's idle_cause_ns and pre/post_from_host_ns, moves that host
// compute from the idle phase to pre / post, and recomputes the iterations' statistics. `s`: the
// trace's summary (kernels_by_start, GpuBusy). `finder`: built without host stages (the named
// stages are split here, exactly as the phases count them). `pieces` (may be null): every piece,
// in time order. From `split_from` kept iterations on, the later half is walked on a second
// thread; the result is the same either way (the unit test and the step benchmark pass SIZE_MAX
// for one walk).
inline constexpr size_t kSplitIterations = 256;
IterationIdle AttributeIterationIdle(const Trace& t, const Summary& s, const IdleCauseFinder& finder,
                                     IterationAnalysis* its, std::vector<IdlePiece>* pieces = nullptr,
                                     size_t split_from = kSplitIterations);

}  // namespace tg::internal
