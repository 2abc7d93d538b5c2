// The bottleneck pattern matrix's rules (docs/RULES.md, "The pattern matrix"): one table of every rule,
// those of one trace and those across the ranks of a job, with its priority, parameters and their
// defaults, strategies, source and the function that evaluates it
// (analyzer/analysis/rules/rule_table.cpp). A rules file (--rules rules.json) overrides parameters:
//   {"rules": {"idle_gaps": {"threshold": 0.15}, "drift": {"enabled": false},
//              "straggler": {"min_share": 0.05}},
//    "kernel_classes": {"transform": "transpose|permute"},
//    "gpu": {"peak_bandwidth_gbs": 4800, "peak_tflops": 989}}
// Unknown rule ids, parameter names, classes or top-level keys are errors (a typo must not
// silently keep a default).
#pragma once

#include <initializer_list>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tracegate/analyzer/status.h"

namespace tg {

enum class Priority : uint8_t { kHigh = 0, kMedium = 1, kLow = 2 };
const char* PriorityName(Priority p);  // "high", "medium", "low"

struct RuleParam {
  const char* key;
  double value;          // default
  const char* meaning;   // one line, with the unit
};

struct Finding;
struct RuleDef;
namespace internal {
class RuleContext;     // what every rule of one trace reads: analyzer/analysis/rules/rule_helpers.h
class JobRuleContext;  // what every rule across ranks reads: the same header
}  // namespace internal
// Appends the rule's findings, if it fires, to `out`.
using RuleEvaluate = void (*)(const internal::RuleContext& c, const RuleDef& rule, std::vector<Finding>& out);
using JobRuleEvaluate = void (*)(const internal::JobRuleContext& c, const RuleDef& rule, std::vector<Finding>& out);

// One row of the rule table. The table is a constant expression, so its order promises (ids
// unique, one evaluate function each, the rules across ranks after those of one trace,
// fusion_candidate the last of one trace) are static_asserts beside it.
struct RuleDef {
  const char* id;
  const char* title;
  Priority priority;
  const char* metric;    // what is measured, one line
  std::initializer_list<RuleParam> params;
  std::initializer_list<const char*> strategies;
  const char* source;    // where the rule and its default come from; no output prints it
  RuleEvaluate evaluate;                   // a rule of one trace (EvaluateRules); nullptr for a rule across ranks
  JobRuleEvaluate evaluate_job = nullptr;  // a rule across the ranks of a job (EvaluateJobRules)
  constexpr bool across_ranks() const { return evaluate_job != nullptr; }
};

// Every rule, in the order docs/RULES.md lists them (a unit test checks the page against it) and
// EvaluateRules and EvaluateJobRules run them: the rules of one trace first, then those across ranks.
std::span<const RuleDef> RuleDefs();
const RuleDef* FindRule(std::string_view id);

class RulesConfig {
 public:
  RulesConfig();  // every rule enabled with its defaults
  bool Enabled(std::string_view id) const;
  double Get(std::string_view id, std::string_view key) const;  // must exist (asserts)
  Status Set(std::string_view id, std::string_view key, double value);
  Status SetEnabled(std::string_view id, bool enabled);
  // Rule id -> (param -> value), the effective settings, for the report.
  const std::map<std::string, std::map<std::string, double, std::less<>>, std::less<>>& values() const {
    return values_;
  }

  std::map<std::string, std::string> kernel_class_patterns;  // from "kernel_classes"
  double peak_bandwidth_gbs = 0;  // from "gpu"; 0 = not set
  double peak_tflops = 0;

 private:
  std::map<std::string, std::map<std::string, double, std::less<>>, std::less<>> values_;
  std::map<std::string, bool, std::less<>> enabled_;
};

// Reads a rules file over the defaults; InvalidInput "<path>: <problem>" on any error.
Status LoadRules(const std::string& path, RulesConfig* config);

}  // namespace tg
