// MergeParts: the parts of every recorded process become one trace; a part whose process was
// killed is kept up to its last commit and counted as trace_incomplete; an unreadable one is
// skipped with a note. Also the default output name of `tracegate record`.
#include <gtest/gtest.h>

#include <fstream>

#include "collector/src/part_writer.h"
#include "collector/src/parts.h"
#include "record_test_util.h"
#include "tracegate/collector/record.h"

namespace tg {

using internal::kPartCompleteKey;
using internal::MergeParts;
using internal::ParseCaptureRange;
using internal::ParseIterations;
using internal::PartPath;
using internal::PartWriter;
using internal::PartWriterOptions;
namespace {

using testing::Kernels;
using testing::ScratchDir;

// A finished part of process `pid` holding `batch`, with one device and some state.
void WritePart(const std::string& dir, int64_t pid, Trace batch, const std::string& peak_mb, uint64_t dropped) {
  std::unique_ptr<PartWriter> w;
  PartWriterOptions o;
  o.path = PartPath(dir, pid);
  ASSERT_TRUE(PartWriter::Open(o, &w).ok());
  w->Submit(std::move(batch));
  w->AddProcess({pid, "proc" + std::to_string(pid)});
  Device d;
  d.id = static_cast<int32_t>(pid % 2);
  d.name = "GPU of " + std::to_string(pid);
  w->AddDevice(d);
  w->SetMetadata(std::string(meta::kMemoryPeakMb), peak_mb);
  w->SetMetadata("cuda_version", "13.0");
  w->SetMetadata("cupti_warning", "warning of " + std::to_string(pid));
  if (dropped) w->AddQuality(Quality::kSourceDroppedRecords, dropped);
  ASSERT_TRUE(w->Finish().ok());
}

TEST(PartsTest, PartPathNamesTheProcess) { EXPECT_EQ(PartPath("/tmp/p", 1234), "/tmp/p/part-1234.db"); }

TEST(PartsTest, MergeUnitesProcessesDevicesStringsAndCounters) {
  ScratchDir dir;
  Trace a = Kernels("gemm", 2, 1000, 101);
  a.kernels.name[1] = a.strings.Intern("relu");
  WritePart(dir.str(), 101, std::move(a), "100.5", 2);
  WritePart(dir.str(), 202, Kernels("relu", 3, 9000, 202), "200.0", 3);
  std::ofstream(dir.Path("notes.txt")) << "not a part";

  Trace t;
  MergeResult r;
  ASSERT_TRUE(MergeParts(dir.str(), &t, &r).ok());
  EXPECT_EQ(r.parts, 2u);
  EXPECT_EQ(r.incomplete_parts, 0u);
  EXPECT_TRUE(r.notes.empty());
  ASSERT_EQ(t.kernels.size(), 5u);  // 2 + 3, in part order (part-101 before part-202)
  EXPECT_EQ(t.Name(t.kernels.name[0]), "gemm");
  EXPECT_EQ(t.Name(t.kernels.name[1]), "relu");
  EXPECT_EQ(t.kernels.name[2], t.kernels.name[1]);  // "relu" interned once in the merged table
  EXPECT_EQ(t.kernels.pid[4], 202);
  EXPECT_EQ(t.kernels.start[4], 9200);  // 9000 + 2 * 100
  ASSERT_EQ(t.processes.size(), 2u);
  EXPECT_EQ(t.processes[1].name, "proc202");
  ASSERT_EQ(t.devices.size(), 2u);                               // ids 1 (101 % 2) and 0 (202 % 2)
  EXPECT_EQ(t.quality.Get(Quality::kSourceDroppedRecords), 5u);  // 2 + 3
  EXPECT_EQ(t.quality.Get(Quality::kTraceIncomplete), 0u);
  EXPECT_EQ(t.metadata.at(std::string(meta::kMemoryPeakMb)), "300.5");  // 100.5 + 200.0
  EXPECT_EQ(t.metadata.at("cuda_version"), "13.0");
  EXPECT_EQ(t.metadata.at("cupti_warning"), "warning of 101; warning of 202");
  EXPECT_EQ(t.metadata.count(std::string(kPartCompleteKey)), 0u);
  EXPECT_EQ(t.metadata.count("source_path"), 0u);  // the part's path is not the recording's
}

TEST(PartsTest, PartCutShortIsKeptAndCountedIncomplete) {
  ScratchDir dir;
  WritePart(dir.str(), 1, Kernels("done", 1), "1", 0);
  {
    // A process killed after two commits: its writer never finished.
    std::unique_ptr<StoreWriter> w;
    StoreWriterOptions o;
    o.in_place = true;
    ASSERT_TRUE(StoreWriter::Create(PartPath(dir.str(), 2), o, &w).ok());
    ASSERT_TRUE(w->Append(Kernels("cut", 4)).ok());
    Trace state;
    state.processes.push_back({2, "killed"});
    Trace more = Kernels("cut", 1, 50000);
    ASSERT_TRUE(w->AppendWithState(std::span<const Trace>(&more, 1), state).ok());
  }
  Trace t;
  MergeResult r;
  ASSERT_TRUE(MergeParts(dir.str(), &t, &r).ok());
  EXPECT_EQ(r.parts, 2u);
  EXPECT_EQ(r.incomplete_parts, 1u);
  EXPECT_EQ(t.kernels.size(), 6u);  // 1 + 4 + 1
  EXPECT_EQ(t.quality.Get(Quality::kTraceIncomplete), 1u);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0],
            "part-2.db: the process did not finish its recording (killed or crashed); 5 events kept "
            "up to its last flush");
}

