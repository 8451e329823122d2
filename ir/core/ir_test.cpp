#include <doctest/doctest.h>

#include <algorithm>
#include <tuple>

#include "support/diagnostics/internal_error.h"
#include "ir/core/builder.h"
#include "ir/core/graph_ops.h"
#include "ir/core/ir.h"
#include "ir/core/ir_text.h"
#include "ir/core/tile_attr_kinds.h"
#include "ir/core/register_tile_layout.h"
#include "ir/core/schedule_hints.h"
#include "ir/core/verifier.h"

namespace tessera::ir {
namespace {

// Collects diagnostics as "id: message" lines.
struct CollectingConsumer : DiagnosticConsumer {
  std::vector<std::string> lines;
  void handle(const Diagnostic& d) override {
    lines.push_back(std::string(diagnostic_info(d.kind).id) + ": " + d.message);
  }
};

struct Parsed {
  SourceManager sources;
  CollectingConsumer consumer;
  DiagnosticEngine diags{sources, consumer};
  OwningModule module;
};

std::unique_ptr<Parsed> parse_text(Context& ctx, const std::string& text) {
  auto p = std::make_unique<Parsed>();
  FileId f = p->sources.add_file("test.ir", text);
  p->module = parse_module(ctx, p->sources, f, p->diags);
  p->diags.flush();
  return p;
}

// Builds `func @f(%a: f32, %b: f32) -> f32 { return a * b + a }`.
Operation* build_mul_add(Context& ctx, Operation* module) {
  Builder b(ctx);
  Type f32 = ctx.f32_type();
  Type fn = ctx.function_type(std::vector<Type>{f32, f32}, std::vector<Type>{f32});
  b.set_insertion_point_to_end(&module->region(0).front());
  Operation* func = b.create(OpKind::Func, {}, {},
                             {{"function_type", ctx.type_attr(fn)}, {"sym_name", ctx.string_attr("f")}}, 1);
  Block* entry = func->region(0).add_block();
  Value* a = entry->add_argument(f32);
  Value* c = entry->add_argument(f32);
  b.set_insertion_point_to_end(entry);
  Value* product = b.create(OpKind::MulF, {a, c}, {f32})->result();
  Value* sum = b.create(OpKind::AddF, {product, a}, {f32})->result();
  b.create(OpKind::Return, {sum}, {});
  return func;
}

TEST_CASE("types, attributes and locations are interned") {
  Context ctx;
  int64_t shape[] = {4, kDynamic};
  CHECK(ctx.memref_type(shape, ScalarType::F32, MemorySpace::Global) ==
        ctx.memref_type(shape, ScalarType::F32, MemorySpace::Global));
  CHECK(ctx.memref_type(shape, ScalarType::F32, MemorySpace::Global).str() == "memref<4x?xf32, global>");
  CHECK(ctx.memref_type(shape, ScalarType::BF16, MemorySpace::Shared, 8, Swizzle::Xor).str() ==
        "memref<4x?xbf16, shared, pad 8, swizzle xor>");
  CHECK(ctx.tile_type(std::vector<int64_t>{16, 8}, ScalarType::F32, TileLayout::MmaAccumulator).str() ==
        "tile<16x8xf32, mma_acc>");
  CHECK(ctx.int_attr(3) == ctx.int_attr(3));
  CHECK(ctx.int_attr(3) != ctx.int_attr(3, ctx.i32_type()));
  CHECK(ctx.float_attr(1.0, ctx.f32_type()).str() == "1.0 : f32");
  CHECK(ctx.float_attr(0.1).str() == "0.1");
  Location a = ctx.file_location("k.tsr", 3, 5), b = ctx.file_location("k.tsr", 4, 1);
  Location fused = ctx.fused_location(std::vector<Location>{a, b, a});
  CHECK(fused.str() == "fused[\"k.tsr\":3:5, \"k.tsr\":4:1]");
  CHECK(ctx.fused_location(std::vector<Location>{a, Location()}) == a);
}

TEST_CASE("building, use-lists and replacing uses") {
  Context ctx;
  OwningModule module = create_module();
  Operation* func = build_mul_add(ctx, module.get());
  Block& entry = func->region(0).front();
  Value* a = entry.argument(0);
  CHECK(a->num_uses() == 2);
  Operation* mul = entry.front();
  CHECK(mul->is(OpKind::MulF));
  CHECK(mul->result()->has_one_use());
  // Replace a * b by b: the add now uses b, the multiply is dead.
  mul->result()->replace_all_uses_with(entry.argument(1));
  CHECK_FALSE(mul->result()->has_uses());
  CHECK(a->num_uses() == 2);  // the dead multiply still uses a
  mul->erase();
  CHECK(a->num_uses() == 1);
  CHECK(entry.size() == 2);
  CHECK(verify(module.get()).empty());
  CHECK(print_operation(module.get()) ==
        "module {\n"
        "  func.func @f(%arg0: f32, %arg1: f32) -> f32 {\n"
        "    %0 = arith.addf %arg1, %arg0 : f32\n"
        "    func.return %0\n"
        "  }\n"
        "}\n");
}

TEST_CASE("erasing an operation whose result is used is an internal error") {
  Context ctx;
  OwningModule module = create_module();
  Operation* func = build_mul_add(ctx, module.get());
  CHECK_THROWS_AS(func->region(0).front().front()->erase(), InternalError);
}

TEST_CASE("cloning a region remaps values inside it and keeps outer ones") {
  Context ctx;
  auto p = parse_text(ctx,
                      "func.func @g(%arg0: index, %arg1: f32) -> f32 {\n"
                      "  %0 = arith.constant {value = 0 : index} : index\n"
                      "  %1 = arith.constant {value = 1 : index} : index\n"
                      "  %2 = scf.for %0, %arg0, %1, %arg1 : f32 ({\n"
                      "  ^bb0(%3: index, %4: f32):\n"
                      "    %5 = arith.addf %4, %arg1 : f32\n"
                      "    scf.yield %5\n"
                      "  })\n"
                      "  func.return %2\n"
                      "}\n");
  REQUIRE(p->module);
  Operation* func = lookup_function(p->module.get(), "g");
  Block& entry = func->region(0).front();
  Operation* loop = entry.front()->next()->next();
  REQUIRE(loop->is(OpKind::For));
  Operation* copy = loop->clone();
  entry.insert_before(entry.back(), copy);
  CHECK(copy->region(0).front().front()->operand(1) == entry.argument(1));  // outer value kept
  CHECK(copy->region(0).front().front()->operand(0) == copy->region(0).front().argument(1));  // inner remapped
  CHECK(loop->result()->num_uses() == 1);
  CHECK_FALSE(copy->result()->has_uses());
  CHECK(verify(p->module.get()).empty());
  copy->erase();
  CHECK(verify(p->module.get()).empty());
}

TEST_CASE("erasing the functions no root reaches follows calls and symbol arrays") {
  Context ctx;
  auto p = parse_text(ctx,
                      "func.func @root() {\n"
                      "  func.call {callee = @helper}\n"
                      "  func.return\n"
                      "}\n"
                      "func.func @helper() {\n"
                      "  func.call {rules = [@rule, @missing]}\n"
                      "  func.return\n"
                      "}\n"
                      "func.func @rule() {\n"
                      "  func.return\n"
                      "}\n"
                      "func.func @unused() {\n"
                      "  func.call {callee = @rule}\n"
                      "  func.return\n"
                      "}\n");
  REQUIRE(p->module);
  erase_unreachable_functions(p->module.get(), [](Operation* f) { return f->symbol_name() == "root"; });
  std::vector<std::string> kept;
  for (Operation* f : module_functions(p->module.get())) kept.emplace_back(f->symbol_name());
  CHECK(kept == std::vector<std::string>{"root", "helper", "rule"});
}

TEST_CASE("the textual form round-trips, locations included") {
  Context ctx;
  std::string text =
      "module {\n"
      "  func.func @k(%arg0: memref<?xf32, global>, %arg1: f32) attributes {group_shape = [128], kernel} {\n"
      "    %0 = tile.linear_id : index loc(\"k.tsr\":3:9)\n"
      "    %1 = tile.dim %arg0 {axis = 0} : index loc(\"k.tsr\":4:8)\n"
      "    %2 = arith.cmpi %0, %1 {predicate = \"slt\"} : bool loc(\"k.tsr\":4:8)\n"
      "    scf.if %2 ({\n"
      "      %3 = tile.load %arg0, %0 : f32 loc(\"k.tsr\":5:16)\n"
      "      %4 = arith.mulf %3, %arg1 : f32 loc(fused[\"k.tsr\":5:16, \"k.tsr\":5:20])\n"
      "      tile.store %4, %arg0, %0 loc(\"k.tsr\":5:9)\n"
      "      scf.yield loc(\"k.tsr\":5:9)\n"
      "    }, {}) loc(\"k.tsr\":4:5)\n"
      "    func.return loc(\"k.tsr\":2:1)\n"
      "  } loc(\"k.tsr\":2:1)\n"
      "} loc(\"k.tsr\":1:1)\n";
  auto p = parse_text(ctx, text);
  REQUIRE(p->module);
  CHECK(p->consumer.lines.empty());
  CHECK(verify(p->module.get()).empty());
  PrintOptions with_locations{.locations = true};
  CHECK(print_operation(p->module.get(), with_locations) == text);
}

TEST_CASE("parse errors are diagnostics, never crashes") {
  Context ctx;
  CHECK(parse_text(ctx, "func.func @f() {\n  %0 = arith.nope : f32\n}\n")->consumer.lines ==
        std::vector<std::string>{"ir.unknown-operation: unknown operation 'arith.nope'"});
  CHECK(parse_text(ctx, "func.func @f() {\n  func.return %7\n}\n")->consumer.lines ==
        std::vector<std::string>{"ir.undefined-value: use of undefined value '%7'"});
  CHECK(parse_text(ctx, "func.func @f(%a: f32, %a: f32) {\n  func.return\n}\n")->consumer.lines ==
        std::vector<std::string>{"ir.redefined-value: redefinition of value '%a'"});
  CHECK(parse_text(ctx, "func.func @f(%a: memref<4xf32, heap>) {\n}\n")->consumer.lines.size() == 1);
  CHECK_FALSE(parse_text(ctx, "func.func @f(")->module);
}

TEST_CASE("the verifier checks scopes, terminators and operation rules") {
  Context ctx;
  auto p = parse_text(ctx,
                      "func.func @f(%arg0: f32, %arg1: i32) -> f32 {\n"
                      "  %0 = arith.addf %arg0, %arg1 : f32\n"
                      "  func.return %arg0\n"
                      "}\n");
  REQUIRE(p->module);
  auto errors = verify(p->module.get());
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message ==
        "operand #1 has type i32 but the result has type f32; operands and result must have one type");

