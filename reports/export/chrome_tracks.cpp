#include "reports/export/chrome_tracks.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace tg::internal {

namespace {

constexpr int64_t kIdMax = 2147483647;        // 2^31 - 1: what every reader takes as a pid or tid
constexpr int64_t kBlockStep = int64_t{1} << 24;
constexpr int64_t kBlockSize = int64_t{1} << 20;
constexpr int64_t kDeviceSlots = 65535;       // devices 0..65534; the last slot: device unknown
constexpr int64_t kFindingsSlot = 65536;
constexpr int64_t kRemapSlot = 65537;         // host pids outside 0..2^31-1, one each from here
constexpr int64_t kFreshTid = int64_t{1} << 30;  // tracks without an id of their own

bool InRange(int64_t v) { return v >= 0 && v <= kIdMax; }

std::string LaneName(const std::string& base, uint32_t lane) {
  return base + " (overlapping " + std::to_string(lane) + ")";
}

}  // namespace

uint32_t ChromeTracks::Get(TrackKind kind, int64_t owner, int64_t id) {
  auto [it, inserted] = index_.try_emplace({kind, owner, id, 0u}, static_cast<uint32_t>(tracks_.size()));
  if (inserted) {
    ChromeTrack t;
    t.kind = kind;
    t.owner = owner;
    t.id = id;
    t.base = it->second;
    tracks_.push_back(std::move(t));
  }
  return it->second;
}

uint32_t ChromeTracks::LaneOf(uint32_t base, uint32_t lane) {
  if (lane == 0) return base;
  const ChromeTrack b = tracks_[base];
  auto [it, inserted] = index_.try_emplace({b.kind, b.owner, b.id, lane}, static_cast<uint32_t>(tracks_.size()));
  if (inserted) {
    ChromeTrack t = b;
    t.lane = lane;
    t.base = base;
    t.used = false;
    tracks_.push_back(std::move(t));
  }
  return it->second;
}

namespace {

// The slices of one lane of a track, for placing secondary slices around its primary ones.
struct Lane {
  std::vector<TimeNs> open;                         // pass 1: ends of the open primary slices
  std::vector<std::pair<TimeNs, TimeNs>> primary;   // in start order, properly nested
  std::vector<std::vector<TimeNs>> max_end;         // sparse table over primary[i].second
  size_t next = 0;                                  // pass 2: primaries pushed so far
  std::vector<TimeNs> open_primary, open_secondary;  // pass 2: ends of the open slices

  void Build() {
    max_end.assign(1, {});
    for (const auto& p : primary) max_end[0].push_back(p.second);
    for (size_t k = 1; (size_t{1} << k) <= primary.size(); ++k) {
      const std::vector<TimeNs>& prev = max_end[k - 1];
      std::vector<TimeNs> level(primary.size() - (size_t{1} << k) + 1);
      for (size_t i = 0; i < level.size(); ++i) level[i] = std::max(prev[i], prev[i + (size_t{1} << (k - 1))]);
      max_end.push_back(std::move(level));
    }
  }
  TimeNs MaxEnd(size_t lo, size_t hi) const {  // over [lo, hi), hi > lo
    size_t k = 63 - static_cast<size_t>(__builtin_clzll(hi - lo));
    return std::max(max_end[k][lo], max_end[k][hi - (size_t{1} << k)]);
  }
  // Whether [s, e] (s at or after every earlier query) nests with every slice of the lane.
  bool Fits(TimeNs s, TimeNs e) {
    for (; next < primary.size() && primary[next].first < s; ++next) {
      while (!open_primary.empty() && open_primary.back() <= primary[next].first) open_primary.pop_back();
      open_primary.push_back(primary[next].second);
    }
    while (!open_primary.empty() && open_primary.back() <= s) open_primary.pop_back();
    while (!open_secondary.empty() && open_secondary.back() <= s) open_secondary.pop_back();
    // A slice that started before and is still open must contain it.
    if (!open_primary.empty() && open_primary.back() < e) return false;
    if (!open_secondary.empty() && open_secondary.back() < e) return false;
    // A primary slice that starts inside it must end inside it.
    auto lo = std::upper_bound(primary.begin(), primary.end(), s,
                               [](TimeNs v, const std::pair<TimeNs, TimeNs>& p) { return v < p.first; });
    auto hi = std::lower_bound(primary.begin(), primary.end(), e,
                               [](const std::pair<TimeNs, TimeNs>& p, TimeNs v) { return p.first < v; });
    return lo >= hi || MaxEnd(static_cast<size_t>(lo - primary.begin()), static_cast<size_t>(hi - primary.begin())) <= e;
  }
};

}  // namespace

