// Scratch files for unit tests. The path holds the process id and the running test's name, so
// tests that CTest runs in parallel (and two checkouts testing on one machine) never share one.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace tg::testing {

// TempDir()/tg_<pid>_<suite>.<test>_<name>; not created.
inline std::string TempPath(const std::string& name) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = info ? std::string(info->test_suite_name()) + "." + info->name() : "global";
  return ::testing::TempDir() + "/tg_" + std::to_string(::getpid()) + "_" + test + "_" + name;
}

// Writes `content` (bytes as they are) to TempPath(name) and returns the path.
inline std::string WriteTempFile(const std::string& name, const std::string& content) {
  std::string path = TempPath(name);
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

}  // namespace tg::testing