  auto q = parse_text(ctx, "func.func @f() {\n  %0 = arith.constant {value = 1 : index} : index\n}\n");
  REQUIRE(q->module);
  errors = verify(q->module.get());
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message == "region #0 does not end with a terminator");
}

// The names of the operations of a block, in order.
std::vector<std::string> op_names(const Block& block) {
  std::vector<std::string> names;
  for (Operation* op : block) names.emplace_back(op->name());
  return names;
}

// The messages of the verifier's errors, in order.
std::vector<std::string> verify_messages(Operation* root) {
  std::vector<std::string> messages;
  for (auto& e : verify(root)) messages.push_back(std::string(e.op->name()) + ": " + e.message);
  return messages;
}

// A function `@name(inputs) -> results` with an entry block at the end of `module`.
Operation* add_function(Context& ctx, Operation* module, std::string_view name, std::vector<Type> inputs,
                        std::vector<Type> results) {
  Builder b(ctx);
  b.set_insertion_point_to_end(&module->region(0).front());
  Operation* func = b.create(OpKind::Func, {}, {},
                             {{"function_type", ctx.type_attr(ctx.function_type(inputs, results))},
                              {"sym_name", ctx.string_attr(name)}},
                             1);
  Block* entry = func->region(0).add_block();
  for (Type t : inputs) entry->add_argument(t);
  return func;
}

