// The trace model to Python: load a trace (ImportTrace, the CLI's importer), and hand each table
// out column by column as numpy arrays without a per-row Python loop. Dense columns are
// read-only views of the model's own vectors (the Python trace object is their base, so the
// memory lives as long as any array does); sparse ones are expanded once into a new array.
// Names (string ids) come as (codes, categories) for pandas.Categorical.from_codes: the codes
// renumbered 0..k-1 over the names the column uses, in the order of their first row, in the
// narrowest integer type; the model's enums come as their codes with every name of the enum.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "python/src/bindings.h"
#include "tracegate/analyzer/import.h"
#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/store.h"
#include "tracegate/reports/api.h"

namespace tgpy {

namespace {

using tg::StringId;
using tg::Trace;
using TracePtr = std::shared_ptr<Trace>;

template <class T>
struct IsSparse : std::false_type {};
template <class T>
struct IsSparse<tg::SparseColumn<T>> : std::true_type {};
template <class T>
struct IsSparse<tg::CodedColumn<T>> : std::true_type {};  // not one array either: copied out
template <>
struct IsSparse<tg::NarrowColumn> : std::true_type {};

template <class T>
constexpr bool kIsEnum = std::is_enum_v<T>;

// The names of an enum's values 0..max, as the reports write them.
std::vector<std::string> EnumNames(tg::CopyKind) {
  std::vector<std::string> v;
  for (int k = 0; k <= static_cast<int>(tg::CopyKind::kPtoP); ++k) v.emplace_back(tg::CopyKindName(static_cast<tg::CopyKind>(k)));
  return v;
}
std::vector<std::string> EnumNames(tg::MemKind) {
  std::vector<std::string> v;
  for (int k = 0; k <= static_cast<int>(tg::MemKind::kUnknown); ++k) v.emplace_back(tg::MemKindName(static_cast<tg::MemKind>(k)));
  return v;
}
std::vector<std::string> EnumNames(tg::SyncKind) {
  std::vector<std::string> v;
  for (int k = 0; k <= static_cast<int>(tg::SyncKind::kContextSync); ++k) v.emplace_back(tg::SyncKindName(static_cast<tg::SyncKind>(k)));
  return v;
}
std::vector<std::string> EnumNames(tg::ApiKind) { return {"runtime", "driver"}; }

// A read-only numpy view of `n` values at `data`, kept alive by `owner`.
template <class T>
py::array View(const T* data, size_t n, py::handle owner, py::dtype dtype = py::dtype::of<T>()) {
  py::array a(dtype, {static_cast<py::ssize_t>(n)}, {static_cast<py::ssize_t>(sizeof(T))}, data, owner);
  py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

// A column's values in a new array (sparse and coded columns), or a view (dense ones).
template <class T, class Column>
py::array Values(const Column& col, py::handle owner) {
  if constexpr (IsSparse<Column>::value) {
    py::array_t<T> a(static_cast<py::ssize_t>(col.size()));
    T* out = a.mutable_data();
    for (size_t i = 0; i < col.size(); ++i) out[i] = col[i];
    return a;
  } else {
    return View(col.data(), col.size(), owner);
  }
}

// Codes in the narrowest signed type that holds 0..k-1.
template <class I>
py::array NarrowCodes(const std::vector<int32_t>& codes) {
  py::array_t<I> a(static_cast<py::ssize_t>(codes.size()));
  I* out = a.mutable_data();
  for (size_t i = 0; i < codes.size(); ++i) out[i] = static_cast<I>(codes[i]);
  return a;
}

// A name column as (codes, categories): each distinct text once, in the order of its first row.
// Texts are unique in the string table except after a UTF-8 repair, which may make two ids
// spell the same text: those share a code.
template <class Column>
py::tuple NameColumn(const Column& col, const Trace& t) {
  std::vector<int32_t> code_of(t.strings.size(), -1);
  std::vector<StringId> used;
  std::unordered_map<std::string_view, int32_t> by_text;
  std::vector<int32_t> codes(col.size());
  for (size_t i = 0; i < col.size(); ++i) {
    const StringId id = col[i];
    int32_t& c = code_of[id];
    if (c < 0) {
      auto [it, inserted] = by_text.emplace(t.strings.View(id), static_cast<int32_t>(used.size()));
      if (inserted) used.push_back(id);
      c = it->second;
    }
    codes[i] = c;
  }
  py::list categories;
  for (StringId id : used) categories.append(Str(std::string(t.strings.View(id))));
  py::array a = used.size() <= 127     ? NarrowCodes<int8_t>(codes)
                : used.size() <= 32767 ? NarrowCodes<int16_t>(codes)
                                       : NarrowCodes<int32_t>(codes);
  return py::make_tuple(a, categories);
}

// An enum column as (codes, categories): the codes as stored, every name of the enum (values past
// the last name, which no importer writes, are named by their number).
template <class E, class Column>
py::tuple EnumColumn(const Column& col, py::handle owner) {
  std::vector<std::string> names = EnumNames(E{});
  for (E v : col)
    while (static_cast<size_t>(v) >= names.size()) names.push_back(std::to_string(names.size()));
  py::list categories;
  for (const std::string& n : names) categories.append(n);
  static_assert(sizeof(E) == 1 && !IsSparse<Column>::value, "enum columns are dense bytes");
  return py::make_tuple(View(reinterpret_cast<const uint8_t*>(col.data()), col.size(), owner), categories);
}

template <class T, class Column>
void AddColumn(py::dict& out, const char* name, const Column& col, const Trace& t, py::handle owner) {
  if constexpr (std::is_same_v<T, StringId>) {
    out[name] = NameColumn(col, t);
  } else if constexpr (std::is_same_v<T, bool>) {
    static_assert(!IsSparse<Column>::value);
    out[name] = View(col.data(), col.size(), owner, py::dtype("bool"));
  } else if constexpr (kIsEnum<T>) {
    out[name] = EnumColumn<T>(col, owner);
  } else {
    out[name] = Values<T>(col, owner);
  }
}

#define TGPY_ADD_COLUMN(T, n, def, S) AddColumn<T>(out, #n, table.n, t, owner);

// One table's columns, in the model's order (model.h's TG_*_COLUMNS lists: a new column appears
// here by itself).
py::dict TableColumns(py::object self, const std::string& which) {
  using namespace tg;  // the column lists name their types unqualified
  const Trace& t = self.cast<const Trace&>();
  py::handle owner = self;
  py::dict out;
  if (which == "kernels") {
    const auto& table = t.kernels;
    TG_KERNEL_COLUMNS(TGPY_ADD_COLUMN)
  } else if (which == "memcpys") {
    const auto& table = t.memcpys;
    TG_MEMCPY_COLUMNS(TGPY_ADD_COLUMN)
  } else if (which == "memsets") {
    const auto& table = t.memsets;
    TG_MEMSET_COLUMNS(TGPY_ADD_COLUMN)
  } else if (which == "syncs") {
    const auto& table = t.syncs;
    TG_SYNC_COLUMNS(TGPY_ADD_COLUMN)
  } else if (which == "api_calls") {
    const auto& table = t.api_calls;
    TG_API_COLUMNS(TGPY_ADD_COLUMN)
  } else if (which == "ranges") {
    const auto& table = t.ranges;
    TG_RANGE_COLUMNS(TGPY_ADD_COLUMN)
  } else if (which == "samples") {
    const auto& table = t.samples;
    TG_SAMPLE_COLUMNS(TGPY_ADD_COLUMN)
  } else {
    throw py::key_error("no table '" + which + "' (kernels, memcpys, memsets, syncs, api_calls, ranges, samples)");
  }
  return out;
}

#undef TGPY_ADD_COLUMN

py::dict Counts(const Trace& t) {
  py::dict d;
  d["kernels"] = t.kernels.size();
  d["memcpys"] = t.memcpys.size();
  d["memsets"] = t.memsets.size();
  d["syncs"] = t.syncs.size();
  d["api_calls"] = t.api_calls.size();
  d["ranges"] = t.ranges.size();
  d["samples"] = t.samples.size();
  return d;
}

py::list Quality(const Trace& t) {
  py::list out;
  for (const tg::QualityInfo& q : tg::kQualityInfo)
    out.append(py::make_tuple(std::string(q.key), std::string(tg::SeverityName(q.severity)), t.quality.Get(q.id),
                              std::string(q.description)));
  return out;
}

py::list Devices(const Trace& t) {
  py::list out;
  for (const tg::Device& d : t.devices) {
    py::dict r;
    r["id"] = d.id;
    r["name"] = Str(d.name);
    r["sm_count"] = d.sm_count;
    r["memory_bytes"] = d.memory_bytes;
    r["peak_bandwidth_gbs"] = d.peak_bandwidth_gbs;
    r["compute_major"] = d.compute_major;
    r["compute_minor"] = d.compute_minor;
    out.append(r);
  }
  return out;
}

py::list Processes(const Trace& t) {
  py::list out;
  for (const tg::Process& p : t.processes) {
    py::dict r;
    r["pid"] = p.pid;
    r["name"] = Str(p.name);
    out.append(r);
  }
  return out;
}

py::dict Metadata(const Trace& t) {
  py::dict d;
  for (const auto& [k, v] : t.metadata) d[Str(k)] = Str(v);
  return d;
}

TracePtr Load(const std::string& path, int threads) {
  auto trace = std::make_shared<Trace>();
  tg::ImportOptions options;
  options.threads = threads;
  tg::Status s;
  {
    py::gil_scoped_release unlocked;
    s = tg::ImportTrace(path, options, trace.get());
  }
  ThrowIfError(s);
  return trace;
}

void WriteStore(const Trace& t, const std::string& path) {
  if (auto it = t.metadata.find(tg::meta::kSourcePath); it != t.metadata.end())
    ThrowIfError(tg::CheckOutputPath(it->second, path));
  tg::Status s;
  {
    py::gil_scoped_release unlocked;
    s = tg::WriteStore(t, path);
  }
  ThrowIfError(s);
}

}  // namespace

void BindTrace(py::module_& m) {
  py::class_<Trace, TracePtr>(m, "Trace", "A trace in tracegate's columnar model (use tracegate.load)")
      .def("columns", &TableColumns, py::arg("table"),
           "The table's columns: name -> numpy array, or (codes, categories) for names and enums")
      .def_property_readonly("counts", &Counts)
      .def_property_readonly("quality", &Quality, "(key, severity, count, description) per counter")
      .def_property_readonly("has_errors", [](const Trace& t) { return t.quality.HasErrors(); })
      .def_property_readonly("devices", &Devices)
      .def_property_readonly("processes", &Processes)
      .def_property_readonly("metadata", &Metadata)
      .def_property_readonly("window", [](const Trace& t) { return t.Window(); })
      .def_property_readonly("string_count", [](const Trace& t) { return t.strings.size(); })
      .def("write_store", &WriteStore, py::arg("path"));
  m.def("load", &Load, py::arg("path"), py::arg("threads") = 0);
}

}  // namespace tgpy
