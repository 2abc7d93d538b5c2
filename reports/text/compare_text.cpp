// The comparison for CI systems: JUnit XML (the Markdown is in compare_markdown.cpp; the number
// formats every text of the comparison shares are the gate's, reports/gate/compare_format.cpp). Every string that came
// from a trace is escaped for the format it lands in.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iterator>
#include <sstream>
#include <string_view>
#include <vector>

#include "reports/document/report_keys.h"
#include "reports/gate/compare_internal.h"
#include "tracegate/reports/compare.h"

namespace tg {

namespace keys = internal::keys;

namespace {

// XML 1.0 text or attribute value: markup characters as entities, control characters that XML
// cannot carry dropped.
std::string Xml(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(ch) >= 0x20 || ch == '\n' || ch == '\t' || ch == '\r') out += ch;
    }
  }
  return out;
}

struct JunitCase {
  std::string name;
  std::string kind;  // "", "failure", "error", "skipped"
  std::string message;
  std::string out = "";  // the case's <system-out>, when not empty
};

constexpr const char* kNotJudged = "not judged: the inputs cannot be compared";

// Serving reports (compare_serving.cpp): in place of avg_latency_ms, one case per step group on
// both sides ("serving decode 64-127 tokens ms_per_token": a failure when it regressed, skipped when
// it has too few steps), the workload verdict as a case that never fails, with its text as
// system-out, and an error case "serving ms_per_token" when the latency check cannot judge (no
// group on both sides). `latency` is the avg_latency_ms case as the plain gate would write it.
std::vector<JunitCase> ServingCases(const Comparison& c, const JunitCase& latency) {
  std::vector<JunitCase> cases;
  if (latency.kind == "error") cases.push_back({"serving ms_per_token", "error", latency.message});
  const bool skip = latency.kind == "skipped" || c.verdict == Verdict::kCannotJudge;
  for (const ServingGroupDelta& g : c.serving.groups) {
    if (g.base_steps == 0 || g.new_steps == 0) continue;  // the workload case says so
    JunitCase jc{"serving " + internal::ServingGroupName(g) + " ms_per_token", "", ""};
    const std::string verdict = internal::ServingGroupVerdict(c, g);
    if (skip && latency.kind != "error") {
      jc = {jc.name, "skipped", kNotJudged};
    } else if (!g.judged) {
      jc = {jc.name, "skipped", verdict};
    } else if (g.regression) {
      jc = {jc.name, "failure", verdict};
    } else {
      jc.out = verdict;
    }
    cases.push_back(std::move(jc));
  }
  const ServingComparison& s = c.serving;
  cases.push_back({"serving workload", "", "",
                   s.workload_changed
                       ? s.workload_text
                       : "workload unchanged: every step group on both sides, step mix shifted by " +
                             internal::FormatNumber(s.step_mix_distance * 100, 1) + "% (" +
                             internal::FormatNumber(kServingMixLimit * 100, -1) + "% or more is a workload change)"});
  return cases;
}

}  // namespace

std::string ComparisonJunit(const Comparison& c) {
  std::vector<JunitCase> cases;
  for (const char* check : {"inputs", "devices", "data_quality", "latency"}) {
    JunitCase jc{check == std::string_view("latency") ? std::string(keys::kAvgLatencyMs.name) : check, "", ""};
    for (const CompareProblem& p : c.problems)
      if (p.check == check) {
        jc.kind = "error";
        jc.message += (jc.message.empty() ? "" : "; ") + p.message;
      }
    cases.push_back(std::move(jc));
  }
  // Checks that could not run because an input is unusable are skipped, not passed.
  const bool inputs_ok = cases.front().kind.empty();
  for (JunitCase& jc : cases)
    if (!inputs_ok && jc.kind.empty()) jc = {jc.name, "skipped", kNotJudged};
  const bool latency_failed =
      c.verdict == Verdict::kRegression &&
      (c.serving.applies ? c.serving.regressions > 0  // serving: a step group's ms/token
                         : c.over_threshold && (!c.options.require_significance || c.significant));
  if (c.options.has_kernel_threshold) {
    JunitCase kernels{"kernel_gpu_time", "", ""};
    if (!c.families_over.empty()) kernels = {kernels.name, "failure", c.verdict_text};
    else if (c.verdict == Verdict::kCannotJudge) kernels = {kernels.name, "skipped", kNotJudged};
    cases.push_back(std::move(kernels));
  }
  JunitCase& latency_case = cases[3];
  if (latency_failed) {
    latency_case = {latency_case.name, "failure", c.verdict_text};
  } else if (c.verdict == Verdict::kCannotJudge && latency_case.kind.empty()) {
    latency_case = {latency_case.name, "skipped", kNotJudged};
  }
  if (c.serving.applies) {
    std::vector<JunitCase> serving = ServingCases(c, latency_case);
    cases.erase(cases.begin() + 3);
    cases.insert(cases.begin() + 3, std::make_move_iterator(serving.begin()), std::make_move_iterator(serving.end()));
  }
  size_t failures = 0, errors = 0, skipped = 0;
  for (const JunitCase& jc : cases) {
    failures += jc.kind == "failure";
    errors += jc.kind == "error";
    skipped += jc.kind == "skipped";
  }
  std::ostringstream out;
  const std::string totals = "tests=\"" + std::to_string(cases.size()) + "\" failures=\"" + std::to_string(failures) +
                             "\" errors=\"" + std::to_string(errors) + "\"";
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"tracegate\" " << totals << ">\n"
      << "  <testsuite name=\"tracegate.gate\" " << totals << " skipped=\"" << skipped << "\">\n";
  for (const JunitCase& jc : cases) {
    out << "    <testcase classname=\"tracegate.gate\" name=\"" << Xml(jc.name) << "\"";
    if (jc.kind.empty() && jc.out.empty()) {
      out << "/>\n";
      continue;
    }
    out << ">\n";
    if (!jc.kind.empty()) {
      out << "      <" << jc.kind << " message=\"" << Xml(jc.message) << "\"";
      if (jc.kind == "skipped") {
        out << "/>\n";
      } else {
        out << " type=\"" << VerdictName(c.verdict) << "\">" << Xml(c.verdict_text) << "</" << jc.kind << ">\n";
      }
    }
    if (!jc.out.empty()) out << "      <system-out>" << Xml(jc.out) << "</system-out>\n";
    out << "    </testcase>\n";
  }
  out << "    <system-out>" << Xml(c.verdict_text);
  for (const std::string& n : c.notes) out << "\nnote: " << Xml(n);
  out << "</system-out>\n  </testsuite>\n</testsuites>\n";
  return out.str();
}

}  // namespace tg
