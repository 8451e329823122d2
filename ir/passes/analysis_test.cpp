// Unit tests of the analyses passes share: UniformityAnalysis (uniformity.h)
// and MemoryRootAnalysis (address_space_inference.h). The passes built on
// them are tested through tesserac-opt in tests/conformance/passes/; these
// check the answers the passes do not print.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "ir/core/ir.h"
#include "ir/core/ir_text.h"
#include "ir/core/verifier.h"
#include "ir/passes/address_space_inference.h"
#include "ir/passes/uniformity.h"

namespace tessera::ir {
namespace {

struct CollectingConsumer : DiagnosticConsumer {
  std::vector<std::string> messages;
  void handle(const Diagnostic& d) override { messages.push_back(d.message); }
};

struct Parsed {
  SourceManager sources;
  CollectingConsumer consumer;
  DiagnosticEngine diags{sources, consumer};
  OwningModule module;
};

std::unique_ptr<Parsed> parse_valid(Context& ctx, const std::string& text) {
  auto p = std::make_unique<Parsed>();
  FileId f = p->sources.add_file("test.ir", text);
  p->module = parse_module(ctx, p->sources, f, p->diags);
  p->diags.flush();
  REQUIRE(p->consumer.messages.empty());
  REQUIRE(p->module);
  REQUIRE(verify(p->module.get()).empty());
  return p;
}

// The operation carrying the attribute `tag = "<tag>"` (the verifier keeps
// attributes it does not know, so tests can name operations this way).
Operation* tagged(Operation* module, std::string_view tag) {
  Operation* found = nullptr;
  module->walk([&](Operation* op) {
    if (op->string_attr("tag") == tag) found = op;
  });
  REQUIRE(found);
  return found;
}

bool has_root(const MemoryRootAnalysis& analysis, Value* v, Value* root) {
  const std::vector<Value*>& roots = analysis.roots(v);
  return std::find(roots.begin(), roots.end(), root) != roots.end();
}

TEST_CASE("memory roots follow views, branches, loops and calls") {
  Context ctx;
  auto p = parse_valid(ctx, R"(
func.func @k(%g: memref<64xf32, global>, %c: bool, %n: index) attributes {kernel} {
  %s = tile.alloc_shared {tag = "s"} : memref<64xf32, shared>
  %t = tile.alloc_shared {tag = "t"} : memref<64xf32, shared>
  %zero = arith.constant {value = 0 : index} : index
  %one = arith.constant {value = 1 : index} : index
  %view = tile.subview %s, %zero {sizes = [16], tag = "view"} : memref<16xf32, shared>
  %pick = scf.if %c {tag = "pick"} : memref<64xf32, shared> ({
    scf.yield %s
  }, {
    scf.yield %t
  })
  %carried = scf.for %zero, %n, %one, %s {tag = "loop"} : memref<64xf32, shared> ({
  ^bb0(%i: index, %cur: memref<64xf32, shared>):
    scf.yield %t
  })
  %w = scf.while %view {tag = "while"} : memref<16xf32, shared> ({
  ^bb1(%m: memref<16xf32, shared>):
    scf.condition %c, %m
  }, {
  ^bb2(%m2: memref<16xf32, shared>):
    scf.yield %m2
  })
  %x = func.call %w {callee = @first} : f32
  %gv = tile.subview %g, %zero {sizes = [8], tag = "global_view"} : memref<8xf32, global>
  func.return
}
func.func @k2() attributes {kernel} {
  %u = tile.alloc_shared {tag = "u"} : memref<16xf32, shared>
  %x = func.call %u {callee = @first} : f32
  func.return
}
func.func @first(%m: memref<16xf32, shared>) -> f32 {
  %zero = arith.constant {value = 0 : index} : index
  %v = tile.load %m, %zero : f32
  func.return %v
}
func.func @unused(%m: memref<16xf32, shared>) {
  func.return
}
)");
  Operation* module = p->module.get();
  MemoryRootAnalysis analysis(module);
  Value* s = tagged(module, "s")->result();
  Value* t = tagged(module, "t")->result();
  Value* u = tagged(module, "u")->result();

  // An allocation is its own root; a view's root is what it views.
  CHECK(analysis.roots(s) == std::vector<Value*>{s});
  CHECK(analysis.roots(tagged(module, "view")->result()) == std::vector<Value*>{s});

  // Either branch of an scf.if may be the result.
  Value* pick = tagged(module, "pick")->result();
  CHECK(analysis.roots(pick).size() == 2);
  CHECK(has_root(analysis, pick, s));
  CHECK(has_root(analysis, pick, t));

  // A loop-carried memref: the initial value or any iteration's yield.
  Operation* loop = tagged(module, "loop");
  for (Value* v : {loop->result(), loop->region(0).front().argument(1)}) {
    CHECK(analysis.roots(v).size() == 2);
    CHECK(has_root(analysis, v, s));
    CHECK(has_root(analysis, v, t));
  }

  // Through scf.while's condition region into its body and results.
  Operation* loop_while = tagged(module, "while");
  CHECK(analysis.roots(loop_while->result()) == std::vector<Value*>{s});
  CHECK(analysis.roots(loop_while->region(1).front().argument(0)) == std::vector<Value*>{s});

  // A helper's argument views whatever its callers pass, from every kernel.
  Operation* first = lookup_function(module, "first");
  Value* helper_arg = first->region(0).front().argument(0);
  CHECK(analysis.roots(helper_arg).size() == 2);
  CHECK(has_root(analysis, helper_arg, s));
  CHECK(has_root(analysis, helper_arg, u));
  CHECK(analysis.inferred_space(helper_arg) == MemorySpace::Shared);

  // A kernel argument is a root in the space the host gave it.
  Value* g = lookup_function(module, "k")->region(0).front().argument(0);
  CHECK(analysis.roots(tagged(module, "global_view")->result()) == std::vector<Value*>{g});
  CHECK(analysis.inferred_space(tagged(module, "global_view")->result()) == MemorySpace::Global);

  // Nothing reaches an uncalled helper's argument.
  Value* unused_arg = lookup_function(module, "unused")->region(0).front().argument(0);
  CHECK(analysis.roots(unused_arg).empty());
  CHECK(!analysis.inferred_space(unused_arg).has_value());
}

TEST_CASE("uniformity: values, the control an operation runs under, and the divergent parent") {
  Context ctx;
  auto p = parse_valid(ctx, R"(
func.func @k(%x: memref<?xf32, global>, %n: index) attributes {kernel} {
  %lane = tile.linear_id {tag = "lane"} : index
  %g = tile.group_id {axis = 0, tag = "group"} : index
  %w = tile.warp_id {tag = "warp"} : index
  %zero = arith.constant {value = 0 : index} : index
  %in = arith.cmpi %lane, %n {predicate = "slt"} : bool
  %first = arith.cmpi %w, %zero {predicate = "eq"} : bool
  scf.if %first {tag = "warp_if"} ({
    %c = arith.addi %g, %n {tag = "under_warp_if"} : index
    scf.if %in {tag = "lane_if"} ({
      tile.barrier {tag = "barrier"}
      scf.yield
    }, {})
    scf.yield
  }, {})
  func.return
}
func.func @helper(%v: index) -> index {
  %r = arith.addi %v, %v {tag = "helper_sum"} : index
  func.return %r
}
)");
  Operation* module = p->module.get();
  UniformityAnalysis kernel(lookup_function(module, "k"));
  CHECK(kernel.of(tagged(module, "lane")->result()) == Uniformity::Varying);
  CHECK(kernel.of(tagged(module, "group")->result()) == Uniformity::Uniform);
  CHECK(kernel.of(tagged(module, "warp")->result()) == Uniformity::WarpUniform);
  CHECK(kernel.is_uniform(lookup_function(module, "k")->region(0).front().argument(1)));

  // Computed from uniform operands, but under a branch each warp decides
  // for itself: the same within a warp only.
  Operation* under_warp_if = tagged(module, "under_warp_if");
  CHECK(kernel.of(under_warp_if->result()) == Uniformity::WarpUniform);
  CHECK(kernel.control(under_warp_if) == Uniformity::WarpUniform);

  Operation* warp_if = tagged(module, "warp_if");
  Operation* lane_if = tagged(module, "lane_if");
  Operation* barrier = tagged(module, "barrier");
  CHECK(kernel.decision(warp_if) == Uniformity::WarpUniform);
  CHECK(kernel.decision(lane_if) == Uniformity::Varying);
  CHECK(kernel.decision(barrier) == Uniformity::Uniform);  // decides nothing
  CHECK(kernel.control(barrier) == Uniformity::Varying);
  CHECK(kernel.control(warp_if) == Uniformity::Uniform);

  // The innermost branch worse than what an operation tolerates.
  CHECK(kernel.divergent_parent(barrier, Uniformity::Uniform) == lane_if);
  CHECK(kernel.divergent_parent(barrier, Uniformity::WarpUniform) == lane_if);
  CHECK(kernel.divergent_parent(under_warp_if, Uniformity::Uniform) == warp_if);
  CHECK(kernel.divergent_parent(under_warp_if, Uniformity::WarpUniform) == nullptr);

  // A helper's arguments come from callers the analysis does not see.
  UniformityAnalysis helper(lookup_function(module, "helper"));
  CHECK(helper.of(tagged(module, "helper_sum")->result()) == Uniformity::Varying);
}

}  // namespace
}  // namespace tessera::ir
