// The Python module's C++ side (`tracegate._tracegate`): thin bindings over the libraries, the
// same calls the CLI makes (docs/PYTHON.md). Errors come out as tg::Status and are raised in
// Python as the tracegate error class of their code (python/tracegate/_errors.py), carrying the
// one-line message the CLI prints.
#pragma once

#include <pybind11/pybind11.h>

#include <exception>
#include <nlohmann/json.hpp>
#include <memory>
#include <string>

#include "tracegate/analyzer/status.h"
#include "tracegate/reports/analysis_report.h"

namespace tg {
struct IterationAnalysis;
}  // namespace tg

namespace tgpy {

namespace py = pybind11;

// A status that is not ok, on its way out of a binding (the translator in module.cpp raises it).
class StatusError : public std::exception {
 public:
  explicit StatusError(tg::Status s) : status_(std::move(s)) {}
  const char* what() const noexcept override { return status_.message().c_str(); }
  const tg::Status& status() const { return status_; }

 private:
  tg::Status status_;
};

inline void ThrowIfError(const tg::Status& s) {
  if (!s.ok()) throw StatusError(s);
}

// UTF-8 text as a Python str; bytes that are not UTF-8 become U+FFFD (never an exception).
py::str Str(const std::string& s);

// A JSON document as Python objects (json.loads of its text: dicts, lists, int, float, str, None),
// and back (json.dumps); what the CLI would write is what Python sees.
py::object JsonToPython(const nlohmann::json& doc);
nlohmann::json PythonToJson(py::handle obj);

// A report document: one trace's (tracegate.report/v1) or a job's. An analysis leaves its
// iteration_table empty and keeps the iterations: Doc() puts the rows in on first use, so that
// analyze() costs what `tracegate analyze` costs and only a caller that reads the document (its
// dict, the iterations, the HTML page, a gate) pays for one object per iteration; write_json
// streams the rows as the CLI's -o does. Read the document
// through Doc(), with the GIL held (it fills the rows once).
// A report held for Python: tracegate's Report (tracegate/reports/analysis_report.h), which keeps
// its iteration rows aside until the whole document is asked for.
struct Report {
  const nlohmann::json& Doc() const { return report.Document(); }
  tg::Report report;
  std::string no_activity;  // why a recording holds no GPU work (analyze's summary line), if known
  bool job = false;
};

void BindTrace(py::module_& m);
void BindReports(py::module_& m);
void BindGate(py::module_& m);

}  // namespace tgpy
