// Finding the API call that launched a GPU activity: (correlation, row) of every API call with a
// correlation id, sorted once for binary search (no hash map per event).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "tracegate/model.h"

namespace tg {

class ApiIndex {
 public:
  explicit ApiIndex(const ApiTable& a) : api_(a) {
    by_corr_.reserve(a.size());
    for (size_t i = 0; i < a.size(); ++i)
      if (a.correlation[i] != kUnknownId) by_corr_.emplace_back(a.correlation[i], i);
    std::sort(by_corr_.begin(), by_corr_.end());
  }
  // Row of the call with this correlation (the one of `pid` when several processes reuse the
  // id and pid is known), or -1.
  int64_t Find(int64_t correlation, int64_t pid) const {
    if (correlation == kUnknownId) return -1;
    auto it = std::lower_bound(by_corr_.begin(), by_corr_.end(), std::pair<int64_t, size_t>{correlation, 0});
    int64_t found = -1;
    for (; it != by_corr_.end() && it->first == correlation; ++it) {
      if (found < 0) found = static_cast<int64_t>(it->second);
      if (pid != kUnknownId && api_.pid[it->second] == pid) return static_cast<int64_t>(it->second);
    }
    return found;
  }

 private:
  const ApiTable& api_;
  std::vector<std::pair<int64_t, size_t>> by_corr_;
};

}  // namespace tg
