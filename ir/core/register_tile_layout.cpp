#include "ir/core/register_tile_layout.h"

#include "ir/core/ir.h"

#include <tuple>

namespace tessera::ir {

std::optional<MmaTiling> mma_accumulator_tiling(int64_t rows, int64_t columns, int64_t lanes) {
  if (rows <= 0 || columns <= 0 || lanes <= 0 || lanes % kWarpLanes != 0) return std::nullopt;
  if (rows % kMmaBlockRows != 0 || columns % kMmaBlockColumns != 0) return std::nullopt;
  int64_t warps = lanes / kWarpLanes;
  int64_t blocks_m = rows / kMmaBlockRows, blocks_n = columns / kMmaBlockColumns;
  std::optional<MmaTiling> best;
  for (int64_t warps_m = 1; warps_m <= warps; ++warps_m) {
    if (warps % warps_m != 0) continue;
    int64_t warps_n = warps / warps_m;
    if (blocks_m % warps_m != 0 || blocks_n % warps_n != 0) continue;
    MmaTiling t{warps_m, warps_n, blocks_m / warps_m, blocks_n / warps_n};
    auto rank = [&](const MmaTiling& x) {
      return std::tuple{x.warps_m % 4 != 0, columns <= kWgmmaColumns && x.warps_n != 1, 2 * x.tiles_m + x.tiles_n};
    };
    if (!best || rank(t) < rank(*best)) best = t;
  }
  return best;
}

TilePosition mma_accumulator_position(const MmaTiling& tiling, int64_t lane, int64_t j) {
  int64_t warp = lane / kWarpLanes, q = lane % kWarpLanes;
  int64_t block = j / 4, element = j % 4;
  int64_t block_m = (block / tiling.tiles_n) * tiling.warps_m + warp % tiling.warps_m;
  int64_t block_n = (warp / tiling.warps_m) * tiling.tiles_n + block % tiling.tiles_n;
  return {block_m * kMmaBlockRows + q / 4 + (element >= 2 ? 8 : 0),
          block_n * kMmaBlockColumns + 2 * (q % 4) + (element & 1)};
}

int64_t shared_row_bytes(Type memref) {
  if (memref.rank() < 2) return 0;
  int64_t columns = memref.shape()[memref.rank() - 1] + memref.padding();
  return columns * static_cast<int64_t>(scalar_info(memref.scalar()).bits) / 8;
}

int64_t swizzle_alignment(Type memref) {
  int64_t row = memref.padding() == 0 ? shared_row_bytes(memref) : 0;
  return tensor_core_swizzle_row(row) ? 8 * row : 128;
}

int64_t group_lanes(const Operation* function) {
  Attribute shape = function->attr("group_shape");
  if (!shape) return 0;
  int64_t lanes = 1;
  for (int64_t d : shape.int_array()) lanes *= d;
  return lanes;
}

bool mma_sync_types(Type a, Type b, Type c) {
  return a.scalar() == b.scalar() && (a.scalar() == ScalarType::F16 || a.scalar() == ScalarType::BF16) &&
         c.scalar() == ScalarType::F32 && a.rank() == 2 && a.shape()[1] % 16 == 0;
}

}  // namespace tessera::ir
