#include "reports/document/report_document.h"

#include <algorithm>
#include <cmath>

#include "analyzer/util/json_file.h"
#include "reports/document/report_keys.h"
#include "tracegate/reports/analysis_report.h"

namespace tg::internal {

namespace {

bool IsNumberOrNull(const json& v) { return v.is_number() || v.is_null(); }
bool IsNumberArray(const json& v) {
  return v.is_array() && std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_number(); });
}
bool IsArray(const json& v) { return v.is_array(); }
bool IsQualityObject(const json& v) {
  const json* errors = Find(v, "has_errors");
  const json* counters = Find(v, "counters");
  return errors && errors->is_boolean() && counters && counters->is_array();
}

struct KeyRule {
  std::string_view key;
  bool (*ok)(const json&);
  const char* expected;
};

// The keys compare/gate read; the full document is described by reports/schema/.
constexpr KeyRule kGateKeys[] = {
    {keys::kAvgLatencyMs.name, IsNumberOrNull, "a number or null"},
    {keys::kP95LatencyMs.name, IsNumberOrNull, "a number or null"},
    {keys::kThroughputFps.name, IsNumberOrNull, "a number or null"},
    {keys::kLatencySamplesMs.name, IsNumberArray, "an array of numbers"},
    {"devices", IsArray, "an array"},
    {"data_quality", IsQualityObject, "an object with has_errors and counters[]"},
};

}  // namespace

Status LoadReportFile(const std::string& path, const char* what, json* doc) {
  return ReadJsonFile(path, what, doc);
}

ReportCheck CheckReportDocument(const json& doc, ReportNeeds needs) {
  ReportCheck check;
  if (!doc.is_object()) {
    check.fault = ReportFault::kNotObject;
    return check;
  }
  const json* schema = Find(doc, "schema");
  if (!schema || !schema->is_string()) {
    check.fault = ReportFault::kNoSchema;
    return check;
  }
  if (*schema != kReportSchema) {
    check.fault = ReportFault::kOtherSchema;
    check.schema = schema->get<std::string>();
    return check;
  }
  if (needs.gate_keys)
    for (const KeyRule& rule : kGateKeys) {
      const json* v = Find(doc, rule.key);
      if (!v || !rule.ok(*v)) {
        check.fault = v ? ReportFault::kWrongType : ReportFault::kMissingKey;
        check.key = rule.key;
        check.expected = rule.expected;
        return check;
      }
    }
  if (needs.positive_latency && Number(doc, keys::kAvgLatencyMs.name).value_or(0) <= 0)
    check.fault = ReportFault::kNoLatency;
  return check;
}

const json* Find(const json& doc, std::string_view key) {
  if (!doc.is_object()) return nullptr;
  auto it = doc.find(key);
  return it == doc.end() ? nullptr : &*it;
}

std::optional<double> Number(const json& doc, std::string_view key) {
  const json* v = Find(doc, key);
  if (!v || !v->is_number()) return std::nullopt;
  double x = v->get<double>();
  if (!std::isfinite(x)) return std::nullopt;
  return x;
}

int64_t Int(const json& doc, std::string_view key, int64_t fallback) {
  const json* v = Find(doc, key);
  if (!v || !v->is_number()) return fallback;
  if (v->is_number_integer()) return v->get<int64_t>();
  double x = v->get<double>();
  return std::isfinite(x) ? std::llround(x) : fallback;
}

std::string Text(const json& doc, std::string_view key) {
  const json* v = Find(doc, key);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}

bool Flag(const json& doc, std::string_view key) {
  const json* v = Find(doc, key);
  return v && v->is_boolean() && v->get<bool>();
}

const json& Array(const json& doc, std::string_view key) {
  static const json kEmpty = json::array();
  const json* v = Find(doc, key);
  return v && v->is_array() ? *v : kEmpty;
}

const json& Object(const json& doc, std::string_view key) {
  static const json kEmpty = json::object();
  const json* v = Find(doc, key);
  return v && v->is_object() ? *v : kEmpty;
}

std::string GapPrevious(const json& gap) { return Find(gap, "previous") ? Text(gap, "previous") : Text(gap, "before"); }

std::string GapNext(const json& gap) { return Find(gap, "next") ? Text(gap, "next") : Text(gap, "after"); }

bool IsJobReport(const json& doc) {
  const json* job = Find(doc, "job");
  const json* ranks = Find(doc, "ranks");
  return job && job->is_object() && ranks && ranks->is_array();
}

}  // namespace tg::internal
