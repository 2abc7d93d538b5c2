// The tracks of the Chrome-trace export and the ids they get in the file.
//
// pid spaces: host processes keep their own pid (0..2^31-1, what Perfetto's uint32 and
// chrome://tracing's int both read); devices and tracegate's own tracks live in a reserved block
// of pids that no host process of the trace uses (Linux pids stay below 2^22, the block starts at
// 2^24 and moves up past any host pid in it), so "GPU 1" can never share a pid with host process 1.
// A host pid or tid outside 0..2^31-1 (Kineto writes 32-bit pthread ids as negative tids) gets a
// fresh id; its source id goes into the track's name.
//
// Every slice that does not nest in the slices already on its track (Perfetto drops or misplaces
// partial overlaps) moves to an overflow lane of that track: another thread in the same process,
// named after the track, sorted right below it.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tracegate/analyzer/model.h"

namespace tg::internal {

// In the order processes are shown: findings, host processes, devices.
enum class TrackKind : uint8_t {
  kFindings,    // one track per finding: owner 0, id = its index
  kHostThread,  // owner = source pid, id = source tid
  kStream,      // owner = device, id = stream (kUnknownId: unknown)
  kSync,        // host waits on a stream (id) or on the whole device (id = kUnknownId)
};

struct ChromeTrack {
  TrackKind kind = TrackKind::kHostThread;
  int64_t owner = 0, id = 0;
  uint32_t lane = 0;   // 0: the track; k: its k-th overflow lane
  uint32_t base = 0;   // the track an overflow lane belongs to (itself for lane 0)
  bool used = false;   // holds an event (only used tracks are named)
  // Filled by ChromeTracks::Assign.
  int64_t pid = 0, tid = 0, sort_index = 0;
  std::string name;
};

struct ChromeProcess {
  int64_t pid = 0;
  int64_t sort_index = 0;
  std::string name;
};

// One slice of the export: where it goes and what it is.
struct ChromeSlice {
  TimeNs start = 0, end = 0;
  uint32_t track = 0;
  uint32_t row = 0;    // row of `table`
  uint8_t table = 0;   // the exporter's table number (also the order of slices with equal times)
  // Ranges and annotations: where one overlaps GPU work or an API call partially, it is the one
  // that moves to an overflow lane.
  bool secondary = false;
};

class ChromeTracks {
 public:
  // Index of the track, created on first use.
  uint32_t Get(TrackKind kind, int64_t owner, int64_t id);
  // A device that has a process even without a track (telemetry counters).
  void NoteDevice(int32_t device) { extra_devices_.insert(device); }
  // Sorts the slices by track and time (longest first among equal starts) and moves each one that
  // overlaps a slice of its track partially to the first overflow lane where it nests: first the
  // primary slices among themselves, then the secondary ones around them.
  void NestIntoLanes(std::vector<ChromeSlice>& slices);
  // Output pids, tids, names and sort indices for the tracks marked used, and the processes.
  // `finding_titles`: the name of each finding's track.
  void Assign(const Trace& t, const std::vector<std::string>& finding_titles);

  std::vector<ChromeTrack>& tracks() { return tracks_; }
  const std::vector<ChromeProcess>& processes() const { return processes_; }
  int64_t DevicePid(int32_t device) const;

 private:
  uint32_t LaneOf(uint32_t base, uint32_t lane);

  std::vector<ChromeTrack> tracks_;
  std::map<std::tuple<TrackKind, int64_t, int64_t, uint32_t>, uint32_t> index_;
  std::vector<ChromeProcess> processes_;
  std::set<int32_t> extra_devices_;
  int64_t block_ = 0;  // the reserved pid block's start (Assign)
};

}  // namespace tg::internal
