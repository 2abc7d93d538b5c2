// libtracegate_inject.so: the entry points the CUDA driver (CUDA_INJECTION64_PATH) and NVTX
// (NVTX_INJECTION64_PATH) look up in the library `tracegate record` names. Only these two symbols
// are exported (inject.map), so the library's copy of tracegate never clashes with a program's.
#include <cupti.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "collector.h"
#include "options.h"
#include "collector/src/parts.h"

namespace {

// NVTX's loader signature (nvtxDetail/nvtxInit.h): it passes the export table getter and expects
// non-zero when the tool initialised.
using NvtxGetExportTable = const void* (*)(uint32_t export_table_id);
using NvtxInitialize = int (*)(NvtxGetExportTable);

void Warn(const std::string& line) { std::fprintf(stderr, "tracegate: %s\n", line.c_str()); }

void StopAtExit() {
  // Runs before the CUDA runtime's own exit handler (registered earlier, run later), while the
  // contexts still exist; in a forked child it is a no-op (the collector forgot the parent's part).
  if (tg::Status s = tg::cupti::StopCollector(); !s.ok()) Warn("the recording may be incomplete: " + s.message());
}

// Starts the collector once per process, from whichever entry point the process reaches first
// (NVTX may initialise before CUDA).
void StartFromEnvironment() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> warnings;
    tg::cupti::CollectorOptions o = tg::cupti::ReadCollectorOptions(::getenv, &warnings);
    for (const std::string& w : warnings) Warn(w);
    if (o.parts_dir.empty()) {
      Warn(std::string(tg::internal::kPartsDir) +
           " is not set, so this process is not recorded; run the program under `tracegate record`");
      return;
    }
    const std::string part = tg::PartPath(o.parts_dir, ::getpid());
    if (tg::Status s = tg::cupti::StartCollector(o.recording, part); !s.ok()) {
      Warn("this process is not recorded: " + s.message());
      return;
    }
    std::atexit(StopAtExit);
  });
}

}  // namespace

extern "C" {

// Called by the CUDA driver during cuInit. Non-zero: the program goes on either way, recorded or
// not (a warning says why not).
__attribute__((visibility("default"))) int InitializeInjection(void) {
  StartFromEnvironment();
  return 1;
}

// Called by NVTX on the first NVTX call. CUPTI turns NVTX calls into marker records through its own
// NVTX injection, so after starting the collector this hands NVTX to libcupti's entry point (the
// same libcupti we link, found through one of its functions; never this function again).
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTable get_export_table) {
  StartFromEnvironment();
  Dl_info info{};
  if (!::dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &info) || !info.dli_fname) return 0;
  void* cupti = ::dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  auto init = cupti ? reinterpret_cast<NvtxInitialize>(::dlsym(cupti, "InitializeInjectionNvtx2")) : nullptr;
  if (!init || init == &InitializeInjectionNvtx2) return 0;
  return init(get_export_table);
}

}  // extern "C"
