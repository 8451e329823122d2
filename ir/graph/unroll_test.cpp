// Unit tests of unroll_loop (unroll.h): what autodiff's loop unrolling
// leaves, and the reasons it gives for loops it does not unroll. The pass
// is tested through tesserac-opt in tests/conformance/passes/autodiff/.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "ir/core/ir.h"
#include "ir/core/ir_text.h"
#include "ir/core/verifier.h"
#include "ir/graph/unroll.h"

namespace tessera::ir {
namespace {

struct NoDiagnostics : DiagnosticConsumer {
  int count = 0;
  void handle(const Diagnostic&) override { ++count; }
};

struct Parsed {
  SourceManager sources;
  NoDiagnostics consumer;
  DiagnosticEngine diags{sources, consumer};
  OwningModule module;
};

std::unique_ptr<Parsed> parse(Context& ctx, const std::string& text) {
  auto p = std::make_unique<Parsed>();
  FileId f = p->sources.add_file("test.ir", text);
  p->module = parse_module(ctx, p->sources, f, p->diags);
  p->diags.flush();
  REQUIRE(p->consumer.count == 0);
  REQUIRE(p->module);
  REQUIRE(verify(p->module.get()).empty());
  return p;
}

Operation* first_loop(Operation* module) {
  Operation* loop = nullptr;
  module->walk([&](Operation* op) {
    if (!loop && op->is(OpKind::For)) loop = op;
  }, WalkOrder::PreOrder);
  return loop;
}

int count(Operation* module, OpKind kind) {
  int n = 0;
  module->walk([&](Operation* op) { n += op->is(kind); });
  return n;
}

std::string loop_function(const std::string& lb, const std::string& ub, const std::string& step) {
  return "func.func @f(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {\n"
         "  %lb = " + lb + "\n  %ub = " + ub + "\n  %st = " + step + "\n"
         "  %h = scf.for %lb, %ub, %st, %x : tensor<4xf32> ({\n"
         "  ^bb0(%i: index, %c: tensor<4xf32>):\n"
         "    %one = arith.constant {value = 1 : index} : index\n"
         "    %j = arith.addi %i, %one : index\n"
         "    %s = graph.slice %c, %i, %j {starts = [?], limits = [?], steps = [1]} : tensor<?xf32>\n"
         "    %r = graph.reshape %s : tensor<1xf32>\n"
         "    %y = graph.elementwise %c, %r {op = \"mul\"} : tensor<4xf32>\n"
         "    scf.yield %y\n"
         "  })\n"
         "  func.return %h\n"
         "}\n";
}

const std::string kZero = "arith.constant {value = 0 : index} : index";
const std::string kThree = "arith.constant {value = 3 : index} : index";
const std::string kOne = "arith.constant {value = 1 : index} : index";

TEST_CASE("a loop over a static range becomes its body once per iteration, the offsets folded") {
  Context ctx;
  auto p = parse(ctx, loop_function(kZero, kThree, kOne));
  int64_t budget = kMaxUnrolledOperations;
  CHECK(unroll_loop(first_loop(p->module.get()), ctx, budget) == "");
  CHECK(count(p->module.get(), OpKind::For) == 0);
  CHECK(count(p->module.get(), OpKind::GraphElementwise) == 3);
  CHECK(count(p->module.get(), OpKind::AddI) == 0);  // i + 1 folded to a constant
  CHECK(budget < kMaxUnrolledOperations);
  CHECK(verify(p->module.get()).empty());
  std::string text = print_operation(p->module.get());
  CHECK(text.find("{value = 2 : index}") != std::string::npos);  // the last iteration's index
}

TEST_CASE("a loop that runs zero times becomes its initial values") {
  Context ctx;
  auto p = parse(ctx, loop_function(kThree, kZero, kOne));
  int64_t budget = kMaxUnrolledOperations;
  CHECK(unroll_loop(first_loop(p->module.get()), ctx, budget) == "");
  CHECK(count(p->module.get(), OpKind::GraphElementwise) == 0);
  CHECK(verify(p->module.get()).empty());
}

TEST_CASE("loops that are not unrolled say why and stay as they were") {
  Context ctx;
  SUBCASE("a run-time bound") {
    auto p = parse(ctx, loop_function(kZero, "arith.addi %n, %n : index", kOne));
    int64_t budget = kMaxUnrolledOperations;
    CHECK(unroll_loop(first_loop(p->module.get()), ctx, budget).find("not a compile-time constant") != std::string::npos);
    CHECK(count(p->module.get(), OpKind::For) == 1);
  }
  SUBCASE("too many iterations") {
    auto p = parse(ctx, loop_function(kZero, "arith.constant {value = 5000 : index} : index", kOne));
    int64_t budget = kMaxUnrolledOperations;
    CHECK(unroll_loop(first_loop(p->module.get()), ctx, budget) ==
          "its trip count 5000 is above the unrolling limit of 1024");
  }
  SUBCASE("over the operation budget") {
    auto p = parse(ctx, loop_function(kZero, kThree, kOne));
    int64_t budget = 5;
    CHECK(unroll_loop(first_loop(p->module.get()), ctx, budget).find("operations, above the limit") != std::string::npos);
    CHECK(budget == 5);
    CHECK(count(p->module.get(), OpKind::For) == 1);
  }
}

}  // namespace
}  // namespace tessera::ir