TEST(PartsTest, UnreadablePartsAreSkippedWithANote) {
  ScratchDir dir;
  std::ofstream(dir.Path("part-7.db"));                            // killed before its schema was written
  std::ofstream(dir.Path("part-8.db")) << std::string(4096, 'x');  // not SQLite
  WritePart(dir.str(), 9, Kernels("ok", 2), "1", 0);
  Trace t;
  MergeResult r;
  ASSERT_TRUE(MergeParts(dir.str(), &t, &r).ok());
  EXPECT_EQ(r.parts, 3u);
  EXPECT_EQ(r.incomplete_parts, 2u);
  EXPECT_EQ(t.kernels.size(), 2u);
  EXPECT_EQ(t.quality.Get(Quality::kTraceIncomplete), 2u);
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_EQ(r.notes[0].rfind("part-7.db: unreadable, skipped: ", 0), 0u) << r.notes[0];
  EXPECT_EQ(r.notes[1].rfind("part-8.db: unreadable, skipped: ", 0), 0u) << r.notes[1];
}

TEST(PartsTest, NoPartsGiveAnEmptyTrace) {
  ScratchDir dir;
  Trace t;
  MergeResult r;
  ASSERT_TRUE(MergeParts(dir.str(), &t, &r).ok());
  EXPECT_EQ(r.parts, 0u);
  EXPECT_EQ(t.GpuEventCount(), 0u);
  EXPECT_FALSE(t.quality.HasErrors());
  EXPECT_FALSE(MergeParts(dir.Path("missing"), &t, &r).ok());
}

TEST(RecordOutputTest, DefaultOutputIsTheFirstFreeNumberedName) {
  ScratchDir dir;
  EXPECT_EQ(DefaultOutputPath(dir.str()), dir.Path("tracegate1.db"));
  std::ofstream(dir.Path("tracegate1.db"));
  std::ofstream(dir.Path("tracegate2.db"));
  std::ofstream(dir.Path("tracegate4.db"));
  EXPECT_EQ(DefaultOutputPath(dir.str()), dir.Path("tracegate3.db"));
}

// `record --capture-range` and `--iterations` (and their environment variables).
TEST(RecordWindowTest, CaptureRangeAndIterationsParse) {
  std::string name;
  ASSERT_TRUE(ParseCaptureRange("nvtx:train step", &name).ok());
  EXPECT_EQ(name, "train step");
  ASSERT_TRUE(ParseCaptureRange("nvtx:a:b", &name).ok());
  EXPECT_EQ(name, "a:b");
  for (const char* bad : {"", "nvtx:", "step", "cuda:step", "NVTX:step"}) {
    Status s = ParseCaptureRange(bad, &name);
    EXPECT_EQ(s.code(), StatusCode::kInvalidInput) << bad;
    EXPECT_EQ(s.message(), "capture range '" + std::string(bad) + "' is not nvtx:NAME (an NVTX range's name)");
  }
  int64_t skip = -1, count = -1;
  ASSERT_TRUE(ParseIterations("20:10", &skip, &count).ok());
  EXPECT_EQ(skip, 20);
  EXPECT_EQ(count, 10);
  ASSERT_TRUE(ParseIterations("0:1", &skip, &count).ok());
  EXPECT_EQ(skip, 0);
  EXPECT_EQ(count, 1);
  for (const char* bad : {"", "10", "10:", ":5", "3:0", "-1:5", "a:b", "1:2:3", "1 :2", "9999999999999:1"}) {
    Status s = ParseIterations(bad, &skip, &count);
    EXPECT_EQ(s.code(), StatusCode::kInvalidInput) << bad;
    EXPECT_EQ(s.message(),
              "iterations '" + std::string(bad) + "' is not K:N (skip K ranges, then record N; K >= 0, N >= 1)");
  }
}

TEST(RecordWindowTest, IterationsNeedACaptureRange) {
  RecordOptions o;
  EXPECT_TRUE(CheckWindow(o).ok());
  o.iterations = "2:3";
  Status s = CheckWindow(o);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_EQ(s.message(), "iterations 2:3 counts the ranges of a capture range; name one (--capture-range nvtx:NAME)");
  o.capture_range = "nvtx:step";
  EXPECT_TRUE(CheckWindow(o).ok());
  o.capture_range = "step";
  EXPECT_EQ(CheckWindow(o).code(), StatusCode::kInvalidInput);
}

}  // namespace
}  // namespace tg
