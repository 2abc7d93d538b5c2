// libFuzzer target: any bytes as a trace file (Kineto / Chrome JSON, gzip, SQLite: the format is
// detected from the content as the CLI does), then, when it imports, the whole analysis and the
// report (JSON, text, Markdown, HTML). Import must fail with a Status or succeed; nothing may
// crash, hang, leak or hit undefined behaviour. Seeds: tests/fixtures/**.
#include <cstdint>
#include <sstream>

#include "fuzz_util.h"
#include "tracegate/analyzer/analysis.h"
#include "tracegate/reports/analysis_report.h"
#include "tracegate/analyzer/import.h"
#include "tracegate/reports/report_html.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = tg::fuzz::WriteInput(data, size, ".trace");
  tg::Trace trace;
  tg::ImportOptions options;
  options.threads = 1;
  if (!tg::ImportTrace(path, options, &trace).ok()) return 0;
  tg::AnalysisConfig config;
  tg::Analysis analysis;
  if (!tg::RunAnalysis(trace, config, &analysis).ok()) return 0;
  nlohmann::json report = tg::AnalysisToJson(trace, analysis, config);
  std::ostringstream text;
  tg::PrintAnalysis(text, report);
  (void)report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  (void)tg::MarkdownReport(report);
  (void)tg::HtmlReport(report);
  return 0;
}
