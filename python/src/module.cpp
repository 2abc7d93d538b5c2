// PYBIND11_MODULE(_tracegate): the errors, the trace, the reports, the gate.
#include <pybind11/pybind11.h>

#include "python/src/bindings.h"

namespace tgpy {

py::str Str(const std::string& s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
  if (!o) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

py::object JsonToPython(const nlohmann::json& doc) {
  const std::string text = doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  static py::object* loads = new py::object(py::module_::import("json").attr("loads"));
  return (*loads)(Str(text));
}

nlohmann::json PythonToJson(py::handle obj) {
  static py::object* dumps = new py::object(py::module_::import("json").attr("dumps"));
  // allow_nan=False: a report never holds NaN or infinity (null + _reason instead).
  const std::string text = py::cast<std::string>((*dumps)(obj, py::arg("allow_nan") = false));
  return nlohmann::json::parse(text);
}

namespace {

const char* CodeName(tg::StatusCode c) {
  switch (c) {
    case tg::StatusCode::kOk: return "ok";
    case tg::StatusCode::kInvalidInput: return "invalid_input";
    case tg::StatusCode::kNotFound: return "not_found";
    case tg::StatusCode::kIoError: return "io_error";
    case tg::StatusCode::kUnsupported: return "unsupported";
    case tg::StatusCode::kInternal: return "internal";
  }
  return "internal";
}

}  // namespace

}  // namespace tgpy

PYBIND11_MODULE(_tracegate, m) {
  namespace py = pybind11;
  m.doc() = "tracegate's C++ engine (import the tracegate package, not this module)";
  m.attr("__version__") = TRACEGATE_VERSION;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tgpy::StatusError& e) {
      py::object cls = py::module_::import("tracegate._errors").attr("error_class")(tgpy::CodeName(e.status().code()));
      PyErr_SetObject(cls.ptr(), tgpy::Str(e.status().message()).ptr());
    }
  });
  tgpy::BindTrace(m);
  tgpy::BindReports(m);
  tgpy::BindGate(m);
}