TEST_CASE("the builder inserts at the end, at the start, before and after an operation") {
  Context ctx;
  OwningModule module = create_module();
  Type f32 = ctx.f32_type();
  Operation* func = add_function(ctx, module.get(), "f", {f32}, {f32});
  Block* entry = &func->region(0).front();
  Value* x = entry->argument(0);
  Builder b(ctx);
  b.set_location(ctx.file_location("b.tsr", 7, 3));
  b.set_insertion_point_to_end(entry);
  Operation* ret = b.create(OpKind::Return, {x}, {});
  CHECK(b.insertion_block() == entry);
  CHECK(b.insertion_point() == nullptr);
  b.set_insertion_point(ret);  // before the return
  Value* two = b.constant_float(2.0, f32);
  Operation* mul = b.create(OpKind::MulF, {x, two}, {f32});
  b.set_insertion_point_to_start(entry);
  Value* one = b.constant_float(1.0, f32);
  b.set_insertion_point_after(mul);
  Operation* add = b.create(OpKind::AddF, {mul->result(), one}, {f32});
  ret->set_operand(0, add->result());
  CHECK(op_names(*entry) ==
        std::vector<std::string>{"arith.constant", "arith.constant", "arith.mulf", "arith.addf", "func.return"});
  CHECK(add->loc() == ctx.file_location("b.tsr", 7, 3));
  CHECK(add->block() == entry);
  CHECK(add->parent_op() == func);
  CHECK(add->enclosing(OpKind::Module) == module.get());
  CHECK(func->is_proper_ancestor_of(add));
  CHECK_FALSE(add->is_proper_ancestor_of(func));
  CHECK(mul->is_before_in_block(add));
  CHECK_FALSE(add->is_before_in_block(mul));
  CHECK(x->num_uses() == 1);
  CHECK(x->parent_block() == entry);
  CHECK(mul->result()->parent_block() == entry);
  CHECK(verify(module.get()).empty());
  CHECK(print_operation(module.get()) ==
        "module {\n"
        "  func.func @f(%arg0: f32) -> f32 {\n"
        "    %0 = arith.constant {value = 1.0 : f32} : f32\n"
        "    %1 = arith.constant {value = 2.0 : f32} : f32\n"
        "    %2 = arith.mulf %arg0, %1 : f32\n"
        "    %3 = arith.addf %2, %0 : f32\n"
        "    func.return %3\n"
        "  }\n"
        "}\n");
  CHECK(lookup_function(module.get(), "f") == func);
  CHECK(lookup_function(module.get(), "g") == nullptr);
  CHECK(module_functions(module.get()) == std::vector<Operation*>{func});
}

TEST_CASE("a builder without an insertion point creates detached operations") {
  Context ctx;
  Builder b(ctx);
  Operation* op = b.create(OpKind::Barrier, {}, {});
  CHECK(op->block() == nullptr);
  CHECK(op->parent_op() == nullptr);
  Operation::destroy(op);
}

TEST_CASE("replace_all_uses_with and replace_uses_if move uses between values") {
  Context ctx;
  auto p = parse_text(ctx,
                      "func.func @f(%a: f32, %b: f32, %c: bool) -> f32 {\n"
                      "  %0 = arith.addf %a, %a : f32\n"
                      "  %1 = scf.if %c : f32 ({\n"
                      "    %2 = arith.mulf %a, %0 : f32\n"
                      "    scf.yield %2\n"
                      "  }, {\n"
                      "    scf.yield %a\n"
                      "  })\n"
                      "  func.return %1\n"
                      "}\n");
  REQUIRE(p->module);
  Operation* func = lookup_function(p->module.get(), "f");
  Block& entry = func->region(0).front();
  Value* a = entry.argument(0);
  Value* b = entry.argument(1);
  Operation* if_op = entry.front()->next();
  REQUIRE(if_op->is(OpKind::If));
  CHECK(a->num_uses() == 4);
  CHECK(a->uses().size() == 4);
  for (OpOperand* use : a->uses()) CHECK(use->get() == a);

  // Only the uses inside the then-region.
  a->replace_uses_if(b, [&](OpOperand& use) { return if_op->region(0).is_ancestor_of(use.owner()); });
  CHECK(a->num_uses() == 3);
  CHECK(b->num_uses() == 1);
  Operation* mul = if_op->region(0).front().front();
  CHECK(mul->operand(0) == b);
  CHECK(mul->operand_slot(0).owner() == mul);
  CHECK(mul->operand_slot(0).index() == 0);

  // Replacing a value with itself changes nothing.
  a->replace_all_uses_with(a);
  CHECK(a->num_uses() == 3);

  a->replace_all_uses_with(b);
  CHECK_FALSE(a->has_uses());
  CHECK(b->num_uses() == 4);
  CHECK(entry.front()->operand(0) == b);
  CHECK(entry.front()->operand(1) == b);
  CHECK(if_op->region(1).front().front()->operand(0) == b);
  // The argument is unused now and can go; %b becomes argument #0.
  // (The signature is not changed, so the function no longer verifies.)
  entry.erase_argument(0);
  CHECK(b->index() == 0);
  CHECK(entry.num_arguments() == 2);
  CHECK(verify_messages(p->module.get()) ==
        std::vector<std::string>{"func.func: the entry block takes arguments (f32, bool), expected (f32, f32, bool)"});
}

