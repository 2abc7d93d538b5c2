#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "reports/document/report_document.h"
#include "reports/document/report_keys.h"
#include "reports/job/job_internal.h"
#include "tracegate/analyzer/kernel_class.h"
#include "tracegate/reports/job.h"

namespace tg::internal {

namespace {

// The per-rank figures a rank's report carries in ranks[0] (the single-trace communication
// figures): copied when present, null with a reason until then.
constexpr const char* kRankFigures[] = {"comm_ms", "compute_ms", "overlap_ratio"};

json NumberOrNull(const json& doc, std::string_view key, json& entry, const char* reason) {
  if (std::optional<double> v = Number(doc, key)) return *v;
  const std::string own = Text(doc, keys::ReasonKey(key));
  entry[keys::ReasonKey(key)] = own.empty() ? reason : own;
  return nullptr;
}

// The rank's kernel_table grouped by family (ShortKernelName), the kJobRankFamilies largest by
// time per iteration (ties by name), so a gate can say which kernels grew on a rank that got
// slower.
void KernelFamilies(const json& doc, json& e) {
  const json* table = Find(doc, "kernel_table");
  if (!table || !table->is_array()) {
    e["kernel_families"] = nullptr;
    e["kernel_families_reason"] = "the rank's report has no kernel_table";
    return;
  }
  struct Family {
    int64_t count = 0;
    double ms = 0;
  };
  std::map<std::string, Family> by_name;
  for (const json& row : *table) {
    const std::string name = Text(row, "name");
    if (name.empty()) continue;
    Family& f = by_name[ShortKernelName(name)];
    f.count += Int(row, "count");
    f.ms += Number(row, "per_iteration_ms").value_or(0);
  }
  std::vector<std::pair<std::string, Family>> rows(by_name.begin(), by_name.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
  json families = json::array();
  for (size_t i = 0; i < rows.size() && i < kJobRankFamilies; ++i)
    families.push_back({{"name", rows[i].first}, {"count", rows[i].second.count}, {"ms_per_iteration", rows[i].second.ms}});
  e["kernel_families"] = std::move(families);
  e["kernel_families_left_out"] = rows.size() - std::min(rows.size(), kJobRankFamilies);
}

// The rank's own entry of its report's ranks[] (a reference: the entry holds every collective
// call), or an empty object.
const json& OwnRank(const json& doc) {
  static const json kNone = json::object();
  const json& ranks = Array(doc, "ranks");
  return ranks.empty() ? kNone : ranks[0];
}

json Figures(const json& doc, const std::string& file) {
  const json& own = OwnRank(doc);
  json e = json::object();
  e["file"] = file;
  e[keys::kAvgLatencyMs.name] = NumberOrNull(doc, keys::kAvgLatencyMs.name, e, "the rank's report has no latency");
  e[keys::kP95LatencyMs.name] = NumberOrNull(doc, keys::kP95LatencyMs.name, e, "the rank's report has no latency");
  e[keys::kIterations.name] = Int(doc, keys::kIterations.name);
  e[keys::kIdleRatio.name] = NumberOrNull(doc, keys::kIdleRatio.name, e, "the rank's report has no idle ratio");
  for (const char* key : kRankFigures) e[key] = NumberOrNull(own, key, e, "not in the rank's report");
  KernelFamilies(doc, e);
  return e;
}


// The job's data-quality counters: every rank's summed by key (in the order first seen, the
// ranks in rank order), then the job's own.
json MergeQuality(json counters, bool has_errors, size_t numbered_by_order, const CrossRank& cross) {
  auto warn = [&](const char* key, uint64_t count, const char* description) {
    if (count > 0)
      counters.push_back({{"key", key}, {"severity", "warning"}, {"count", count}, {"description", description}});
  };
  warn("rank_from_file_order", numbered_by_order,
       "ranks numbered by the order of their files: neither distributedInfo.rank nor the file name (rank-N, rankN, "
       "rank_N, workerN) gave one");
  warn("collective_counts_differ", cross.uneven,
       "collectives matched across ranks by their order (no sequence numbers) whose number of calls differs between "
       "the ranks, per process group and name (and profiler step where the calls have one): a call missing on a rank "
       "pairs the calls after it with the wrong ones");
  warn("collective_match_doubtful", cross.doubtful,
       "collectives matched across ranks (all-reduce, all-gather, reduce-scatter, all-to-all) whose kernels do not "
       "overlap once the clocks are aligned, though none ends before every rank arrived: a call missing on a rank "
       "without sequence numbers, or clocks that drift; left out of waits and late arrivals");
  return {{"has_errors", has_errors}, {"counters", std::move(counters)}};
}

}  // namespace

const char* RankSourceName(RankSource s) {
  switch (s) {
    case RankSource::kDistributedInfo: return "distributed_info";
    case RankSource::kFileName: return "file_name";
    case RankSource::kFileOrder: break;
  }
  return "file_order";
}

void RankOfReport(const std::string& report_path, RankReport* r) {
  const json& own = Array(r->doc, "ranks");
  const std::string trace = Text(Object(r->doc, "source"), "path");
  r->file = trace.empty() ? report_path : trace;
  if (!own.empty() && Number(own[0], "rank")) {
    r->rank = Int(own[0], "rank");
    r->source = RankSource::kDistributedInfo;
  } else if (std::optional<int64_t> n = RankFromFileName(trace.empty() ? report_path : trace)) {
    r->rank = n;
    r->source = RankSource::kFileName;
  } else if (std::optional<int64_t> m = RankFromFileName(report_path)) {
    r->rank = m;
    r->source = RankSource::kFileName;
  }
}

JobReducer::JobReducer(size_t ranks, const RulesConfig& rules) : rules_(rules) {
  kept_.reserve(ranks);
  Intern("");  // id 0: no group
}

uint32_t JobReducer::Intern(const std::string& s) {
  auto [it, fresh] = name_ids_.emplace(s, static_cast<uint32_t>(names_.size()));
  if (fresh) names_.push_back(s);
  return it->second;
}

void JobReducer::Add(RankReport r) {
  Kept k;
  k.index = r.index;
  k.input = r.input.empty() ? r.file : r.input;
  k.file = r.file;
  k.rank = r.rank;
  k.source = r.source;
  k.figures = json::to_cbor(Figures(r.doc, r.file));
  const int64_t iterations = Int(r.doc, keys::kIterations.name);
  k.iterations = std::max<double>(1, static_cast<double>(iterations));
  for (const json& c : Array(OwnRank(r.doc), "collective_calls")) {
    RankCall call;
    call.name = Intern(Text(c, "name"));
    call.group = Intern(Text(c, "group"));
    if (Number(c, "seq")) call.seq = Int(c, "seq");
    if (Number(c, "step")) call.step = Int(c, "step");
    call.start_ns = Int(c, "start_ns");
    call.end_ns = Int(c, "end_ns");
    // Outside the rank's kept iterations its wait is not one of theirs; a report written before
    // `iteration`, or a rank without iterations, counts every call.
    const json* it = Find(c, "iteration");
    call.counted = iterations <= 0 || !it || !it->is_null();
    k.calls.Add(call);
  }
  k.calls.ShrinkToFit();
  k.collectives = json::to_cbor(Array(r.doc, "collectives"));
  const json& quality = Object(r.doc, "data_quality");
  for (const json& c : Array(quality, "counters")) {
    const std::string key = Text(c, "key");
    if (key.empty()) continue;
    auto [at, fresh] = counter_ids_.emplace(key, static_cast<uint32_t>(counters_.size()));
    if (fresh) counters_.push_back(c);
    k.counters.emplace_back(at->second, Int(c, "count"));
  }
  k.has_errors = Flag(quality, "has_errors");
  kept_.push_back(std::move(k));
  // The body: the slowest rank's report; any report until one has a latency. Ties go to the
  // lower rank (ranks still to be numbered by file order after every numbered one, in file
  // order), so neither the order of the files nor of the workers changes the body.
  const std::optional<double> ms = Number(r.doc, keys::kAvgLatencyMs.name);
  const auto order = std::make_tuple(!r.rank.has_value(), r.rank.value_or(0), r.index);
  const bool before = order < slowest_order_;
  const bool slower = ms && (!slowest_ms_ || *ms > *slowest_ms_ || (*ms == *slowest_ms_ && before));
  const bool first = !have_body_ || (!slowest_ms_ && !ms && before);
  if (slower || first) {
    // The body's ranks[] becomes the job's: its collective calls (most of a report) go now.
    r.doc.erase("ranks");
    slowest_doc_ = std::move(r.doc);
    if (ms) slowest_ms_ = ms;
    slowest_index_ = r.index;
    slowest_order_ = order;
    have_body_ = true;
  }
}

Status DuplicateRank(const std::string& a, RankSource a_source, const std::string& b, RankSource b_source,
                     int64_t rank) {
  if (a == b) return InvalidInput(a + ": given twice (rank " + std::to_string(rank) + ")");
  // A directory of several profiling cycles (tensorboard_trace_handler writes a file per rank and
  // cycle) is several jobs: say so.
  return InvalidInput(a + " and " + b + ": both are rank " + std::to_string(rank) + " (" + RankSourceName(a_source) +
                      ", " + RankSourceName(b_source) + "); a job takes one trace per rank");
}

StatusOr<json> JobReducer::Finish(const char* built_from) {
  if (kept_.empty()) return InvalidInput("a job needs at least one rank");
  std::sort(kept_.begin(), kept_.end(), [](const Kept& a, const Kept& b) { return a.index < b.index; });
  std::set<int64_t> taken;
  for (const Kept& k : kept_)
    if (k.rank) taken.insert(*k.rank);
  size_t by_order = 0;
  int64_t next = 0;
  for (Kept& k : kept_) {
    if (k.rank) continue;
    while (taken.count(next)) ++next;
    k.rank = next;
    taken.insert(next);
    k.source = RankSource::kFileOrder;
    ++by_order;
  }
  std::sort(kept_.begin(), kept_.end(), [](const Kept& a, const Kept& b) {
    return *a.rank != *b.rank ? *a.rank < *b.rank : a.index < b.index;
  });
  for (size_t i = 1; i < kept_.size(); ++i)
    if (*kept_[i].rank == *kept_[i - 1].rank)
      return DuplicateRank(kept_[i - 1].input, kept_[i - 1].source, kept_[i].input, kept_[i].source, *kept_[i].rank);

  std::vector<RankCalls> calls;
  std::vector<std::vector<CollectiveStat>> collectives;
  calls.reserve(kept_.size());
  collectives.reserve(kept_.size());
  for (Kept& k : kept_) {
    calls.push_back({*k.rank, k.calls.Unpack(), k.iterations});
    k.calls = PackedCalls();
    collectives.push_back(RankCollectives({{"collectives", json::from_cbor(k.collectives)}}));
    std::vector<uint8_t>().swap(k.collectives);
  }
  const CrossRank cross = AnalyzeCrossRank(names_, calls);

  json ranks = json::array();
  // Every rank's counters summed by key, in the order first seen, the ranks in rank order.
  json counters = json::array();
  std::vector<size_t> counter_at(counters_.size(), SIZE_MAX);
  bool has_errors = false;
  std::optional<int64_t> slowest;
  std::optional<size_t> slowest_at;
  // Offsets are onto the clock of the first rank that shares collectives (ranks in rank order).
  size_t reference = SIZE_MAX;
  for (const RankAlignment& a : cross.ranks)
    if (a.clock_reference != SIZE_MAX) {
      reference = a.clock_reference;
      break;
    }
  for (size_t i = 0; i < kept_.size(); ++i) {
    const Kept& k = kept_[i];
    const RankAlignment& a = cross.ranks[i];
    json e = {{"rank", *k.rank}, {"rank_source", RankSourceName(k.source)}};
    e.update(json::from_cbor(k.figures));
    if (a.shared > 0) {
      e["wait_ms"] = a.wait_ms;
    } else {
      e["wait_ms"] = nullptr;
      e["wait_ms_reason"] = "no collective found on another rank";
    }
    if (a.clock_offset_ns && a.clock_reference == reference) {
      e["clock_offset_ns"] = *a.clock_offset_ns;
    } else if (a.clock_offset_ns) {
      // Its waits are measured among the ranks it shares collectives with, on their own clock.
      e["clock_offset_ns"] = nullptr;
      e["clock_offset_ns_reason"] = "no collective shared, directly or through other ranks, with rank " +
                                    std::to_string(*kept_[reference].rank) + ": aligned to rank " +
                                    std::to_string(*kept_[a.clock_reference].rank) + " instead (" +
                                    std::to_string(*a.clock_offset_ns) + " ns onto its clock)";
    } else {
      e["clock_offset_ns"] = nullptr;
      e["clock_offset_ns_reason"] = "no collective shared with another rank";
    }
    e["collectives"] = calls[i].calls.size();
    e["last_arrivals"] = a.last;
    ranks.push_back(std::move(e));
    for (const auto& [id, count] : k.counters) {
      if (counter_at[id] == SIZE_MAX) {
        counter_at[id] = counters.size();
        counters.push_back(counters_[id]);
        counters.back()["count"] = 0;
      }
      json& sum = counters[counter_at[id]];
      sum["count"] = Int(sum, "count") + count;
    }
    has_errors = has_errors || k.has_errors;
    if (k.index == slowest_index_ && slowest_ms_) {
      slowest = *k.rank;
      slowest_at = i;
    }
  }

  json doc = std::move(slowest_doc_);
  doc["iteration_table"] = json::array();  // each rank's report has its rows
  json table = JobCollectivesJson(collectives);
  size_t devices = 0;  // the slowest rank's devices with kernels: its comm/compute figures sum over them
  for (const json& d : Array(doc, "devices"))
    if (Int(d, "kernels") > 0) ++devices;
  json findings = CrossRankFindings(ranks, cross, slowest_ms_, slowest_at, devices, table, rules_);
  // With --replay-findings the slowest rank's findings carry its own trace's replay; the findings
  // across ranks get none: a job report is reduced from its ranks' reports, each replayed alone
  // (predict DIR replays the ranks together).
  const json* own = Find(doc, "combined_estimate");
  if (own && own->contains("replay"))
    for (json& f : findings) {
      f["replay"] = nullptr;
      f["replay_reason"] =
          "a finding across the job's ranks: the job report is reduced from its ranks' reports, each replayed alone; "
          "predict DIR replays the ranks together, their collectives coupled";
    }
  if (const json* rank = Find(doc, "findings"); rank && rank->is_array())
    for (const json& f : *rank) findings.push_back(f);
  MarkSharedClaims(findings);
  // One list in the order every report uses (OrderFindings): priority, then predicted overall
  // speedup (null: the part's time disappears, the largest), ties in the order above.
  auto rank_of = [](const json& f) {
    const std::string p = f.value("priority", "");
    return p == "high" ? 0 : p == "medium" ? 1 : 2;
  };
  auto overall = [](const json& f) {
    const json* a = f.contains("amdahl") ? &f["amdahl"] : nullptr;
    if (!a || !a->contains("overall_speedup")) return 1.0;
    const json& o = (*a)["overall_speedup"];
    return o.is_number() ? o.get<double>() : std::numeric_limits<double>::infinity();
  };
  std::stable_sort(findings.begin(), findings.end(), [&](const json& a, const json& b) {
    if (rank_of(a) != rank_of(b)) return rank_of(a) < rank_of(b);
    return overall(a) > overall(b);
  });
  doc["findings"] = std::move(findings);
  doc["data_quality"] = MergeQuality(std::move(counters), has_errors, by_order, cross);
  doc["ranks"] = std::move(ranks);
  if (slowest) {
    doc["slowest_rank"] = *slowest;
  } else {
    doc["slowest_rank"] = nullptr;
    doc["slowest_rank_reason"] = "no rank has iterations with a latency";
  }
  doc["job"] = {{"ranks", kept_.size()},
                {"built_from", built_from},
                {"shared_collectives", cross.shared_collectives},
                {"matched_by", cross.matched_by},
                {"collectives", std::move(table)}};
  return doc;
}

}  // namespace tg::internal
