// Helpers shared by the collector's tests (part_writer, parts, nvml_sampler): a temp dir per
// test, reading a part back the way `tracegate record` does, and hand-built event batches.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tracegate/analyzer/import.h"
#include "tracegate/analyzer/model.h"
#include "tracegate/analyzer/store.h"

namespace tg::testing {

class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("tg_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~ScratchDir() { std::filesystem::remove_all(dir_); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::string str() const { return dir_.string(); }

 private:
  std::filesystem::path dir_;
};

// RecoverStore + ImportSqlite, as MergeParts reads a part.
inline Status ReadPart(const std::string& path, Trace* out) {
  TG_RETURN_IF_ERROR(RecoverStore(path));
  return ImportSqlite(path, out);
}

// n kernels named `name` (times first, first + 100, ...; each 50 ns long) on device 0, stream 1,
// with correlation ids from `first_correlation`, for process `pid`.
inline Trace Kernels(const std::string& name, int n, TimeNs first = 1000, int64_t pid = 42,
                     int64_t first_correlation = 1) {
  Trace t;
  StringId id = t.strings.Intern(name);
  for (int i = 0; i < n; ++i) {
    Kernel k;
    k.start = first + 100 * i;
    k.end = k.start + 50;
    k.name = id;
    k.device = 0;
    k.stream = 1;
    k.correlation = first_correlation + i;
    k.pid = pid;
    t.kernels.Add(k);
  }
  return t;
}

}  // namespace tg::testing
