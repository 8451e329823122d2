// shared-layout: gives every `tile.alloc_shared` of a kernel a byte offset in
// the group's shared memory and records the total (docs/ir/passes.md).
//
// Buffers are laid out one after the other in program order (pre-order over
// the kernel's body; an allocation inside a loop or branch is still one
// buffer for the whole launch). No two buffers share bytes: reusing the space
// of a buffer whose last use is over would need liveness across barriers, and
// is left for later.
//
// Size: the memref's elements plus `pad N` elements after each innermost row,
// at the element's width, rounded up to whole bytes.
// Alignment: at least 16 bytes (vector and async-copy accesses move 16
// bytes), at least the allocation's `alignment` attribute, and for an
// XOR-swizzled buffer `swizzle_alignment` (ir/core/register_tile_layout.h): 8 rows
// for rows of 32, 64 or 128 bytes, whose swizzle is the tensor cores' and is
// computed on absolute addresses, else 128 bytes, so that each permuted row
// starts where the 32 four-byte banks start again.
//
// Results: `offset` on every allocation, `alignment` raised to the one used,
// and `shared_bytes` (the total, the end of the last buffer) on the kernel.
// The total must not exceed the kernel's `shared_limit` attribute, else the
// module's, else 227 KiB (the most a group may have on sm_90 / sm_100):
// ir.shared-limit-exceeded.
#include <algorithm>

#include "ir/core/register_tile_layout.h"
#include "ir/passes/passes.h"

namespace tessera::ir {
namespace {

constexpr int64_t kMinAlignment = 16;
constexpr int64_t kDefaultSharedLimit = 227 * 1024;

int64_t align_up(int64_t value, int64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

int64_t buffer_bytes(Type m) {
  int64_t elements = m.num_elements();
  if (m.rank() > 0 && m.padding() > 0) {
    int64_t row = m.shape().back();
    int64_t rows = row > 0 ? elements / row : 0;
    elements += rows * m.padding();
  }
  int64_t bits = static_cast<int64_t>(scalar_info(m.scalar()).bits);
  return (elements * bits + 7) / 8;
}

int64_t buffer_alignment(Operation* alloc) {
  int64_t alignment = std::max(kMinAlignment, alloc->int_attr("alignment", kMinAlignment));
  if (alloc->result()->type().swizzle() == Swizzle::Xor)
    alignment = std::max(alignment, swizzle_alignment(alloc->result()->type()));
  return alignment;
}

int64_t shared_limit(Operation* module, Operation* kernel) {
  if (Attribute a = kernel->attr("shared_limit"); a.is(AttributeKind::Integer)) return a.int_value();
  if (Attribute a = module->attr("shared_limit"); a.is(AttributeKind::Integer)) return a.int_value();
  return kDefaultSharedLimit;
}

}  // namespace

void run_shared_layout_pass(Operation* module, PassContext& context) {
  Context& ctx = context.context;
  for (Operation* kernel : module_functions(module)) {
    if (!kernel->has_attr("kernel") || kernel->region(0).empty()) continue;
    int64_t end = 0;
    kernel->walk(
        [&](Operation* op) {
          if (!op->is(OpKind::AllocShared)) return;
          int64_t alignment = buffer_alignment(op);
          int64_t offset = align_up(end, alignment);
          op->set_attr("alignment", ctx.int_attr(alignment));
          op->set_attr("offset", ctx.int_attr(offset));
          end = offset + buffer_bytes(op->result()->type());
        },
        WalkOrder::PreOrder);
    kernel->set_attr("shared_bytes", ctx.int_attr(end));
    int64_t limit = shared_limit(module, kernel);
    if (end > limit)
      report_at<diag::IrSharedLimitExceeded>(context, kernel, std::string(kernel->symbol_name()), end, limit);
  }
}

}  // namespace tessera::ir
