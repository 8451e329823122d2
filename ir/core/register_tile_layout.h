// Where the elements of a register tile live (`tile<MxNxT, layout>`).
//
// A register tile is spread over the G lanes of its group; each lane holds a
// share of M*N/G elements as one short vector, element j of the share being
// some (row, column) of the tile. The layout is that mapping:
//
//   generic   lane l holds elements l, l + G, l + 2G, ... of the row-major
//             tile: consecutive lanes hold consecutive columns, so stores
//             coalesce. Any shape whose size is a multiple of G.
//   mma_acc   the accumulator layout of the tensor cores (PTX ISA, "Matrix
//             Fragments for mma.m16n8k16" and wgmma's "Register Fragments"):
//             the tile is cut into 16 x 8 blocks; the W = G/32 warps form a
//             warps_m x warps_n grid, warp w at row w % warps_m and column
//             w / warps_m, and each warp owns tiles_m x tiles_n blocks: block
//             rows warp_row, warp_row + warps_m, ... (strided) and block
//             columns warp_column * tiles_n + 0 .. tiles_n - 1 (contiguous).
//             In a block, lane q of the warp holds (q/4, 2(q%4)),
//             (q/4, 2(q%4)+1), (q/4+8, 2(q%4)), (q/4+8, 2(q%4)+1). Element j
//             of the share is fragment element j % 4 of the warp's block
//             j / 4, blocks in row-major order. The same registers serve
//             mma.sync (any grid) and wgmma: when warps_m is a multiple of 4,
//             the 4 warps of a warpgroup hold 4 consecutive block rows of the
//             same columns, which is wgmma's m64nN accumulator, its blocks
//             in wgmma's register order.
//
// Layouts other than generic are chosen by the `tile-layout` pass
// (docs/ir/passes.md); code generation reads them from the type. The
// functions here are the one definition both use.
#pragma once

#include <cstdint>
#include <optional>

#include "ir/core/types.h"

namespace tessera::ir {

class Operation;

// The lanes of a function's group: the product of its `group_shape`, or 0
// without one (a helper).
int64_t group_lanes(const Operation* function);

// Whether the tensor cores' mma.sync m16n8k16 computes a x b -> c as Tessera
// defines it: f16 or bf16 operands of one type, an f32 accumulator, K (a's
// columns) a multiple of 16. The operands' place (shared memory) and the
// tile's warp tiling are checked by their users.
bool mma_sync_types(Type a, Type b, Type c);

struct MmaTiling {
  int64_t warps_m = 1, warps_n = 1;  // the warp grid over the tile
  int64_t tiles_m = 1, tiles_n = 1;  // 16 x 8 blocks per warp, down and across
};

inline constexpr int64_t kMmaBlockRows = 16;
inline constexpr int64_t kMmaBlockColumns = 8;
inline constexpr int64_t kWarpLanes = 32;
// The widest B (in 16-bit columns) whose rows are one of the tensor cores'
// swizzle widths (128 bytes).
inline constexpr int64_t kWgmmaColumns = 64;

// The warp grid of an M x N mma_acc tile over `lanes` lanes, or nullopt when
// the shape does not split into whole 16 x 8 blocks evenly over whole warps.
// Of the grids that do, those whose warps_m is a multiple of 4 (warpgroups
// along M, so wgmma can produce the tile) first; then, for tiles at most
// kWgmmaColumns wide, those with warps_n == 1 (each warpgroup spans the
// tile's width, the only case where wgmma reads B in place); then the one
// loading the fewest fragments per k step (2 * tiles_m + tiles_n: an A
// fragment is twice a B fragment), the fewest warp rows on a tie. A pure
// function of its arguments, so every phase agrees.
std::optional<MmaTiling> mma_accumulator_tiling(int64_t rows, int64_t columns, int64_t lanes);

// Row and column of element `j` of lane `lane`'s share (lane in 0..lanes).
struct TilePosition {
  int64_t row = 0, column = 0;
};
TilePosition mma_accumulator_position(const MmaTiling& tiling, int64_t lane, int64_t j);

// Bytes per row of a 2-D (or higher) shared buffer, padding included.
int64_t shared_row_bytes(Type memref);

// Whether rows of `bytes` bytes are one of the tensor cores' swizzle widths
// (32, 64, 128): an XOR-swizzled buffer with such rows is in their layout.
inline bool tensor_core_swizzle_row(int64_t bytes) { return bytes == 32 || bytes == 64 || bytes == 128; }

// The alignment an XOR-swizzled shared buffer gets (docs/codegen.md,
// "Swizzle"): its pattern repeats every 8 rows, so for rows of 32, 64 or 128
// bytes 8 rows (256, 512 or 1024 bytes; the tensor cores' swizzle is on
// absolute addresses), else 128 bytes.
int64_t swizzle_alignment(Type memref);

}  // namespace tessera::ir
