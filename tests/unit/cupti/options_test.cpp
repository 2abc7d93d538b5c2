// The injected collector's environment.
#include "options.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

namespace tg::cupti {
namespace {

CollectorOptions Read(const std::map<std::string, std::string>& env, std::vector<std::string>* warnings) {
  return ReadCollectorOptions(
      [&](const char* name) -> const char* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      warnings);
}

TEST(CuptiOptions, DefaultsWithoutEnvironmentElseEveryVariable) {
  std::vector<std::string> warnings;
  CollectorOptions d = Read({}, &warnings);
  CollectorOptions o = Read({{"TRACEGATE_PARTS_DIR", "/tmp/p"},
                             {"TRACEGATE_FLUSH_MS", "250"},
                             {"TRACEGATE_DRIVER_API", "0"},
                             {"TRACEGATE_BUFFER_MB", "4"},
                             {"TRACEGATE_BUFFER_CAP_MB", "64"}},
                            &warnings);
  EXPECT_TRUE(warnings.empty());
  // {parts dir, flush ms, driver API, buffer MB, cap MB}: defaults, then as set.
  auto fields = [](const CollectorOptions& c) {
    const RecordingOptions& r = c.recording;
    return std::make_tuple(c.parts_dir, r.flush_ms, r.driver_api, r.buffer_mb, r.buffer_cap_mb);
  };
  EXPECT_EQ(fields(d), std::make_tuple(std::string(), int64_t{1000}, true, int64_t{8}, int64_t{512}));
  EXPECT_EQ(fields(o), std::make_tuple(std::string("/tmp/p"), int64_t{250}, false, int64_t{4}, int64_t{64}));
}

TEST(CuptiOptions, BadValuesKeepTheDefaultAndWarnOnceEach) {
  std::vector<std::string> warnings;
  CollectorOptions o = Read({{"TRACEGATE_FLUSH_MS", "soon"},
                             {"TRACEGATE_BUFFER_MB", "0"},
                             {"TRACEGATE_BUFFER_CAP_MB", "-5"},
                             {"TRACEGATE_DRIVER_API", "no"}},
                            &warnings);
  EXPECT_EQ(o.recording.flush_ms, 1000);
  EXPECT_EQ(o.recording.buffer_mb, 8);
  EXPECT_EQ(o.recording.buffer_cap_mb, 512);
  EXPECT_TRUE(o.recording.driver_api);
  ASSERT_EQ(warnings.size(), 4u);
  EXPECT_EQ(warnings[0], "TRACEGATE_FLUSH_MS=soon is not an integer from 1 to 3600000; using 1000");
  EXPECT_EQ(warnings[3], "TRACEGATE_DRIVER_API=no is neither 0 nor 1; recording driver API calls");
}

TEST(CuptiOptions, CapBelowOneBufferIsSaid) {
  std::vector<std::string> warnings;
  CollectorOptions o = Read({{"TRACEGATE_BUFFER_MB", "16"}, {"TRACEGATE_BUFFER_CAP_MB", "8"}}, &warnings);
  EXPECT_EQ(o.recording.buffer_cap_mb, 8);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "TRACEGATE_BUFFER_CAP_MB=8 is below TRACEGATE_BUFFER_MB=16; the pool holds one buffer");
}

}  // namespace
}  // namespace tg::cupti
