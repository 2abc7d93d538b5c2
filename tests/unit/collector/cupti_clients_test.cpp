// Other CUPTI clients in a recorded process (collector/src/cupti_clients.h): the scan of the loaded
// objects for imports of cuptiSubscribe (with tests/tools' libfake_kineto.so standing in for
// PyTorch's library), the per-process metadata, its merge across processes, and the summary lines.
#include "collector/src/cupti_clients.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "collector/src/part_writer.h"
#include "collector/src/parts.h"
#include "record_test_util.h"

namespace tg {

using internal::kCuptiClientImports;
using internal::kCuptiRefusedKey;
using internal::kOtherCuptiClientsKey;
using internal::MergeParts;
using internal::ObjectsImporting;
using internal::OtherCuptiClientLines;
using internal::OtherCuptiClientsMetadata;
using internal::PartPath;
using internal::PartWriter;
using internal::PartWriterOptions;
namespace {

using testing::ScratchDir;

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

const std::vector<std::string_view> kClientImports(std::begin(kCuptiClientImports), std::end(kCuptiClientImports));

TEST(CuptiClients, ALoadedLibraryImportingCuptiSubscribeIsAClient) {
  // Before the library is loaded, nothing in this test program is a CUPTI client.
  EXPECT_TRUE(ObjectsImporting(kClientImports, nullptr).empty());
  void* lib = ::dlopen(TRACEGATE_FAKE_KINETO, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << ::dlerror();
  EXPECT_EQ(ObjectsImporting(kClientImports, nullptr), std::vector<std::string>{"libfake_kineto.so"});
  EXPECT_EQ(ObjectsImporting({"cuptiSubscribe"}, nullptr), std::vector<std::string>{"libfake_kineto.so"});
  // The client itself (an address inside it) is left out: the collector does not count itself.
  void* inside = ::dlsym(lib, "fake_kineto_start");
  ASSERT_NE(inside, nullptr);
  EXPECT_TRUE(ObjectsImporting(kClientImports, inside).empty());
  // A function nobody imports, and one the library defines rather than imports.
  EXPECT_TRUE(ObjectsImporting({"cuptiNoSuchFunction"}, nullptr).empty());
  EXPECT_FALSE(Has(ObjectsImporting({"fake_kineto_start"}, nullptr), "libfake_kineto.so"));
  // The library's call through the weak import finds no libcupti here.
  using Start = int (*)();
  EXPECT_EQ(reinterpret_cast<Start>(inside)(), -1);
}

TEST(CuptiClients, TheProgramItselfIsNamedByItsExecutable) {
  // This test program imports sqlite3_open_v2 from libsqlite3 (a function no sanitizer runtime
  // defines in the program); the program is named as /proc/self/exe.
  std::vector<std::string> importers = ObjectsImporting({"sqlite3_open_v2"}, nullptr);
  EXPECT_TRUE(Has(importers, "tracegate_tests")) << ::testing::PrintToString(importers);
  const auto self = reinterpret_cast<const void*>(&Has);
  EXPECT_FALSE(Has(ObjectsImporting({"sqlite3_open_v2"}, self), "tracegate_tests"));
}

TEST(CuptiClients, MetadataPerProcess) {
  EXPECT_TRUE(OtherCuptiClientsMetadata(7, {}, false).empty());
  auto md = OtherCuptiClientsMetadata(7, {"libtorch_cpu.so", "libtorch_cuda.so"}, true);
  EXPECT_EQ(md.size(), 2u);
  EXPECT_EQ(md[kOtherCuptiClientsKey], "pid 7: libtorch_cpu.so, libtorch_cuda.so");
  EXPECT_EQ(md[kCuptiRefusedKey], "pid 7");
  md = OtherCuptiClientsMetadata(8, {}, true);
  EXPECT_EQ(md.size(), 1u);
  EXPECT_EQ(md[kCuptiRefusedKey], "pid 8");
}

TEST(CuptiClients, OneLinePerProcessSayingWhatHappenedAndWhatToDo) {
  std::map<std::string, std::string, std::less<>> md;
  EXPECT_TRUE(OtherCuptiClientLines(md).empty());
  md[kOtherCuptiClientsKey] = "pid 652: libtorch_cuda.so; pid 9: libmyprof.so";
  md[kCuptiRefusedKey] = "pid 652; pid 31";
  std::vector<std::string> lines = OtherCuptiClientLines(md);
  ASSERT_EQ(lines.size(), 3u);
  const std::string tail =
      "; tracegate's recording of the process is unaffected. Profile with one tool at a time: run the other "
      "profiler without tracegate record";
  EXPECT_EQ(lines[0],
            "pid 9: another CUPTI-based profiler (libmyprof.so) is loaded and profiles through CUPTI. CUPTI serves one "
            "profiler per process and tracegate held it, so if it profiled CUDA in this process, it recorded no CUDA "
            "activity" +
                tail);
  EXPECT_EQ(lines[1],
            "pid 31: another profiler tried to start and CUPTI refused it "
            "(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED). CUPTI serves one profiler per process and tracegate "
            "held it, so that profiler recorded no CUDA activity" +
                tail);
  EXPECT_EQ(
      lines[2],
      "pid 652: PyTorch's profiler (torch.profiler, Kineto; libtorch_cuda.so) tried to start and CUPTI refused it "
      "(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED). CUPTI serves one profiler per process and tracegate "
      "held it, so that profiler recorded no CUDA activity" +
          tail);
  // Text that is not "pid N..." is ignored, not misread.
  md[kOtherCuptiClientsKey] = "garbage; pid x: a.so; pid 5 b.so";
  md.erase(kCuptiRefusedKey);
  EXPECT_TRUE(OtherCuptiClientLines(md).empty());
}

// Two processes' parts, merged as `record` merges them: each process keeps its own line.
TEST(CuptiClients, TheMergedRecordingKeepsEveryProcess) {
  ScratchDir dir;
  auto part = [&](int64_t pid, const std::vector<std::string>& clients, bool refused) {
    std::unique_ptr<PartWriter> w;
    PartWriterOptions o;
    o.path = PartPath(dir.str(), pid);
    ASSERT_TRUE(PartWriter::Open(o, &w).ok());
    for (const auto& [k, v] : OtherCuptiClientsMetadata(pid, clients, refused)) w->SetMetadata(k, v);
    ASSERT_TRUE(w->Finish().ok());
  };
  part(101, {"libtorch_cuda.so"}, true);
  part(102, {"libtorch_cuda.so"}, false);
  part(103, {}, false);
  Trace t;
  MergeResult r;
  ASSERT_TRUE(MergeParts(dir.str(), &t, &r).ok());
  EXPECT_EQ(t.metadata[kOtherCuptiClientsKey], "pid 101: libtorch_cuda.so; pid 102: libtorch_cuda.so");
  EXPECT_EQ(t.metadata[kCuptiRefusedKey], "pid 101");
  std::vector<std::string> lines = OtherCuptiClientLines(t.metadata);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("pid 101: PyTorch's profiler (torch.profiler, Kineto; libtorch_cuda.so) tried to start", 0),
            0u);
  EXPECT_EQ(lines[1].rfind("pid 102: PyTorch's profiler (torch.profiler, Kineto; libtorch_cuda.so) is loaded", 0), 0u);
}

}  // namespace
}  // namespace tg