void ChromeTracks::NestIntoLanes(std::vector<ChromeSlice>& slices) {
  std::sort(slices.begin(), slices.end(), [](const ChromeSlice& a, const ChromeSlice& b) {
    if (a.track != b.track) return a.track < b.track;
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;  // the longer one is the parent
    if (a.table != b.table) return a.table < b.table;
    return a.row < b.row;
  });
  std::vector<uint32_t> lane_of(slices.size(), 0);
  for (size_t begin = 0, end = 0; begin < slices.size(); begin = end) {
    const uint32_t track = slices[begin].track;
    bool secondaries = false;
    for (end = begin; end < slices.size() && slices[end].track == track; ++end) secondaries |= slices[end].secondary;
    std::vector<Lane> lanes;
    // Pass 1: the primary slices, each in the first lane where it nests.
    for (size_t i = begin; i < end; ++i) {
      const ChromeSlice& s = slices[i];
      if (s.secondary) continue;
      uint32_t lane = 0;
      for (;; ++lane) {
        if (lane == lanes.size()) lanes.emplace_back();
        std::vector<TimeNs>& open = lanes[lane].open;
        while (!open.empty() && open.back() <= s.start) open.pop_back();
        if (open.empty() || s.end <= open.back()) {
          open.push_back(s.end);
          break;
        }
      }
      lane_of[i] = lane;
      if (secondaries) lanes[lane].primary.emplace_back(s.start, s.end);
    }
    if (!secondaries) continue;
    // Pass 2: the secondary ones, each in the first lane where it nests with everything there.
    for (Lane& l : lanes) l.Build();
    for (size_t i = begin; i < end; ++i) {
      const ChromeSlice& s = slices[i];
      if (!s.secondary) continue;
      uint32_t lane = 0;
      for (;; ++lane) {
        if (lane == lanes.size()) lanes.emplace_back();
        if (lanes[lane].Fits(s.start, s.end)) {
          lanes[lane].open_secondary.push_back(s.end);
          break;
        }
      }
      lane_of[i] = lane;
    }
  }
  for (size_t i = 0; i < slices.size(); ++i) {
    slices[i].track = LaneOf(slices[i].track, lane_of[i]);
    tracks_[slices[i].track].used = true;
  }
}

int64_t ChromeTracks::DevicePid(int32_t device) const {
  return block_ + (device >= 0 && device < kDeviceSlots ? device : kDeviceSlots);
}

