// A stand-in for a recorded CUDA process: it writes its part (<$TRACEGATE_PARTS_DIR>/part-<pid>.db)
// through the real PartWriter, fed by a fake activity source (kernels with their launching
// runtime calls), so the record, flush and crash paths run without a GPU.
//
//   fake_recorder [--kernels N] [--batches B] [--hang-after-flush M] [--until-signal] [--spawn K]
//                 [--marker FILE] [--exit CODE] [--cupti-client LIB] [--cupti-refused]
//   --kernels N          submit N kernels (+ N cudaLaunchKernel calls), Flush, write
//                        "flushed N pid PID" to FILE
//   --hang-after-flush M then submit M more kernels that are never flushed (run with a long
//                        TRACEGATE_FLUSH_MS) and sleep until killed
//   --until-signal       then keep submitting and flushing a kernel every 20 ms until SIGINT or
//                        SIGTERM; finish the part and exit 128 + signal, as a program that
//                        handles Ctrl-C and exits cleanly
//   --batches B          then B more batches of N kernels, 30 ms apart, left to the background
//                        flush (run with a short TRACEGATE_FLUSH_MS), as a real recording writes
//   --spawn K            first fork/exec K copies of itself (--kernels N each) and wait for them
//   --exit CODE          exit with CODE after finishing the part (default 0)
//   --cupti-client LIB   dlopen LIB (tests/tools' libfake_kineto.so) and, before finishing, note
//                        the loaded CUPTI clients as the collector does at stop (cupti_clients.h)
//   --cupti-refused      note that another client's CUPTI subscription was refused (what the
//                        collector reads from cuptiGetLastError, which needs a driver)
#include <dlfcn.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "collector/src/cupti_clients.h"
#include "collector/src/part_writer.h"
#include "collector/src/parts.h"

namespace {

std::atomic<int> g_signal{0};
void OnSignal(int sig) { g_signal.store(sig); }

struct Args {
  long kernels = 0;
  long hang_after_flush = -1;
  bool until_signal = false;
  long spawn = 0;
  long batches = 0;
  std::string marker;
  int exit_code = 0;
  std::string cupti_client;
  bool cupti_refused = false;
};

int64_t g_next = 0;  // kernels submitted so far (also their correlation ids)

// One batch of n kernels, each with the runtime call that launched it.
tg::Trace FakeActivity(long n) {
  tg::Trace batch;
  tg::StringId kernel = batch.strings.Intern("fake_kernel(float*, int)");
  tg::StringId launch = batch.strings.Intern("cudaLaunchKernel");
  int64_t pid = ::getpid();
  int64_t tid = ::syscall(SYS_gettid);
  for (long i = 0; i < n; ++i, ++g_next) {
    tg::TimeNs t = tg::internal::RecordClockNs();
    tg::ApiCall a;
    a.start = t; a.end = t + 2000; a.name = launch; a.pid = pid; a.tid = tid; a.correlation = g_next;
    batch.api_calls.Add(a);
    tg::Kernel k;
    k.start = t + 5000; k.end = t + 15000; k.name = kernel; k.device = 0; k.stream = 7; k.correlation = g_next;
    k.grid_x = 128; k.grid_y = k.grid_z = 1; k.block_x = 256; k.block_y = k.block_z = 1; k.pid = pid;
    batch.kernels.Add(k);
  }
  return batch;
}

void Mark(const std::string& marker, const std::string& line) {
  if (marker.empty()) return;
  std::string tmp = marker + ".tmp";
  if (FILE* f = std::fopen(tmp.c_str(), "w")) {
    std::fprintf(f, "%s pid %d\n", line.c_str(), static_cast<int>(::getpid()));
    std::fclose(f);
    std::rename(tmp.c_str(), marker.c_str());  // readers never see a half-written line
  }
}

int Fail(const tg::Status& s) {
  std::fprintf(stderr, "fake_recorder: %s\n", s.message().c_str());
  return 2;
}

bool Parse(int argc, char** argv, Args& a) {
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    bool has_value = i + 1 < argc;
    if (k == "--until-signal") a.until_signal = true;
    else if (k == "--cupti-refused") a.cupti_refused = true;
    else if (k == "--cupti-client" && has_value) a.cupti_client = argv[++i];
    else if (k == "--kernels" && has_value) a.kernels = std::atol(argv[++i]);
    else if (k == "--hang-after-flush" && has_value) a.hang_after_flush = std::atol(argv[++i]);
    else if (k == "--spawn" && has_value) a.spawn = std::atol(argv[++i]);
    else if (k == "--batches" && has_value) a.batches = std::atol(argv[++i]);
    else if (k == "--marker" && has_value) a.marker = argv[++i];
    else if (k == "--exit" && has_value) a.exit_code = std::atoi(argv[++i]);
    else return false;
  }
  return true;
}

