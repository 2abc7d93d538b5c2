// The ranks of one job replayed together (tracegate/analyzer/job_replay.h): each rank's pass on
// its own thread, coupled at the matched collectives through JobCollectives below.
#include "tracegate/analyzer/job_replay.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <locale>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "analyzer/analysis/correlation.h"
#include "analyzer/analysis/path_walk.h"
#include "analyzer/analysis/recorded_graph.h"
#include "analyzer/analysis/replay_engine.h"
#include "tracegate/analyzer/communication.h"
#include "tracegate/analyzer/cross_rank.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/analyzer/op_links.h"

namespace tg {

namespace {

constexpr TimeNs kNever = internal::kReplayNever;

// The coupled collectives of a job and the ranks' passes through them: a rank's pass arrives at
// a collective (its new start) and later asks for its end, which waits until every rank of the
// collective has arrived. A pass that would wait for ever (every unfinished pass waiting for a
// rank that has not arrived: calls matched in orders the ranks do not share) gives the replay up.
class JobCollectives {
 public:
  struct Member {
    size_t collective;
    size_t slot;      // its place among the collective's arrivals
    TimeNs transfer;  // recorded: its end minus the last arrival, on the aligned clock
  };

  JobCollectives(size_t ranks, std::vector<size_t> sizes) : waiting_(ranks, -1), finished_(ranks, false) {
    collectives_.resize(sizes.size());
    for (size_t c = 0; c < sizes.size(); ++c) {
      collectives_[c].arrival.assign(sizes[c], kNever);
      collectives_[c].missing = sizes[c];
    }
  }

  void Arrive(const Member& m, TimeNs aligned) {
    std::lock_guard<std::mutex> lock(mu_);
    Collective& c = collectives_[m.collective];
    c.arrival[m.slot] = aligned;
    if (--c.missing == 0) cv_.notify_all();
  }

  // The last aligned arrival, once every rank has arrived; kNever when the replay was given up.
  TimeNs Latest(size_t rank, const Member& m) {
    std::unique_lock<std::mutex> lock(mu_);
    Collective& c = collectives_[m.collective];
    waiting_[rank] = static_cast<int64_t>(m.collective);
    while (c.missing > 0 && !given_up_) {
      if (Stuck()) {
        given_up_ = true;
        cv_.notify_all();
        break;
      }
      cv_.wait(lock);
    }
    waiting_[rank] = -1;
    if (given_up_) return kNever;
    return *std::max_element(c.arrival.begin(), c.arrival.end());
  }

  // A rank's pass has ended (done or failed).
  void Finish(size_t rank) {
    std::lock_guard<std::mutex> lock(mu_);
    finished_[rank] = true;
    const bool running = std::find(finished_.begin(), finished_.end(), false) != finished_.end();
    if (running && Stuck()) given_up_ = true;
    cv_.notify_all();
  }

 private:
  struct Collective {
    std::vector<TimeNs> arrival;  // aligned, kNever until the rank arrives
    size_t missing = 0;
  };
  // Every unfinished pass waits at a collective some rank has not arrived at: none can go on.
  bool Stuck() const {
    for (size_t r = 0; r < waiting_.size(); ++r) {
      if (finished_[r]) continue;
      if (waiting_[r] < 0 || collectives_[static_cast<size_t>(waiting_[r])].missing == 0) return false;
    }
    return true;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Collective> collectives_;
  std::vector<int64_t> waiting_;  // per rank: the collective its pass waits at, -1 for none
  std::vector<bool> finished_;
  bool given_up_ = false;
};

// One rank's side of the coupling, as the replay's pass sees it (replay_engine.h).
class RankCoupling : public internal::CollectiveCoupling {
 public:
  RankCoupling(JobCollectives* job, size_t rank, TimeNs offset, size_t kernels)
      : job_(job), rank_(rank), offset_(offset), member_of_(kernels, -1) {}

  void Add(uint32_t kernel, const JobCollectives::Member& m) {
    member_of_[kernel] = static_cast<int32_t>(members_.size());
    members_.push_back(m);
  }
  size_t size() const { return members_.size(); }

