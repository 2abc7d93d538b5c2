// The human reports (Markdown, HTML) and the report's timeline section. The renderers read only
// the report JSON, so most tests feed them JSON; the timeline tests build traces by hand.
#include "tracegate/reports/report_html.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "trace_builder.h"
#include "tracegate/reports/analysis_report.h"

namespace tg {
namespace {

using nlohmann::json;
using testing::AddApi;
using testing::AddCopy;
using testing::AddKernel;
using testing::AddMemset;
using testing::AddRange;

constexpr const char* kEvil = "<script>alert(1)</script>";
constexpr const char* kEvilEscaped = "&lt;script&gt;alert(1)&lt;/script&gt;";

json Report(const Trace& t, const AnalysisConfig& config = {}) {
  Analysis a;
  EXPECT_TRUE(RunAnalysis(t, config, &a).ok());
  return AnalysisToJson(t, a, config);
}

// Three iterations of 100, 200 and 300 us; the median (nearest rank: the 2nd of 3) is "step 2".
Trace ThreeSteps() {
  Trace t;
  AddRange(t, "step 1", 0, 100'000);
  AddApi(t, "cudaLaunchKernel", 1'000, 2'000, 1);
  AddKernel(t, "gemm_a", 10'000, 40'000, 0, 7, 1);
  AddApi(t, "cudaMemcpyAsync", 3'000, 4'000, 2);
  AddCopy(t, CopyKind::kHtoD, 1 << 20, 5'000, 15'000, MemKind::kPinned, MemKind::kDevice, 0, 8, 2);

  AddRange(t, "step 2", 200'000, 400'000);
  AddApi(t, "cudaLaunchKernel", 201'000, 202'000, 3);
  AddKernel(t, "_Z4gemmPfS_i", 210'000, 260'000, 0, 7, 3);
  AddApi(t, "cudaLaunchKernel", 202'000, 203'000, 4);
  AddKernel(t, "void relu<float>(float*)", 265'000, 270'000, 0, 8, 4);
  AddMemset(t, 4096, 280'000, 281'000, 0, 8);  // no launch call: belongs where it starts

  AddRange(t, "step 3", 600'000, 900'000);
  AddApi(t, "cudaLaunchKernel", 601'000, 602'000, 5);
  AddKernel(t, "k3", 605'000, 700'000, 0, 7, 5);
  return t;
}

TEST(ReportTimeline, MedianIterationPerStream) {
  json doc = Report(ThreeSteps());
  const json& tl = doc["timeline"];
  EXPECT_EQ(tl["iteration"], 1);  // "step 2", index 1 in iteration_table
  EXPECT_EQ(tl["name"], "step 2");
  EXPECT_EQ(tl["start_ns"], 200'000);
  EXPECT_EQ(tl["duration_ns"], 200'000);
  EXPECT_EQ(tl["latency_ms"], doc["p50_latency_ms"]);  // 0.2 ms either way
  EXPECT_EQ(tl["marker_start_offset_ns"], 0);
  EXPECT_EQ(tl["marker_end_offset_ns"], 200'000);
  EXPECT_EQ(tl["items_total"], 3);
  EXPECT_EQ(tl["items_dropped"], 0);
  ASSERT_EQ(tl["lanes"].size(), 2u);
  const json& s7 = tl["lanes"][0];
  EXPECT_EQ(s7["device"], 0);
  EXPECT_EQ(s7["stream"], 7);
  // gemm: 210'000 - 200'000 = 10'000 offset, 260'000 - 210'000 = 50'000 long; idle 200'000 - 50'000.
  EXPECT_EQ(s7["items"], json::parse(R"([[10000, 50000, "kernel", "gemm"]])"));
  EXPECT_EQ(s7["busy_ns"], 50'000);
  EXPECT_EQ(s7["idle_ns"], 150'000);
  const json& s8 = tl["lanes"][1];
  EXPECT_EQ(s8["stream"], 8);
  // relu at 265'000 (offset 65'000, 5'000 long), memset at 280'000 (offset 80'000, 1'000 long).
  EXPECT_EQ(s8["items"], json::parse(R"([[65000, 5000, "kernel", "relu"], [80000, 1000, "memset", "Memset"]])"));
  EXPECT_EQ(s8["busy_ns"], 6'000);
  EXPECT_EQ(s8["idle_ns"], 194'000);
  EXPECT_EQ(tl["phases_ms"]["infer"], 0.056);  // the union of the work: 50 + 6 us
}

TEST(ReportTimeline, KeepsTheLongestItemsUnderTheCap) {
  // No markers: the whole trace is one iteration. Kernel i runs [10'000 i, 10'000 i + i + 1):
  // 2,005 kernels of 1..2,005 ns that never overlap; the cap (2,000) drops the five shortest,
  // i = 0..4.
  Trace t;
  for (TimeNs i = 0; i < 2005; ++i) AddKernel(t, "k", i * 10'000, i * 10'000 + i + 1);
  const json tl = Report(t)["timeline"];
  EXPECT_EQ(tl["item_cap"], 2000);
  EXPECT_EQ(tl["items_total"], 2005);
  EXPECT_EQ(tl["items_dropped"], 5);
  EXPECT_TRUE(tl["marker_start_offset_ns"].is_null());
  const json& lane = tl["lanes"][0];
  EXPECT_EQ(lane["items_dropped"], 5);
  ASSERT_EQ(lane["items"].size(), 2000u);
  EXPECT_EQ(lane["items"][0], json::parse(R"([50000, 6, "kernel", "k"])"));  // i = 5
  // busy counts every kernel, listed or not: 1 + 2 + ... + 2005 = 2005 * 2006 / 2.
  EXPECT_EQ(lane["busy_ns"], 2005 * 2006 / 2);
}

TEST(ReportTimeline, EmptyTraceHasAnIterationWithoutWork) {
  // No markers: the (empty) trace window is the one iteration; it has no lanes.
  json doc = Report(Trace{});
  const json& tl = doc["timeline"];
  EXPECT_EQ(tl["iteration"], 0);
  EXPECT_EQ(tl["duration_ns"], 0);
  EXPECT_TRUE(tl["lanes"].empty());
  EXPECT_NE(HtmlReport(doc).find("n/a: the iteration has no GPU work"), std::string::npos);
  // A timeline without an iteration (null + reason) says why.
  json none = {{"timeline", {{"iteration", nullptr}, {"iteration_reason", "no iterations"}}}};
  EXPECT_NE(HtmlReport(none).find("<p class=\"na\">No iteration to draw: no iterations.</p>"), std::string::npos);
}

TEST(ReportHtml, EscapesEveryMarkupCharacter) {
  EXPECT_EQ(HtmlEscape(kEvil), kEvilEscaped);
  EXPECT_EQ(HtmlEscape("a & \"b\" 'c'"), "a &amp; &quot;b&quot; &#39;c&#39;");
  EXPECT_EQ(HtmlEscape(std::string("x\0y\x1f\tz", 6)), "xy\tz");
  EXPECT_EQ(MarkdownEscape("a|b_c*d`e<f>&[g]\nh"), "a\\|b\\_c\\*d\\`e&lt;f&gt;&amp;\\[g\\] h");
}

Trace EvilTrace() {
  Trace t = ThreeSteps();
  AddApi(t, "cudaLaunchKernel", 203'000, 204'000, 6);
  AddKernel(t, kEvil, 290'000, 300'000, 0, 7, 6);
  AddKernel(t, "a|b", 700'000, 710'000, 0, 7);
  t.devices.push_back(Device{0, "GPU <b>0</b>", 132, 0, 0, 9, 0});
  t.metadata[std::string(meta::kSourcePath)] = "/tmp/<img src=x onerror=alert(2)>.json";
  return t;
}

TEST(ReportHtml, TraceStringsShowAsText) {
  AnalysisConfig config;
  config.model = "<i>model</i>";
  std::string html = HtmlReport(Report(EvilTrace(), config));
  EXPECT_NE(html.find(kEvilEscaped), std::string::npos);
  EXPECT_NE(html.find("GPU &lt;b&gt;0&lt;/b&gt;"), std::string::npos);
  EXPECT_NE(html.find("&lt;img src=x onerror=alert(2)&gt;"), std::string::npos);
  EXPECT_NE(html.find("&lt;i&gt;model&lt;/i&gt;"), std::string::npos);
  std::string lower = html;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  // One <script>: the page's own, last; the kernel named <script> is text.
  ASSERT_NE(lower.find("<script>"), std::string::npos);
  EXPECT_EQ(lower.find("<script", lower.find("<script>") + 1), std::string::npos);
  EXPECT_LT(lower.find("</footer>"), lower.find("<script>"));
  EXPECT_EQ(lower.find("<img"), std::string::npos);
  EXPECT_EQ(lower.find("<i>"), std::string::npos);
  EXPECT_EQ(lower.find("onerror=alert(2)>"), std::string::npos);
}

TEST(ReportHtml, HasEverySectionAndNeedsNoNetwork) {
  std::string html = HtmlReport(Report(EvilTrace()));
  for (const char* id :
       {"summary", "headline", "timeline", "steps", "phases", "kernels", "latency", "findings", "quality"})
    EXPECT_NE(html.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  size_t svgs = 0;
  for (size_t p = html.find("<svg"); p != std::string::npos; p = html.find("<svg", p + 1)) ++svgs;
  // Timeline overview and view, step time, phase bar, kernel bars; 3 iterations: no histogram.
  EXPECT_EQ(svgs, 5u);
  EXPECT_NE(html.find("class=\"gap\""), std::string::npos);  // lanes show idle time
  EXPECT_NE(html.find("class=\"memset\""), std::string::npos);
  EXPECT_NE(html.find("Iteration 1"), std::string::npos);
  // Nothing is fetched: no src, no url(), no @import; the only href outside the page is the
  // inline data: icon (the others are links to the page's own gaps, "#gap-N").
  // (Text may say "src=": the evil path does, escaped; a tag cannot, every "<" in text is "&lt;".)
  EXPECT_FALSE(std::regex_search(html, std::regex(R"(<[^>]*\ssrc=)")));
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  size_t href = html.find("href=");
  ASSERT_NE(href, std::string::npos);
  EXPECT_EQ(html.compare(href, 12, "href=\"data:,"), 0);
  for (size_t at = html.find("href=", href + 1); at != std::string::npos; at = html.find("href=", at + 1))
    EXPECT_EQ(html.compare(at, 10, "href=\"#gap"), 0) << html.substr(at, 40);
}

TEST(ReportHtml, StoredReportRendersTheSame) {
  json doc = Report(EvilTrace());
  json stored = json::parse(doc.dump());
  EXPECT_EQ(HtmlReport(doc), HtmlReport(stored));
  EXPECT_EQ(MarkdownReport(doc), MarkdownReport(stored));
}

TEST(ReportHtml, InvalidUtf8BecomesReplacementCharacter) {
  json doc = {{"schema", "tracegate.report/v1"}, {"model", std::string("m\xff")}};
  std::string html = HtmlReport(doc);
  EXPECT_NE(html.find("m\xEF\xBF\xBD"), std::string::npos);
  EXPECT_EQ(html.find("m\xff"), std::string::npos);
  EXPECT_NE(MarkdownReport(doc).find("m\xEF\xBF\xBD"), std::string::npos);
}

// Every table row of a block has the header's number of unescaped pipes.
void ExpectTablesWellFormed(const std::string& md) {
  std::istringstream in(md);
  std::string line;
  int columns = -1;
  size_t tables = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '|') {
      columns = -1;
      continue;
    }
    int pipes = 0;
    for (size_t i = 0; i < line.size(); ++i) pipes += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    if (columns < 0) {
      columns = pipes;
      ++tables;
    }
    EXPECT_EQ(pipes, columns) << line;
  }
  EXPECT_GE(tables, 2u) << md;  // headline, top kernels
}

TEST(ReportMarkdown, TablesKeepTheirShapeWithPipesInNames) {
  AnalysisConfig config;
  config.model = kEvil;  // the kernel table shows ShortKernelName, which makes the evil kernel "alert"
  std::string md = MarkdownReport(Report(EvilTrace(), config));
  ExpectTablesWellFormed(md);
  EXPECT_NE(md.find("| Metric | Value |\n|---|---:|\n"), std::string::npos);
  EXPECT_NE(md.find("| # | Kernel | Calls | Total | Mean | Share |"), std::string::npos);
  EXPECT_NE(md.find("a\\|b"), std::string::npos);
  EXPECT_NE(md.find(kEvilEscaped), std::string::npos);
  EXPECT_EQ(md.find("<script"), std::string::npos);
  // step 2 is the median of 0.1, 0.2, 0.3 ms (+ the evil kernel keeps it inside its marker).
  EXPECT_NE(md.find("| Iterations | Latency mean | Latency p50 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 3 | 0.200 ms | 0.200 ms |"), std::string::npos) << md;
  EXPECT_NE(md.find("\nData quality: "), std::string::npos);
}

TEST(ReportMarkdown, NullsShowAsNaWithTheirReason) {
  Trace t;  // no markers: one iteration, so the CV is undefined
  AddKernel(t, "k", 0, 1'000);
  std::string md = MarkdownReport(Report(t));
  EXPECT_NE(md.find("| Latency CV | n/a (fewer than 2 iterations) |"), std::string::npos) << md;
  EXPECT_NE(md.find("Only 1 iteration: "), std::string::npos) << md;  // a caveat
  std::string html = HtmlReport(Report(t));
  // The page shows no card without a value: it names what it left out and why.
  EXPECT_EQ(html.find("<div class=\"value\">n/a"), std::string::npos) << html;
  EXPECT_NE(html.find("Not shown: "), std::string::npos);
  EXPECT_NE(html.find("Memory peak (the trace has no NVML samples)"), std::string::npos) << html;
  // A key the report does not carry at all (an older baseline) says so.
  json old = {{"schema", "tracegate.report/v1"}, {"avg_latency_ms", 1.5}};
  md = MarkdownReport(old);
  EXPECT_NE(md.find("| Latency mean |\n|--:|\n| 1.500 ms |"), std::string::npos) << md;
  EXPECT_NE(md.find("| Latency p95 | n/a (not in this report) |"), std::string::npos) << md;
}

TEST(ReportMarkdown, FindingShowsPriorityEvidenceGainAndFirstStrategy) {
  // Amdahl: P = 0.2, S = 2 -> 1 / (0.8 + 0.1) = 1.111x (+11.1%), bound 1 / 0.8 = 1.25x.
  json doc = json::parse(R"({"schema": "tracegate.report/v1", "findings": [{
      "id": "idle_gaps", "title": "GPU idle | between launches", "priority": "high",
      "summary": "The GPU waits.", "evidence": [{"metric": "idle_ratio", "value": 0.35, "threshold": 0.2,
      "comparison": ">", "unit": "ratio"}], "involved": [],
      "strategies": ["Use CUDA graphs", "Second"],
      "amdahl": {"share": 0.2, "speedup": 2, "basis": "assumed", "assumption": "halve the gaps",
                 "overall_speedup": 1.1111111, "gain_pct": 11.11111, "upper_bound": 1.25}}]})");
  std::string md = MarkdownReport(doc);
  EXPECT_NE(md.find("**Findings** (1, most important first):"), std::string::npos) << md;
  EXPECT_NE(md.find("1. **[high] GPU idle \\| between launches**, predicted +11.1% (1.111x overall, at most 1.250x) if "
                    "halve the gaps: The GPU waits.\n"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("<summary>Evidence</summary>\n\n1. idle\\_ratio = 0.35 (threshold &gt; 0.2)\n"), std::string::npos)
      << md;
  EXPECT_NE(md.find("   - Try: Use CUDA graphs"), std::string::npos) << md;
  EXPECT_EQ(md.find("Second"), std::string::npos);
  // The summary line names the top finding.
  EXPECT_NE(md.find("top finding: GPU idle \\| between launches, +11.1%"), std::string::npos) << md;
  std::string html = HtmlReport(doc);
  EXPECT_NE(html.find("<li>Second</li>"), std::string::npos);
  EXPECT_NE(html.find("+11.1% (1.111x overall, at most 1.250x)"), std::string::npos);
}

TEST(ReportMarkdown, AnyJsonRendersWithoutThrowing) {
  for (const json& doc : {json::object(), json(), json::array({1, 2}), json("text"),
                          json::parse(R"({"findings": 3, "top_kernels": {"a": 1}, "timeline": [],
                                          "phases": null, "latency_samples_ms": ["x", 1.0, 1.0],
                                          "data_quality": {"counters": [7]}})")}) {
    std::string md = MarkdownReport(doc);
    std::string html = HtmlReport(doc);
    EXPECT_NE(md.find("n/a"), std::string::npos) << doc.dump();
    EXPECT_NE(html.find("n/a"), std::string::npos) << doc.dump();
    EXPECT_NE(html.find("</html>"), std::string::npos);
  }
  std::string empty = MarkdownReport(json::object());
  EXPECT_NE(empty.find("Not a tracegate report"), std::string::npos);
  EXPECT_NE(empty.find("| Latency mean | n/a (not in this report) |"), std::string::npos);
}

TEST(ReportMarkdown, WritesAtomicallyAndReportsBadPaths) {
  char dir_template[] = "/tmp/tg_report_html_XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  std::string dir = dir_template;
  json doc = Report(ThreeSteps());
  ASSERT_TRUE(WriteMarkdownReport(doc, dir + "/r.md").ok());
  ASSERT_TRUE(WriteHtmlReport(doc, dir + "/r.html").ok());
  std::ifstream md(dir + "/r.md"), html(dir + "/r.html");
  std::stringstream md_text, html_text;
  md_text << md.rdbuf();
  html_text << html.rdbuf();
  EXPECT_EQ(md_text.str(), MarkdownReport(doc));
  EXPECT_EQ(html_text.str(), HtmlReport(doc));
  Status bad = WriteHtmlReport(doc, dir + "/missing/r.html");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("missing"), std::string::npos) << bad.message();
  std::remove((dir + "/r.md").c_str());
  std::remove((dir + "/r.html").c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace tg