void ChromeTracks::Assign(const Trace& t, const std::vector<std::string>& finding_titles) {
  // The reserved block: past every host pid that is a valid id.
  std::set<int64_t> host_pids;
  for (const ChromeTrack& k : tracks_)
    if (k.used && k.kind == TrackKind::kHostThread) host_pids.insert(k.owner);
  block_ = kBlockStep;
  for (int64_t b = kBlockStep; b + kBlockSize <= kIdMax; b += kBlockStep) {
    auto it = host_pids.lower_bound(b);
    if (it == host_pids.end() || *it >= b + kBlockSize) {
      block_ = b;
      break;
    }
  }
  auto valid_host = [&](int64_t pid) { return InRange(pid) && (pid < block_ || pid >= block_ + kBlockSize); };
  std::unordered_map<int64_t, int64_t> host_pid;  // source pid -> output pid
  int64_t remapped = 0;
  for (int64_t pid : host_pids) host_pid[pid] = valid_host(pid) ? pid : block_ + kRemapSlot + remapped++;

  // Processes: findings first, then host processes by pid, then devices by id.
  std::unordered_map<int64_t, std::string> source_names;  // the first non-empty name of a pid
  for (const Process& p : t.processes)
    if (!p.name.empty()) source_names.try_emplace(p.pid, p.name);
  std::set<int32_t> devices = extra_devices_;
  bool findings = false;
  for (const ChromeTrack& k : tracks_) {
    if (!k.used) continue;
    if (k.kind == TrackKind::kStream || k.kind == TrackKind::kSync) devices.insert(static_cast<int32_t>(k.owner));
    if (k.kind == TrackKind::kFindings) findings = true;
  }
  processes_.clear();
  if (findings) processes_.push_back({block_ + kFindingsSlot, 0, "tracegate findings"});
  for (int64_t pid : host_pids) {
    auto it = source_names.find(pid);
    std::string name = it != source_names.end() ? it->second + " " : "process ";
    name = host_pid[pid] != pid ? name + "(source pid " + std::to_string(pid) + ")"
                                : it != source_names.end() ? it->second : name + std::to_string(pid);
    processes_.push_back({host_pid[pid], 0, std::move(name)});
  }
  for (int32_t dev : devices) {
    std::string name = "GPU ?";
    if (dev >= 0 && dev < kDeviceSlots) {
      name = "GPU " + std::to_string(dev);
      if (const Device* d = t.FindDevice(dev); d && !d->name.empty()) name += " " + d->name;
    }
    processes_.push_back({DevicePid(dev), 0, std::move(name)});
  }
  for (size_t i = 0; i < processes_.size(); ++i) processes_[i].sort_index = static_cast<int64_t>(i);

  // Tracks: pid, then the tid (a valid source id where there is one, else a fresh one), the name
  // and the order within the process.
  std::unordered_map<int64_t, std::unordered_set<int64_t>> taken;  // pid -> tids
  std::vector<uint32_t> fresh;
  for (uint32_t i = 0; i < tracks_.size(); ++i) {
    ChromeTrack& k = tracks_[i];
    if (!k.used) continue;
    switch (k.kind) {
      case TrackKind::kFindings: k.pid = block_ + kFindingsSlot; break;
      case TrackKind::kHostThread: k.pid = host_pid[k.owner]; break;
      case TrackKind::kStream:
      case TrackKind::kSync: k.pid = DevicePid(static_cast<int32_t>(k.owner)); break;
    }
    int64_t natural = -1;
    if (k.lane == 0) {
      if (k.kind == TrackKind::kFindings) natural = k.id + 1;
      // Perfetto reads tid 0 as "no tid" and puts the events on thread `pid`: 0 gets a fresh tid.
      if ((k.kind == TrackKind::kHostThread || k.kind == TrackKind::kStream) && InRange(k.id) && k.id != 0)
        natural = k.id;
    }
    if (natural >= 0 && taken[k.pid].insert(natural).second) {
      k.tid = natural;
    } else {
      fresh.push_back(i);
    }
  }
  for (uint32_t i : fresh) {
    ChromeTrack& k = tracks_[i];
    int64_t tid = kFreshTid;
    while (!taken[k.pid].insert(tid).second) ++tid;
    k.tid = tid;
  }

  // Names (an overflow lane is named after its track).
  for (ChromeTrack& k : tracks_) {
    if (!k.used) continue;
    std::string id = k.id == kUnknownId ? "?" : std::to_string(k.id);
    switch (k.kind) {
      case TrackKind::kFindings:
        k.name = static_cast<size_t>(k.id) < finding_titles.size() ? finding_titles[static_cast<size_t>(k.id)]
                                                                   : "finding " + std::to_string(k.id + 1);
        break;
      case TrackKind::kHostThread:
        k.name = "thread " + id + (k.id == k.owner && k.id != kUnknownId ? " (main)" : "");
        break;
      case TrackKind::kStream: k.name = "stream " + id; break;
      case TrackKind::kSync:
        k.name = k.id == kUnknownId ? "device sync: host waits" : "stream " + id + " sync: host waits";
        break;
    }
    if (k.lane > 0) k.name = LaneName(k.name, k.lane);
  }

  // Order within a process: findings by rank; host threads main first, then by tid; a device's
  // streams by id, each followed by its overflow lanes and its sync track; the device-wide syncs last.
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < tracks_.size(); ++i)
    if (tracks_[i].used) order.push_back(i);
  auto key = [&](uint32_t i) {
    const ChromeTrack& k = tracks_[i];
    bool main = k.kind == TrackKind::kHostThread && k.id == k.owner && k.id != kUnknownId;
    bool unknown = k.id == kUnknownId;
    int kind = k.kind == TrackKind::kSync ? 1 : 0;
    return std::make_tuple(k.pid, !main, unknown, k.id, kind, k.lane);
  };
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  int64_t pid = -1, next = 0;
  for (uint32_t i : order) {
    if (tracks_[i].pid != pid) {
      pid = tracks_[i].pid;
      next = 0;
    }
    tracks_[i].sort_index = next++;
  }
}

}  // namespace tg::internal
