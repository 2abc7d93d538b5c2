// The in-process recorder end to end on a machine without a GPU driver: libcupti loads but
// refuses to subscribe, so the recording says what it missed and still writes a valid store.
// (With a GPU the same path records activity: tests/gpu/.)
#include "tracegate/collector/recorder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "collector.h"
#include "record_test_util.h"
#include "tracegate/analyzer/import.h"
#include "tracegate/collector/record.h"

namespace tg {
namespace {

using testing::ScratchDir;

bool HasCudaDriver() { return std::filesystem::exists("/dev/nvidiactl"); }

TEST(CuptiRecorder, WithoutADriverWritesAStoreThatSaysWhatWasMissed) {
  if (HasCudaDriver()) GTEST_SKIP() << "a GPU driver is present: tests/gpu covers the recording";
  ScratchDir dir;
  const std::string path = dir.Path("region.db");
  ASSERT_TRUE(StartRecording(path).ok());
  EXPECT_TRUE(cupti::CollectorRecording());
  Status stopped = StopRecording();
  ASSERT_TRUE(stopped.ok()) << stopped.message();
  EXPECT_FALSE(cupti::CollectorRecording());

  Trace t;
  Status read = ImportSqlite(path, &t);
  ASSERT_TRUE(read.ok()) << read.message();
  EXPECT_EQ(t.GpuEventCount(), 0u);
  const std::string pid = std::to_string(::getpid());
  EXPECT_EQ(t.metadata["cupti_missed"].rfind("pid " + pid + ": all CUDA activity: CUPTI cannot be used", 0), 0u)
      << t.metadata["cupti_missed"];
  EXPECT_EQ(t.metadata[std::string(record_meta::kNoActivity)].rfind("the collector could not record: pid " + pid, 0), 0u);
  EXPECT_EQ(t.metadata["cupti_buffer_mb"], "8");
  EXPECT_EQ(t.metadata["cupti_flush_ms"], "1000");
  EXPECT_FALSE(t.metadata["cupti_version"].empty());
  ASSERT_EQ(t.processes.size(), 1u);
  EXPECT_EQ(t.processes[0].pid, ::getpid());
  EXPECT_NE(t.processes[0].name.find("tracegate_cupti_tests"), std::string::npos) << t.processes[0].name;
  EXPECT_EQ(t.quality.Get(Quality::kTraceIncomplete), 0u);  // the part was finished
  EXPECT_FALSE(std::filesystem::exists(path + ".parts-" + pid));  // the parts dir is gone
}

TEST(CuptiRecorder, OneRecordingAtATime) {
  ScratchDir dir;
  ASSERT_TRUE(StartRecording(dir.Path("a.db")).ok());
  Status second = StartRecording(dir.Path("b.db"));
  EXPECT_FALSE(second.ok());
  EXPECT_EQ(second.message(), "a recording to " + dir.Path("a.db") + " is running; call StopRecording first");
  EXPECT_TRUE(StopRecording().ok());
  Status again = StopRecording();
  EXPECT_FALSE(again.ok());
  EXPECT_EQ(again.message(), "no recording is running; call StartRecording first");
  EXPECT_TRUE(std::filesystem::exists(dir.Path("a.db")));
  EXPECT_FALSE(std::filesystem::exists(dir.Path("b.db")));
}

TEST(CuptiRecorder, UnwritableDirectoryIsAnErrorAndNothingRuns) {
  ScratchDir dir;
  std::ofstream(dir.Path("file")) << "not a directory";
  Status s = StartRecording(dir.Path("file") + "/x.db");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot create the recording's parts directory"), std::string::npos) << s.message();
  EXPECT_FALSE(cupti::CollectorRecording());
  EXPECT_FALSE(StopRecording().ok());
}

}  // namespace
}  // namespace tg
