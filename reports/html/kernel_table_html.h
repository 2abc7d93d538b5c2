// Kernel names people can tell apart, and the analyze page's kernel table.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tg::internal {

// A kernel's short name (ShortKernelName) and, when other names of the list share it, a hint from
// its template arguments and parameters that no other of them has ("MulFunctor", "BFloat16", "32").
struct KernelLabel {
  std::string short_name, hint;
  // "short ‹hint›".
  std::string Text() const { return hint.empty() ? short_name : short_name + " \xE2\x80\xB9" + hint + "\xE2\x80\xBA"; }
};
// One label per distinct demangled name of `names`.
std::map<std::string, KernelLabel> KernelLabels(const std::vector<std::string>& names);

// The page's labels: every name of "top_kernels" and the first kKernelRows of "kernel_table".
inline constexpr size_t kKernelRows = 300;
std::map<std::string, KernelLabel> ReportKernelLabels(const nlohmann::json& doc);

// "kernel_table" (the kept iterations' kernels; "top_kernels" for a report without it) as a
// sortable, filterable table: short name with its hint and the full name on demand, devices,
// streams, calls, total, per iteration, mean and share; at most kKernelRows rows.
std::string KernelTableHtml(const nlohmann::json& doc, const std::map<std::string, KernelLabel>& labels);

}  // namespace tg::internal
