// The ranks of one job replayed together: collectives across ranks as edges of the replay's
// graph (issue 31). Each rank's trace is replayed as Replay does (replay.h); the collectives
// matched across the ranks (cross_rank.h: by sequence number, step or order) couple the ranks'
// passes. An all-reduce, all-gather, reduce-scatter or all-to-all cannot end before every rank
// has arrived, so on each rank it ends at the last rank's new arrival (on the aligned clocks) plus
// the rank's own transfer time: its recorded end minus the last recorded arrival, scaled when the
// change names the kernel. A rank that waited for a straggler then gains nothing from its own
// faster kernels, and every rank gains when the straggler gets faster: what replaying one rank
// alone, its collectives kept as recorded (waits included), cannot say.
//
// Held fixed besides Replay's assumptions: the ranks' clock offsets (aligned on the shared
// collectives' ends), each rank's transfer time, and every collective the job does not couple,
// which keeps its recorded duration, wait included: one found on a single rank, a broadcast,
// reduce or send/receive (whose root need not wait for the others), and one whose kernels do not
// all overlap once the clocks are aligned (CrossRank::doubtful). Implemented in analyzer/job/
// (tracegate_job_replay); the ranks' traces are all in memory while it runs, one thread per rank.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tracegate/analyzer/critical_path.h"
#include "tracegate/analyzer/iterations.h"
#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/replay.h"
#include "tracegate/analyzer/status.h"

namespace tg {

struct JobRankInput {
  const Trace* trace = nullptr;
  const IterationAnalysis* iterations = nullptr;
  int64_t rank = 0;  // distinct per input
  std::string file;  // for messages
};

struct JobReplayChange {
  ReplayChange change;
  std::vector<int64_t> ranks;  // the ranks the change is made on; empty: every rank
};

struct RankReplay {
  int64_t rank = 0;
  std::string file;
  bool changed = false;  // the change is made on this rank
  // Why the change names nothing on it (Replay's message), "" when it does or is not made on it.
  std::string unmatched;
  ReplayResult alone;    // replayed alone, its collectives as recorded (what predict FILE says)
  ReplayResult job;      // replayed with the job's other ranks
  uint64_t coupled = 0;  // its collective kernels coupled to other ranks'
  double base_ms() const { return MeanMs(job.base_total_ns); }
  double alone_ms() const { return MeanMs(alone.predicted_total_ns); }
  double job_ms() const { return MeanMs(job.predicted_total_ns); }

 private:
  double MeanMs(TimeNs total) const {
    return job.iterations.empty() ? 0 : NsToMs(total) / static_cast<double>(job.iterations.size());
  }
};

// The job's critical path as recorded: each kept iteration of the slowest rank (as recorded)
// walked back from its end as AnalyzeCriticalPath walks one trace (critical_path.h, the same
// kinds), except at a coupled collective where another rank arrived after this one: the
// collective's time before that last arrival is waiting, not on the path, which goes on on the
// rank that arrived last, back from its arrival (its clock aligned). Where several arrived last
// together, the first by rank. The kinds sum exactly to the iterations' latency, and so do the
// ranks' shares.
struct JobPathResult {
  int64_t rank = 0;  // whose iterations are walked: the slowest as recorded
  size_t iterations = 0;
  TimeNs step_total_ns = 0;  // their summed latency
  std::array<TimeNs, kPathKindCount> kind_ns{};
  std::vector<std::pair<int64_t, TimeNs>> rank_ns;  // by rank, each rank's time on the path
  uint64_t crossings = 0;                           // collectives where the path went on on another rank
};

struct JobReplayResult {
  std::vector<RankReplay> ranks;  // by rank
  uint64_t coupled = 0;           // collectives coupled across ranks (each once)
  uint64_t not_waiting = 0;       // matched ones left as recorded: broadcast, reduce, send/receive, ...
  uint64_t doubtful = 0;          // matched ones left as recorded: kernels that do not all overlap when aligned
  // The job's latency: the slowest rank's mean iteration (ms), as recorded, replayed with the
  // ranks together, and as replaying each rank alone would give it; the ranks (indices into
  // `ranks`) they come from.
  double base_ms = 0, predicted_ms = 0, alone_ms = 0;
  size_t slowest_base = 0, slowest_predicted = 0, slowest_alone = 0;
  std::vector<std::string> assumptions;  // Replay's, then the job's
  JobPathResult path;                    // the job's critical path as recorded
  double speedup() const { return predicted_ms > 0 ? base_ms / predicted_ms : 0; }
};

// InvalidInput for fewer than two ranks, two inputs of one rank, a --rank the job does not have,
// a rank without kept iterations, or a change that names nothing on any rank it is made on (the
// message names the rank and file); Replay's errors otherwise, prefixed by the rank's file.
Status ReplayJob(const std::vector<JobRankInput>& ranks, const JobReplayChange& change, JobReplayResult* out);

}  // namespace tg
