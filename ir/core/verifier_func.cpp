// The rules of module and the func operations (verifier_rules.h; docs/ir/core.md).
#include <fmt/format.h>

#include <set>

#include "ir/core/register_tile_layout.h"
#include "ir/core/verifier_rules.h"

namespace tessera::ir::verification {

// 'module'
void Verifier::verify_module(Operation* op) {
  if (!regions(op, 1)) return;
  std::set<std::string_view> names;
  for (size_t b = 0; b < op->region(0).num_blocks(); ++b)
    for (Operation* nested : op->region(0).block(b)) {
      if (!nested->is(OpKind::Func)) {
        error(nested, "only functions may appear at module level");
        continue;
      }
      if (!names.insert(nested->symbol_name()).second)
        error(nested, fmt::format("redefines function '@{}'", nested->symbol_name()));
    }
}

// 'func.func'
void Verifier::verify_func(Operation* op) {
  if (!shape(op, 0, 0, 1)) return;
  if (!attr(op, "sym_name", AttributeKind::String)) return;
  Attribute ft = attr(op, "function_type", AttributeKind::Type);
  if (!ft) return;
  Type fn = ft.type();
  if (!fn.is(TypeKind::Function)) return void(error(op, "function_type must be a function type"));
  if (op->has_attr("kernel") && fn.num_results() > 0) error(op, "a kernel returns no values");
  if (Attribute g = op->attr("group_shape")) {
    if (!g.is(AttributeKind::Array) || g.size() < 1 || g.size() > 3)
      return void(error(op, "group_shape must be an array of 1 to 3 positive integers"));
    for (size_t i = 0; i < g.size(); ++i)
      if (!g[i].is(AttributeKind::Integer) || g[i].int_value() <= 0)
        return void(error(op, "group_shape must be an array of 1 to 3 positive integers"));
  }
  if (Attribute r = op->attr("grid_rank"))
    if (!r.is(AttributeKind::Integer) || r.int_value() < 1 || r.int_value() > 3)
      return void(error(op, "grid_rank must be 1, 2 or 3"));
  Region& body = op->region(0);
  if (body.empty()) return;
  check_mma_layouts(op);
  std::vector<Type> inputs;
  for (size_t i = 0; i < fn.num_inputs(); ++i) inputs.push_back(fn.input(i));
  block_args(op, body, inputs, "the entry block");
}

// In a kernel with a group shape, a tile in the mma_acc layout
// (ir/core/tile_layout.h) must split into whole 16 x 8 blocks over the
// group's warps: the layout is defined by them (code generation needs it).
void Verifier::check_mma_layouts(Operation* func) {
  int64_t lanes = group_lanes(func);  // group_shape is checked before
  if (lanes == 0 || !func->has_attr("kernel")) return;
  auto check = [&](Operation* at, Value* v) {
    Type t = v->type();
    if (!t.is(TypeKind::Tile) || t.layout() != TileLayout::MmaAccumulator) return;
    if (t.rank() != 2 || !mma_accumulator_tiling(t.shape()[0], t.shape()[1], lanes))
      error(at, fmt::format("{} does not split into 16x8 blocks evenly over the {} lanes' warps", t.str(), lanes));
  };
  func->walk([&](Operation* op) {
    if (op == func) return;
    for (Value* r : op->results()) check(op, r);
    for (unsigned i = 0; i < op->num_regions(); ++i)
      for (size_t b = 0; b < op->region(i).num_blocks(); ++b)
        for (Value* a : op->region(i).block(b).arguments()) check(op, a);
  });
}

// 'func.return'
void Verifier::verify_return(Operation* op) {
  Operation* func = op->parent_op();
  if (!func || !func->is(OpKind::Func)) return void(error(op, "must be directly inside a 'func.func'"));
  Attribute signature = func->attr("function_type");
  if (!signature || !signature.is(AttributeKind::Type) || !signature.type().is(TypeKind::Function))
    return;  // reported at the function
  Type fn = signature.type();
  std::vector<Type> expected;
  for (size_t i = 0; i < fn.num_results(); ++i) expected.push_back(fn.result(i));
  std::vector<Type> got = value_types(op->operands());
  if (got != expected)
    error(op, fmt::format("returns {} but the function returns {}", types_text(got), types_text(expected)));
}

// 'func.call'
void Verifier::verify_call(Operation* op) {
  if (!regions(op, 0)) return;
  Attribute callee = attr(op, "callee", AttributeKind::Symbol);
  if (!callee) return;
  Operation* module = op->enclosing(OpKind::Module);
  Operation* target = module ? lookup_function(module, callee.string_value()) : nullptr;
  if (!target) return void(error(op, fmt::format("calls unknown function '@{}'", callee.string_value())));
  Attribute signature = target->attr("function_type");
  if (!signature || !signature.is(AttributeKind::Type) || !signature.type().is(TypeKind::Function))
    return;  // reported at the callee
  Type fn = signature.type();
  std::vector<Type> inputs, outputs;
  for (size_t i = 0; i < fn.num_inputs(); ++i) inputs.push_back(fn.input(i));
  for (size_t i = 0; i < fn.num_results(); ++i) outputs.push_back(fn.result(i));
  if (value_types(op->operands()) != inputs)
    return void(error(op, fmt::format("passes {} to '@{}', which takes {}", types_text(value_types(op->operands())),
                                      callee.string_value(), types_text(inputs))));
  if (op->result_types() != outputs)
    error(op, fmt::format("expects results {} from '@{}', which returns {}", types_text(op->result_types()),
                          callee.string_value(), types_text(outputs)));
}

}  // namespace tessera::ir::verification