  // Activities are the kernels first (ReplayPlan::acts), so a kernel's activity is its row.
  bool Coupled(uint32_t act) const override { return act < member_of_.size() && member_of_[act] >= 0; }
  void Arrive(uint32_t act, TimeNs start) override {
    job_->Arrive(members_[static_cast<size_t>(member_of_[act])], start + offset_);
  }
  TimeNs End(uint32_t act, TimeNs start, double scale) override {
    const JobCollectives::Member& m = members_[static_cast<size_t>(member_of_[act])];
    const TimeNs latest = job_->Latest(rank_, m);
    if (latest == kNever) return kNever;
    const TimeNs transfer = static_cast<TimeNs>(std::llround(static_cast<double>(m.transfer) * scale));
    return std::max(start, latest - offset_) + transfer;
  }

 private:
  JobCollectives* job_;
  size_t rank_;
  TimeNs offset_;
  std::vector<int32_t> member_of_;  // by kernel row: index into members_, -1 when not coupled
  std::vector<JobCollectives::Member> members_;
};

// A coupled collective as the job's path reads it: its calls (rank index, kernel row) and their
// recorded arrivals on the aligned clock.
struct PathCollective {
  std::vector<std::pair<size_t, uint32_t>> calls;
  std::vector<TimeNs> arrival;
};

// JobPathResult (job_replay.h): the slowest rank's kept iterations walked back, going on on the
// rank that arrived last at each coupled collective where this rank waited.
void WalkJobPath(const std::vector<const JobRankInput*>& in, const std::vector<internal::ApiIndex>& index,
                 const std::vector<std::vector<KernelClass>>& classes, const std::vector<TimeNs>& offset,
                 const std::vector<PathCollective>& collectives, const std::vector<std::vector<int32_t>>& member_of,
                 size_t slowest, JobPathResult* out) {
  using internal::PathNode;
  const size_t n = in.size();
  std::vector<std::optional<internal::RecordedGraph>> graph(n);
  auto graph_of = [&](size_t r) -> const internal::RecordedGraph& {
    if (!graph[r]) graph[r].emplace(*in[r]->trace, *in[r]->iterations, index[r], nullptr);
    return *graph[r];
  };
  std::vector<TimeNs> rank_ns(n, 0);
  const IterationAnalysis& its = *in[slowest]->iterations;
  const internal::RecordedGraph& g0 = graph_of(slowest);
  const std::vector<int32_t> last_call_of = internal::LastCallOf(g0, in[slowest]->trace->api_calls, its);
  uint64_t members = 0;
  for (const PathCollective& c : collectives) members += c.calls.size();
  for (size_t k = 0; k < its.iterations.size(); ++k) {
    size_t r = slowest;
    TimeNs lo = g0.End(k).start;
    TimeNs cursor = std::max(g0.End(k).end, lo);
    out->step_total_ns += cursor - lo;
    auto emit = [&](PathKind kind, PathSegment::Table, int64_t, int64_t, TimeNs from, int64_t, int64_t) {
      const TimeNs next = std::min(cursor, std::max(from, lo));
      out->kind_ns[static_cast<size_t>(kind)] += cursor - next;
      rank_ns[r] += cursor - next;
      cursor = next;
      return cursor <= lo;
    };
    size_t id = 0;
    PathNode node = internal::WalkStart(g0, in[r]->trace->api_calls, its, k, last_call_of[k], emit, &id);
    int64_t pass = -1;  // a collective of rank r this rank arrived at last: walked through, not crossed
    uint64_t crossed = 0;
    while (node != PathNode::kDone) {
      const std::vector<int32_t>& coupled = member_of[r];
      auto stop = [&](size_t act) {
        return act < coupled.size() && coupled[act] >= 0 && static_cast<int64_t>(act) != pass;
      };
      node = internal::WalkBack(graph_of(r), in[r]->trace->api_calls, classes[r], node, &id, lo, emit, stop);
      if (node != PathNode::kActEnd) break;
      // At coupled collective `id` of rank r: the last arrival, and whose.
      const PathCollective& c = collectives[static_cast<size_t>(coupled[id])];
      size_t last = 0, own = 0;
      for (size_t i = 0; i < c.calls.size(); ++i) {
        if (c.arrival[i] > c.arrival[last] ||
            (c.arrival[i] == c.arrival[last] && c.calls[i].first < c.calls[last].first))
          last = i;
        if (c.calls[i].first == r) own = i;
      }
      if (c.arrival[last] <= c.arrival[own] || crossed > members) {
        pass = static_cast<int64_t>(id);  // it arrived last (or the walk would not end): its whole duration
        continue;
      }
      // Its transfer after the last arrival is on the path; before it, the path is on that rank.
      const internal::ReplayActivity x = graph_of(r).Act(static_cast<uint32_t>(id));
      const TimeNs arrived = c.arrival[last] - offset[r];
      if (emit(PathKind::kCommunication, PathSegment::Table::kKernel, x.row, x.call, arrived, kUnknownId, kUnknownId))
        break;
      const size_t q = c.calls[last].first;
      const TimeNs shift = offset[r] - offset[q];  // r's clock to q's
      cursor += shift;
      lo += shift;
      r = q;
      id = c.calls[last].second;
      node = PathNode::kActStart;
      pass = -1;
      ++crossed;
      ++out->crossings;
    }
    if (cursor > lo) emit(PathKind::kUnattributed, PathSegment::Table::kNone, -1, -1, lo, kUnknownId, kUnknownId);
  }
  out->rank = in[slowest]->rank;
  out->iterations = its.iterations.size();
  for (size_t r = 0; r < n; ++r)
    if (rank_ns[r] > 0) out->rank_ns.emplace_back(in[r]->rank, rank_ns[r]);
}

}  // namespace

Status ReplayJob(const std::vector<JobRankInput>& inputs, const JobReplayChange& change, JobReplayResult* out) {
  *out = JobReplayResult{};
  if (inputs.size() < 2) return InvalidInput("a job's replay needs the traces of two or more ranks");
  std::vector<size_t> order(inputs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return inputs[a].rank < inputs[b].rank; });
  for (size_t k = 1; k < order.size(); ++k)
    if (inputs[order[k]].rank == inputs[order[k - 1]].rank)
      return InvalidInput(inputs[order[k - 1]].file + " and " + inputs[order[k]].file + " are both rank " +
                          std::to_string(inputs[order[k]].rank) + ": give each rank's trace once");
  for (int64_t r : change.ranks)
    if (std::none_of(inputs.begin(), inputs.end(), [&](const JobRankInput& in) { return in.rank == r; })) {
      std::string have;
      for (size_t k = 0; k < order.size() && k < 16; ++k)
        have += (k ? ", " : "") + std::to_string(inputs[order[k]].rank);
      if (order.size() > 16) have += ", ... (" + std::to_string(order.size()) + " ranks)";
      return InvalidInput("--rank " + std::to_string(r) + ": the job has no such rank (its ranks: " + have + ")");
    }
  const size_t n = inputs.size();
  std::vector<const JobRankInput*> in(n);
  for (size_t k = 0; k < n; ++k) in[k] = &inputs[order[k]];
  for (const JobRankInput* r : in)
    if (r->iterations->iterations.empty())
      return InvalidInput(r->file + " (rank " + std::to_string(r->rank) + "): no kept iterations to replay");

