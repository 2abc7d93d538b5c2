// The HTML pages (reports/html/): one test per defect of issue 19's analyze page. The summary
// sentence, the cards, throughput's digits, the timeline's gaps on their idle intervals and its
// one origin, the host rows, the gaps numbered for the findings, kernel names told apart, the
// histogram from 10 iterations with labels that do not overprint, axes with one unit, the script
// allowed by its hash, the baseline history page.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "reports/html/kernel_table_html.h"
#include "reports/html/page_summary.h"
#include "reports/html/timeline_html.h"
#include "reports/report/findings_json.h"
#include "reports/view/charts_html.h"
#include "reports/view/page_assets.h"
#include "reports/view/report_svg.h"
#include "reports/view/report_view.h"
#include "reports/view/sha256.h"
#include "trace_builder.h"
#include "tracegate/reports/analysis_report.h"
#include "tracegate/reports/baseline.h"
#include "tracegate/reports/report_html.h"

namespace tg {
namespace {

using nlohmann::json;
using namespace internal;
using testing::AddApi;
using testing::AddKernel;
using testing::AddMemset;
using testing::AddRange;

json Report(const Trace& t) {
  Analysis a;
  AnalysisConfig config;
  EXPECT_TRUE(RunAnalysis(t, config, &a).ok());
  return AnalysisToJson(t, a, config);
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

std::string Hex(const std::array<unsigned char, 32>& d) {
  std::string out;
  for (unsigned char c : d) out += StrFormat("%02x", c);
  return out;
}

TEST(HtmlPage, Sha256AndBase64MatchTheStandardVectors) {
  EXPECT_EQ(Hex(Sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Hex(Sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 56 bytes: the length no longer fits the block, the padding takes a second one.
  EXPECT_EQ(Hex(Sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Base64("a"), "YQ==");
  EXPECT_EQ(Base64("ab"), "YWI=");
  EXPECT_EQ(Base64("abc"), "YWJj");
}

TEST(HtmlPage, TheOneScriptRunsByItsHashAndNothingElse) {
  const std::string html = HtmlReport(json::object());
  const size_t open = html.find("<script>"), close = html.find("</script>");
  ASSERT_NE(open, std::string::npos);
  EXPECT_EQ(html.substr(open + 8, close - open - 8), PageScript());
  EXPECT_EQ(Count(html, "<script"), 1u);
  EXPECT_NE(html.find("default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src " +
                      CspSha256(PageScript()) + "\""),
            std::string::npos);
  EXPECT_EQ(html.find("script-src 'unsafe"), std::string::npos);
}

TEST(HtmlPage, ThroughputKeepsItsDigits) {
  EXPECT_EQ(FormatValue(0.023, Unit::kFps), "0.023/s");  // was "0.0 /s"
  EXPECT_EQ(FormatValue(3.2741, Unit::kFps), "3.27/s");
  EXPECT_EQ(FormatValue(34.71, Unit::kFps), "34.7/s");
  EXPECT_EQ(FormatValue(4999.4, Unit::kFps), "4999/s");
  EXPECT_EQ(FormatValue(0, Unit::kFps), "0/s");
}

TEST(HtmlPage, CardsLeaveOutWhatTheTraceDoesNotHave) {
  const json doc = json::parse(R"js({"iterations": 1, "avg_latency_ms": 2.5, "p50_latency_ms": 2.5,
      "std_latency_ms": 0.0, "latency_cv": null, "latency_cv_reason": "fewer than 2 iterations",
      "throughput_fps": 0.023, "idle_ratio": 0.55, "pre_ms_ratio": 0.0, "infer_ms_ratio": 0.45,
      "memory_peak_mb": null, "memory_peak_mb_reason": "the trace has no NVML samples"})js");
  std::vector<std::string> hidden;
  std::vector<std::string> shown;
  for (const HeadlineRow& r : HeadlineCards(doc, &hidden)) {
    shown.push_back(r.label + " " + r.value.text);
    EXPECT_NE(r.value.text, "n/a") << r.label;
    EXPECT_NE(r.value.text, "0.0%") << r.label;
  }
  EXPECT_EQ(shown, (std::vector<std::string>{"Iterations 1", "Latency 2.500 ms", "Throughput 0.023/s", "GPU idle 55.0%",
                                             "Infer share 45.0%"}));
  EXPECT_EQ(hidden, (std::vector<std::string>{"Pre share (0: no such phase in the iterations)",
                                              "Memory peak (the trace has no NVML samples)"}));
}

TEST(HtmlPage, OneSentenceFirstThenFindingsThenCards) {
  const json doc = json::parse(R"js({"schema": "tracegate.report/v1", "iterations": 3, "p50_latency_ms": 222.442,
      "idle_ratio": 0.764,
      "devices": [{"device": 0, "gaps": {"in_iterations": {"total_ns": 100,
          "by_cause_ns": {"host_launch": 90, "communication": 10},
          "largest": [{"cause": "host_launch", "duration_ns": 50, "start_ns": 5,
                       "next": "void ncclKernel_AllReduce<float>(int)"}]}}}],
      "findings": [{"id": "idle_gaps", "title": "Device idle", "priority": "high", "summary": "s",
          "strategies": ["The GPU mostly waits for launches: capture the loop in a CUDA graph."],
          "amdahl": {"gain_pct": 61.8}}]})js");
  EXPECT_EQ(
      SummarySentence(doc),
      "3 iterations of 222.442 ms (p50): the GPU is idle 76.4% of the iteration time, mostly waiting for the host "
      "to launch work (90.0% of the idle time), the longest gap before ncclKernel_AllReduce; try: capture the "
      "loop in a CUDA graph (+61.8% predicted, idle_gaps).");
  const std::string html = HtmlReport(doc);
  const size_t summary = html.find("id=\"summary\""), findings = html.find("id=\"findings\""),
               cards = html.find("id=\"headline\"");
  ASSERT_NE(summary, std::string::npos);
  EXPECT_LT(summary, findings);
  EXPECT_LT(findings, cards);
  EXPECT_NE(html.find("class=\"verdict high\""), std::string::npos);
  // A busy GPU: the sentence names the largest kernel instead.
  const json busy = json::parse(R"js({"iterations": 1, "avg_latency_ms": 5, "idle_ratio": 0.05, "findings": [],
      "top_kernels": [{"name": "void gemm<float>(int)", "share_ratio": 0.5}]})js");
  EXPECT_EQ(SummarySentence(busy),
            "1 iteration of 5.000 ms: the GPU is busy 95.0% of the iteration time, gemm the "
            "largest part (50.0% of kernel time); no rule found anything to improve.");
}

// Two iterations of 200 us; the first, at 200-400 us, is drawn (the median, nearest rank).
Trace TwoSteps() {
  Trace t;
  AddRange(t, "step 1", 200'000, 400'000);
  AddApi(t, "cudaLaunchKernel", 201'000, 202'000, 3);
  AddKernel(t, "gemm", 210'000, 260'000, 0, 7, 3);
  AddApi(t, "cudaLaunchKernel", 202'000, 203'000, 4);
  AddKernel(t, "relu", 265'000, 270'000, 0, 8, 4);
  AddMemset(t, 4096, 280'000, 281'000, 0, 8);
  AddRange(t, "step 2", 600'000, 900'000);
  AddApi(t, "cudaLaunchKernel", 601'000, 602'000, 5);
  AddKernel(t, "k3", 605'000, 700'000, 0, 7, 5);
  return t;
}

TEST(HtmlPage, TimelineJsonHasTheIdleIntervalsHostRowsAndOverview) {
  const json doc = Report(TwoSteps());
  const json& tl = doc["timeline"];
  ASSERT_EQ(tl["iteration"], 0);
  // The device's idle intervals: the span minus every item of the device (both streams).
  EXPECT_EQ(tl["gaps"], json::parse(R"js([{"device": 0, "start_offset_ns": 0, "duration_ns": 10000},
      {"device": 0, "start_offset_ns": 60000, "duration_ns": 5000},
      {"device": 0, "start_offset_ns": 70000, "duration_ns": 10000},
      {"device": 0, "start_offset_ns": 81000, "duration_ns": 119000}])js"));
  EXPECT_EQ(tl["gaps_total"], 4);
  // The host: its two launches and the iteration's range, on the one thread.
  ASSERT_EQ(tl["host"].size(), 1u);
  EXPECT_EQ(tl["host"][0]["items"], json::parse(R"js([[0, 200000, "range", "step 1", 0],
      [1000, 1000, "launch", "cudaLaunchKernel", 0], [2000, 1000, "launch", "cudaLaunchKernel", 0]])js"));
  // The overview: every bin's busy time adds up to the device's busy time (the union of its work).
  const json& ov = tl["overview"];
  EXPECT_EQ(ov["start_ns"], 200'000);
  EXPECT_EQ(ov["duration_ns"], 700'000);
  int64_t busy = 0;
  for (const json& b : ov["devices"][0]["busy_ns"]) busy += b.get<int64_t>();
  EXPECT_EQ(busy, 50'000 + 5'000 + 1'000 + 95'000);
  EXPECT_EQ(ov["iterations"], json::parse("[[0, 200000], [400000, 300000]]"));
}

TEST(HtmlPage, GapRectsLieOnTheIdleIntervalsNotAcrossTheLane) {
  const std::string html = HtmlReport(Report(TwoSteps()));
  const std::regex lane_re(R"re(<rect class="lane" data-lane="(\d+)" x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)")re");
  std::map<std::string, double> lane_width;
  for (std::sregex_iterator it(html.begin(), html.end(), lane_re), end; it != end; ++it)
    lane_width[(*it)[1]] = std::stod((*it)[3]);
  const std::regex gap_re(
      R"re(<rect class="gap" data-s="(\d+)" data-d="(\d+)" data-lane="(\d+)" x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)")re");
  std::set<std::string> starts;
  size_t gaps = 0;
  for (std::sregex_iterator it(html.begin(), html.end(), gap_re), end; it != end; ++it, ++gaps) {
    ASSERT_TRUE(lane_width.count((*it)[3]));
    EXPECT_LT(std::stod((*it)[5]), lane_width[(*it)[3]]);
    starts.insert((*it)[1].str() + "+" + (*it)[2].str());
  }
  EXPECT_EQ(gaps, 8u);  // 4 intervals, shaded in each of the device's 2 stream lanes
  // Positions are time into the trace (it starts at 200 us with the first range), as the findings'.
  EXPECT_EQ(starts, (std::set<std::string>{"0+10000", "60000+5000", "70000+10000", "81000+119000"}));
  // Colours by class and the host row.
  EXPECT_NE(html.find("<rect class=\"memset\""), std::string::npos);
  EXPECT_NE(html.find("<rect class=\"launch\""), std::string::npos);
  EXPECT_NE(html.find("<rect class=\"range\""), std::string::npos);
  EXPECT_NE(html.find(">thread 100</text>"), std::string::npos);
}

TEST(HtmlPage, FindingsCiteTheGapsByTheirNumberOnTheTimeline) {
  json doc = Report(TwoSteps());
  const int64_t origin = doc["window"]["start_ns"].get<int64_t>();
  const int64_t iteration = doc["timeline"]["start_ns"].get<int64_t>();
  Finding f;
  f.id = "idle_gaps";
  f.title = "Device idle";
  Involved gap{"gap", "relu -> Memset", 1, 10'000, "device 0"};
  gap.start_ns = iteration + 70'000;
  gap.device = 0;
  f.involved = {Involved{"kernel", "gemm", 1, 50'000, ""}, gap};
  doc["findings"] = FindingsJson({f});
  EXPECT_EQ(doc["findings"][0]["involved"][1]["start_ns"], iteration + 70'000);
  EXPECT_FALSE(doc["findings"][0]["involved"][0].contains("start_ns"));  // only gaps have a place
  const std::vector<NumberedGap> gaps = NumberGaps(doc);
  ASSERT_FALSE(gaps.empty());
  EXPECT_EQ(gaps[0].number, 1);
  EXPECT_EQ(gaps[0].start_ns, static_cast<double>(iteration + 70'000 - origin));
  EXPECT_TRUE(gaps[0].in_drawn);
  EXPECT_EQ(gaps[0].findings, std::vector<std::string>{"idle_gaps"});
  // Then the drawn iteration's longest gap: 119 us from 81 us.
  ASSERT_GE(gaps.size(), 2u);
  EXPECT_EQ(gaps[1].duration_ns, 119'000);
  const std::string html = HtmlReport(doc);
  EXPECT_NE(html.find("<a class=\"gapref\" href=\"#gap-1\">1</a>"), std::string::npos);
  EXPECT_NE(html.find("<tr id=\"gap-1\">"), std::string::npos);
  EXPECT_NE(html.find("<g class=\"gapnum\" data-s=\"70000\" data-d=\"10000\""), std::string::npos);
}

TEST(HtmlPage, ViewOpensOnTheGpuWorkWhenTheSpanIsMostlyHost) {
  // An iteration of 100 ms with 2 ms of GPU work at its end (no markers: the host's span).
  const json doc = json::parse(R"js({"window": {"start_ns": 0}, "timeline": {"iteration": 0, "start_ns": 0,
      "duration_ns": 100000000, "selection": "the one iteration", "lanes": [{"device": 0, "stream": 7,
      "items": [[98000000, 1000000, "kernel", "a"], [99000000, 1000000, "memcpy", "Memcpy DtoH"]]}],
      "gaps": [{"device": 0, "start_offset_ns": 0, "duration_ns": 98000000}]}})js");
  const std::string html = HtmlReport(doc);
  const std::smatch m = [&] {
    std::smatch r;
    std::regex_search(html, r, std::regex(R"re(data-t0="(\d+)" data-t1="(\d+)" data-v0="(\d+)" data-v1="(\d+)")re"));
    return r;
  }();
  ASSERT_FALSE(m.empty());
  EXPECT_EQ(m[1], "0");
  EXPECT_EQ(m[2], "100000000");
  EXPECT_GE(std::stod(m[3]), 97'000'000);  // 2 ms of work, 2% padding
  EXPECT_NE(html.find("Opened on the GPU work"), std::string::npos);
  // One unit on the axis: the view's (ms), ticks bare numbers.
  EXPECT_NE(html.find("data-axis-title=\"time into the trace\""), std::string::npos);
  EXPECT_NE(html.find(">time into the trace (ms)</text>"), std::string::npos);
}

TEST(HtmlPage, AxesHaveOneUnitAndBareTicks) {
  EXPECT_STREQ(PickTimeUnit(1500).name, "ns");
  EXPECT_STREQ(PickTimeUnit(5e5).name, "us");
  EXPECT_STREQ(PickTimeUnit(2e8).name, "ms");
  EXPECT_STREQ(PickTimeUnit(2e10).name, "s");
  EXPECT_EQ(NiceTicks(0, 200, 4), (std::vector<double>{0, 50, 100, 150, 200}));
  EXPECT_EQ(TickText(0.5, 0.5), "0.5");
  EXPECT_EQ(TickText(1230, 10), "1230");
  const std::string axis = AxisX(0, 200, 10, 100, 1000, "time into the trace (ms)");
  EXPECT_EQ(Count(axis, "class=\"tick-label\""), Count(axis, "<line class=\"tick\""));
  EXPECT_EQ(Count(axis, "class=\"tick-label\""), 5u);
  EXPECT_FALSE(std::regex_search(axis, std::regex(R"(class="tick-label"[^>]*>[^<]*[a-z])")));
  EXPECT_NE(axis.find("<text class=\"axis-title\""), std::string::npos);
}

TEST(HtmlPage, HistogramFromTenIterationsWithLabelsApart) {
  json doc = {{"latency_samples_ms", {1.0, 2.0}}, {"p50_latency_ms", 1.0}};
  std::string html = LatencyHistogramHtml(doc);
  EXPECT_EQ(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("2 iterations (1.000 ms, 2.000 ms): a histogram needs 10 or more."), std::string::npos);
  doc["latency_samples_ms"] = {1.0, 1.1, 1.2, 1.2, 1.3, 1.3, 1.3, 1.4, 1.5, 2.0, 2.01};
  doc["p95_latency_ms"] = 2.0;
  doc["p99_latency_ms"] = 2.01;
  html = LatencyHistogramHtml(doc);
  ASSERT_NE(html.find("<svg"), std::string::npos);
  // p95 and p99 are 0.01 ms apart: their labels go to different rows.
  std::smatch p95, p99;
  ASSERT_TRUE(std::regex_search(html, p95, std::regex(R"re(y="([0-9.]+)">p95 2\.000 ms<)re")));
  ASSERT_TRUE(std::regex_search(html, p99, std::regex(R"re(y="([0-9.]+)">p99 2\.010 ms<)re")));
  EXPECT_NE(p95[1], p99[1]);
  EXPECT_NE(html.find(">iteration latency (ms)</text>"), std::string::npos);
}

TEST(HtmlPage, StepTimeChartStacksEachIterationsPhases) {
  const json doc = json::parse(R"js({"timeline": {"iteration": 1}, "iteration_table": [
      {"index": 0, "phases_ms": {"pre": 1, "infer": 2, "idle": 1}},
      {"index": 1, "phases_ms": {"pre": 1, "infer": 3, "idle": 0}},
      {"index": 2, "phases_ms": {"pre": 0, "infer": 2, "idle": 2}}]})js");
  const std::string svg = StepTimeSvg(doc);
  EXPECT_EQ(Count(svg, "<rect class=\"phase-infer\""), 4u);  // 3 columns + the legend key
  EXPECT_EQ(Count(svg, "<rect class=\"phase-pre\""), 3u);    // 2 columns + the legend key
  EXPECT_EQ(Count(svg, "<rect class=\"marker\""), 1u);       // the timeline's iteration
  EXPECT_NE(svg.find(">step time (ms)</text>"), std::string::npos);
  EXPECT_EQ(svg.find("phase-h2d"), std::string::npos);  // no key for a phase with no time
}

TEST(HtmlPage, KernelNamesSharingAShortNameGetAHint) {
  const std::vector<std::string> names = {
      "void at::native::elementwise_kernel<(int)128, (int)2, void at::native::gpu_kernel_impl_nocast<at::native::"
      "BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float>>>(at::TensorIteratorBase &, "
      "const T1 &)::[lambda(int) (instance 1)]>(int, T3)",
      "void at::native::elementwise_kernel<(int)128, (int)4, void at::native::gpu_kernel_impl_nocast<at::native::"
      "direct_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 3)]::operator ()() const::[lambda() "
      "(instance 12)]::operator ()() const::[lambda(c10::BFloat16) (instance 1)]>(at::TensorIteratorBase &, const T1 "
      "&)::[lambda(int) (instance 1)]>(int, T3)",
      "void at::native::elementwise_kernel<(int)128, (int)2, void at::native::gpu_kernel_impl_nocast<at::native::"
      "direct_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 3)]::operator ()() const::[lambda() "
      "(instance 7)]::operator ()() const::[lambda(float) (instance 1)]>(at::TensorIteratorBase &, const T1 &)::"
      "[lambda(int) (instance 1)]>(int, T3)",
      "void at::native::elementwise_kernel<(int)128, (int)4, void "
      "at::native::gpu_kernel_impl<at::native::BinaryFunctor<"
      "float, float, float, at::native::binary_internal::MulFunctor<float>>>(at::TensorIteratorBase &, const T1 &)::"
      "[lambda(int) (instance 1)]>(int, T3)",
      "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>(float)",
      "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 32, true, 1>(float)",
      "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<(unsigned long)4096>)"};
  const std::map<std::string, KernelLabel> labels = KernelLabels(names);
  std::set<std::string> texts;
  for (const std::string& n : names) texts.insert(labels.at(n).Text());
  EXPECT_EQ(texts.size(), names.size());  // every row reads differently
  EXPECT_EQ(labels.at(names[0]).short_name, "at::native::elementwise_kernel");
  EXPECT_EQ(labels.at(names[1]).hint, "BFloat16");
  EXPECT_EQ(labels.at(names[3]).hint, "gpu_kernel_impl");
  EXPECT_EQ(labels.at(names[4]).hint, "128");
  EXPECT_EQ(labels.at(names[5]).hint, "32");
  EXPECT_EQ(labels.at(names[6]).hint, "");  // alone with its short name
}

TEST(HtmlPage, KernelTableSortsFiltersAndShowsDeviceAndStream) {
  const json doc = json::parse(R"js({"kernel_table": [
      {"name": "void a<1>(int)", "count": 3, "total_ms": 3.0, "per_iteration_ms": 1.0, "mean_us": 1000.0,
       "devices": [0], "streams": [7, 13]},
      {"name": "void a<2>(int)", "count": 1, "total_ms": 1.0, "per_iteration_ms": 0.5, "mean_us": 1000.0,
       "devices": [1], "streams": [8]}]})js");
  const std::string html = KernelTableHtml(doc, ReportKernelLabels(doc));
  EXPECT_NE(html.find("<table id=\"kernel-table\" class=\"sortable kernels\">"), std::string::npos);
  EXPECT_NE(html.find("<input class=\"filter\" type=\"search\" data-table=\"kernel-table\""), std::string::npos);
  EXPECT_NE(html.find("<td>7, 13</td>"), std::string::npos);
  EXPECT_NE(html.find("<th class=\"num\" data-sort=\"num\">Total (ms)</th>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\" data-v=\"3\">3.000</td>"), std::string::npos);  // no unit in the cell
  EXPECT_NE(html.find("<span class=\"hint\">\xE2\x80\xB9"
                      "1\xE2\x80\xBA</span>"),
            std::string::npos);
}

TEST(HtmlPage, KernelTableShowsTheLaunchingOpAndClassUnderTheName) {
  const json doc = json::parse(R"js({"kernel_table": [
      {"name": "Cijk_Alik_Bljk", "count": 3, "total_ms": 3.0, "per_iteration_ms": 1.0, "mean_us": 1000.0,
       "devices": [0], "streams": [7], "op": "aten::addmm", "class": "gemm"},
      {"name": "k<b>", "count": 1, "total_ms": 1.0, "per_iteration_ms": 0.5, "mean_us": 1000.0,
       "devices": [0], "streams": [7], "op": null, "op_reason": "no host op encloses its launch calls",
       "class": "other"},
      {"name": "old", "count": 1, "total_ms": 1.0, "per_iteration_ms": 0.5, "mean_us": 1000.0,
       "devices": [0], "streams": [7]}]})js");
  const std::string html = KernelTableHtml(doc, ReportKernelLabels(doc));
  EXPECT_NE(html.find("<div class=\"note\">aten::addmm \xC2\xB7 gemm</div>"), std::string::npos) << html;
  EXPECT_NE(html.find("<div class=\"note\">other</div>"), std::string::npos) << html;
  EXPECT_EQ(html.find("<div class=\"note\">", html.find("data-name=\"old\"")), std::string::npos);  // no keys, no note
}

TEST(HtmlPage, KernelTableJsonListsDevicesAndStreams) {
  Trace t;
  AddRange(t, "step 1", 0, 100'000);
  AddKernel(t, "k", 1'000, 2'000, 0, 7);
  AddKernel(t, "k", 3'000, 4'000, 0, 13);
  AddKernel(t, "k", 5'000, 6'000, 1, 7);
  AddKernel(t, "j", 7'000, 8'000, 0, 7);
  const json doc = Report(t);
  ASSERT_EQ(doc["kernel_table"].size(), 2u);
  const json& k = doc["kernel_table"][0]["name"] == "k" ? doc["kernel_table"][0] : doc["kernel_table"][1];
  EXPECT_EQ(k["devices"], json::parse("[0, 1]"));
  EXPECT_EQ(k["streams"], json::parse("[7, 13]"));
}

// kernel_table and top_kernels rows: the op most launches of the name have (over the whole
// trace), null + op_reason when none, and the class most of them have.
TEST(HtmlPage, KernelRowsCarryTheirLaunchingOpAndClass) {
  Trace t;
  AddRange(t, "step 1", 0, 100'000);
  auto op = [&](std::string_view name, TimeNs start, TimeNs end) {
    Range r;
    r.start = start;
    r.end = end;
    r.name = t.strings.Intern(name);
    r.domain = t.strings.Intern("cpu_op");
    r.pid = 100;
    r.tid = 100;
    t.ranges.Add(r);
  };
  op("aten::addmm", 100, 200);
  op("aten::mm", 300, 400);
  op("aten::mm", 500, 600);
  AddApi(t, "cudaLaunchKernel", 110, 120, 1);
  AddApi(t, "cudaLaunchKernel", 310, 320, 2);
  AddApi(t, "cudaLaunchKernel", 510, 520, 3);
  AddApi(t, "cudaLaunchKernel", 700, 710, 4);  // outside every op
  AddKernel(t, "bias_add", 1'000, 2'000, 0, 7, 1);
  AddKernel(t, "bias_add", 3'000, 4'000, 0, 7, 2);
  AddKernel(t, "bias_add", 5'000, 6'000, 0, 7, 3);
  AddKernel(t, "relu_kernel", 7'000, 8'000, 0, 7, 4);
  AddKernel(t, "scale_kernel", 9'000, 9'500, 0, 7, 99);  // its launch is not in the trace
  const json doc = Report(t);
  for (const char* section : {"kernel_table", "top_kernels"}) {
    std::map<std::string, json> rows;
    for (const json& r : doc[section]) rows[r["name"].get<std::string>()] = r;
    ASSERT_EQ(rows.size(), 3u) << section;
    EXPECT_EQ(rows["bias_add"]["op"], "aten::mm") << section;  // 2 of 3 launches
    EXPECT_EQ(rows["bias_add"]["class"], "gemm") << section;
    EXPECT_TRUE(rows["relu_kernel"]["op"].is_null()) << section;
    EXPECT_EQ(rows["relu_kernel"]["op_reason"], "no host op encloses its launch calls") << section;
    EXPECT_EQ(rows["relu_kernel"]["class"], "activation") << section;
    EXPECT_EQ(rows["scale_kernel"]["op_reason"], "no launch call of this kernel is in the trace") << section;
    EXPECT_EQ(rows["scale_kernel"]["class"], "elementwise") << section;
  }
}

TEST(HtmlPage, HistoryPageDrawsTheTrend) {
  std::vector<HistoryRow> rows(3);
  rows[0] = {1, "m", "saved", "2026-01-01T00:00:00Z", "abc", 10.0, 12.0, 100.0, "", "r.json"};
  rows[1] = {2, "m", "gated", "2026-01-02T00:00:00Z", "def", 10.5, 12.5, 95.0, "pass", "r.json"};
  rows[2] = {3, "m", "gated", "2026-01-03T00:00:00Z", "0123456789abcdef", 13.0, 15.0, 77.0, "regression", "r.json"};
  const std::string html = BaselineHistoryHtml("m", "baselines", rows);
  EXPECT_EQ(Count(html, "<polyline class=\"trend-avg\""), 2u);  // latency and throughput charts
  EXPECT_EQ(Count(html, "<polyline class=\"trend-p95\""), 1u);
  EXPECT_EQ(Count(html, "<circle class=\"pt-regression\""), 2u);
  EXPECT_NE(html.find("avg latency 10.000 ms -&gt; 13.000 ms (+30.0%)"), std::string::npos);
  EXPECT_NE(html.find("last gate: regression"), std::string::npos);
  EXPECT_NE(html.find(">latency (ms)</text>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"name\">0123456789ab</td>"), std::string::npos);
  EXPECT_EQ(Count(html, "<script"), 1u);
}

// Labels in a table or chart fit their column: the leading namespaces go first, then the hint's
// end, then the middle; a label that fits is left whole.
TEST(KernelLabelFit, DropsNamespacesThenTheHintsEndThenTheMiddle) {
  auto chars = [](const std::string& t) {
    size_t n = 0;
    for (char c : t) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
  };
  const std::string a = "void at::native::vectorized_elementwise_kernel<4, at::native::launch_clamp_scalar(...)>(int)";
  const std::string b = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(int)";
  const std::map<std::string, KernelLabel> labels = {
      {a, {"at::native::vectorized_elementwise_kernel", "launch_clamp_scalar"}},
      {b, {"at::native::vectorized_elementwise_kernel", "CUDAFunctor_add"}},
      {"k", {"cutlass::Kernel2", "cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4"}}};
  EXPECT_EQ(KernelLabelFit(labels, b, 80),
            "at::native::vectorized_elementwise_kernel \xE2\x80\xB9"
            "CUDAFunctor_add\xE2\x80\xBA");
  EXPECT_EQ(KernelLabelFit(labels, a, 60),
            "native::vectorized_elementwise_kernel \xE2\x80\xB9"
            "launch_clamp_scalar\xE2\x80\xBA");
  EXPECT_EQ(KernelLabelFit(labels, a, 51),
            "vectorized_elementwise_kernel \xE2\x80\xB9"
            "launch_clamp_scalar\xE2\x80\xBA");
  EXPECT_EQ(KernelLabelFit(labels, a, 50),
            "vectorized_elementwise_kernel \xE2\x80\xB9"
            "launch_clamp_sc...\xE2\x80\xBA");
  const std::string k = KernelLabelFit(labels, "k", 40);
  EXPECT_EQ(k,
            "Kernel2 \xE2\x80\xB9"
            "cutlass_80_tensorop_s1688ge...\xE2\x80\xBA");
  EXPECT_EQ(chars(k), 40u);
  const std::string longest(200, 'x');  // no namespace, no hint: its middle
  EXPECT_EQ(KernelLabelFit(labels, longest, 60), std::string(28, 'x') + "..." + std::string(29, 'x'));
  for (size_t max : {20u, 30u, 44u, 60u})
    for (const std::string& n : {a, b, std::string("k"), longest})
      EXPECT_LE(chars(KernelLabelFit(labels, n, max)), max) << n;
}

}  // namespace
}  // namespace tg
