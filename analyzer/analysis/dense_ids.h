// Dense ids (0, 1, 2, ...) for keys met in runs: a trace's streams, processes and threads, whose
// rows come a few keys at a time. The replay (replay.cpp) and the critical path's graph
// (recorded_graph.cpp) number them with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace tg::internal {

template <class Key>
class DenseIds {
 public:
  // The id of `k`, a new one the first time: the last key and the first few by a linear search
  // (traces have few streams, processes and threads), the others by one map search.
  uint32_t Of(const Key& k) {
    if (has_last_ && k == last_) return last_id_;
    uint32_t id = 0;
    for (; id < few_.size() && !(few_[id] == k); ++id) {
    }
    if (id == few_.size()) {
      auto [it, fresh] = ids_.try_emplace(k, static_cast<uint32_t>(ids_.size()));
      id = it->second;
      if (fresh && few_.size() < kFew && few_.size() + 1 == ids_.size()) few_.push_back(k);
    }
    last_ = k;
    last_id_ = id;
    has_last_ = true;
    return id;
  }
  // The id of a key met before, or -1.
  int64_t Find(const Key& k) const {
    auto it = ids_.find(k);
    return it == ids_.end() ? -1 : static_cast<int64_t>(it->second);
  }
  size_t size() const { return ids_.size(); }
  const std::map<Key, uint32_t>& Map() const { return ids_; }

 private:
  static constexpr size_t kFew = 8;
  std::map<Key, uint32_t> ids_;
  std::vector<Key> few_;  // the keys of ids 0 .. kFew-1
  Key last_{};
  uint32_t last_id_ = 0;
  bool has_last_ = false;
};

}  // namespace tg::internal