  // Each rank's collective calls, matched across the ranks as the job report matches them.
  KernelClassifier classifier;
  TG_RETURN_IF_ERROR(KernelClassifier::Create({}, &classifier));
  std::vector<std::string> names{""};
  std::map<std::string, uint32_t> ids{{"", 0}};
  auto intern = [&](const std::string& s) {
    auto [it, fresh] = ids.emplace(s, static_cast<uint32_t>(names.size()));
    if (fresh) names.push_back(s);
    return it->second;
  };
  std::vector<RankCalls> calls(n);
  std::vector<std::vector<uint32_t>> kernel_of(n);  // per rank, per call: its kernel row
  std::vector<std::vector<KernelClass>> classes(n);
  // Each rank's correlation index, built once: for its op links, its replays and the job's path.
  std::vector<internal::ApiIndex> rank_index;
  rank_index.reserve(n);
  for (size_t k = 0; k < n; ++k) {
    // By the launching op, then by name, as the analysis (and the job report) classes them.
    const OpLinks ops = LinkOps(*in[k]->trace, rank_index.emplace_back(in[k]->trace->api_calls));
    classes[k] = ClassifyKernels(*in[k]->trace, classifier, &ops.kernels, &ops.extra_names);
    const CommunicationAnalysis comm = AnalyzeCommunication(*in[k]->trace, *in[k]->iterations, classes[k], {});
    calls[k].rank = in[k]->rank;
    for (const CollectiveCall& c : comm.rank.calls) {
      RankCall call;
      call.name = intern(c.name);
      call.group = intern(c.group);
      call.seq = c.seq;
      call.step = c.step;
      call.start_ns = c.start_ns;
      call.end_ns = std::max(c.start_ns, c.end_ns);
      calls[k].calls.push_back(call);
      kernel_of[k].push_back(c.kernel);
    }
  }
  const CrossRankMatch match = MatchAcrossRanks(names, calls);