TEST_CASE("operands can be set, appended and erased; use-lists follow") {
  Context ctx;
  OwningModule module = create_module();
  Type f32 = ctx.f32_type();
  Operation* func = add_function(ctx, module.get(), "f", {f32, f32}, {});
  Block& entry = func->region(0).front();
  Value* x = entry.argument(0);
  Value* y = entry.argument(1);
  Builder b(ctx);
  b.set_insertion_point_to_end(&entry);
  Operation* print = b.create(OpKind::GraphPrint, {x}, {});
  b.create(OpKind::Return, {}, {});
  print->append_operand(y);
  print->append_operand(x);
  CHECK(x->num_uses() == 2);
  CHECK(print->operand_slot(2).index() == 2);
  print->erase_operand(0);
  CHECK(x->num_uses() == 1);
  CHECK(print->operands() == std::vector<Value*>{y, x});
  CHECK(print->operand_slot(1).index() == 1);
  std::vector<Value*> only_y{y};
  print->set_operands(only_y);
  CHECK_FALSE(x->has_uses());
  CHECK(y->has_one_use());
  CHECK(y->first_use()->owner() == print);
  CHECK(y->first_use()->next_use() == nullptr);
  CHECK(verify(module.get()).empty());
}

TEST_CASE("erasing operations: unused ones, used ones after their uses are gone, nested regions") {
  Context ctx;
  auto p = parse_text(ctx,
                      "func.func @f(%a: f32, %c: bool) -> f32 {\n"
                      "  %0 = arith.addf %a, %a : f32\n"
                      "  %1 = arith.mulf %0, %a : f32\n"
                      "  scf.if %c ({\n"
                      "    %2 = arith.subf %a, %0 : f32\n"
                      "    scf.yield\n"
                      "  }, {})\n"
                      "  func.return %a\n"
                      "}\n");
  REQUIRE(p->module);
  Block& entry = lookup_function(p->module.get(), "f")->region(0).front();
  Value* a = entry.argument(0);
  Operation* add = entry.front();
  Operation* mul = add->next();
  Operation* if_op = mul->next();
  CHECK(a->num_uses() == 5);
  CHECK(add->result()->num_uses() == 2);

  // A used result: erasing is an internal error and changes nothing.
  CHECK_THROWS_AS(add->erase(), InternalError);
  CHECK(entry.size() == 4);

  // Erasing an unused operation drops its uses of other values.
  mul->erase();
  CHECK(add->result()->has_one_use());
  CHECK(a->num_uses() == 4);

  // Erasing an operation with regions drops the uses made inside them.
  if_op->erase();
  CHECK_FALSE(add->result()->has_uses());
  CHECK(a->num_uses() == 3);
  add->erase();
  CHECK(a->has_one_use());
  CHECK(op_names(entry) == std::vector<std::string>{"func.return"});
  CHECK(verify(p->module.get()).empty());
}

TEST_CASE("a post-order walk may erase the operation it visits (dead code removal)") {
  Context ctx;
  auto p = parse_text(ctx,
                      "func.func @f(%a: f32, %c: bool) -> f32 {\n"
                      "  %0 = arith.addf %a, %a : f32\n"
                      "  %1 = arith.mulf %0, %0 : f32\n"
                      "  scf.if %c ({\n"
                      "    %2 = arith.subf %1, %a : f32\n"
                      "    %3 = arith.negf %2 : f32\n"
                      "    scf.yield\n"
                      "  }, {})\n"
                      "  func.return %a\n"
                      "}\n");
  REQUIRE(p->module);
  // Repeat until nothing changes. Post-order visits a definition before its users in
  // the same block (and before the regions of later operations), so each sweep
  // erases only the last dead operation of the chain add -> mul -> sub -> neg:
  // four sweeps erase, a fifth finds nothing.
  bool changed = true;
  int sweeps = 0;
  while (changed) {
    changed = false;
    ++sweeps;
    p->module->walk([&](Operation* op) {
      if (op->has_trait(trait::Pure) && !op->has_trait(trait::Terminator) && op->num_results() > 0) {
        for (Value* r : op->results())
          if (r->has_uses()) return;
        op->erase();
        changed = true;
      }
    });
  }
  CHECK(sweeps == 5);
  CHECK(print_operation(p->module.get()) ==
        "module {\n"
        "  func.func @f(%arg0: f32, %arg1: bool) -> f32 {\n"
        "    scf.if %arg1 ({\n"
        "      scf.yield\n"
        "    }, {})\n"
        "    func.return %arg0\n"
        "  }\n"
        "}\n");
  CHECK(verify(p->module.get()).empty());
}

