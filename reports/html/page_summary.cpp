#include "reports/html/page_summary.h"
#include "reports/document/report_keys.h"

#include <algorithm>
#include <array>
#include <map>
#include <string_view>

#include "tracegate/analyzer/kernel_class.h"

namespace tg::internal {

namespace {

const char* CausePhrase(const std::string& cause) {
  if (cause == "host_launch") return "waiting for the host to launch work";
  if (cause == "host_stage") return "while the host runs its pre- or post-processing";
  if (cause == "communication") return "waiting for communication";
  if (cause == "dependency_sync") return "waiting on synchronisation";
  if (cause == "host_compute") return "while the host computes something that launches no GPU work";
  if (cause == "jit_compile") return "while the host compiles kernels";
  if (cause == "host_sync") return "while the host blocks in a sync or a synchronous copy";
  if (cause == "host_idle") return "while the host does nothing (waiting for input or another process)";
  if (cause == "graph_capture") return "while a graph is being captured";
  if (cause == "device_backlog") return "running work the trace does not hold (device backlog)";
  return "for reasons the trace does not show";
}

std::string Percent(double ratio) { return FormatValue(ratio, Unit::kPercent); }

// The idle time inside the iterations by cause, summed over the devices; the longest such gap of
// the leading cause (its "next" work) when the report lists one.
struct IdleCauses {
  std::map<std::string, double> ns;
  double total = 0;
};
IdleCauses InIterationCauses(const json& doc) {
  IdleCauses c;
  // The iterations' idle phase by cause (gpu_idle), else the devices' gaps inside the iterations.
  if (const json* idle = Find(doc, "gpu_idle"); idle && idle->is_object()) {
    for (const auto& [cause, ns] : Object(*idle, "idle_phase_by_cause_ns").items())
      if (ns.is_number() && ns.get<double>() > 0) {
        c.ns[cause] += ns.get<double>();
        c.total += ns.get<double>();
      }
    return c;
  }
  for (const json& d : Array(doc, "devices"))
    for (const auto& [cause, ns] : Object(Object(Object(d, "gaps"), "in_iterations"), "by_cause_ns").items())
      if (ns.is_number()) {
        c.ns[cause] += ns.get<double>();
        c.total += ns.get<double>();
      }
  return c;
}
std::string LongestGapBefore(const json& doc, const std::string& cause) {
  double longest = 0;
  std::string next;
  // A host cause: the frames the host was in during the longest such interval.
  for (const json& g : Array(Object(doc, "gpu_idle"), "largest"))
    if (Text(g, "cause") == cause && !Array(g, "host_frames").empty())
      return "in " + Text(Array(g, "host_frames")[0], "path");
  for (const json& d : Array(doc, "devices"))
    for (const json& g : Array(Object(Object(d, "gaps"), "in_iterations"), "largest"))
      if (Text(g, "cause") == cause && Number(g, "duration_ns").value_or(0) > longest) {
        longest = Number(g, "duration_ns").value_or(0);
        next = Text(g, "next");
      }
  return next.empty() ? "" : KernelLabelText(ReportKernelLabels(doc), next);
}

// Where the time goes, in words.
std::string WhereTimeGoes(const json& doc) {
  if (!Text(doc, "no_device_activity").empty()) return "the trace holds no GPU work (" + Text(doc, "no_device_activity") + ")";
  if (!Text(doc, "graph_capture").empty()) return Text(doc, "graph_capture");
  auto idle = Number(doc, keys::kIdleRatio.name);
  if (!idle) return "";
  if (*idle >= 0.15) {
    std::string text = "the GPU is idle " + Percent(*idle) + " of the iteration time";
    const IdleCauses c = InIterationCauses(doc);
    if (c.total <= 0) return text;
    const auto top = std::max_element(c.ns.begin(), c.ns.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    const double share = top->second / c.total;
    text += std::string(share >= 0.5 ? ", mostly " : ", largely ") + CausePhrase(top->first) + " (" + Percent(share) +
            " of the idle time)";
    if (std::string next = LongestGapBefore(doc, top->first); next.starts_with("in ")) text += ", the longest " + next;
    else if (!next.empty()) text += ", the longest gap before " + next;
    return text;
  }
  std::string text = "the GPU is busy " + Percent(1 - *idle) + " of the iteration time";
  const json& top = Array(doc, "top_kernels");
  if (!top.empty() && Number(top[0], "share_ratio"))
    text += ", " + KernelLabelText(ReportKernelLabels(doc), Text(top[0], "name")) + " the largest part (" +
            Percent(*Number(top[0], "share_ratio")) + " of kernel time)";
  return text;
}

}  // namespace

std::string SummarySentence(const json& doc) {
  std::string text;
  const double n = Number(doc, keys::kIterations.name).value_or(0);
  if (n >= 2 && Number(doc, keys::kP50LatencyMs.name))
    text =
        StrFormat("%.0f iterations of ", n) + FormatValue(*Number(doc, keys::kP50LatencyMs.name), Unit::kMs) + " (p50)";
  else if (n == 1 && Number(doc, keys::kAvgLatencyMs.name))
    text = "1 iteration of " + FormatValue(*Number(doc, keys::kAvgLatencyMs.name), Unit::kMs);
  else
    text = "No iterations";
  if (std::string where = WhereTimeGoes(doc); !where.empty()) text += ": " + where;
  const json& findings = Array(doc, "findings");
  if (!findings.empty()) {
    const json& f = findings[0];
    std::string first;
    for (const json& s : Array(f, "strategies"))
      if (s.is_string()) {
        first = s.get<std::string>();
        break;
      }
    if (!first.empty() && first.back() == '.') first.pop_back();
    // "The GPU mostly waits for launches: capture the loop ...": the advice is after the colon.
    if (size_t colon = first.find(": "); colon != std::string::npos && colon + 2 < first.size()) first.erase(0, colon + 2);
    if (!first.empty()) first[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(first[0])));
    const auto gain = Number(Object(f, "amdahl"), "gain_pct");
    text += "; try: " + (first.empty() ? Text(f, "title") : first) + " (" +
            (gain ? StrFormat("%+.1f%% predicted, ", *gain) : std::string()) + Text(f, "id") + ")";
  } else if (Find(doc, "findings")) {
    text += "; no rule found anything to improve";
  }
  return text + ".";
}

std::string SummaryPriority(const json& doc) {
  const json& findings = Array(doc, "findings");
  return findings.empty() ? "" : Text(findings[0], "priority");
}

std::vector<HeadlineRow> HeadlineCards(const json& doc, std::vector<std::string>* hidden) {
  const double n = Number(doc, keys::kIterations.name).value_or(0);
  std::vector<HeadlineRow> cards;
  for (const keys::Key* k : keys::kCards) {
    if ((k->shown & keys::kCardIfSeveral) && n == 1) continue;  // one iteration: one latency card
    if (!Find(doc, k->name)) continue;                          // not in this report: nothing to say
    Shown s = Show(doc, k->name, k->unit);
    const std::optional<double> v = Number(doc, k->name);
    // A share that rounds to 0.0% is there all the same: say so rather than print a zero.
    if (s.present && k->unit == Unit::kPercent && v.value_or(1) > 0 && v.value_or(1) < 0.0005) s.text = "<0.1%";
    const bool worth = k->card_rule == keys::CardRule::kAlways ||
                       (k->card_rule == keys::CardRule::kManyIterations && n >= keys::kCardMinIterations) ||
                       (k->card_rule == keys::CardRule::kPositive && v.value_or(0) > 0);
    std::string label(n == 1 && k == &keys::kAvgLatencyMs ? "Latency"
                      : k->card_label.empty()             ? k->label
                                                          : k->card_label);
    if (s.present && worth) cards.push_back({k, label, s});
    else if (hidden) hidden->push_back(label + " (" + (s.present ? std::string(k->card_hidden) : s.reason) + ")");
  }
  return cards;
}

}  // namespace tg::internal
