// Lost data: the gate refuses to judge a run whose importer dropped more than a small share of
// the rows as malformed, or that lacks a whole table the other run has (an export without its
// kernel table, a Kineto trace without GPU events). Either would otherwise compare as a large
// "improvement" in GPU time and pass.
#include <optional>
#include <string>

#include "reports/document/report_document.h"
#include "reports/gate/compare_internal.h"

namespace tg::internal {

using nlohmann::json;

namespace {

// The report's counts{} rows: every table the importer keeps.
constexpr const char* kCountKeys[] = {"kernels", "memcpys", "memsets", "syncs",
                                      "runtime_calls", "driver_calls", "ranges", "samples"};

// Tables no run of a GPU program loses for a reason of its own: without kernels, copies or API
// calls the run is not comparable. Memsets and syncs are left out: a change can remove every one
// of them on purpose (torch.empty for torch.zeros, a dropped synchronize).
struct TableSpec {
  const char* what;                  // as the message names it
  std::initializer_list<const char*> keys;  // counts{} keys summed
};
const TableSpec kTables[] = {{"kernel records (counts.kernels)", {"kernels"}},
                             {"memcpy records (counts.memcpys)", {"memcpys"}},
                             {"runtime/driver API calls (counts.runtime_calls + driver_calls)",
                              {"runtime_calls", "driver_calls"}}};

// Sum of counts{keys}; nullopt when the report has no such numbers (an older or edited report).
std::optional<double> Rows(const json& counts, std::initializer_list<const char*> keys) {
  double sum = 0;
  for (const char* key : keys) {
    std::optional<double> v = Number(counts, key);
    if (!v) return std::nullopt;
    sum += *v;
  }
  return sum;
}

double CounterValue(const json& doc, std::string_view key) {
  for (const json& c : Array(Object(doc, "data_quality"), "counters"))
    if (Text(c, "key") == key) return Number(c, "count").value_or(0);
  return 0;
}

void CheckMalformed(const json& doc, const std::string& label, Comparison& c) {
  const double malformed = CounterValue(doc, "malformed_event");
  if (malformed <= 0) return;
  const json& counts = Object(doc, "counts");
  double kept = 0;
  for (const char* key : kCountKeys) kept += Number(counts, key).value_or(0);
  // The counter is trace-wide (an importer does not say which table a bad row was bound for), so
  // the share is of every row read: the rows kept plus the ones dropped.
  const double pct = malformed / (kept + malformed) * 100;
  if (pct <= c.options.max_malformed_pct) return;
  c.problems.push_back({"data_quality", label + ": malformed_event = " + FormatNumber(malformed, 0) + " of " +
                                            FormatNumber(kept + malformed, 0) + " rows read (" + FormatNumber(pct, 2) +
                                            "%) were dropped, over the " +
                                            FormatNumber(c.options.max_malformed_pct, -1) + "% limit"});
}

}  // namespace

void CheckLostData(const json& base, const json& next, Comparison& c) {
  CheckMalformed(base, c.base.label, c);
  CheckMalformed(next, c.next.label, c);
  const json *bc = Find(base, "counts"), *nc = Find(next, "counts");
  if (!bc || !nc || !bc->is_object() || !nc->is_object()) {
    c.notes.push_back("no counts in " + (bc ? c.next.label : nc ? c.base.label : std::string("either report")) +
                      "; tables not checked for lost data");
    return;
  }
  for (const TableSpec& t : kTables) {
    const std::optional<double> b = Rows(*bc, t.keys), n = Rows(*nc, t.keys);
    if (!b || !n || (*b > 0) == (*n > 0)) continue;
    const bool lost_in_new = *n == 0;
    const std::string& lost = lost_in_new ? c.next.label : c.base.label;
    const std::string& other = lost_in_new ? c.base.label : c.next.label;
    c.problems.push_back({"data_quality", lost + ": no " + t.what + " where " + other + " has " +
                                              FormatNumber(lost_in_new ? *b : *n, 0) +
                                              ": the table is missing or empty, so the runs cannot be compared"});
  }
}

}  // namespace tg::internal
