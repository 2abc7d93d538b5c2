#include "reports/report/communication_json.h"
#include "reports/document/report_keys.h"

#include <optional>
#include <string>

namespace tg::internal {

namespace {

using nlohmann::json;

// obj[key] = value, or null with obj[keys::ReasonKey(key)] = reason.
template <class T>
void ValueOrNull(json& obj, std::string_view key, const std::optional<T>& value, const std::string& reason) {
  if (value) {
    obj[key] = *value;
  } else {
    obj[key] = nullptr;
    obj[keys::ReasonKey(key)] = reason;
  }
}

json TextOrNull(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

}  // namespace

json CollectiveJson(const CollectiveStat& s) {
  json r = {{"collective", s.collective},
            {"dtype", TextOrNull(s.dtype)},
            {"group_size", s.group_size > 0 ? json(s.group_size) : json(nullptr)},
            {"count", s.count},
            {"total_ms", NsToMs(s.total_ns)},
            {"mean_ms", s.count ? NsToMs(s.total_ns) / static_cast<double>(s.count) : 0.0}};
  ValueOrNull(r, "message_bytes", s.bytes, s.bytes_reason);
  ValueOrNull(r, "algbw_gbs", s.algbw_gbs, s.algbw_reason);
  ValueOrNull(r, "busbw_gbs", s.busbw_gbs, s.busbw_reason);
  return r;
}

json CollectivesJson(const CommunicationAnalysis& c) {
  json rows = json::array();
  for (const CollectiveStat& s : c.collectives) rows.push_back(CollectiveJson(s));
  return rows;
}

json RanksJson(const Analysis& analysis) {
  const RankCommunication& rc = analysis.communication.rank;
  const IterationAnalysis& it = analysis.iterations;
  const bool has = !it.iterations.empty() && it.total_ns > 0;
  const std::string why = it.iterations.empty() ? "no iterations" : "the iterations have zero length";
  json r = json::object();
  ValueOrNull(r, "rank", rc.rank, rc.rank_reason);
  r["file"] = TextOrNull(rc.file);
  ValueOrNull(r, keys::kAvgLatencyMs.name, has ? std::optional<double>(it.latency_ms.mean) : std::nullopt, why);
  ValueOrNull(r, "comm_ms", rc.comm_ms, rc.comm_reason);
  ValueOrNull(r, "compute_ms", rc.compute_ms, rc.comm_reason);
  ValueOrNull(r, "overlap_ratio", rc.overlap_ratio, rc.overlap_reason);
  ValueOrNull<double>(r, "wait_ms", std::nullopt, "single rank: waits need the other ranks");
  // The headline idle_ratio: the iterations' idle phase over their summed latency.
  const bool idle = has && analysis.summary.no_device_activity.empty();
  ValueOrNull(r, keys::kIdleRatio.name,
              idle ? std::optional<double>(it.phase_ratio[static_cast<size_t>(Phase::kIdle)]) : std::nullopt,
              has ? analysis.summary.no_device_activity : why);
  json calls = json::array();
  for (const CollectiveCall& c : rc.calls) {
    calls.push_back({{"name", c.name},
                     {"group", TextOrNull(c.group)},
                     {"seq", c.seq == kUnknownId ? json(nullptr) : json(c.seq)},
                     {"start_ns", c.start_ns},
                     {"end_ns", c.end_ns},
                     {"bytes", c.bytes ? json(*c.bytes) : json(nullptr)},
                     {"iteration", c.iteration >= 0 ? json(c.iteration) : json(nullptr)},
                     {"step", c.step >= 0 ? json(c.step) : json(nullptr)}});
  }
  r["collective_calls"] = std::move(calls);
  return json::array({std::move(r)});
}

}  // namespace tg::internal