TEST_CASE("cloning an operation with nested regions and block arguments") {
  Context ctx;
  auto p = parse_text(ctx,
                      "func.func @g(%n: index, %x: f32, %c: bool) -> f32 {\n"
                      "  %c0 = arith.constant {value = 0 : index} : index\n"
                      "  %c1 = arith.constant {value = 1 : index} : index\n"
                      "  %r = scf.if %c : f32 ({\n"
                      "    %s = scf.for %c0, %n, %c1, %x : f32 ({\n"
                      "    ^bb0(%i: index, %acc: f32):\n"
                      "      %t = arith.mulf %acc, %x : f32\n"
                      "      %w = scf.while %t : f32 ({\n"
                      "      ^bb1(%u: f32):\n"
                      "        %lt = arith.cmpf %u, %acc {predicate = \"olt\"} : bool\n"
                      "        scf.condition %lt, %u\n"
                      "      }, {\n"
                      "      ^bb2(%v: f32):\n"
                      "        %d = arith.addf %v, %t : f32\n"
                      "        scf.yield %d\n"
                      "      })\n"
                      "      scf.yield %w\n"
                      "    })\n"
                      "    scf.yield %s\n"
                      "  }, {\n"
                      "    scf.yield %x\n"
                      "  })\n"
                      "  func.return %r\n"
                      "}\n");
  REQUIRE(p->module);
  Operation* func = lookup_function(p->module.get(), "g");
  Block& entry = func->region(0).front();
  Value* x = entry.argument(1);
  Operation* if_op = entry.back()->prev();
  REQUIRE(if_op->is(OpKind::If));
  std::string original = print_operation(p->module.get());

  // Clone with the outer %x mapped to a new constant: the clone uses it at every
  // depth, the original is untouched.
  Builder b(ctx);
  b.set_insertion_point(if_op);
  Value* three = b.constant_float(3.0, ctx.f32_type());
  IRMapping mapping;
  mapping.map(x, three);
  Operation* copy = if_op->clone(mapping);
  CHECK(copy->block() == nullptr);
  b.set_insertion_point(entry.back());
  b.insert(copy);

  CHECK(mapping.lookup_or_self(if_op->result()) == copy->result());
  CHECK(mapping.lookup_or_self(entry.argument(0)) == entry.argument(0));  // not cloned: itself
  CHECK_FALSE(mapping.contains(entry.argument(0)));
  Operation* loop = if_op->region(0).front().front();
  Operation* loop_copy = copy->region(0).front().front();
  REQUIRE(loop_copy->is(OpKind::For));
  CHECK(loop_copy != loop);
  CHECK(loop_copy->operand(0) == loop->operand(0));  // outer %c0: kept
  CHECK(loop_copy->operand(3) == three);             // outer %x: mapped
  Block& body = loop->region(0).front();
  Block& body_copy = loop_copy->region(0).front();
  REQUIRE(body_copy.num_arguments() == 2);
  CHECK(body_copy.argument(1)->type() == body.argument(1)->type());
  CHECK(mapping.lookup_or_self(body.argument(1)) == body_copy.argument(1));
  Operation* mul_copy = body_copy.front();
  CHECK(mul_copy->operand(0) == body_copy.argument(1));
  CHECK(mul_copy->operand(1) == three);
  // Two levels further down, in the while's regions.
  Operation* while_copy = mul_copy->next();
  REQUIRE(while_copy->is(OpKind::While));
  Operation* cmp_copy = while_copy->region(0).front().front();
  CHECK(cmp_copy->operand(0) == while_copy->region(0).front().argument(0));
  CHECK(cmp_copy->operand(1) == body_copy.argument(1));
  Operation* add_copy = while_copy->region(1).front().front();
  CHECK(add_copy->operand(1) == mul_copy->result());
  CHECK(add_copy->attributes() == body.front()->next()->region(1).front().front()->attributes());
  CHECK(x->num_uses() == 3);  // the original's uses only

  // Both verify; the original prints as before apart from the new operations.
  CHECK(verify(p->module.get()).empty());
  copy->erase();
  entry.front()->next()->next()->erase();  // the constant 3.0
  CHECK(print_operation(p->module.get()) == original);
}

TEST_CASE("cloning a function and renaming it gives an independent copy") {
  Context ctx;
  OwningModule module = create_module();
  Operation* f = build_mul_add(ctx, module.get());
  Operation* g = f->clone();
  g->set_attr("sym_name", ctx.string_attr("g"));
  module->region(0).front().push_back(g);
  CHECK(module_functions(module.get()) == std::vector<Operation*>{f, g});
  CHECK(g->region(0).front().argument(0) != f->region(0).front().argument(0));
  CHECK(f->region(0).front().argument(0)->num_uses() == 2);
  CHECK(g->region(0).front().argument(0)->num_uses() == 2);
  CHECK(verify(module.get()).empty());
  // Without the rename the module has two functions named @f.
  Operation* h = f->clone();
  module->region(0).front().push_back(h);
  CHECK(verify_messages(module.get()) == std::vector<std::string>{"func.func: redefines function '@f'"});
}

TEST_CASE("moving operations within a block and between blocks") {
  Context ctx;
  auto p = parse_text(ctx,
                      "func.func @f(%a: f32, %c: bool) -> f32 {\n"
                      "  %0 = arith.addf %a, %a : f32\n"
                      "  %1 = arith.mulf %a, %a : f32\n"
                      "  scf.if %c ({\n"
                      "    scf.yield\n"
                      "  }, {})\n"
                      "  func.return %0\n"
                      "}\n");
  REQUIRE(p->module);
  Block& entry = lookup_function(p->module.get(), "f")->region(0).front();
  Operation* add = entry.front();
  Operation* mul = add->next();
  Operation* if_op = mul->next();
  Block& then_block = if_op->region(0).front();

  mul->move_before(add);
  CHECK(op_names(entry) == std::vector<std::string>{"arith.mulf", "arith.addf", "scf.if", "func.return"});
  mul->move_after(if_op);
  CHECK(op_names(entry) == std::vector<std::string>{"arith.addf", "scf.if", "arith.mulf", "func.return"});

  // Into the nested block, before its terminator: still valid (%a is visible).
  mul->move_before(then_block.back());
  CHECK(mul->block() == &then_block);
  CHECK(mul->parent_op() == if_op);
  CHECK(op_names(then_block) == std::vector<std::string>{"arith.mulf", "scf.yield"});
  CHECK(verify(p->module.get()).empty());

  // Out again, by hand: unlink, then insert at the front.
  mul->remove_from_block();
  CHECK(mul->block() == nullptr);
  CHECK(then_block.size() == 1);
  entry.push_front(mul);
  CHECK(entry.front() == mul);
  CHECK(verify(p->module.get()).empty());

  // Moving a definition after its use breaks dominance; the verifier says so.
  add->move_after(entry.back());
  CHECK(verify_messages(p->module.get()) ==
        std::vector<std::string>{"func.return: is a terminator but is not the last operation of its block",
                                 "func.func: region #0 does not end with a terminator",
                                 "func.return: operand #0 is used before it is defined"});
  add->move_before(if_op);
  CHECK(verify(p->module.get()).empty());
  // Inserting an operation that is already in a block is an internal error.
  CHECK_THROWS_AS(then_block.push_back(add), InternalError);
}

