// Kineto -> store -> Chrome export -> import keeps the same kernels with the same times, on
// every real trace in ../shared/traces (and on the one shipped under tests/fixtures/real).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "tracegate/analyzer/import.h"
#include "tracegate/analyzer/store.h"
#include "tracegate/reports/chrome_export.h"

namespace tg {
namespace {

namespace fs = std::filesystem;

using KernelKey = std::tuple<TimeNs, TimeNs, std::string, int32_t, int64_t, int64_t>;

std::vector<KernelKey> Kernels(const Trace& t) {
  std::vector<KernelKey> out;
  for (size_t i = 0; i < t.kernels.size(); ++i)
    out.emplace_back(t.kernels.start[i], t.kernels.end[i], std::string(t.Name(t.kernels.name[i])), t.kernels.device[i],
                     t.kernels.stream[i], t.kernels.correlation[i]);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::tuple<TimeNs, TimeNs, int64_t, CopyKind>> Copies(const Trace& t) {
  std::vector<std::tuple<TimeNs, TimeNs, int64_t, CopyKind>> out;
  for (size_t i = 0; i < t.memcpys.size(); ++i)
    out.emplace_back(t.memcpys.start[i], t.memcpys.end[i], t.memcpys.bytes[i], t.memcpys.kind[i]);
  std::sort(out.begin(), out.end());
  return out;
}

class RoundTrip : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tg_roundtrip_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_P(RoundTrip, KinetoToStoreToChromeKeepsKernelsAndTimes) {
  const std::string path = GetParam();
  if (!fs::exists(path)) GTEST_SKIP() << path << " is absent (../shared/traces is not beside this checkout)";

  Trace original;
  ASSERT_TRUE(ImportTrace(path, &original).ok());
  ASSERT_GT(original.kernels.size(), 0u);

  const std::string db = (dir_ / "trace.db").string();
  ASSERT_TRUE(WriteStore(original, db).ok());
  Trace from_store;
  Status s = ImportTrace(db, &from_store);
  ASSERT_TRUE(s.ok()) << s.message();

  const std::string chrome = (dir_ / "trace.chrome.json").string();
  ASSERT_TRUE(WriteChromeTrace(from_store, chrome).ok());
  Trace from_chrome;
  s = ImportTrace(chrome, &from_chrome);
  ASSERT_TRUE(s.ok()) << s.message();

  EXPECT_EQ(Kernels(original), Kernels(from_store));
  EXPECT_EQ(Kernels(original), Kernels(from_chrome));
  EXPECT_EQ(Copies(original), Copies(from_chrome));
  EXPECT_EQ(original.memsets.size(), from_chrome.memsets.size());
  auto sorted = [](std::vector<TimeNs> v) {  // the export writes events in time order
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(sorted(original.memsets.start), sorted(from_chrome.memsets.start));
  EXPECT_FALSE(from_chrome.quality.HasErrors());
  EXPECT_EQ(from_chrome.metadata[std::string(meta::kProducer)].rfind("tracegate export", 0), 0u)
      << "our own export must not be labelled as the PyTorch profiler's";
}

INSTANTIATE_TEST_SUITE_P(
    RealTraces, RoundTrip,
    ::testing::Values(std::string(TRACEGATE_SHARED_TRACES_DIR) + "/kineto_alexnet_train_step.json.gz",
                      std::string(TRACEGATE_SHARED_TRACES_DIR) + "/kineto_event_sync_multi_stream.json.gz",
                      std::string(TRACEGATE_SHARED_TRACES_DIR) + "/kineto_sampled_rank0.json.gz",
                      std::string(TRACEGATE_FIXTURES_DIR) + "/real/kineto_alexnet_train_step.json.gz"),
    [](const ::testing::TestParamInfo<std::string>& info) {
      std::string name = fs::path(info.param).filename().string();
      name = name.substr(0, name.find('.'));
      return name + "_" + std::to_string(info.index);
    });

// The nsys export goes through the store and the Chrome export the same way.
TEST(RoundTripNsys, NsysToStoreToChromeKeepsKernelsAndTimes) {
  const std::string path = std::string(TRACEGATE_SHARED_TRACES_DIR) + "/nsys_2gpu_export.sqlite";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is absent (../shared/traces is not beside this checkout)";
  fs::path dir = fs::temp_directory_path() / ("tg_roundtrip_nsys_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Trace original;
  ASSERT_TRUE(ImportTrace(path, &original).ok());
  ASSERT_TRUE(WriteStore(original, (dir / "t.db").string()).ok());
  Trace from_store;
  ASSERT_TRUE(ImportTrace((dir / "t.db").string(), &from_store).ok());
  ASSERT_TRUE(WriteChromeTrace(from_store, (dir / "t.json").string()).ok());
  Trace from_chrome;
  Status s = ImportTrace((dir / "t.json").string(), &from_chrome);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(Kernels(original), Kernels(from_store));
  EXPECT_EQ(Kernels(original), Kernels(from_chrome));
  EXPECT_EQ(Copies(original), Copies(from_chrome));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tg
