// Why the GPU had nothing to do (docs/RULES.md, "Idle causes"). Every GPU-idle instant of an
// iteration, and every device gap, is split where the evidence changes and each piece gets one
// cause. For a piece before the next GPU work's launch call returned, the host had not launched
// that work yet, and the state of the launching thread decides (analyzer/host/host_model.h):
//   host_stage       the launching process is in a range the pre/post phase expressions name
//   host_compute     the thread is inside a long launch-free block (CPU preprocessing, NumPy, ...)
//   jit_compile      the thread is inside a compiler frame (Dynamo, Inductor, Triton, NVRTC, ...)
//   host_sync        the thread is blocked in a sync, a wait or a synchronous copy
//   host_launch      the thread is on its way to the next GPU work: in a launch call, or in frames
//                    that launch GPU work (what a CUDA graph or a compiler removes)
//   host_idle        the thread shows no activity at all (waiting for input or another process)
//   graph_capture    the thread is capturing a CUDA/HIP graph: its launches run nothing
// After the launch call returned the work was queued, and the device's side decides:
//   communication    the work before or after is a collective
//   dependency_sync  both sides come from one launch (a graph's nodes), or a wait is in progress
//   device_backlog   the work started at least the backlog threshold after its launch returned,
//                    with no recorded work on the device: the device ran work the trace does not
//                    hold (queued before the trace began, or another process's). Not idle time:
//                    no finding claims it, and it is a data-quality warning
//   host_launch      a lag of at most 50 us: launch latency
//   unknown          a lag between the two with nothing recorded to explain it
// unknown also where there are no host events to read (no launch call, no thread modelled).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "tracegate/analyzer/model.h"

namespace tg {

enum class IdleCause : uint8_t {
  kHostStage,
  kHostCompute,
  kJitCompile,
  kHostSync,
  kHostLaunch,
  kHostIdle,
  kGraphCapture,
  kCommunication,
  kDependencySync,
  kDeviceBacklog,
  kUnknown,
  kCount
};
inline constexpr size_t kIdleCauseCount = static_cast<size_t>(IdleCause::kCount);
inline constexpr std::array<const char*, kIdleCauseCount> kIdleCauseNames{
    "host_stage",    "host_compute",  "jit_compile",     "host_sync",      "host_launch", "host_idle",
    "graph_capture", "communication", "dependency_sync", "device_backlog", "unknown"};

// Causes where the host held the GPU up with work of its own (what host_bound judges).
constexpr bool IsHostWorkCause(IdleCause c) {
  return c == IdleCause::kHostCompute || c == IdleCause::kJitCompile || c == IdleCause::kHostSync ||
         c == IdleCause::kHostIdle;
}
// Time a finding may claim as idle: everything but the device's backlog (not idle) and graph
// capture (a capture runs nothing by design).
constexpr bool IsClaimableIdle(IdleCause c) { return c != IdleCause::kDeviceBacklog && c != IdleCause::kGraphCapture; }

// A frame inside an idle interval on the launching thread: "file.py: outer > file.py: inner", its
// full name, and its overlap with the interval.
struct GapFrame {
  std::string path;
  std::string name;
  TimeNs ns = 0;
};

}  // namespace tg
