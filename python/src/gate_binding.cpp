// compare and gate from Python: the gate's verdict rules (VerdictSettings), CompareReports on two
// reports, the baseline as the gate loads it, the result when an input cannot be read, the
// comparison's renderers and output files, and the gate's history row (the CLI's own steps).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "python/src/bindings.h"
#include "tracegate/reports/api.h"
#include "tracegate/reports/baseline.h"
#include "tracegate/reports/compare.h"
#include "tracegate/reports/compare_html.h"

namespace tgpy {


namespace {

// A comparison with the two reports it compared (empty objects when an input could not be read).
struct PyComparison {
  tg::Comparison c;
  nlohmann::json base = nlohmann::json::object(), next = nlohmann::json::object();
};
using ComparisonPtr = std::shared_ptr<PyComparison>;
using ReportPtr = std::shared_ptr<Report>;

ComparisonPtr Compare(const ReportPtr& base, const ReportPtr& next, const tg::VerdictSettings& v,
                      const std::string& base_label, const std::string& new_label) {
  auto out = std::make_shared<PyComparison>();
  out->base = base->Doc();
  out->next = next->Doc();
  py::gil_scoped_release unlocked;
  out->c = tg::CompareReports(out->base, out->next, tg::ToCompareOptions(v), base_label, new_label);
  return out;
}

ComparisonPtr CannotRead(const std::string& message, const tg::VerdictSettings& v, const std::string& base_label,
                         const std::string& new_label) {
  auto out = std::make_shared<PyComparison>();
  out->c = tg::CannotReadInputs(message, tg::ToCompareOptions(v), base_label, new_label);
  return out;
}

std::pair<ReportPtr, std::string> LoadBaseline(const std::string& dir, const std::string& name_or_file) {
  auto r = std::make_shared<Report>();
  std::string resolved;
  nlohmann::json doc;
  ThrowIfError(tg::LoadBaseline(dir, name_or_file, &doc, &resolved));
  r->report = tg::Report(std::move(doc));
  return {r, resolved};
}

std::string Printed(const tg::Comparison& c) {
  std::ostringstream out;
  tg::PrintComparison(out, c);
  return out.str();
}

py::list Problems(const tg::Comparison& c) {
  py::list out;
  for (const tg::CompareProblem& p : c.problems) out.append(py::make_tuple(Str(p.check), Str(p.message)));
  return out;
}

void WriteOutputs(const PyComparison& p, const tg::ComparisonOutputs& o, const std::vector<std::string>& inputs) {
  ThrowIfError(tg::CheckComparisonOutputs(o, inputs));
  ThrowIfError(tg::WriteComparisonOutputs(p.c, o, p.base, p.next));
}

// The warning the CLI prints when the history cannot be written, or None.
std::optional<std::string> RecordGate(const std::string& dir, const std::string& baseline_path, const ReportPtr& next,
                                      const std::string& next_label, const PyComparison& p) {
  tg::Status s = tg::RecordGateInHistory(dir, baseline_path, next->Doc(), next_label, p.c);
  if (s.ok()) return std::nullopt;
  return "the gate was not recorded in the history: " + s.message();
}

}  // namespace

void BindGate(py::module_& m) {
  py::class_<tg::VerdictSettings>(m, "VerdictSettings")
      .def(py::init<>())
      .def_readwrite("threshold_pct", &tg::VerdictSettings::threshold_pct)
      .def_readwrite("require_significance", &tg::VerdictSettings::require_significance)
      .def_readwrite("allow_device_mismatch", &tg::VerdictSettings::allow_device_mismatch)
      .def_readwrite("max_malformed_pct", &tg::VerdictSettings::max_malformed_pct)
      .def_readwrite("kernel_threshold_pct", &tg::VerdictSettings::kernel_threshold_pct);
  py::class_<PyComparison, ComparisonPtr>(m, "Comparison")
      .def_property_readonly("verdict", [](const PyComparison& p) { return std::string(tg::VerdictName(p.c.verdict)); })
      .def_property_readonly("text", [](const PyComparison& p) { return Str(p.c.verdict_text); })
      .def_property_readonly("exit_code", [](const PyComparison& p) { return tg::GateExitCode(p.c.verdict); })
      .def_property_readonly("problems", [](const PyComparison& p) { return Problems(p.c); })
      .def_property_readonly("notes", [](const PyComparison& p) {
        py::list out;
        for (const std::string& n : p.c.notes) out.append(Str(n));
        return out;
      })
      .def("to_python", [](const PyComparison& p) { return JsonToPython(tg::ComparisonToJson(p.c)); })
      .def("printed", [](const PyComparison& p) { return Str(Printed(p.c)); })
      .def("markdown", [](const PyComparison& p) { return Str(tg::ComparisonMarkdown(p.c)); })
      .def("junit", [](const PyComparison& p) { return Str(tg::ComparisonJunit(p.c)); })
      .def("html", [](const PyComparison& p) { return Str(tg::ComparisonHtml(p.c, p.base, p.next)); })
      .def("write_outputs", [](const PyComparison& p, const std::string& md, const std::string& json,
                               const std::string& junit, const std::string& html, const std::vector<std::string>& inputs) {
        WriteOutputs(p, tg::ComparisonOutputs{md, json, junit, html}, inputs);
      });
  m.def("compare_reports", &Compare);
  m.def("cannot_read", &CannotRead);
  m.def("load_baseline", &LoadBaseline);
  m.def("record_gate", &RecordGate);
  m.def("check_comparison_outputs", [](const std::string& md, const std::string& json, const std::string& junit,
                                       const std::string& html, const std::vector<std::string>& inputs) {
    ThrowIfError(tg::CheckComparisonOutputs(tg::ComparisonOutputs{md, json, junit, html}, inputs));
  });
}

}  // namespace tgpy
