// Host pre/post stages for the idle causes: per process, the union of the host ranges whose names
// match the iteration options' pre or post regular expression (the ranges the pre and post phases
// are made of). A gap whose next work the host launched late while it was in such a stage is the
// host's pre/post-processing (host_stage), not its launch rate (host_launch).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/analysis/name_matcher.h"
#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/model.h"

namespace tg::internal {

class HostStages {
 public:
  // Compiles the pre and post expressions. Two steps, because libstdc++'s regex compiler fills a
  // locale cache that two threads compiling at once race on: RunAnalysis compiles here, on the
  // thread that also compiles the iteration options, and collects on its second thread.
  HostStages(const Trace& t, const IterationOptions& options);
  // Finds the stage ranges. None when a regular expression is invalid: the iteration analysis,
  // given the same options, reports that error, so no analysis goes on with these stages.
  void Collect();
  // The name of a stage range of process `pid` that overlaps [s, e), if there is one.
  std::optional<StringId> During(int64_t pid, TimeNs s, TimeNs e) const;

 private:
  const Trace& trace_;
  bool compiled_ = false;
  internal::NameMatcher pre_, post_;
  struct Stage {
    int64_t pid;
    TimeNs start, end;
    StringId name;  // the first range of the union's piece
  };
  std::vector<Stage> stages_;  // disjoint per process, by (pid, start)
};

}  // namespace tg::internal
