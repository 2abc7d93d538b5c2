// The report document and the text summary.
//
// Golden file: tests/fixtures/summary/expected_report.json is the report of GoldenTrace() below,
// with the volatile tool.version replaced by "VERSION". After an intended change to the report,
// regenerate it and review the diff:
//   TRACEGATE_UPDATE_GOLDEN=1 build/tracegate_tests --gtest_filter='AnalysisReport.*'
//   git diff tests/fixtures/summary/
#include "tracegate/reports/analysis_report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>

#include "tracegate/reports/json_out.h"
#include "tracegate/reports/report_html.h"

namespace tg {
namespace {

using nlohmann::json;

const std::string kGoldenPath = std::string(TRACEGATE_FIXTURES_DIR) + "/summary/expected_report.json";

Trace GoldenTrace() {
  Trace t;
  t.metadata[std::string(meta::kSourceFormat)] = "kineto_json";
  t.metadata[std::string(meta::kSourceVersion)] = "1";
  t.metadata[std::string(meta::kSourcePath)] = "golden.json";
  t.metadata[std::string(meta::kProducer)] = "hand-built test trace";
  t.devices.push_back(Device{0, "NVIDIA H200", 132, 150'000'000'000, 4800.0, 9, 0});
  auto kernel = [&](std::string_view name, TimeNs s, TimeNs e, int64_t stream, int64_t corr) {
    Kernel k;
    k.start = s;
    k.end = e;
    k.name = t.strings.Intern(name);
    k.device = 0;
    k.stream = stream;
    k.correlation = corr;
    t.kernels.Add(k);
  };
  const TimeNs base = 1'700'000'000'000'000'000;
  t.api_calls.Add(ApiCall{base, base + 5'000, t.strings.Intern("cudaMemcpyAsync"), ApiKind::kRuntime, 10, 11, 1, 0});
  t.api_calls.Add(
      ApiCall{base + 6'000, base + 9'000, t.strings.Intern("cudaLaunchKernel"), ApiKind::kRuntime, 10, 11, 2, 0});
  t.api_calls.Add(
      ApiCall{base + 9'500, base + 12'000, t.strings.Intern("cudaLaunchKernel"), ApiKind::kRuntime, 10, 11, 3, 0});
  Memcpy m;
  m.start = base + 10'000;
  m.end = base + 30'000;
  m.device = 0;
  m.stream = 7;
  m.correlation = 1;
  m.bytes = 2'000'000;
  m.kind = CopyKind::kHtoD;
  m.src_kind = MemKind::kPageable;
  m.dst_kind = MemKind::kDevice;
  t.memcpys.Add(m);
  kernel("_Z4gemmPfS_i", base + 40'000, base + 90'000, 7, 2);
  kernel("relu_kernel", base + 95'000, base + 100'000, 7, 3);
  kernel("relu_kernel", base + 60'000, base + 70'000, 8, 4);
  t.ranges.Add(Range{base, base + 100'000, t.strings.Intern("step"), 0, 10, 11, 0, false, kUnknownId});
  t.quality.Add(Quality::kUnmatchedCorrelation, 1);
  return t;
}

Analysis Analyze(const Trace& t, const AnalysisConfig& config = {}) {
  Analysis a;
  EXPECT_TRUE(RunAnalysis(t, config, &a).ok());
  return a;
}

json ReportWithoutVersion(const Trace& t, const AnalysisConfig& config = {}) {
  json doc = AnalysisToJson(t, Analyze(t, config), config);
  doc["tool"]["version"] = "VERSION";
  return doc;
}

TEST(AnalysisReport, MatchesGoldenFile) {
  Trace t = GoldenTrace();
  json doc = ReportWithoutVersion(t);
  if (std::getenv("TRACEGATE_UPDATE_GOLDEN")) {
    ASSERT_TRUE(WriteJsonFile(doc, kGoldenPath).ok());
    GTEST_SKIP() << "rewrote " << kGoldenPath;
  }
  std::ifstream in(kGoldenPath);
  ASSERT_TRUE(in) << kGoldenPath << " missing; see the comment at the top of this file";
  json expected = json::parse(in);
  // Prints only the difference (a JSON patch), not both documents.
  EXPECT_TRUE(doc == expected) << "golden -> now: " << json::diff(expected, doc).dump(2);
}

std::string FileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `analyze -o` writes the iteration rows as it goes; the file must be exactly the tree's dump.
TEST(AnalysisReport, StreamedIterationRowsWriteTheSameFile) {
  const std::string dir = ::testing::TempDir();
  Trace one = GoldenTrace();
  Trace three = GoldenTrace();  // three "step" iterations, the last named with a quote, a tab and an invalid byte
  const TimeNs base = 1'700'000'000'000'000'000;
  three.ranges.Add(
      Range{base + 100'000, base + 150'000, three.strings.Intern("step"), 0, 10, 11, 0, false, kUnknownId});
  three.ranges.Add(
      Range{base + 150'000, base + 170'000, three.strings.Intern("step \"3\"\t\xff"), 0, 10, 11, 0, false, kUnknownId});
  Trace many = GoldenTrace();  // 600 iterations: three parts of rows, rendered on two threads
  for (int i = 1; i < 600; ++i)
    many.ranges.Add(Range{base + 100'000 * i, base + 100'000 * (i + 1),
                          many.strings.Intern("step " + std::to_string(i)), 0, 10, 11, 0, false, kUnknownId});
  AnalysisConfig config;
  config.iterations.iteration_regex = "^step";
  Trace empty;
  for (const Trace* t : {&one, &three, &many, &empty}) {
    const Trace& trace = *t;
    Analysis a = Analyze(trace, config);
    const std::string tree = dir + "/tree.json", streamed = dir + "/streamed.json";
    ASSERT_TRUE(WriteJsonFile(AnalysisToJson(trace, a, config), tree).ok());
    json doc = AnalysisToJson(trace, a, config, IterationRows::kLeftOut);
    EXPECT_TRUE(doc["iteration_table"].empty());
    ASSERT_TRUE(WriteAnalysisJson(doc, a.iterations, streamed).ok());
    EXPECT_EQ(FileText(streamed), FileText(tree)) << a.iterations.iterations.size() << " iterations";
    if (t == &three) {
      EXPECT_EQ(a.iterations.iterations.size(), 3u);
    }
    if (t == &many) {
      EXPECT_EQ(a.iterations.iterations.size(), 600u);
    }
  }
  // A document without the empty table is refused, and nothing is written.
  Trace t = GoldenTrace();
  Analysis a = Analyze(t);
  json doc = AnalysisToJson(t, a, {});
  EXPECT_FALSE(WriteAnalysisJson(doc, a.iterations, dir + "/refused.json").ok());
  EXPECT_FALSE(std::ifstream(dir + "/refused.json").good());
}

// Rows of several shapes (plain iterations; serving steps with counts, with unknown counts and
// kind, with a name to escape), mixed over more rows than one run of the row writer holds and
// than the two writing threads split: the file is the tree's dump, and every row's members are
// the iteration's own figures.
TEST(AnalysisReport, IterationRowsOfManyShapesWriteTheirOwnFigures) {
  const std::string dir = ::testing::TempDir();
  const Trace t = GoldenTrace();
  Analysis a = Analyze(t);
  std::vector<Iteration> rows;
  for (size_t k = 0; k < 1100; ++k) {
    Iteration it;
    it.index = k;
    it.name = k % 97 == 5 ? "step \"q\"\t\xff" + std::to_string(k) : "step_" + std::to_string(k);
    it.start = 1'000'000 + static_cast<TimeNs>(k) * 10'000;
    it.end = it.start + 7'000 + static_cast<TimeNs>(k % 13);
    it.marker_start = it.start;
    it.marker_end = it.start + 5'000;
    it.kernels = k % 7;
    it.memcpys = k % 3;
    it.syncs = k % 2;
    it.sync_ns = static_cast<TimeNs>(k) * 3;
    for (size_t p = 0; p < kPhaseCount; ++p) it.phase_ns[p] = static_cast<TimeNs>((k + p) % 5) * 1'234;
    for (size_t c = 0; c < kIdleCauseCount; ++c) it.idle_cause_ns[c] = static_cast<TimeNs>((k * 31 + c) % 11);
    const size_t shape = (k / 3 + k % 5) % 4;  // runs of one shape and changes within a run
    if (shape >= 1) it.serving.forms = 1;
    if (shape == 2) {
      it.serving.kind = StepKind::kDecode;
      it.serving.tokens = static_cast<int64_t>(k);
      it.serving.decode_requests = static_cast<int64_t>(k % 9);
    }
    rows.push_back(std::move(it));
  }
  a.iterations.iterations = rows;
  const AnalysisConfig config;
  const std::string tree = dir + "/shapes_tree.json", streamed = dir + "/shapes_streamed.json";
  const json doc_tree = AnalysisToJson(t, a, config);
  ASSERT_TRUE(WriteJsonFile(doc_tree, tree).ok());
  ASSERT_TRUE(WriteAnalysisJson(AnalysisToJson(t, a, config, IterationRows::kLeftOut), a.iterations, streamed).ok());
  EXPECT_EQ(FileText(streamed), FileText(tree));
  const json table = json::parse(FileText(streamed))["iteration_table"];
  ASSERT_EQ(table.size(), rows.size());
  for (size_t k = 0; k < rows.size(); ++k) {
    const Iteration& it = rows[k];
    const json& r = table[k];
    EXPECT_EQ(r["index"], it.index) << k;
    EXPECT_EQ(r["start_ns"], it.start) << k;
    EXPECT_EQ(r["end_ns"], it.end) << k;
    EXPECT_EQ(r["kernels"], it.kernels) << k;
    EXPECT_EQ(r["memcpys"], it.memcpys) << k;
    EXPECT_EQ(r["syncs"], it.syncs) << k;
    EXPECT_DOUBLE_EQ(r["latency_ms"].get<double>(), static_cast<double>(it.end - it.start) / 1e6) << k;
    EXPECT_DOUBLE_EQ(r["sync_ms"].get<double>(), static_cast<double>(it.sync_ns) / 1e6) << k;
    EXPECT_EQ(r["phases_ms"].size(), kPhaseCount) << k;
    EXPECT_EQ(r["idle_causes_ns"].size(), kIdleCauseCount) << k;
    for (size_t c = 0; c < kIdleCauseCount; ++c)
      EXPECT_EQ(r["idle_causes_ns"][kIdleCauseNames[c]], it.idle_cause_ns[c]) << k << " " << c;
    if (it.name.find('"') == std::string::npos) {
      EXPECT_EQ(r["name"], it.name) << k;
    } else {
      EXPECT_EQ(r["name"].get<std::string>().substr(0, 9), "step \"q\"\t") << k;  // the invalid byte replaced
    }
    if (!it.serving.is_step()) {
      EXPECT_FALSE(r.contains("tokens")) << k;
      EXPECT_FALSE(r.contains("step_kind")) << k;
    } else if (it.serving.kind == StepKind::kDecode) {
      EXPECT_EQ(r["tokens"], it.serving.tokens) << k;
      EXPECT_EQ(r["decode_requests"], it.serving.decode_requests) << k;
      EXPECT_TRUE(r["prefill_requests"].is_null()) << k;
      EXPECT_EQ(r["step_kind"], "decode") << k;
    } else {
      EXPECT_TRUE(r["tokens"].is_null()) << k;
      EXPECT_TRUE(r["step_kind"].is_null()) << k;
    }
  }
}

TEST(AnalysisReport, CarriesSchemaToolAndVersion) {
  Trace t = GoldenTrace();
  json doc = AnalysisToJson(t, Analyze(t), {});
  EXPECT_EQ(doc["schema"], "tracegate.report/v1");
  EXPECT_EQ(doc["tool"]["name"], "tracegate");
  EXPECT_EQ(doc["tool"]["version"], TRACEGATE_VERSION);
  EXPECT_EQ(doc["source"]["format"], "kineto_json");
  EXPECT_TRUE(doc["environment"]["host"].is_null());
}

TEST(AnalysisReport, KeyFactsOfGoldenTrace) {
  json doc = ReportWithoutVersion(GoldenTrace());
  const json& dev = doc["devices"][0];
  EXPECT_EQ(dev["busy_ns"], 20'000 + 50'000 + 5'000);
  EXPECT_EQ(dev["active_ns"], 90'000);
  EXPECT_EQ(dev["gaps"]["count"], 2);
  EXPECT_EQ(dev["gaps"]["histogram"][0]["count"], 1);  // the 5 us gap
  EXPECT_EQ(dev["gaps"]["histogram"][1]["count"], 1);  // the 10 us gap (lower bounds are inclusive)
  EXPECT_EQ(doc["top_kernels"][0]["name"], "gemm(float*, float*, int)");
  EXPECT_EQ(doc["copies"]["htod"]["achieved_gbs"], 100.0);
  EXPECT_EQ(doc["copies"]["htod"]["pageable_ratio"], 1.0);
  EXPECT_TRUE(doc["copies"]["dtoh"]["achieved_gbs"].is_null());
  EXPECT_EQ(doc["copies"]["dtoh"]["achieved_gbs_reason"], "no copies");
  EXPECT_EQ(doc["data_quality"]["has_errors"], false);
  EXPECT_EQ(doc["data_quality"]["counters"].size(), kQualityInfo.size());
}

TEST(AnalysisReport, EmptyTraceHasNullRatiosAndNoNaN) {
  Trace t;
  t.api_calls.Add(ApiCall{0, 10, t.strings.Intern("cudaFree"), ApiKind::kRuntime, 1, 1, 1, 0});
  Kernel k;  // one zero-length kernel: a device with an empty active window
  k.device = 0;
  k.stream = 7;
  t.kernels.Add(k);
  json doc = ReportWithoutVersion(t);
  EXPECT_TRUE(doc["devices"][0]["idle_ratio"].is_null());
  EXPECT_EQ(doc["devices"][0]["idle_ratio_reason"], "empty active window");
  EXPECT_TRUE(doc["copies"]["htod"]["pageable_ratio"].is_null());
  // dump() would write NaN/inf as null silently; check no float anywhere is non-finite.
  std::function<void(const json&)> finite = [&](const json& j) {
    if (j.is_number_float()) {
      EXPECT_TRUE(std::isfinite(j.get<double>()));
    }
    if (j.is_structured()) {
      for (const json& c : j) finite(c);
    }
  };
  finite(doc);
  Trace empty;
  json e = ReportWithoutVersion(empty);
  EXPECT_TRUE(e["devices"].empty());
  EXPECT_EQ(e["window"]["duration_ns"], 0);
}

TEST(AnalysisReport, UnknownIdsAreNull) {
  Trace t;
  Kernel k;
  k.start = 0;
  k.end = 10;
  k.device = -1;
  k.stream = kUnknownId;
  t.kernels.Add(k);
  json doc = ReportWithoutVersion(t);
  EXPECT_TRUE(doc["devices"][0]["device"].is_null());
  EXPECT_TRUE(doc["devices"][0]["name"].is_null());
  EXPECT_TRUE(doc["streams"][0]["stream"].is_null());
}

TEST(AnalysisReport, TextSummaryShowsEverySection) {
  Trace t = GoldenTrace();
  std::ostringstream out;
  PrintAnalysis(out, AnalysisToJson(t, Analyze(t), {}));
  std::string text = out.str();
  EXPECT_NE(text.find("trace: golden.json  [kineto_json 1]"), std::string::npos) << text;
  EXPECT_NE(text.find("GPU 0 NVIDIA H200: busy 0.075 ms of 0.090 ms active, idle 16.7%"), std::string::npos) << text;
  EXPECT_NE(text.find("gemm(float*, float*, int)"), std::string::npos);
  EXPECT_NE(text.find("HtoD"), std::string::npos);
  EXPECT_NE(text.find("stream 7"), std::string::npos);
  EXPECT_NE(text.find("warning unmatched_correlation: 1"), std::string::npos) << text;
  EXPECT_EQ(text.find("data quality: clean"), std::string::npos);
}

TEST(AnalysisReport, TextSummarySaysCleanAndTruncatesLongNames) {
  Trace t;
  Kernel k;
  k.start = 0;
  k.end = 10;
  k.device = 0;
  k.stream = 1;
  k.name = t.strings.Intern(std::string(200, 'x'));
  t.kernels.Add(k);
  std::ostringstream out;
  PrintAnalysis(out, AnalysisToJson(t, Analyze(t), {}));
  std::string text = out.str();
  EXPECT_NE(text.find("data quality: clean"), std::string::npos);
  // Cut in the middle to 60 characters, as the Markdown cuts it: both ends stay readable.
  EXPECT_NE(text.find(std::string(28, 'x') + "..." + std::string(29, 'x') + " "), std::string::npos) << text;
  EXPECT_EQ(text.find(std::string(30, 'x')), std::string::npos);
}

// Template instances share a short name (issue 19: top-kernel rows 3, 7, 9 and 10 all read
// at::native::elementwise_kernel): the text, the Markdown and the page name each by the same
// label, its short name and a hint no other instance has.
TEST(AnalysisReport, KernelsSharingAShortNameAreToldApartInTextAndMarkdown) {
  Trace t;
  const char* names[] = {"void at::native::elementwise_kernel<128, 4, at::native::MulFunctor<float>>(int, float*)",
                         "void at::native::elementwise_kernel<128, 4, at::native::AddFunctor<float>>(int, float*)",
                         "void at::native::elementwise_kernel<128, 2, at::native::AddFunctor<c10::Half>>(int, float*)"};
  TimeNs at = 0;
  for (const char* n : names) {
    Kernel k;
    k.start = at;
    k.end = at + 10;
    k.device = 0;
    k.stream = 1;
    k.name = t.strings.Intern(n);
    t.kernels.Add(k);
    at += 20;
  }
  const nlohmann::json doc = AnalysisToJson(t, Analyze(t), {});
  std::ostringstream text;
  PrintAnalysis(text, doc);
  const std::string md = MarkdownReport(doc);
  auto label = [](const std::string& hint) {
    return "at::native::elementwise_kernel \xE2\x80\xB9" + hint + "\xE2\x80\xBA";
  };
  for (const std::string hint : {"MulFunctor", "4 AddFunctor", "Half"}) {
    EXPECT_NE(text.str().find(label(hint)), std::string::npos) << hint << "\n" << text.str();
    std::string escaped = label(hint);  // Markdown escapes the underscore
    escaped.replace(escaped.find("elementwise_kernel") + 11, 1, "\\_");
    EXPECT_NE(md.find(escaped), std::string::npos) << hint << "\n" << md;
  }
}

// The text renders the report document: a report read back from its file renders the same
// bytes as the document in memory, and any JSON renders without throwing.
TEST(AnalysisReport, TextSummaryReadsTheDocument) {
  Trace t = GoldenTrace();
  json doc = AnalysisToJson(t, Analyze(t), {});
  std::ostringstream in_memory, read_back;
  PrintAnalysis(in_memory, doc);
  PrintAnalysis(read_back, json::parse(doc.dump(2)));
  EXPECT_EQ(in_memory.str(), read_back.str());
  EXPECT_NE(in_memory.str().find("findings ("), std::string::npos) << in_memory.str();

  std::ostringstream empty;
  PrintAnalysis(empty, json::object(), "the command never called CUDA");
  EXPECT_NE(empty.str().find("trace: (in memory)"), std::string::npos) << empty.str();
  EXPECT_NE(empty.str().find("devices: no CUDA activity recorded: the command never called CUDA"), std::string::npos);
  EXPECT_NE(empty.str().find("data quality: clean"), std::string::npos);
  std::ostringstream odd;
  PrintAnalysis(odd, json::parse(R"({"devices": [1, {"device": "x"}], "findings": [null], "streams": "no"})"));
  EXPECT_NE(odd.str().find("GPU ?"), std::string::npos) << odd.str();
}

}  // namespace
}  // namespace tg