TEST_CASE("walks visit operations in pre-order and post-order") {
  Context ctx;
  auto p = parse_text(ctx,
                      "func.func @f(%c: bool) {\n"
                      "  %0 = tile.linear_id : index\n"
                      "  scf.if %c ({\n"
                      "    tile.barrier\n"
                      "    scf.yield\n"
                      "  }, {\n"
                      "    %1 = tile.lane_id : index\n"
                      "    scf.yield\n"
                      "  })\n"
                      "  func.return\n"
                      "}\n"
                      "func.func @g() {\n"
                      "  func.return\n"
                      "}\n");
  REQUIRE(p->module);
  std::vector<std::string> pre, post;
  p->module->walk([&](Operation* op) { pre.emplace_back(op->name()); }, WalkOrder::PreOrder);
  p->module->walk([&](Operation* op) { post.emplace_back(op->name()); });
  CHECK(pre == std::vector<std::string>{"module", "func.func", "tile.linear_id", "scf.if", "tile.barrier",
                                        "scf.yield", "tile.lane_id", "scf.yield", "func.return", "func.func",
                                        "func.return"});
  CHECK(post == std::vector<std::string>{"tile.linear_id", "tile.barrier", "scf.yield", "tile.lane_id", "scf.yield",
                                         "scf.if", "func.return", "func.func", "func.return", "func.func", "module"});
}

TEST_CASE("the verifier on built IR: rules the text form cannot express") {
  Context ctx;
  Type f32 = ctx.f32_type();
  Type index = ctx.index_type();

  SUBCASE("a null operand") {
    OwningModule module = create_module();
    Operation* f = add_function(ctx, module.get(), "f", {f32}, {});
    Builder b(ctx);
    b.set_insertion_point_to_end(&f->region(0).front());
    Operation* neg = b.create(OpKind::NegF, {f->region(0).front().argument(0)}, {f32});
    b.create(OpKind::Return, {}, {});
    neg->set_operand(0, nullptr);
    CHECK(verify_messages(module.get()) == std::vector<std::string>{"arith.negf: operand #0 is null"});
  }
  SUBCASE("a value of a detached block") {
    OwningModule module = create_module();
    Operation* f = add_function(ctx, module.get(), "f", {}, {});
    Block detached;
    Value* stray = detached.add_argument(f32);
    Builder b(ctx);
    b.set_insertion_point_to_end(&f->region(0).front());
    Operation* neg = b.create(OpKind::NegF, {stray}, {f32});
    b.create(OpKind::Return, {}, {});
    CHECK(verify_messages(module.get()) == std::vector<std::string>{"arith.negf: operand #0 is not defined"});
    neg->set_operand(0, nullptr);  // before `detached` goes away
  }
  SUBCASE("a function using another function's value (isolated from above)") {
    OwningModule module = create_module();
    Operation* f = add_function(ctx, module.get(), "f", {f32}, {});
    Operation* g = add_function(ctx, module.get(), "g", {}, {});
    Builder b(ctx);
    b.set_insertion_point_to_end(&f->region(0).front());
    b.create(OpKind::Return, {}, {});
    b.set_insertion_point_to_end(&g->region(0).front());
    b.create(OpKind::NegF, {f->region(0).front().argument(0)}, {f32});
    b.create(OpKind::Return, {}, {});
    CHECK(verify_messages(module.get()) ==
          std::vector<std::string>{"arith.negf: operand #0 is defined outside the scope where it is used"});
  }
  SUBCASE("entry block arguments that differ from the signature") {
    OwningModule module = create_module();
    Operation* f = add_function(ctx, module.get(), "f", {f32, index}, {});
    f->region(0).front().erase_argument(1);
    f->region(0).front().add_argument(f32);
    Builder b(ctx);
    b.set_insertion_point_to_end(&f->region(0).front());
    b.create(OpKind::Return, {}, {});
    CHECK(verify_messages(module.get()) ==
          std::vector<std::string>{"func.func: the entry block takes arguments (f32, f32), expected (f32, index)"});
  }
  SUBCASE("a function without a name or signature, and its return and callers") {
    OwningModule module = create_module();
    Operation* f = add_function(ctx, module.get(), "f", {}, {});
    Operation* g = add_function(ctx, module.get(), "g", {}, {});
    Builder b(ctx);
    b.set_insertion_point_to_end(&f->region(0).front());
    b.create(OpKind::Return, {}, {});
    b.set_insertion_point_to_end(&g->region(0).front());
    b.create(OpKind::Call, {}, {}, {{"callee", ctx.symbol_attr("f")}});
    b.create(OpKind::Return, {}, {});
    CHECK(verify(module.get()).empty());
    f->remove_attr("function_type");  // the return and the call must not crash
    CHECK(verify_messages(module.get()) == std::vector<std::string>{"func.func: requires attribute 'function_type'"});
    f->set_attr("function_type", ctx.type_attr(f32));
    CHECK(verify_messages(module.get()) ==
          std::vector<std::string>{"func.func: function_type must be a function type"});
    f->set_attr("function_type", ctx.string_attr("() -> ()"));
    CHECK(verify_messages(module.get()) ==
          std::vector<std::string>{"func.func: attribute 'function_type' has the wrong kind"});
    f->set_attr("function_type", ctx.type_attr(ctx.function_type({}, {})));
    f->remove_attr("sym_name");
    CHECK(verify_messages(module.get()) == std::vector<std::string>{"func.func: requires attribute 'sym_name'",
                                                                    "func.call: calls unknown function '@f'"});
  }
  SUBCASE("a module holds only functions") {
    OwningModule module = create_module();
    Builder b(ctx);
    b.set_insertion_point_to_end(&module->region(0).front());
    b.create(OpKind::Barrier, {}, {});
    CHECK(verify_messages(module.get()) ==
          std::vector<std::string>{"tile.barrier: only functions may appear at module level"});
  }
  SUBCASE("a region using the result of its own operation") {
    OwningModule module = create_module();
    Operation* f = add_function(ctx, module.get(), "f", {ctx.bool_type()}, {});
    Builder b(ctx);
    b.set_insertion_point_to_end(&f->region(0).front());
    Operation* if_op = b.create(OpKind::If, {f->region(0).front().argument(0)}, {f32}, {}, 2);
    b.create(OpKind::Return, {}, {});
    for (unsigned r = 0; r < 2; ++r) {
      b.set_insertion_point_to_end(if_op->region(r).add_block());
      b.create(OpKind::Yield, {if_op->result()}, {});
    }
    std::string message =
        "scf.yield: operand #0 is a result of the enclosing 'scf.if'; an operation's regions cannot use its results";
    CHECK(verify_messages(module.get()) == std::vector<std::string>{message, message});
    if_op->result()->replace_all_uses_with(nullptr);
  }
}

