// Builders for hand-made traces in unit tests (times in ns). Each returns the row index.
#pragma once

#include <string_view>

#include "tracegate/analyzer/model.h"

namespace tg::testing {

inline size_t AddKernel(Trace& t, std::string_view name, TimeNs start, TimeNs end, int32_t device = 0,
                        int64_t stream = 7, int64_t correlation = kUnknownId) {
  Kernel k;
  k.start = start;
  k.end = end;
  k.name = t.strings.Intern(name);
  k.device = device;
  k.stream = stream;
  k.correlation = correlation;
  t.kernels.Add(k);
  return t.kernels.size() - 1;
}

inline size_t AddCopy(Trace& t, CopyKind kind, int64_t bytes, TimeNs start, TimeNs end,
                      MemKind src = MemKind::kPinned, MemKind dst = MemKind::kDevice, int32_t device = 0,
                      int64_t stream = 7, int64_t correlation = kUnknownId) {
  Memcpy m;
  m.start = start;
  m.end = end;
  m.kind = kind;
  m.bytes = bytes;
  m.src_kind = src;
  m.dst_kind = dst;
  m.device = device;
  m.stream = stream;
  m.correlation = correlation;
  t.memcpys.Add(m);
  return t.memcpys.size() - 1;
}

inline size_t AddMemset(Trace& t, int64_t bytes, TimeNs start, TimeNs end, int32_t device = 0, int64_t stream = 7) {
  Memset m;
  m.start = start;
  m.end = end;
  m.bytes = bytes;
  m.device = device;
  m.stream = stream;
  t.memsets.Add(m);
  return t.memsets.size() - 1;
}

inline size_t AddApi(Trace& t, std::string_view name, TimeNs start, TimeNs end, int64_t correlation,
                     int64_t pid = 100, int64_t tid = 100, ApiKind kind = ApiKind::kRuntime) {
  ApiCall a;
  a.start = start;
  a.end = end;
  a.name = t.strings.Intern(name);
  a.kind = kind;
  a.pid = pid;
  a.tid = tid;
  a.correlation = correlation;
  t.api_calls.Add(a);
  return t.api_calls.size() - 1;
}

inline size_t AddRange(Trace& t, std::string_view name, TimeNs start, TimeNs end, int64_t pid = 100,
                       int64_t tid = 100, int32_t depth = 0) {
  Range r;
  r.start = start;
  r.end = end;
  r.name = t.strings.Intern(name);
  r.pid = pid;
  r.tid = tid;
  r.depth = depth;
  t.ranges.Add(r);
  return t.ranges.size() - 1;
}

// A range of `domain` ("cpu_op", "python_function", ...) on thread 100 of process 100.
inline size_t AddRangeIn(Trace& t, std::string_view domain, std::string_view name, TimeNs start, TimeNs end) {
  Range r;
  r.start = start;
  r.end = end;
  r.name = t.strings.Intern(name);
  r.domain = t.strings.Intern(domain);
  r.pid = 100;
  r.tid = 100;
  t.ranges.Add(r);
  return t.ranges.size() - 1;
}

inline size_t AddSync(Trace& t, SyncKind kind, TimeNs start, TimeNs end, int64_t correlation = kUnknownId,
                      int32_t device = 0, int64_t stream = 7) {
  Sync s;
  s.start = start;
  s.end = end;
  s.kind = kind;
  s.correlation = correlation;
  s.device = device;
  s.stream = stream;
  t.syncs.Add(s);
  return t.syncs.size() - 1;
}

inline size_t AddSample(Trace& t, TimeNs time, double temperature_c, double sm_clock_mhz, int32_t device = 0) {
  Sample s;
  s.time = time;
  s.device = device;
  s.temperature_c = temperature_c;
  s.sm_clock_mhz = sm_clock_mhz;
  t.samples.Add(s);
  return t.samples.size() - 1;
}

}  // namespace tg::testing
