// The report's "kernel_table" section: every distinct kernel of the kept iterations, so that
// `tracegate compare` can diff kernels beyond the top-K table. Internal to the reports library
// (AnalysisToJson calls it); the keys are listed in tracegate/analysis_report.h.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tracegate/analyzer/analysis.h"
#include "tracegate/analyzer/model.h"

namespace tg::internal {

// What launched each kernel name (demangled), over every launch of it in the trace: the op
// most of its launches have (LinkOps, by OpBaseName; ties: the op whose name sorts first), "" with a reason
// when none has one, and the class most of its launches have (ties: the first class).
struct KernelOp {
  std::string op, reason;
  KernelClass cls = KernelClass::kOther;
};
using KernelOps = std::map<std::string, KernelOp>;
KernelOps KernelOpsByName(const Trace& trace, const Analysis& analysis);
// Sets row["op"] (null with "op_reason" when none) and row["class"] for kernel `name`.
void SetKernelOp(nlohmann::json& row, const KernelOps& ops, const std::string& name);

// One row per distinct demangled name among kernels that belong to a kept iteration:
// {name, count, total_ms, per_iteration_ms (total / kept iterations), mean_us, devices, streams},
// by total_ms descending, then name. Empty without kept iterations. SetKernelOps adds each row's
// op and class (the report finds the ops on another thread meanwhile).
nlohmann::json KernelTableJson(const Trace& trace, const Analysis& analysis);
void SetKernelOps(nlohmann::json& rows, const KernelOps& ops);

}  // namespace tg::internal
