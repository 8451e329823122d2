// inline: inlines calls to helper functions, then drops helpers nobody calls
// (docs/ir/passes.md).
//
// A `func.call` is inlined when its callee is not a kernel, has a body (one
// block, ending with `func.return`), has no `noinline` attribute and is not
// recursive (not on a cycle of the call graph). A call to a recursive function
// from outside its cycle stays, with a warning (ir.inline-recursive): the
// device needs a call stack for it. Calls to declarations stay silently.
// Afterwards a function with a body that is no entry point (a kernel, a @jit
// function, the program, `public`), and that no entry point reaches through symbol
// references (calls, graph.grad), is removed.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/passes/passes.h"

namespace tessera::ir {
namespace {

using CallGraph = std::map<std::string, std::set<std::string>>;

CallGraph call_graph(Operation* module) {
  CallGraph graph;
  for (Operation* func : module_functions(module)) {
    auto& callees = graph[std::string(func->symbol_name())];
    func->walk([&](Operation* op) {
      if (op->is(OpKind::Call)) callees.insert(std::string(op->attr("callee").string_value()));
    });
  }
  return graph;
}

// Functions that can reach themselves through calls.
std::set<std::string> recursive_functions(const CallGraph& graph) {
  std::set<std::string> recursive;
  for (const auto& [start, direct] : graph) {
    std::set<std::string> seen;
    std::vector<std::string> stack(direct.begin(), direct.end());
    while (!stack.empty()) {
      std::string f = stack.back();
      stack.pop_back();
      if (f == start) {
        recursive.insert(start);
        break;
      }
      if (!seen.insert(f).second) continue;
      auto it = graph.find(f);
      if (it != graph.end()) stack.insert(stack.end(), it->second.begin(), it->second.end());
    }
  }
  return recursive;
}

bool inlinable(Operation* callee, const std::set<std::string>& recursive) {
  return callee && !callee->has_attr("kernel") && !callee->has_attr("noinline") &&
         callee->region(0).num_blocks() == 1 && !recursive.count(std::string(callee->symbol_name()));
}

// True when `a` and `b` call each other, directly or not (one cycle).
bool same_cycle(const CallGraph& graph, const std::string& a, const std::string& b) {
  auto reaches = [&](const std::string& from, const std::string& to) {
    std::set<std::string> seen;
    std::vector<std::string> stack{from};
    while (!stack.empty()) {
      std::string f = stack.back();
      stack.pop_back();
      if (f == to) return true;
      if (!seen.insert(f).second) continue;
      if (auto it = graph.find(f); it != graph.end()) stack.insert(stack.end(), it->second.begin(), it->second.end());
    }
    return false;
  };
  return reaches(a, b) && reaches(b, a);
}

void inline_call(Operation* call, Operation* callee) {
  Block& body = callee->region(0).front();
  IRMapping mapping;
  for (unsigned i = 0; i < body.num_arguments(); ++i) mapping.map(body.argument(i), call->operand(i));
  Operation* ret = body.terminator();
  for (Operation* op : body)
    if (op != ret) call->block()->insert_before(call, op->clone(mapping));
  for (unsigned i = 0; i < call->num_results(); ++i)
    call->result(i)->replace_all_uses_with(mapping.lookup_or_self(ret->operand(i)));
  call->erase();
}

// Entry points: kernels, @jit functions (host entries of their own, for
// AOT objects and `tesserac run --func`), the program, public functions and
// declarations.
bool is_root(Operation* func) {
  return func->has_attr("kernel") || func->has_attr("jit") || func->has_attr("program") || func->has_attr("public") ||
         func->region(0).empty();
}

}  // namespace

void run_inline_pass(Operation* module, PassContext& context) {
  CallGraph graph = call_graph(module);
  std::set<std::string> recursive = recursive_functions(graph);
  // Inlining a body may bring in more calls: repeat until none is left to
  // inline (non-recursive call chains are finite).
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<Operation*> calls;
    module->walk([&](Operation* op) {
      if (op->is(OpKind::Call)) calls.push_back(op);
    });
    for (Operation* call : calls) {
      Operation* callee = lookup_function(module, call->attr("callee").string_value());
      if (!inlinable(callee, recursive)) continue;
      // A @custom_vjp call keeps its rule until autodiff has used it.
      if (call->has_attr("custom_vjp")) continue;
      // A @custom_jvp call likewise, until jvp has used it.
      if (call->has_attr("custom_jvp")) continue;
      inline_call(call, callee);
      changed = true;
    }
  }
  // The calls left to recursive functions, from outside their cycle (a
  // recursive function's own calls are what makes it recursive).
  module->walk([&](Operation* op) {
    if (!op->is(OpKind::Call)) return;
    std::string callee(op->attr("callee").string_value());
    Operation* caller = op->enclosing(OpKind::Func);
    if (!recursive.count(callee) || !caller) return;
    if (same_cycle(graph, std::string(caller->symbol_name()), callee)) return;
    report_at<diag::IrInlineRecursive>(context, op, callee);
  });
  erase_unreachable_functions(module, is_root);
}

}  // namespace tessera::ir
