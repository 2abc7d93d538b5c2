// Scratch files for unit tests. The path holds the process id and the running test's name, so
// tests that CTest runs in parallel (and two checkouts testing on one machine) never share one.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

namespace tg::testing {

// Removes every scratch path handed out (files, or folders with what is under them) when the
// test program ends, so runs leave nothing behind in the shared temporary folder.
class TempCleanup : public ::testing::Environment {
 public:
  static std::vector<std::string>& Paths() {
    static std::vector<std::string> paths;
    return paths;
  }
  void TearDown() override {
    for (const std::string& p : Paths()) {
      std::error_code ec;  // already gone, or never created: nothing to do
      std::filesystem::remove_all(p, ec);
    }
    Paths().clear();
  }
};
inline ::testing::Environment* const kTempCleanup = ::testing::AddGlobalTestEnvironment(new TempCleanup);

// `path`, to be removed when the test program ends.
inline std::string RemovedAtExit(std::string path) {
  TempCleanup::Paths().push_back(path);
  return path;
}

// TempDir()/tg_<pid>_<suite>.<test>_<name>; not created; removed when the test program ends.
inline std::string TempPath(const std::string& name) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = info ? std::string(info->test_suite_name()) + "." + info->name() : "global";
  return RemovedAtExit(::testing::TempDir() + "/tg_" + std::to_string(::getpid()) + "_" + test + "_" + name);
}

// Writes `content` (bytes as they are) to TempPath(name) and returns the path.
inline std::string WriteTempFile(const std::string& name, const std::string& content) {
  std::string path = TempPath(name);
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

}  // namespace tg::testing
