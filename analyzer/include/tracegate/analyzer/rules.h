// The bottleneck pattern matrix's rules (SPEC.md; seed 001 5.3): one table of every rule with its
// priority, parameters and their defaults, strategies and source. docs/RULES.md describes each;
// findings.cpp evaluates them. A rules file (--rules rules.json) overrides parameters:
//   {"rules": {"idle_gaps": {"threshold": 0.15}, "drift": {"enabled": false}},
//    "kernel_classes": {"transform": "transpose|permute"},
//    "gpu": {"peak_bandwidth_gbs": 4800, "peak_tflops": 989}}
// Unknown rule ids, parameter names, classes or top-level keys are errors (a typo must not
// silently keep a default).
#pragma once

#include <map>
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

struct RuleDef {
  const char* id;
  const char* title;
  Priority priority;
  const char* metric;    // what is measured, one line
  std::vector<RuleParam> params;
  std::vector<const char*> strategies;
  const char* source;    // where the rule and its default come from
};

// Every rule, in the order docs/RULES.md lists them.
const std::vector<RuleDef>& RuleDefs();
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
