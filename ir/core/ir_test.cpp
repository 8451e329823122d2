#include <doctest/doctest.h>

#include "frontend/diagnostics/internal_error.h"
#include "ir/core/builder.h"
#include "ir/core/ir.h"
#include "ir/core/ir_text.h"
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

TEST_CASE("every operation kind has a unique name that maps back to it") {
  for (size_t i = 0; i < op_kind_count(); ++i) {
    auto kind = static_cast<OpKind>(i);
    CHECK(op_kind_by_name(op_kind_name(kind)) == kind);
  }
}

}  // namespace
}  // namespace tessera::ir
