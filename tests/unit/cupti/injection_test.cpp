// The collector's process-level behaviour on a machine without a GPU driver (libcupti loads but
// refuses to subscribe, so nothing is recorded, yet every part is written and says why): the
// injection library's entry point, its exit flush, what it exports, and fork without exec.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "collector.h"
#include "record_test_util.h"
#include "collector/src/parts.h"

namespace tg {

using internal::kPartCompleteKey;
using internal::PartPath;
namespace {

using testing::ReadPart;
using testing::ScratchDir;

// Runs `child` in a forked process and returns its exit status (-1 when it did not exit).
template <typename Child>
int InChild(Child child) {
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(child());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(CuptiInjection, ExportsOnlyTheEntryPoints) {
  void* lib = ::dlopen(TRACEGATE_INJECT_LIB, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << ::dlerror();
  EXPECT_NE(::dlsym(lib, "InitializeInjection"), nullptr);
  EXPECT_NE(::dlsym(lib, "InitializeInjectionNvtx2"), nullptr);
  EXPECT_NE(::dlsym(lib, "InitializeInjectionNvtx"), nullptr);  // NVTX v1 loaders
  // tracegate's own symbols stay inside: a program linking tracegate never binds to this copy.
  EXPECT_EQ(::dlsym(lib, "_ZN2tg5cupti14StartCollectorERKNS_16RecordingOptionsERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"),
            nullptr);
  EXPECT_EQ(::dlsym(lib, "_ZN2tg8DemangleESt17basic_string_viewIcSt11char_traitsIcEE"), nullptr);
  ::dlclose(lib);
}

// NVTX dlcloses an injection library whose entry point fails; the collector may run a thread in it
// by then, so the library is linked -z nodelete and stays mapped after dlclose.
TEST(CuptiInjection, StaysLoadedAfterDlclose) {
  int code = InChild([] {
    void* lib = ::dlopen(TRACEGATE_INJECT_LIB, RTLD_NOW | RTLD_LOCAL);
    if (!lib) return 10;
    ::dlclose(lib);
    return ::dlopen(TRACEGATE_INJECT_LIB, RTLD_NOW | RTLD_NOLOAD) != nullptr ? 0 : 11;
  });
  EXPECT_EQ(code, 0);
}

TEST(CuptiInjection, ProcessExitFinishesThePart) {
  if (::access("/dev/nvidiactl", F_OK) == 0) GTEST_SKIP() << "a GPU driver is present: tests/gpu covers the recording";
  ScratchDir dir;
  pid_t child_pid = 0;
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  int code = InChild([&] {
    ::setenv(internal::kPartsDir, dir.str().c_str(), 1);
    ::setenv(internal::kDriverApi, "0", 1);
    void* lib = ::dlopen(TRACEGATE_INJECT_LIB, RTLD_NOW | RTLD_LOCAL);
    auto init = lib ? reinterpret_cast<int (*)()>(::dlsym(lib, "InitializeInjection")) : nullptr;
    if (!init || init() != 1) return 10;
    pid_t me = ::getpid();
    if (::write(pipe_fds[1], &me, sizeof me) != sizeof me) return 11;
    std::exit(0);  // runs the library's exit handler: flush and finish the part
  });
  ASSERT_EQ(code, 0);
  ASSERT_EQ(::read(pipe_fds[0], &child_pid, sizeof child_pid), static_cast<ssize_t>(sizeof child_pid));
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);

  Trace part;
  Status s = ReadPart(PartPath(dir.str(), child_pid), &part);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(part.metadata[std::string(kPartCompleteKey)], "1");
  const std::string missed = part.metadata[cupti::kMissedKey];
  EXPECT_EQ(missed.rfind("pid " + std::to_string(child_pid) + ": all CUDA activity: CUPTI cannot be used", 0), 0u)
      << missed;
  ASSERT_EQ(part.processes.size(), 1u);
  EXPECT_EQ(part.processes[0].pid, child_pid);
  EXPECT_EQ(part.metadata["cupti_flush_ms"], "1000");
}

TEST(CuptiInjection, NvtxBeforeCudaStartsTheCollector) {
  if (::access("/dev/nvidiactl", F_OK) == 0) GTEST_SKIP() << "a GPU driver is present: tests/gpu covers the recording";
  ScratchDir dir;
  const std::string err_path = dir.str() + "/probe.err";
  std::fflush(nullptr);
  pid_t probe = ::fork();
  if (probe == 0) {
    if (!std::freopen(err_path.c_str(), "w", stderr)) ::_exit(126);
    ::setenv(internal::kPartsDir, dir.str().c_str(), 1);
    ::setenv(internal::kNvtxInjection, TRACEGATE_INJECT_LIB, 1);
    ::execl(TRACEGATE_NVTX_PROBE, TRACEGATE_NVTX_PROBE, static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(probe, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  Trace part;
  Status s = ReadPart(PartPath(dir.str(), probe), &part);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(part.metadata[std::string(kPartCompleteKey)], "1");
  ASSERT_EQ(part.processes.size(), 1u);
  EXPECT_EQ(part.processes[0].name, TRACEGATE_NVTX_PROBE);
  // NVTX accepted the library (it prints this when the entry point returns 0, then unloads it).
  std::string err;
  if (FILE* f = std::fopen(err_path.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) err.append(buf, n);
    std::fclose(f);
  }
  EXPECT_EQ(err.find("Failed to initialize injection library"), std::string::npos) << err;
}

TEST(CuptiInjection, ForkedChildNeverWritesTheParentsPart) {
  ScratchDir dir;
  const std::string part_path = PartPath(dir.str(), ::getpid());
  ASSERT_TRUE(cupti::StartCollector(RecordingOptions{}, part_path).ok());
  // In the child the parent's recording is gone: nothing to stop, nothing running, and stopping
  // must not touch the part (its writer thread does not exist there).
  int code = InChild([] { return !cupti::CollectorRecording() && cupti::StopCollector().ok() ? 0 : 1; });
  EXPECT_EQ(code, 0);
  Trace before;
  ASSERT_TRUE(ReadPart(part_path, &before).ok());
  EXPECT_EQ(before.metadata.count(std::string(kPartCompleteKey)), 0u);  // still the parent's, unfinished
  // The parent goes on and finishes its own part.
  EXPECT_TRUE(cupti::CollectorRecording());
  ASSERT_TRUE(cupti::StopCollector().ok());
  Trace after;
  ASSERT_TRUE(ReadPart(part_path, &after).ok());
  EXPECT_EQ(after.metadata[std::string(kPartCompleteKey)], "1");
  ASSERT_EQ(after.processes.size(), 1u);
  EXPECT_EQ(after.processes[0].pid, ::getpid());
}

}  // namespace
}  // namespace tg
