// The rules of the tile operations (Tile IR) (verifier_rules.h; docs/ir/tile.md).
#include <fmt/format.h>

#include "ir/core/tile_attr_kinds.h"
#include "ir/core/verifier_rules.h"

namespace tessera::ir::verification {

// 'tile.linear_id', 'tile.lane_id', 'tile.warp_id'
void Verifier::verify_index_id(Operation* op) {
  if (shape(op, 0, 1) && !op->result()->type().is_index()) error(op, "result must be index");
}

// 'tile.local_id', 'tile.group_id', 'tile.group_size', 'tile.num_groups'
void Verifier::verify_axis_id(Operation* op) {
  if (!shape(op, 0, 1)) return;
  if (!op->result()->type().is_index()) return void(error(op, "result must be index"));
  axis_attr(op, 3);
}

// 'tile.dim'
void Verifier::verify_dim(Operation* op) {
  if (!shape(op, 1, 1)) return;
  Type m = op->operand(0)->type();
  if (!m.is(TypeKind::MemRef) && !m.is(TypeKind::Tensor))
    return void(error(op, "operand must be a memref or tensor"));
  if (!axis_attr(op, static_cast<int64_t>(m.rank()))) return;
  if (!op->result()->type().is_index()) error(op, "result must be index");
}

// 'tile.alloc_shared', 'tile.alloc_local'
void Verifier::verify_alloc(Operation* op) {
  if (!shape(op, 0, 1)) return;
  Type m = op->result()->type();
  MemorySpace want = op->is(OpKind::AllocShared) ? MemorySpace::Shared : MemorySpace::Local;
  if (!m.is(TypeKind::MemRef) || m.space() != want || !m.has_static_shape())
    return void(error(op, fmt::format("result must be a statically shaped memref in {} memory, got {}",
                                      memory_space_name(want), m.str())));
  if (Attribute a = op->attr("alignment")) {
    if (!a.is(AttributeKind::Integer) || a.int_value() <= 0 || (a.int_value() & (a.int_value() - 1)) != 0)
      error(op, "alignment must be a positive power of two");
  }
  if (Attribute o = op->attr("offset")) {
    if (!o.is(AttributeKind::Integer) || o.int_value() < 0) error(op, "offset must be a non-negative integer");
  }
}

// 'tile.subview'
void Verifier::verify_subview(Operation* op) {
  if (!results(op, 1) || !memref_indices(op, 0, 1, 0)) return;
  Type m = op->operand(0)->type(), r = op->result()->type();
  Attribute sizes = int_array_attr(op, "sizes");
  if (!sizes) return;
  std::vector<int64_t> s = sizes.int_array();
  if (s.size() != m.rank()) return void(error(op, "needs one size per dimension"));
  // `drop`: source dimensions (increasing, each of size 1) left out of
  // the result, a rank-reducing view.
  std::vector<int64_t> shape = s;
  if (op->attr("drop")) {
    Attribute drop = int_array_attr(op, "drop");
    if (!drop) return;
    std::vector<int64_t> d = drop.int_array();
    for (size_t i = 0; i < d.size(); ++i) {
      if (d[i] < 0 || d[i] >= static_cast<int64_t>(s.size()) || (i > 0 && d[i] <= d[i - 1]) ||
          s[static_cast<size_t>(d[i])] != 1)
        return void(error(op, "'drop' must list increasing dimensions of size 1"));
    }
    for (size_t i = d.size(); i-- > 0;) shape.erase(shape.begin() + d[i]);
  }
  if (!r.is(TypeKind::MemRef) || r.scalar() != m.scalar() || r.space() != m.space() ||
      !std::equal(shape.begin(), shape.end(), r.shape().begin(), r.shape().end()))
  {
    std::string dims;
    for (int64_t d : shape) dims += (dims.empty() ? "" : "x") + std::to_string(d);
    error(op, fmt::format("result must be a memref of shape {} with the source's element type and memory space",
                          dims));
  }
}

// 'tile.barrier'
void Verifier::verify_barrier(Operation* op) {
  shape(op, 0, 0);
}

// 'tile.load'
void Verifier::verify_load(Operation* op) {
  if (!results(op, 1) || !memref_indices(op, 0, 1, 0)) return;
  Type m = op->operand(0)->type();
  if (!op->result()->type().is_scalar() || op->result()->type().scalar() != m.scalar())
    error(op, fmt::format("result must be the element type {}", scalar_info(m.scalar()).name));
}

// 'tile.store'
void Verifier::verify_store(Operation* op) {
  if (!results(op, 0) || !memref_indices(op, 1, 2, 0) || !writable_memref(op, 1)) return;
  Type v = op->operand(0)->type(), m = op->operand(1)->type();
  if (!v.is_scalar() || v.scalar() != m.scalar())
    error(op, fmt::format("stores {} into a memref of {}", v.str(), scalar_info(m.scalar()).name));
}

// 'tile.load_vector'
void Verifier::verify_load_vector(Operation* op) {
  if (!results(op, 1) || !memref_indices(op, 0, 1, 0)) return;
  Type m = op->operand(0)->type(), r = op->result()->type();
  if (!r.is(TypeKind::Vector) || r.scalar() != m.scalar())
    error(op, fmt::format("result must be a vector of {}", scalar_info(m.scalar()).name));
}

// 'tile.store_vector'
void Verifier::verify_store_vector(Operation* op) {
  if (!results(op, 0) || !memref_indices(op, 1, 2, 0) || !writable_memref(op, 1)) return;
  Type v = op->operand(0)->type(), m = op->operand(1)->type();
  if (!v.is(TypeKind::Vector) || v.scalar() != m.scalar())
    error(op, fmt::format("stores {} into a memref of {}", v.str(), scalar_info(m.scalar()).name));
}

// 'tile.cp_async'
void Verifier::verify_cp_async(Operation* op) {
  if (!shape(op, 2, 1)) return;
  Type d = op->operand(0)->type(), s = op->operand(1)->type();
  if (!d.is(TypeKind::MemRef) || d.space() != MemorySpace::Shared)
    return void(error(op, "destination must be a shared memref"));
  if (!s.is(TypeKind::MemRef) || s.space() != MemorySpace::Global)
    return void(error(op, "source must be a global memref"));
  if (d.scalar() != s.scalar()) return void(error(op, "source and destination must have one element type"));
  if (!dims_compatible(d.shape(), s.shape()))
    return void(error(op, fmt::format("copies {} into {}; shapes differ", s.str(), d.str())));
  if (!op->result()->type().is(TypeKind::Token)) error(op, "result must be a token");
}

// 'tile.cp_commit_group'
void Verifier::verify_cp_commit_group(Operation* op) {
  if (!results(op, 1)) return;
  for (Value* v : op->operands())
    if (!v->type().is(TypeKind::Token)) return void(error(op, "operands must be the tokens of async copies"));
  if (!op->result()->type().is(TypeKind::Token)) error(op, "result must be a token");
}

// 'tile.cp_wait_group'
void Verifier::verify_cp_wait_group(Operation* op) {
  if (!shape(op, 0, 0)) return;
  Attribute p = attr(op, "pending", AttributeKind::Integer);
  if (p && p.int_value() < 0) error(op, "pending must be non-negative");
}

// 'tile.atomic'
void Verifier::verify_atomic(Operation* op) {
  if (!results(op, 1) || !memref_indices(op, 0, 1, 1) || !writable_memref(op, 0)) return;
  if (!string_choice(op, "kind", kAtomicKindNames)) return;
  Type m = op->operand(0)->type(), v = op->operand(op->num_operands() - 1)->type();
  if (!v.is_scalar() || v.scalar() != m.scalar() || op->result()->type() != v)
    return void(error(op, fmt::format("value and result must be the element type {}",
                                      scalar_info(m.scalar()).name)));
  if (atomic_integers_only(atomic_kind(*op)) && !is_int_element(v))
    error(op, fmt::format("atomic '{}' needs an integer element type, got {}", op->string_attr("kind"), v.str()));
}

// 'tile.atomic_cas'
void Verifier::verify_atomic_cas(Operation* op) {
  if (!results(op, 1) || !memref_indices(op, 0, 1, 2) || !writable_memref(op, 0)) return;
  Type m = op->operand(0)->type();
  Type c = op->operand(op->num_operands() - 2)->type(), n = op->operand(op->num_operands() - 1)->type();
  if (c != n || !c.is_scalar() || c.scalar() != m.scalar() || op->result()->type() != c)
    error(op, fmt::format("compare, new value and result must be the element type {}",
                          scalar_info(m.scalar()).name));
}

// 'tile.shuffle'
void Verifier::verify_shuffle(Operation* op) {
  if (!shape(op, 2, 1)) return;
  if (!string_choice(op, "mode", kShuffleModeNames)) return;
  Type v = op->operand(0)->type();
  if (!v.is_scalar() && !v.is_index()) return void(error(op, "shuffles a scalar value"));
  if (op->result()->type() != v) return void(error(op, "result must have the operand's type"));
  Type off = op->operand(1)->type();
  if (!off.is_index() && !off.is_int()) error(op, "offset must be an integer");
}

// 'tile.warp_reduce'
void Verifier::verify_warp_reduce(Operation* op) {
  if (!shape(op, 1, 1)) return;
  if (!string_choice(op, "kind", kWarpReduceKindNames)) return;
  Type v = op->operand(0)->type();
  if (!v.is_scalar() || op->result()->type() != v) error(op, "reduces a scalar to the same type");
}

// 'tile.random_bits'
void Verifier::verify_random_bits(Operation* op) {
  if (!shape(op, 2, 1)) return;
  if (!op->operand(0)->type().is_scalar() || op->operand(0)->type().scalar() != ScalarType::I64 ||
      !op->operand(1)->type().is_scalar() || op->operand(1)->type().scalar() != ScalarType::I64)
    return void(error(op, "takes a seed and a counter, both i64"));
  if (!op->result()->type().is_scalar() || op->result()->type().scalar() != ScalarType::I32)
    error(op, "result must be i32");
}

// 'tile.splat'
void Verifier::verify_splat(Operation* op) {
  if (!shape(op, 1, 1)) return;
  Type v = op->operand(0)->type(), r = op->result()->type();
  if (!v.is_scalar() || !(r.is(TypeKind::Tile) || r.is(TypeKind::Vector)) || r.scalar() != v.scalar())
    error(op, fmt::format("splats a scalar into a tile or vector of it, not {} into {}", v.str(), r.str()));
}

// 'tile.mma'
void Verifier::verify_mma(Operation* op) {
  if (!results(op, 1)) return;
  if (op->num_operands() != 2 && op->num_operands() != 3)
    return void(error(op, fmt::format("expects 2 or 3 operands (a, b, accumulator), got {}", op->num_operands())));
  Type a = op->operand(0)->type(), b = op->operand(1)->type(), r = op->result()->type();
  for (Type t : {a, b})
    if (!(t.is(TypeKind::Tile) || (t.is(TypeKind::MemRef) && t.space() == MemorySpace::Shared)) || t.rank() != 2 ||
        !t.has_static_shape())
      return void(error(op, fmt::format("operands must be static 2-D tiles or shared memrefs, got {}", t.str())));
  if (!r.is(TypeKind::Tile) || r.rank() != 2) return void(error(op, "result must be a 2-D tile"));
  if (a.shape()[1] != b.shape()[0])
    return void(error(op, fmt::format("inner dimensions differ: {} and {}", a.shape()[1], b.shape()[0])));
  if (r.shape()[0] != a.shape()[0] || r.shape()[1] != b.shape()[1])
    return void(error(op, fmt::format("result must be {}x{}, got {}", a.shape()[0], b.shape()[1], r.str())));
  if (a.scalar() != b.scalar()) return void(error(op, "a and b must have one element type"));
  if (op->num_operands() == 3 && op->operand(2)->type() != r)
    error(op, "the accumulator must have the result type");
}

// 'tile.store_tile'
void Verifier::verify_store_tile(Operation* op) {
  if (!shape(op, 2, 0)) return;
  Type t = op->operand(0)->type(), m = op->operand(1)->type();
  if (!t.is(TypeKind::Tile) || !m.is(TypeKind::MemRef)) return void(error(op, "stores a tile into a memref"));
  if (!writable_memref(op, 1)) return;
  if (!dims_compatible(t.shape(), m.shape()))
    return void(error(op, fmt::format("stores {} into {}; shapes differ", t.str(), m.str())));
  if (t.scalar() != m.scalar()) error(op, "tile and memref must have one element type");
}

}  // namespace tessera::ir::verification