TEST_CASE("every operation kind has a unique name that maps back to it") {
  for (size_t i = 0; i < op_kind_count(); ++i) {
    auto kind = static_cast<OpKind>(i);
    CHECK(op_kind_by_name(op_kind_name(kind)) == kind);
  }
}

}  // namespace
}  // namespace tessera::ir

namespace tessera::ir {
namespace {

TEST_CASE("the mma accumulator layout covers every element of a tile exactly once") {
  for (auto [rows, columns, lanes] : {std::tuple{64, 64, 128}, {16, 8, 32}, {128, 64, 256}, {32, 128, 64}, {16, 64, 128}}) {
    CAPTURE(rows);
    CAPTURE(columns);
    CAPTURE(lanes);
    auto tiling = mma_accumulator_tiling(rows, columns, lanes);
    REQUIRE(tiling);
    CHECK(tiling->warps_m * tiling->warps_n * kWarpLanes == lanes);
    int64_t share = rows * columns / lanes;
    CHECK(tiling->tiles_m * tiling->tiles_n * 4 == share);
    std::vector<int> seen(static_cast<size_t>(rows * columns), 0);
    for (int64_t lane = 0; lane < lanes; ++lane)
      for (int64_t j = 0; j < share; ++j) {
        TilePosition p = mma_accumulator_position(*tiling, lane, j);
        REQUIRE(p.row < rows);
        REQUIRE(p.column < columns);
        ++seen[static_cast<size_t>(p.row * columns + p.column)];
      }
    CHECK(std::count(seen.begin(), seen.end(), 1) == rows * columns);
  }
}

TEST_CASE("the mma accumulator layout is PTX's m16n8k16 C fragment within a block") {
  MmaTiling one{1, 1, 1, 1};
  // PTX ISA: row = groupID (+8 for c2, c3), col = 2 * threadID_in_group + (i & 1).
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t i = 0; i < 4; ++i) {
      TilePosition p = mma_accumulator_position(one, lane, i);
      CHECK(p.row == (lane >> 2) + (i >= 2 ? 8 : 0));
      CHECK(p.column == 2 * (lane % 4) + (i & 1));
    }
  // 64 x 64 over 4 warps: one warpgroup, warps stacked along M (wgmma's
  // m64n64), each warp 1 x 8 blocks.
  auto t = mma_accumulator_tiling(64, 64, 128);
  REQUIRE(t);
  CHECK(t->warps_m == 4);
  CHECK(t->warps_n == 1);
  CHECK(t->tiles_m == 1);
  CHECK(t->tiles_n == 8);
  TilePosition p = mma_accumulator_position(*t, 3 * 32 + 5, 4 * 5 + 3);  // warp 3, block (0, 5), c3
  CHECK(p.row == 48 + 1 + 8);
  CHECK(p.column == 40 + 2 + 1);
  // 256 x 128 over 8 warps: a 4 x 2 grid (two warpgroups side by side), 4 x 8
  // blocks each; block rows strided over the warps: warp 5 (row 1, column 1)
  // has block rows 1, 5, 9, 13.
  auto u = mma_accumulator_tiling(256, 128, 256);
  REQUIRE(u);
  CHECK(u->warps_m == 4);
  CHECK(u->warps_n == 2);
  CHECK(u->tiles_m == 4);
  CHECK(u->tiles_n == 8);
  p = mma_accumulator_position(*u, 5 * 32 + 0, 8 * 4);  // warp 5, its block (1, 0), c0
  CHECK(p.row == 5 * 16);
  CHECK(p.column == 64);
  // At most 64 columns: warpgroups span the width (wgmma reads B in place),
  // even where a 4 x 2 grid would load as few fragments.
  auto w = mma_accumulator_tiling(128, 32, 256);
  REQUIRE(w);
  CHECK(w->warps_m == 8);
  CHECK(w->warps_n == 1);
  // Without a wgmma-compatible grid the cheapest, fewer warp rows on a tie:
  // 32 x 64 over 4 warps, 2 x 2 blocks per warp.
  auto v = mma_accumulator_tiling(32, 64, 128);
  REQUIRE(v);
  CHECK(v->warps_m == 1);
  CHECK(v->warps_n == 4);
}

TEST_CASE("shapes that do not split into whole blocks over whole warps have no mma layout") {
  CHECK_FALSE(mma_accumulator_tiling(64, 64, 100));  // not whole warps
  CHECK_FALSE(mma_accumulator_tiling(24, 64, 128));  // rows not a multiple of 16
  CHECK_FALSE(mma_accumulator_tiling(64, 12, 128));  // columns not a multiple of 8
  CHECK_FALSE(mma_accumulator_tiling(16, 8, 64));    // one block, two warps
}

TEST_CASE("the tile attribute tables name each enumerator once, in .def order") {
  CHECK(parse_attr_kind<ShuffleMode>(kShuffleModeNames, "down") == ShuffleMode::Down);
  CHECK(parse_attr_kind<ShuffleMode>(kShuffleModeNames, "idx") == ShuffleMode::Idx);
  CHECK_FALSE(parse_attr_kind<ShuffleMode>(kShuffleModeNames, "rotate").has_value());
  CHECK(parse_attr_kind<WarpReduceKind>(kWarpReduceKindNames, "min") == WarpReduceKind::Min);
  CHECK(parse_attr_kind<AtomicKind>(kAtomicKindNames, "exch") == AtomicKind::Exch);
  CHECK(atomic_integers_only(AtomicKind::Xor));
  CHECK_FALSE(atomic_integers_only(AtomicKind::Add));
  for (size_t i = 0; i < std::size(kAtomicKindNames); ++i)
    CHECK(parse_attr_kind<AtomicKind>(kAtomicKindNames, kAtomicKindNames[i]) == static_cast<AtomicKind>(i));
}

TEST_CASE("a tile attribute outside its table is an internal error after verification") {
  Context ctx;
  OwningModule module = create_module();
  Operation* func = build_mul_add(ctx, module.get());
  Operation* add = func->region(0).front().front();
  add->set_attr("mode", ctx.string_attr("rotate"));
  CHECK_THROWS_AS(shuffle_mode(*add), InternalError);
  add->set_attr("mode", ctx.string_attr("xor"));
  CHECK(shuffle_mode(*add) == ShuffleMode::Xor);
}

TEST_CASE("rounding modes, kernel strategies and reduce kinds: names and enums round-trip") {
  for (size_t i = 0; i < std::size(kRoundingModeNames); ++i) {
    auto mode = static_cast<RoundingMode>(i);
    CHECK(parse_attr_kind<RoundingMode>(kRoundingModeNames, rounding_mode_name(mode)) == mode);
  }
  CHECK(rounding_mode_name(RoundingMode::NearestEven) == "nearest_even");
  CHECK(rounding_mode_name(RoundingMode::Stochastic) == "stochastic");
  CHECK_FALSE(parse_attr_kind<RoundingMode>(kRoundingModeNames, "nearest").has_value());
  for (size_t i = 0; i < std::size(kKernelStrategyNames); ++i) {
    auto strategy = static_cast<KernelStrategy>(i);
    CHECK(parse_attr_kind<KernelStrategy>(kKernelStrategyNames, kernel_strategy_name(strategy)) == strategy);
  }
  CHECK(kernel_strategy_name(KernelStrategy::Attention) == "attention");
  for (size_t i = 0; i < reduce_kind_names().size(); ++i) {
    auto kind = static_cast<ReduceKind>(i);
    CHECK(reduce_kind_by_name(reduce_kind_name(kind)) == kind);
  }
  CHECK(reduce_kind_name(ReduceKind::Prod) == "prod");
}

TEST_CASE("schedule hints: one table for sema's directives and the IR's attributes") {
  REQUIRE(schedule_hint_names().size() == std::size(kScheduleHints));
  for (ScheduleHint hint : kScheduleHints) CHECK(schedule_hint_by_name(schedule_hint_name(hint)) == hint);
  CHECK(schedule_hint_name(ScheduleHint::SharedPadding) == "shared_padding");
  CHECK_FALSE(schedule_hint_by_name("prefetch").has_value());
  CHECK(schedule_hint_applies(ScheduleHint::Vectorize, OpKind::GraphCast));
  CHECK_FALSE(schedule_hint_applies(ScheduleHint::Vectorize, OpKind::GraphMatmul));
  CHECK(schedule_hint_applies(ScheduleHint::Lanes, OpKind::GraphSoftmax));
  CHECK(schedule_hint_applies(ScheduleHint::Lanes, OpKind::GraphReduce));
  CHECK_FALSE(schedule_hint_applies(ScheduleHint::Lanes, OpKind::GraphElementwise));
  CHECK(schedule_hint_applies(ScheduleHint::Tile, OpKind::GraphAttention));
  CHECK_FALSE(schedule_hint_applies(ScheduleHint::Stages, OpKind::GraphElementwise));
}

TEST_CASE("an absent rounding is nearest_even; an unknown one is no mode, and an internal error after verification") {
  Context ctx;
  OwningModule module = create_module();
  Operation* func = build_mul_add(ctx, module.get());
  Operation* add = func->region(0).front().front();
  CHECK(rounding_mode(*add) == RoundingMode::NearestEven);
  CHECK(parse_rounding_mode(*add) == RoundingMode::NearestEven);
  add->set_attr("rounding", ctx.string_attr("down"));
  CHECK(rounding_mode(*add) == RoundingMode::Down);
  add->set_attr("rounding", ctx.string_attr("sideways"));
  CHECK_FALSE(parse_rounding_mode(*add).has_value());
  CHECK_THROWS_AS(rounding_mode(*add), InternalError);
}

}  // namespace
}  // namespace tessera::ir
