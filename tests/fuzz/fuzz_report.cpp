// libFuzzer target for the report and baseline readers: any bytes as a report file, read as the
// gate reads NEW (ReadReportOrTrace), compared with a fixed valid report both ways (the gate's
// verdict, JSON, Markdown, JUnit, the terminal text), rendered as Markdown and HTML, and read as a
// stored baseline (LoadBaseline, ListBaselines). Seeds: the report fixtures and baselines/.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "fuzz_util.h"
#include "tracegate/reports/baseline.h"
#include "tracegate/reports/compare.h"
#include "tracegate/reports/report_html.h"

namespace {
const nlohmann::json& ValidReport() {
  static const nlohmann::json report = [] {
    std::ifstream in(TRACEGATE_FIXTURES_DIR "/summary/expected_report.json");
    return nlohmann::json::parse(in);
  }();
  return report;
}

void Exercise(const tg::Comparison& c) {
  std::ostringstream out;
  tg::PrintComparison(out, c);
  (void)tg::ComparisonToJson(c).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  (void)tg::ComparisonMarkdown(c);
  (void)tg::ComparisonJunit(c);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = tg::fuzz::WriteInput(data, size, ".json");
  nlohmann::json report;
  if (tg::ReadReportOrTrace(path, &report).ok()) {
    tg::CompareOptions options;
    Exercise(tg::CompareReports(ValidReport(), report, options));
    Exercise(tg::CompareReports(report, ValidReport(), options));
    (void)tg::MarkdownReport(report);
    (void)tg::HtmlReport(report);
  }
  // The same bytes as a stored baseline.
  static const std::string dir = path + ".baselines";
  ::mkdir(dir.c_str(), 0700);
  const std::string stored = dir + "/fuzzed.json";
  ::unlink(stored.c_str());
  if (::link(path.c_str(), stored.c_str()) != 0) std::abort();
  nlohmann::json baseline;
  std::string label;
  (void)tg::LoadBaseline(dir, "fuzzed", &baseline, &label);
  std::vector<tg::BaselineInfo> list;
  (void)tg::ListBaselines(dir, &list);
  return 0;
}
