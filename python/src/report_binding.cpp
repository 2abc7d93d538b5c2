// Analysis from Python: the settings `tracegate analyze` takes, RunAnalysis and AnalysisToJson on
// a loaded trace or a file (the CLI's own steps), a job's ranks (AnalyzeJob), the report's
// renderers, and predict. The report document stays in C++ until Python asks for it.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/util/fileio.h"
#include "python/src/bindings.h"
#include "reports/document/report_document.h"
#include "reports/document/report_keys.h"
#include "tracegate/analyzer/analysis.h"
#include "tracegate/analyzer/import.h"
#include "tracegate/collector/record.h"
#include "tracegate/reports/analysis_report.h"
#include "tracegate/reports/api.h"
#include "tracegate/reports/baseline.h"
#include "tracegate/reports/job.h"
#include "tracegate/reports/json_out.h"
#include "tracegate/reports/report_html.h"
#include "tracegate/reports/report_read.h"

namespace tgpy {

namespace {

using nlohmann::json;
using tg::Trace;
using TracePtr = std::shared_ptr<Trace>;

std::shared_ptr<Report> Analyzed(tg::StatusOr<tg::Report> analyzed) {
  ThrowIfError(analyzed.status());
  auto r = std::make_shared<Report>();
  r->no_activity = std::string(analyzed->TraceMetadata(tg::record_meta::kNoActivity));
  r->report = std::move(*analyzed);
  return r;
}

tg::AnalysisConfig Config(const tg::AnalysisSettings& settings) {
  tg::AnalysisConfig config;
  ThrowIfError(tg::ToAnalysisConfig(settings, &config));
  return config;
}

std::shared_ptr<Report> AnalyzeLoaded(const Trace& trace, const tg::AnalysisSettings& settings) {
  const tg::AnalysisConfig config = Config(settings);
  py::gil_scoped_release unlocked;
  return Analyzed(tg::AnalyzeLoaded(trace, config));
}

std::shared_ptr<Report> AnalyzeFile(const std::string& path, const tg::AnalysisSettings& settings) {
  const tg::AnalysisConfig config = Config(settings);
  py::gil_scoped_release unlocked;
  return Analyzed(tg::AnalyzeFile(path, config));
}

std::shared_ptr<Report> AnalyzeJobFiles(const std::vector<std::string>& inputs, const tg::AnalysisSettings& settings,
                                        size_t jobs) {
  const tg::AnalysisConfig config = Config(settings);
  py::gil_scoped_release unlocked;
  tg::StatusOr<std::vector<std::string>> files = tg::ListJobFiles(inputs);
  ThrowIfError(files.status());
  tg::JobOptions options;
  options.jobs = jobs;
  options.progress = false;
  tg::StatusOr<json> doc = tg::AnalyzeJob(*files, config, options);
  ThrowIfError(doc.status());
  auto r = std::make_shared<Report>();
  r->report = tg::Report(std::move(*doc));
  r->job = true;
  return r;
}

// The Markdown and the text never read iteration_table: they take the document as it is.
std::string Markdown(const Report& r) {
  return r.job ? tg::JobMarkdownReport(r.report.Head()) : tg::MarkdownReport(r.report.Head());
}
std::string Html(const Report& r) { return r.job ? tg::JobHtmlReport(r.Doc()) : tg::HtmlReport(r.Doc()); }
std::string Text(const Report& r) {
  std::ostringstream out;
  if (r.job) tg::PrintJobRanks(out, r.report.Head());
  tg::PrintAnalysis(out, r.report.Head(), r.no_activity);
  return out.str();
}

void WriteText(const std::string& path, const std::string& text) {
  ThrowIfError(tg::internal::WriteFileAtomic(path, text));
}

py::dict PredictionDict(const tg::PredictSettings& settings, const tg::Prediction& p) {
  // The keys of `predict --json` (tracegate.prediction.v1.schema.json), then the measurement and
  // Amdahl's parts as tuples.
  py::dict d = JsonToPython(tg::PredictionJson(settings, p));
  d["measured"] = p.measured;
  if (p.measured) {
    py::dict m;
    m["share"] = p.share.share;
    m["part_ns"] = p.share.part_ns;
    m["total_ns"] = p.share.total_ns;
    m["matched"] = p.share.matched;
    m["matched_what"] = p.by_ranges ? "ranges" : "kernels";
    m["iterations"] = p.iterations;
    m["found"] = p.found;
    m["skipped"] = p.skipped;
    m["skip_auto"] = p.skip_auto;
    d["measurement"] = m;
  }
  py::list parts;
  for (const tg::AmdahlPart& part : p.parts) parts.append(py::make_tuple(part.fraction, part.speedup));
  d["parts"] = parts;
  d["upper_bound"] = p.bound;
  return d;
}

py::dict Predict(const tg::PredictSettings& settings, std::optional<TracePtr> trace) {
  tg::Prediction p;
  tg::Status s;
  {
    py::gil_scoped_release unlocked;
    s = tg::Predict(settings, trace ? trace->get() : nullptr, &p);
  }
  ThrowIfError(s);
  if (!settings.json_out.empty()) ThrowIfError(tg::WritePredictionJson(settings, p, settings.json_out));
  return PredictionDict(settings, p);
}

}  // namespace

// For gate_binding.cpp: a report as the CLI reads one given as "a report or a trace", and a
// JSON document from Python checked as a report.
std::shared_ptr<Report> ReadReportOrTrace(const std::string& path, const std::string& skip) {
  std::optional<size_t> n;
  ThrowIfError(tg::ParseSkip(skip, &n));
  auto r = std::make_shared<Report>();
  tg::Status s;
  json doc;
  {
    py::gil_scoped_release unlocked;
    s = tg::ReadReportOrTrace(path, &doc, n);
  }
  ThrowIfError(s);
  r->job = tg::internal::IsJobReport(doc);
  r->report = tg::Report(std::move(doc));
  return r;
}

std::shared_ptr<Report> ReportFromPython(py::handle obj, const std::string& label) {
  auto r = std::make_shared<Report>();
  json doc = PythonToJson(obj);
  ThrowIfError(tg::CheckReport(doc, label));
  r->job = tg::internal::IsJobReport(doc);
  r->report = tg::Report(std::move(doc));
  return r;
}

void BindReports(py::module_& m) {
  py::class_<tg::IterationSettings>(m, "IterationSettings")
      .def(py::init<>())
      .def_readwrite("iteration_regex", &tg::IterationSettings::iteration_regex)
      .def_readwrite("skip", &tg::IterationSettings::skip)
      .def_readwrite("phases", &tg::IterationSettings::phases)
      .def_readwrite("batch", &tg::IterationSettings::batch);
  py::class_<tg::AnalysisSettings>(m, "AnalysisSettings")
      .def(py::init<>())
      .def_readwrite("top_k", &tg::AnalysisSettings::top_k)
      .def_readwrite("largest_gaps", &tg::AnalysisSettings::largest_gaps)
      .def_readwrite("small_copy_bytes", &tg::AnalysisSettings::small_copy_bytes)
      .def_readwrite("iterations", &tg::AnalysisSettings::iterations)
      .def_readwrite("model", &tg::AnalysisSettings::model)
      .def_readwrite("precision", &tg::AnalysisSettings::precision)
      .def_readwrite("commit", &tg::AnalysisSettings::commit)
      .def_readwrite("rules_path", &tg::AnalysisSettings::rules_path)
      .def_readwrite("costs_path", &tg::AnalysisSettings::costs_path)
      .def_readwrite("reference_path", &tg::AnalysisSettings::reference_path)
      .def_readwrite("peak_gbs", &tg::AnalysisSettings::peak_gbs)
      .def_readwrite("peak_tflops", &tg::AnalysisSettings::peak_tflops)
      .def_readwrite("critical_path", &tg::AnalysisSettings::critical_path)
      .def_readwrite("replay_findings", &tg::AnalysisSettings::replay_findings)
      .def_readwrite("captures", &tg::AnalysisSettings::captures);
  py::class_<tg::KernelSelection>(m, "KernelSelection")
      .def(py::init<>())
      .def_readwrite("regex", &tg::KernelSelection::regex)
      .def_readwrite("kernel_class", &tg::KernelSelection::kernel_class)
      .def_readwrite("speedup", &tg::KernelSelection::speedup);
  py::class_<tg::PredictSettings>(m, "PredictSettings")
      .def(py::init<>())
      .def_readwrite("fraction", &tg::PredictSettings::fraction)
      .def_readwrite("speedup", &tg::PredictSettings::speedup)
      .def_readwrite("parts", &tg::PredictSettings::parts)
      .def_readwrite("trace", &tg::PredictSettings::trace)
      .def_readwrite("kernels_regex", &tg::PredictSettings::kernels_regex)
      .def_readwrite("range_regex", &tg::PredictSettings::range_regex)
      .def_readwrite("launched_regex", &tg::PredictSettings::launched_regex)
      .def_readwrite("method", &tg::PredictSettings::method)
      .def_readwrite("kernel_class", &tg::PredictSettings::kernel_class)
      .def_readwrite("host_regex", &tg::PredictSettings::host_regex)
      .def_readwrite("launch_us", &tg::PredictSettings::launch_us)
      .def_readwrite("remove_syncs_regex", &tg::PredictSettings::remove_syncs_regex)
      .def_readwrite("graph", &tg::PredictSettings::graph)
      .def_readwrite("graph_regex", &tg::PredictSettings::graph_regex)
      .def_readwrite("json_out", &tg::PredictSettings::json_out)
      .def_readwrite("host_speedup", &tg::PredictSettings::host_speedup)
      .def_readwrite("more_kernels", &tg::PredictSettings::more_kernels)
      .def_readwrite("iterations", &tg::PredictSettings::iterations)
      .def_readwrite("findings", &tg::PredictSettings::findings)
      .def_readwrite("rules_path", &tg::PredictSettings::rules_path)
      .def_readwrite("costs_path", &tg::PredictSettings::costs_path)
      .def_readwrite("job", &tg::PredictSettings::job)
      .def_readwrite("ranks", &tg::PredictSettings::ranks);

  py::class_<Report, std::shared_ptr<Report>>(m, "Report")
      .def("to_python", [](const Report& r) { return JsonToPython(r.Doc()); })
      .def("json_text", [](const Report& r) { return Str(tg::JsonText(r.Doc())); })
      .def_readonly("job", &Report::job)
      .def("text", [](const Report& r) { return Str(Text(r)); })
      .def("markdown", [](const Report& r) { return Str(Markdown(r)); })
      .def("html", [](const Report& r) { return Str(Html(r)); })
      .def("write_json",
           [](const Report& r, const std::string& path) {
             // Rows still pending are streamed as the CLI's -o streams them (the same bytes).
             ThrowIfError(r.report.WriteJson(path));
           })
      .def("write_markdown", [](const Report& r, const std::string& path) { WriteText(path, Markdown(r)); })
      .def("write_html", [](const Report& r, const std::string& path) { WriteText(path, Html(r)); });

  m.def("analyze_trace", [](const TracePtr& t, const tg::AnalysisSettings& s) { return AnalyzeLoaded(*t, s); });
  m.def("analyze_file", &AnalyzeFile);
  // The leading columns of Report.iterations (reports/document/report_keys.h): object columns
  // expand to "<key>.<member>" as pandas.json_normalize names them.
  m.def("iteration_columns", [] {
    std::vector<std::string> columns;
    for (const tg::internal::keys::Key* k : tg::internal::keys::kIterationColumns) {
      if (k == &tg::internal::keys::kRowPhasesMs) {
        for (const char* phase : tg::kPhaseNames) columns.push_back(std::string(k->name) + "." + phase);
      } else {
        columns.emplace_back(k->name);
      }
    }
    return columns;
  });
  m.def("analyze_job", &AnalyzeJobFiles);
  m.def("list_job_files", [](const std::vector<std::string>& inputs) {
    tg::StatusOr<std::vector<std::string>> files = tg::ListJobFiles(inputs);
    ThrowIfError(files.status());
    return *files;
  });
  m.def("rank_from_file_name", [](const std::string& path) { return tg::RankFromFileName(path); });
  m.def("check_output_path", [](const std::string& in, const std::string& out) { ThrowIfError(tg::CheckOutputPath(in, out)); });
  m.def("parse_skip", [](const std::string& text) {
    std::optional<size_t> n;
    ThrowIfError(tg::ParseSkip(text, &n));
    return n;
  });
  m.def("predict", &Predict, py::arg("settings"), py::arg("trace") = std::nullopt);
  m.def("read_report_or_trace", &ReadReportOrTrace, py::arg("path"), py::arg("skip") = "auto");
  m.def("report_from_python", &ReportFromPython, py::arg("doc"), py::arg("label"));
}

}  // namespace tgpy