  std::vector<size_t> sizes;
  std::vector<std::pair<size_t, const MatchedCollective*>> coupled;
  for (const MatchedCollective& m : match.collectives) {
    if (!m.every_rank_waits) {
      ++out->not_waiting;
    } else if (m.doubtful) {
      ++out->doubtful;
    } else {
      coupled.emplace_back(sizes.size(), &m);
      sizes.push_back(m.calls.size());
    }
  }
  out->coupled = coupled.size();
  JobCollectives job(n, sizes);
  std::vector<std::unique_ptr<RankCoupling>> couplings(n);
  for (size_t k = 0; k < n; ++k)
    couplings[k] = std::make_unique<RankCoupling>(&job, k, match.offsets[k].value_or(0), in[k]->trace->kernels.size());
  std::vector<PathCollective> path_collectives(coupled.size());
  std::vector<std::vector<int32_t>> member_of(n);  // per rank, by kernel row: its coupled collective, -1 for none
  for (size_t k = 0; k < n; ++k) member_of[k].assign(in[k]->trace->kernels.size(), -1);
  for (const auto& [index, m] : coupled) {
    TimeNs latest = INT64_MIN;
    for (const auto& [r, c] : m->calls) latest = std::max(latest, calls[r].calls[c].start_ns + *match.offsets[r]);
    for (size_t slot = 0; slot < m->calls.size(); ++slot) {
      const auto [r, c] = m->calls[slot];
      const TimeNs transfer = std::max<TimeNs>(0, calls[r].calls[c].end_ns + *match.offsets[r] - latest);
      couplings[r]->Add(kernel_of[r][c], {index, slot, transfer});
      path_collectives[index].calls.emplace_back(r, kernel_of[r][c]);
      path_collectives[index].arrival.push_back(calls[r].calls[c].start_ns + *match.offsets[r]);
      member_of[r][kernel_of[r][c]] = static_cast<int32_t>(index);
    }
  }

