// The whole analysis in unit tests: run it expecting success, and find a finding by rule id.
#pragma once

#include <gtest/gtest.h>

#include <string_view>

#include "tracegate/analyzer/analysis.h"

namespace tg::testing {

inline Analysis AnalyzeOk(const Trace& t, const AnalysisConfig& config = {}) {
  Analysis a;
  Status s = RunAnalysis(t, config, &a);
  EXPECT_TRUE(s.ok()) << s.message();
  return a;
}

// The first finding of rule `id`, or null.
inline const Finding* FindFinding(const Analysis& a, std::string_view id) {
  for (const Finding& f : a.findings)
    if (f.id == id) return &f;
  return nullptr;
}

}  // namespace tg::testing
