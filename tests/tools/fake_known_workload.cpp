// A stand-in for tests/gpu/known_workload.cu where there is no GPU: it prints the same lines and
// writes, through the real PartWriter, the part a correct collector would write for that program
// (kernels in an anonymous namespace with their launching calls, warm-up launches, graph ids,
// copies, memset, syncs, the NVTX range, the device with its UUID, the memory peak). Run under
// `tracegate record`, it lets tests/gpu/record_known.sh and validate.sh be checked end to end on
// CPU (TRACEGATE_VALIDATE_DRY_RUN=1). The device claims the UUID of the fake NVML's GPU 1, as a
// process under CUDA_VISIBLE_DEVICES=1 would see it.
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "collector/src/part_writer.h"
#include "collector/src/parts.h"

namespace {

constexpr int kLaunches = 5, kGraphLaunches = 3;
constexpr int64_t kBytes = int64_t{256} << 20;

struct Clock {
  tg::TimeNs now = tg::internal::RecordClockNs();
  tg::TimeNs Take(tg::TimeNs ns) { return now += ns; }
};

}  // namespace

int main() {
  const char* dir = std::getenv(tg::internal::kPartsDir);
  if (!dir) {
    std::fprintf(stderr, "fake_known_workload: %s is not set: run it under tracegate record\n", tg::internal::kPartsDir);
    return 2;
  }
  tg::internal::PartWriterOptions options;
  options.path = tg::internal::PartPath(dir, ::getpid());
  std::unique_ptr<tg::internal::PartWriter> writer;
  if (tg::Status s = tg::internal::PartWriter::Open(options, &writer); !s.ok()) {
    std::fprintf(stderr, "fake_known_workload: %s\n", s.message().c_str());
    return 2;
  }
  const int64_t pid = ::getpid(), tid = ::syscall(SYS_gettid);
  writer->AddProcess({pid, "fake_known_workload"});
  tg::Device gpu;
  gpu.id = 0, gpu.name = "Fake H100", gpu.sm_count = 132, gpu.memory_bytes = int64_t{80} << 30;
  writer->AddDevice(gpu);
  writer->SetMetadata(std::string(tg::internal::kDeviceUuidPrefix) + "0", "GPU-11111111-1111-1111-1111-111111111111");
  writer->SetMetadata(std::string(tg::meta::kMemoryPeakMb), "512.0");
  writer->SetMetadata(std::string(tg::meta::kMemoryPeakMbSource), "cupti allocations");

  tg::Trace t;
  Clock clock;
  int64_t correlation = 0;
  auto launch_call = [&](tg::TimeNs at, int64_t corr) {
    tg::ApiCall a;
    a.start = at, a.end = at + 3000, a.name = t.strings.Intern("cudaLaunchKernel"), a.pid = pid, a.tid = tid;
    a.correlation = corr;
    t.api_calls.Add(a);
  };
  auto kernel = [&](const char* name, tg::TimeNs ns, int64_t graph) {
    tg::Kernel k;
    const int64_t corr = ++correlation;
    launch_call(clock.Take(1000), corr);
    k.start = clock.Take(5000), k.end = clock.Take(ns), k.name = t.strings.Intern(name), k.device = 0, k.stream = 13;
    k.correlation = corr, k.grid_x = 262144, k.grid_y = k.grid_z = 1, k.block_x = 256, k.block_y = k.block_z = 1;
    k.pid = pid, k.graph_id = graph, k.graph_node_id = graph < 0 ? tg::kUnknownId : 2;
    t.kernels.Add(k);
  };
  auto copy = [&](tg::CopyKind kind, const char* label) {
    tg::Memcpy m;
    m.start = clock.Take(2000), m.end = clock.Take(80'000), m.device = 0, m.stream = 13, m.bytes = kBytes, m.kind = kind;
    m.correlation = ++correlation, m.pid = pid;
    t.memcpys.Add(m);
    std::printf("copy %s %lld\n", label, static_cast<long long>(kBytes));
  };
  auto sync = [&](tg::SyncKind kind) {
    tg::Sync y;
    y.start = clock.Take(1000), y.end = clock.Take(1000), y.device = 0, y.kind = kind, y.pid = pid;
    y.correlation = ++correlation;
    t.syncs.Add(y);
  };

  const tg::TimeNs range_start = clock.Take(0);
  std::printf("range known_region\nallocated_mb %lld\n", static_cast<long long>(2 * kBytes >> 20));
  copy(tg::CopyKind::kHtoD, "HtoD");
  tg::Memset ms;
  ms.start = clock.Take(1000), ms.end = clock.Take(40'000), ms.device = 0, ms.stream = 13, ms.bytes = kBytes;
  ms.correlation = ++correlation, ms.pid = pid;
  t.memsets.Add(ms);
  std::printf("memset %lld\n", static_cast<long long>(kBytes));
  sync(tg::SyncKind::kStreamSync);
  for (const char* name : {"known_fma_kernel", "known_axpy_kernel"}) {
    const std::string full = std::string("(anonymous namespace)::") + name +
                             (name[6] == 'f' ? "(float*, unsigned long, int)" : "(float, const float*, float*, unsigned long)");
    kernel(full.c_str(), 700'000, -1);
    std::printf("warmup %s 1\n", name);
    for (int i = 0; i < kLaunches; ++i) {
      const tg::TimeNs ns = 1'000'000 + 1000 * i;
      kernel(full.c_str(), ns, -1);
      sync(tg::SyncKind::kEventSync);
      std::printf("kernel %s %.6f\n", name, static_cast<double>(ns) / 1e6);
    }
  }
  for (int i = 0; i < kGraphLaunches; ++i) kernel("(anonymous namespace)::known_graph_kernel(float*, unsigned long)", 300'000, 1);
  std::printf("graph_kernel known_graph_kernel %d\n", kGraphLaunches);
  copy(tg::CopyKind::kDtoD, "DtoD");
  copy(tg::CopyKind::kDtoH, "DtoH");
  sync(tg::SyncKind::kContextSync);
  tg::Range r;
  r.start = range_start, r.end = clock.Take(1000), r.name = t.strings.Intern("known_region"), r.pid = pid, r.tid = tid;
  t.ranges.Add(r);

  // The timeline ends now, so the launcher's NVML samples, taken meanwhile, overlap it.
  writer->Submit(std::move(t));
  ::usleep(300'000);
  if (tg::Status s = writer->Finish(); !s.ok()) {
    std::fprintf(stderr, "fake_known_workload: %s\n", s.message().c_str());
    return 2;
  }
  return 0;
}
