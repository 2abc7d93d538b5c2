// The element-wise kernels' grid (elementwise_plan.h).
#include "tracegate/kernels/elementwise_plan.h"

#include <algorithm>
#include <numeric>

namespace tg::kernels {

// Blocks whose thread count times `width` is a multiple of `channels` come in multiples of
// g = channels / gcd(channels, threads * width). A grid that covers every vector in one pass is
// rounded up to such a multiple (the extra threads find no vector); a grid capped at one wave is
// rounded down. When neither fits in one wave (g itself exceeds it), the kernel computes each
// vector's channels instead (fixed_channels = false).
ElementwiseGrid PlanElementwiseGrid(size_t vectors, size_t width, size_t channels, bool per_channel, size_t threads,
                                    size_t unroll, size_t max_blocks) {
  max_blocks = std::max<size_t>(max_blocks, 1);
  const size_t per_block = threads * unroll;
  const size_t needed = std::max<size_t>((vectors + per_block - 1) / per_block, 1);
  ElementwiseGrid grid{std::min(needed, max_blocks), true};
  if (!per_channel || channels <= 1) return grid;
  const size_t g = channels / std::gcd(channels, threads * width);
  if (grid.blocks % g == 0) return grid;
  const size_t up = (grid.blocks + g - 1) / g * g;
  if (needed <= max_blocks && up <= max_blocks) {
    grid.blocks = up;
  } else if (grid.blocks >= g) {
    grid.blocks = grid.blocks / g * g;
  } else {
    grid.fixed_channels = false;
  }
  return grid;
}

}  // namespace tg::kernels