  // Per rank on its own thread: the plan, the replay alone, then the replay with the job.
  out->ranks.resize(n);
  std::vector<Status> status(n);
  auto run = [&](size_t k) {
    const JobRankInput& r = *in[k];
    RankReplay& rr = out->ranks[k];
    rr.rank = r.rank;
    rr.file = r.file;
    rr.coupled = couplings[k]->size();
    rr.changed =
        change.ranks.empty() || std::find(change.ranks.begin(), change.ranks.end(), r.rank) != change.ranks.end();
    const ReplayChange none;
    try {
      const internal::ApiIndex& index = rank_index[k];
      internal::ReplayPlan plan;
      status[k] = internal::BuildReplayPlan(*r.trace, index, &plan);
      if (status[k].ok()) {
        status[k] = internal::ReplayEngine(*r.trace, *r.iterations, rr.changed ? change.change : none, &index,
                                           &rr.alone, nullptr, &plan);
        // A change that names nothing on this rank leaves it as recorded; any other error is the job's.
        if (!status[k].ok() && rr.changed && rr.alone.names_nothing) {
          rr.unmatched = status[k].message();
          status[k] = internal::ReplayEngine(*r.trace, *r.iterations, none, &index, &rr.alone, nullptr, &plan);
        }
      }
      if (status[k].ok()) {
        const ReplayChange& own = rr.changed && rr.unmatched.empty() ? change.change : none;
        status[k] =
            internal::ReplayEngine(*r.trace, *r.iterations, own, &index, &rr.job, nullptr, &plan, couplings[k].get());
      }
    } catch (const std::exception& e) {  // out of memory, a regex the library refuses late
      status[k] = InvalidInput(std::string("the replay failed: ") + e.what());
    }
    job.Finish(k);
  };
  // std::regex (the change's patterns, compiled on every rank's thread) reads ctype<char>::narrow,
  // whose table libstdc++ fills on each character's first use: filled here, the threads only read it.
  const std::ctype<char>& ctype = std::use_facet<std::ctype<char>>(std::locale());
  for (int c = 0; c < 256; ++c) ctype.narrow(static_cast<char>(c), '\0');
  {
    std::vector<std::thread> threads;
    threads.reserve(n);
    for (size_t k = 0; k < n; ++k) {
      try {
        threads.emplace_back(run, k);
      } catch (const std::system_error& e) {  // no more threads: the ranks not started fail
        for (size_t j = k; j < n; ++j) {
          status[j] = InvalidInput(std::string("cannot start a thread for its replay (") + e.what() +
                                   "): a job's replay takes one thread per rank");
          job.Finish(j);
        }
        break;
      }
    }
    for (std::thread& t : threads) t.join();
  }
  // A rank's own error before one the others got from it (a replay given up).
  for (bool given_up_error : {false, true})
    for (size_t k = 0; k < n; ++k)
      if (!status[k].ok() && (status[k].code() == StatusCode::kUnsupported) == given_up_error) {
        if (given_up_error)
          return Unsupported(
              "the ranks' collectives could not be replayed together: every rank's pass waits at a collective another "
              "rank has not reached (the calls are matched in orders the ranks do not share; analyze the job to see "
              "its doubtful and uneven matches)");
        return InvalidInput(in[k]->file + " (rank " + std::to_string(in[k]->rank) + "): " + status[k].message());
      }
  bool any_matched = false;
  for (const RankReplay& rr : out->ranks) any_matched = any_matched || (rr.changed && rr.unmatched.empty());
  if (!any_matched)
    for (size_t k = 0; k < n; ++k)
      if (out->ranks[k].changed)
        return InvalidInput("the change names nothing on any rank it is made on; " + in[k]->file + " (rank " +
                            std::to_string(in[k]->rank) + "): " + out->ranks[k].unmatched);

  auto slowest = [&](auto ms) {
    size_t best = 0;
    for (size_t k = 1; k < n; ++k)
      if (ms(out->ranks[k]) > ms(out->ranks[best])) best = k;
    return best;
  };
  out->slowest_base = slowest([](const RankReplay& r) { return r.base_ms(); });
  out->slowest_predicted = slowest([](const RankReplay& r) { return r.job_ms(); });
  out->slowest_alone = slowest([](const RankReplay& r) { return r.alone_ms(); });
  out->base_ms = out->ranks[out->slowest_base].base_ms();
  out->predicted_ms = out->ranks[out->slowest_predicted].job_ms();
  out->alone_ms = out->ranks[out->slowest_alone].alone_ms();
  for (const RankReplay& r : out->ranks)
    if (r.changed && r.unmatched.empty()) {
      out->assumptions = r.job.assumptions;
      break;
    }
  std::vector<TimeNs> offset(n);
  for (size_t k = 0; k < n; ++k) offset[k] = match.offsets[k].value_or(0);
  WalkJobPath(in, rank_index, classes, offset, path_collectives, member_of, out->slowest_base, &out->path);
  out->assumptions.push_back(
      "collectives across ranks: an all-reduce, all-gather, reduce-scatter or all-to-all matched on several ranks "
      "ends on each once the last of them has arrived, plus that rank's transfer time as recorded (its end minus the "
      "last recorded arrival; scaled when the change names the kernel); the ranks' clock offsets as aligned on the "
      "collectives' ends");
  out->assumptions.push_back(
      "collectives not coupled keep their recorded duration, waits included: those found on one rank only, "
      "broadcasts, reduces and sends/receives, and those whose kernels do not all overlap once the clocks are "
      "aligned");
  return Status::Ok();
}

}  // namespace tg
