// libtracegate_inject.so: the entry points the CUDA driver (CUDA_INJECTION64_PATH) and NVTX
// (NVTX_INJECTION64_PATH) look up in the library `tracegate record` names. Only these symbols are
// exported (inject.map), so the library's copy of tracegate never clashes with a program's.
//
// Linked with -z nodelete: NVTX dlcloses an injection library whose entry point returns 0, and a
// running collector (its flush thread, its exit handler) must never be unmapped under itself.
// No C++ exception leaves an entry point: they are called from C code (the driver, NVTX).
#include <cupti.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "collector.h"
#include "options.h"
#include "collector/src/parts.h"

// NVTX's types for the entry points (nvtxDetail/nvtxTypes.h: NvtxGetExportTableFunc_t,
// NvtxInitializeInjectionNvtxFunc_t). NVTX calls them through exactly this type, so the
// definitions below must have it (UBSan's -fsanitize=function checks it).
using NvtxGetExportTable = const void* (*)(uint32_t export_table_id);
using NvtxEntry = int (*)(NvtxGetExportTable);

extern "C" {
__attribute__((visibility("default"))) int InitializeInjectionNvtx(NvtxGetExportTable get_export_table);
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTable get_export_table);
}

namespace {

void Warn(const std::string& line) { std::fprintf(stderr, "tracegate: %s\n", line.c_str()); }

void StopAtExit() {
  // Runs before the CUDA runtime's own exit handler (registered earlier, run later), while the
  // contexts still exist; in a forked child it is a no-op (the collector forgot the parent's part).
  try {
    if (tg::Status s = tg::cupti::StopCollector(); !s.ok()) Warn("the recording may be incomplete: " + s.message());
  } catch (const std::exception& e) {
    Warn(std::string("the recording may be incomplete: ") + e.what());
  } catch (...) {
    Warn("the recording may be incomplete: unknown error at exit");
  }
}

// Starts the collector once per process, from whichever entry point the process reaches first
// (NVTX may initialise before CUDA). Not std::call_once: starting calls CUPTI, which may run
// cuInit, whose driver calls InitializeInjection on this same thread; a second call_once on the
// same flag would deadlock. A re-entrant or concurrent call returns at once (StartOnce).
tg::cupti::StartOnce g_start;

void StartFromEnvironment() {
  g_start.Run([] {
    std::vector<std::string> warnings;
    tg::cupti::CollectorOptions o = tg::cupti::ReadCollectorOptions(::getenv, &warnings);
    for (const std::string& w : warnings) Warn(w);
    if (o.parts_dir.empty()) {
      Warn(std::string(tg::internal::kPartsDir) +
           " is not set, so this process is not recorded; run the program under `tracegate record`");
      return;
    }
    const std::string part = tg::internal::PartPath(o.parts_dir, ::getpid());
    if (tg::Status s = tg::cupti::StartCollector(o.recording, part); !s.ok()) {
      Warn("this process is not recorded: " + s.message());
      return;
    }
    std::atexit(StopAtExit);
  });
}

void StartGuarded(const char* entry) {
  try {
    StartFromEnvironment();
  } catch (const std::exception& e) {
    Warn(std::string(entry) + ": this process is not recorded: " + e.what());
  } catch (...) {
    Warn(std::string(entry) + ": this process is not recorded: unknown error");
  }
}

// NVTX -> CUPTI, through libcupti's own injection entry point of the same name (the libcupti we
// link, found through one of its functions). The CUPTI guide documents cuptiNvtxInitialize2 for
// this, but on a machine without a driver the first NVTX call after it crashed (CUDA 13.0.88,
// tests/unit/cupti/injection_test.cpp), where libcupti's entry point does not; the GPU run checks
// that ranges arrive either way. Returns 1 whatever CUPTI says: the collector may already run,
// and NVTX would unload the library on 0 (nodelete keeps it mapped, but NVTX would stop calling).
int HandNvtxToCupti(const char* entry, NvtxEntry self, NvtxGetExportTable get_export_table) {
  StartGuarded(entry);
  Dl_info info{};
  void* cupti = ::dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &info) && info.dli_fname
                    ? ::dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD)
                    : nullptr;
  auto init = cupti ? reinterpret_cast<NvtxEntry>(::dlsym(cupti, entry)) : nullptr;
  if (!init || init == self) {
    Warn(std::string("NVTX ranges are not recorded: libcupti has no ") + entry);
    return 1;
  }
  if (init(get_export_table) == 0) Warn("NVTX ranges are not recorded: CUPTI's NVTX initialisation failed");
  return 1;
}

}  // namespace

extern "C" {

// Called by the CUDA driver during cuInit. Non-zero: the program goes on either way, recorded or
// not (a warning says why not).
__attribute__((visibility("default"))) int InitializeInjection(void) {
  StartGuarded("InitializeInjection");
  return 1;
}

// Called by NVTX (v2 and later loaders) on the first NVTX call. CUPTI turns NVTX calls into marker
// records through its own NVTX handlers.
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTable get_export_table) {
  return HandNvtxToCupti("InitializeInjectionNvtx2", &InitializeInjectionNvtx2, get_export_table);
}

// The same for programs built with NVTX v1 headers (older libraries still ship them).
__attribute__((visibility("default"))) int InitializeInjectionNvtx(NvtxGetExportTable get_export_table) {
  return HandNvtxToCupti("InitializeInjectionNvtx", &InitializeInjectionNvtx, get_export_table);
}

}  // extern "C"