int Spawn(const char* self, const Args& a) {
  std::vector<pid_t> children;
  std::string n = std::to_string(a.kernels);
  for (long i = 0; i < a.spawn; ++i) {
    pid_t pid = ::fork();
    if (pid == 0) {
      ::execl(self, self, "--kernels", n.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    if (pid < 0) return 2;
    children.push_back(pid);
  }
  int failures = 0;
  for (pid_t pid : children) {
    int st = 0;
    ::waitpid(pid, &st, 0);
    failures += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  return failures ? 2 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!Parse(argc, argv, a)) {
    std::fprintf(stderr, "fake_recorder: bad arguments (see the top of fake_recorder.cpp)\n");
    return 2;
  }
  const char* dir = std::getenv(tg::internal::kPartsDir);
  if (!dir) {
    std::fprintf(stderr, "fake_recorder: %s is not set\n", tg::internal::kPartsDir);
    return 2;
  }
  if (a.spawn > 0)
    if (int rc = Spawn(argv[0], a); rc != 0) return rc;
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);

  tg::internal::PartWriterOptions options;
  options.path = tg::internal::PartPath(dir, ::getpid());
  if (const char* ms = std::getenv(tg::internal::kFlushMs)) options.flush_interval_ms = std::atol(ms);
  std::unique_ptr<tg::internal::PartWriter> writer;
  if (tg::Status s = tg::internal::PartWriter::Open(options, &writer); !s.ok()) return Fail(s);
  writer->AddProcess({::getpid(), "fake_recorder"});
  tg::Device gpu;
  gpu.id = 0; gpu.name = "Fake GPU"; gpu.sm_count = 132; gpu.memory_bytes = int64_t{80} << 30;
  writer->AddDevice(gpu);
  writer->SetMetadata("cuda_version", "fake");

  writer->Submit(FakeActivity(a.kernels));
  if (tg::Status s = writer->Flush(); !s.ok()) return Fail(s);
  Mark(a.marker, "flushed " + std::to_string(g_next));
  if (a.hang_after_flush >= 0) {
    writer->Submit(FakeActivity(a.hang_after_flush));
    Mark(a.marker, "hanging " + std::to_string(g_next));
    for (;;) ::pause();  // until SIGKILL; SIGINT/SIGTERM only interrupt pause
  }
  for (long b = 0; b < a.batches; ++b) {
    writer->Submit(FakeActivity(a.kernels));
    ::usleep(30000);
  }
  while (a.until_signal && g_signal.load() == 0) {
    writer->Submit(FakeActivity(1));
    if (tg::Status s = writer->Flush(); !s.ok()) return Fail(s);
    Mark(a.marker, "flushed " + std::to_string(g_next));
    ::usleep(20000);
  }
  if (!a.cupti_client.empty() || a.cupti_refused) {
    if (!a.cupti_client.empty() && !::dlopen(a.cupti_client.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      std::fprintf(stderr, "fake_recorder: %s\n", ::dlerror());
      return 2;
    }
    const std::vector<std::string_view> imports(std::begin(tg::internal::kCuptiClientImports),
                                                std::end(tg::internal::kCuptiClientImports));
    const auto self = reinterpret_cast<const void*>(&FakeActivity);  // this program plays the collector
    for (const auto& [key, value] : tg::internal::OtherCuptiClientsMetadata(
             ::getpid(), tg::internal::ObjectsImporting(imports, self), a.cupti_refused))
      writer->SetMetadata(key, value);
  }
  if (tg::Status s = writer->Finish(); !s.ok()) return Fail(s);
  if (int sig = g_signal.load(); sig != 0) return 128 + sig;
  return a.exit_code;
}
