// autodiff: reverse-mode differentiation of Graph IR (docs/language/autodiff.md).
//
// Each `graph.grad %args {of = @f, argnums = [...], value, aux}` becomes a
// call of a derived function `@f.grad.<argnums>[.value][.aux]` built once per
// (f, argnums, value, aux): the body of @f cloned, its composite operations
// decomposed (softmax, norms, matmul normalisation, attention unless it has
// the flash kernels' form, whose rule is one graph.attention_grad:
// decompose.cpp), then the backward pass appended in reverse order of the
// forward operations, seeded with 1 for the 0-d (first) result, and the
// function returns (value,) gradients (, the other results: has_aux).
// Residuals are simply the forward values the rules read (fusion later
// recomputes the cheap ones inside the kernels that read them).
//
// Only operations on float tensors that depend on a differentiated argument
// and that the result depends on get adjoints (activity analysis); an
// operation without a rule there is an error (ir.autodiff-unsupported), a
// kernel launch one of its own (ir.autodiff-kernel). A call carrying a
// `custom_vjp = [@fwd, @bwd]` rule (a @custom_vjp function, lower_autodiff.cpp)
// is replaced in the derived function by a call of fwd, whose results after
// the first are what bwd receives with the output's gradient. Afterwards the
// `custom_vjp` attributes are dropped, so that the inline pass that follows
// inlines those calls like any other.
//
// Control flow: a loop that reads a differentiated value is unrolled when
// its trip count is a constant (unroll.h), else it is an error; an scf.if
// gets a backward scf.if on the same condition whose branches recompute
// their forward operations and differentiate them (a nested Derivation).
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "ir/core/builder.h"
#include "ir/core/graph_ops.h"
#include "ir/core/graph_shapes.h"
#include "ir/graph/decompose.h"
#include "ir/graph/graph_building.h"
#include "ir/graph/unroll.h"
#include "ir/passes/fold.h"
#include "ir/passes/passes.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::ir {

namespace {

// Reported once; the derived function is then dropped.
struct AutodiffFailed {};

// A function type's inputs or results.
std::vector<Type> types_of(Type function, bool inputs) {
  std::vector<Type> out;
  size_t n = inputs ? function.num_inputs() : function.num_results();
  for (size_t i = 0; i < n; ++i) out.push_back(inputs ? function.input(i) : function.result(i));
  return out;
}

bool is_float_tensor(Value* v) { return v->type().is(TypeKind::Tensor) && is_float(v->type().scalar()); }

class Derivation : GraphBuilding {
 public:
  Derivation(PassContext& pass, Operation* module, int64_t& unroll_budget)
      : GraphBuilding(pass.context, "autodiff"), pass_(pass), module_(module), unroll_budget_(unroll_budget) {}

  // Appends the backward pass of the operations of `body` before its
  // terminator and returns the gradients of `wrt` (a zero for one that
  // nothing reaches). `seeds` pairs operands of the terminator (by number)
  // with their cotangents (null: 1, for grad). A loop that reads a
  // differentiated value is unrolled first.
  std::vector<Value*> run(Block& body, const std::vector<Value*>& wrt,
                          const std::vector<std::pair<unsigned, Value*>>& terminator_seeds) {
    Operation* ret = body.terminator();
    // Active: depends on a differentiated value (float tensors only). A
    // differentiated number (`t: f32`) is differentiated as the 0-d tensor
    // of its value, which the graph operations reading it read instead.
    std::unordered_map<Value*, Value*> number_tensors;
    for (Value* v : wrt) {
      if (v->type().is_scalar() && is_float(v->type().scalar())) {
        builder_.set_insertion_point_to_start(&body);
        builder_.set_location(ret->loc());
        Value* yes = make(OpKind::GraphConstant, {}, context_.tensor_type({}, ScalarType::Bool),
                          {{"value", context_.bool_attr(true)}});
        Value* t = ew("select", {yes, v, v});
        if (Operation* host = number_as_tensor(v, t, nullptr))
          fail(host, "with respect to a number parameter", kReadBackWhy);
        number_tensors[v] = t;
        active_.insert(t);
      }
      if (is_float_tensor(v)) active_.insert(v);
    }
    // A recv is active when its paired send's operand is (pair_transfers).
    {
      std::vector<Operation*> top;
      for (Operation* op : body)
        if (op != ret) top.push_back(op);
      pair_transfers(top);
    }
    auto reads_active = [&](Operation* op) {
      for (Value* v : inputs_of(op))
        if (active_.count(v)) return true;
      Operation* send = op->is(OpKind::GraphRecv) ? peer_of(op) : nullptr;
      return send && active_.count(send->operand(0)) > 0;
    };
    for (Operation* op = body.front(); op != ret;) {
      if (op->is(OpKind::For) && reads_active(op) && !not_unrolled_.count(op)) {
        Operation* before = op->prev();
        std::string why = unroll_loop(op, context_, unroll_budget_);
        if (why.empty()) {
          op = before ? before->next() : body.front();
          continue;
        }
        not_unrolled_[op] = why;
      }
      if (op->is(OpKind::GraphItem) && reads_active(op))
        if (Operation* host = read_back(op, ret)) fail(host, kReadBackWhat, kReadBackWhy);
      if (reads_active(op))
        for (Value* r : op->results())
          if (is_float_tensor(r)) active_.insert(r);
      op = op->next();
    }
    std::vector<Operation*> ops;
    for (Operation* op : body)
      if (op != ret) ops.push_back(op);
    // Sends and recvs as unrolled: pair them again (pair_transfers).
    peers_.clear();
    pair_transfers(ops);
    // Needed: a seeded result depends on it.
    builder_.set_insertion_point(ret);
    builder_.set_location(ret->loc());
    std::vector<std::pair<Value*, Value*>> seeds;
    for (auto [index, cotangent] : terminator_seeds) {
      Value* output = ret->operand(index);
      // A number result (`-> f32`): its 0-d tensor twin (read_back).
      if (auto twin = number_twins_.find(output); twin != number_twins_.end()) output = twin->second;
      if (!active_.count(output)) continue;
      seeds.push_back({output, cotangent ? cotangent : constant_like(output, 1.0)});
    }
    std::unordered_set<Value*> needed;
    for (auto [output, seed] : seeds) needed.insert(output);
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      Operation* op = *it;
      bool any = false;
      for (Value* r : op->results()) any = any || needed.count(r);
      if (Operation* recv = op->is(OpKind::GraphSend) ? peer_of(op) : nullptr) any = needed.count(recv->result()) > 0;
      if (!any) continue;
      for (Value* v : inputs_of(op)) needed.insert(v);
    }
    for (auto [output, seed] : seeds) accumulate(output, seed);
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      Operation* op = *it;
      // A send's reverse is a recv, made exactly where its recv's reverse is.
      if (Operation* recv = op->is(OpKind::GraphSend) ? peer_of(op) : nullptr) {
        if (active_.count(recv->result()) && needed.count(recv->result())) send_rule(op);
        continue;
      }
      bool relevant = false;
      for (Value* r : op->results()) relevant = relevant || (active_.count(r) && needed.count(r));
      if (!relevant) continue;
      bool has_adjoint = false;
      for (Value* r : op->results()) has_adjoint = has_adjoint || adjoint_.count(r);
      if (!has_adjoint && !op->is(OpKind::GraphRecv)) continue;
      builder_.set_location(op->loc());
      differentiate(op);
    }
    builder_.set_location(ret->loc());
    std::vector<Value*> gradients;
    for (Value* v : wrt) {
      if (auto number = number_tensors.find(v); number != number_tensors.end()) {
        auto it = adjoint_.find(number->second);
        gradients.push_back(it != adjoint_.end()
                                ? builder_.create(OpKind::GraphItem, {it->second}, {v->type()})->result()
                                : builder_.constant_float(0.0, v->type()));
        continue;
      }
      auto it = adjoint_.find(v);
      gradients.push_back(it != adjoint_.end() ? it->second : constant_like(v, 0.0));
    }
    return gradients;
  }

 private:
  [[noreturn]] void fail(Operation* op, std::string what, std::string why) {
    report_at<DiagnosticKind::IrAutodiffUnsupported>(pass_, op, std::move(what), std::move(why));
    throw AutodiffFailed{};
  }

  Value* cast(Value* x, ScalarType to) {
    if (x->type().scalar() == to) return x;
    return make(OpKind::GraphCast, {x}, context_.tensor_type(x->type().shape(), to));
  }
  Value* transpose(Value* x, const std::vector<int64_t>& perm) {
    return make(OpKind::GraphTranspose, {x}, context_.tensor_type({}, x->type().scalar()),
                {{"perm", context_.int_array_attr(perm)}});
  }
  Value* swap_last_two(Value* x) {
    size_t r = x->type().rank();
    std::vector<int64_t> perm;
    for (size_t a = 0; a < r; ++a) perm.push_back(static_cast<int64_t>(a));
    std::swap(perm[r - 1], perm[r - 2]);
    return transpose(x, perm);
  }
  // The element count of `x` over `axes`, as a scalar of type `element`.
  Value* count(Value* x, const std::vector<int64_t>& axes, ScalarType element) {
    int64_t n = 1;
    Value* dynamic = nullptr;
    for (int64_t a : axes) {
      int64_t d = x->type().shape()[static_cast<size_t>(a)];
      if (d != kDynamic) {
        n *= d;
        continue;
      }
      Value* size = dim(x, static_cast<size_t>(a));
      dynamic = dynamic ? builder_.create(OpKind::MulI, {dynamic, size}, {context_.index_type()})->result() : size;
    }
    if (!dynamic) return scalar(static_cast<double>(n), element);
    Type f = context_.scalar_type(element);
    Value* as_int = builder_.create(OpKind::IndexCast, {dynamic}, {context_.i64_type()})->result();
    Value* as_float = builder_.create(OpKind::SIToFP, {as_int}, {f})->result();
    return builder_.create(OpKind::MulF, {as_float, scalar(static_cast<double>(n), element)}, {f})->result();
  }

  // A cast is straight through (its rounding policy concerns the value, not
  // the gradient), except for @loss_scale (docs/language/autodiff.md, "Loss
  // scaling"): the gradient of a `T @loss_scale(k)` value is kept like the
  // value, k times it in T. Into the storage (`scale = k`, x -> round(k x)):
  // the gradient of x is the storage's divided by k; out of it (`unscale =
  // k`, s -> s / k): the storage's gradient is k times the value's, rounded
  // to T (nearest even). So a cast to `T @loss_scale(k)` (both) passes the
  // gradient g as round_T(k g) / k: gradients too small for T survive.
  void cast_rule(Operation* op) {
    // (A @precision_policy tensor's codes: sema rejects a gradient with
    // respect to them; IR written by hand gets this.)
    if (Attribute method = op->attr("dequantize"))
      fail(op, "the dequantization by '@" + std::string(method.string_value()) + "'",
           "quantized codes have no gradient");
    Value* g = grad_of(op->result());
    Value* x = op->operand(0);
    if (Attribute scale = op->attr("scale")) {
      g = make(OpKind::GraphCast, {cast(g, ScalarType::F32)}, context_.tensor_type(g->type().shape(), ScalarType::F32),
               {{"unscale", scale}});
    } else if (Attribute unscale = op->attr("unscale")) {
      g = make(OpKind::GraphCast, {g}, context_.tensor_type(g->type().shape(), x->type().scalar()), {{"scale", unscale}});
    }
    accumulate(x, g);
  }

  // --- adjoints ----------------------------------------------------------------------
  // Adds `contribution` (of the result's shape, possibly broadcast from
  // `v`'s) to the adjoint of `v`, summing over broadcast dimensions.
  void accumulate(Value* v, Value* contribution) {
    if (!active_.count(v)) return;
    contribution = unbroadcast(contribution, v);
    if (contribution->type().scalar() != v->type().scalar()) contribution = cast(contribution, v->type().scalar());
    auto it = adjoint_.find(v);
    if (it == adjoint_.end()) {
      adjoint_[v] = contribution;
      return;
    }
    it->second = ew("add", {it->second, contribution});
  }
  Value* grad_of(Value* v) { return adjoint_.at(v); }

  void differentiate(Operation* op) {
    switch (op->kind()) {
      case OpKind::GraphElementwise: return elementwise(op);
      case OpKind::GraphCast: return cast_rule(op);
      case OpKind::GraphReduce: return reduce(op);
      case OpKind::GraphMatmul: return matmul(op);
      case OpKind::GraphAttention: return attention(op);
      case OpKind::GraphReshape: return accumulate(op->operand(0), reshape_like(grad_of(op->result()), op->operand(0)));
      case OpKind::GraphTranspose: {
        std::vector<int64_t> perm = op->attr("perm").int_array(), inverse(perm.size());
        for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
        return accumulate(op->operand(0), transpose(grad_of(op->result()), inverse));
      }
      case OpKind::GraphSlice: return slice(op);
      case OpKind::GraphConcat: return concat(op);
      case OpKind::Call: return custom_rule(op);
      case OpKind::GraphAllReduce:
      case OpKind::GraphAllGather:
      case OpKind::GraphReduceScatter:
      case OpKind::GraphBroadcast:
      case OpKind::GraphRecv:
      case OpKind::GraphSendRecv: return collective(op);
      case OpKind::GraphLaunch:
        report_at<DiagnosticKind::IrAutodiffKernel>(pass_, op, std::string(op->attr("kernel").string_value()));
        throw AutodiffFailed{};
      case OpKind::GraphGrad: internal_error("autodiff", "an inner graph.grad was not replaced by its derived function");
      case OpKind::If: return branch(op);
      case OpKind::For: {
        auto it = not_unrolled_.find(op);
        fail(op, "the 'for' loop", it != not_unrolled_.end() ? it->second : "it was not unrolled");
      }
      case OpKind::While:
        fail(op, "the 'while' loop", "its trip count is not known at compile time (only 'for' loops over a static range are differentiated: they are unrolled)");
      default: break;
    }
    fail(op, "'" + std::string(op->name()) + "'", "it has no derivative rule");
  }

  void elementwise(Operation* op) {
    Value* y = op->result();
    Value* g = grad_of(y);
    ScalarType t = y->type().scalar();
    Value* a = op->operand(0);
    Value* b = op->num_operands() > 1 ? op->operand(1) : nullptr;
    auto zero = [&] { return scalar(0.0, t); };
    auto one = [&] { return scalar(1.0, t); };
    switch (elementwise_op(op)) {
      case ElementwiseOp::Add:
        accumulate(a, g);
        accumulate(b, g);
        return;
      case ElementwiseOp::Sub:
        accumulate(a, g);
        if (active_.count(b)) accumulate(b, ew("neg", {g}));
        return;
      case ElementwiseOp::Mul:
        if (active_.count(a)) accumulate(a, ew("mul", {g, b}));
        if (active_.count(b)) accumulate(b, ew("mul", {g, a}));
        return;
      case ElementwiseOp::Div:
        if (active_.count(a)) accumulate(a, ew("div", {g, b}));
        if (active_.count(b)) accumulate(b, ew("neg", {ew("div", {ew("mul", {g, y}), b})}));
        return;
      case ElementwiseOp::Pow: {
        if (active_.count(a)) {
          // b * a^(b - 1)
          Value* b_minus_one;
          if (b->type().is(TypeKind::Tensor)) {
            b_minus_one = ew("sub", {b, one()});
          } else {
            Type st = b->type();
            b_minus_one = builder_.create(OpKind::SubF, {b, builder_.constant_float(1.0, st)}, {st})->result();
          }
          accumulate(a, ew("mul", {g, ew("mul", {ew("pow", {a, b_minus_one}), b})}));
        }
        if (active_.count(b)) accumulate(b, ew("mul", {g, ew("mul", {y, log_of(a)})}));
        return;
      }
      case ElementwiseOp::Max:
      case ElementwiseOp::Min: {
        // Ties split the gradient equally, as JAX does.
        bool max = elementwise_op(op) == ElementwiseOp::Max;
        Value* wins = ew(max ? "gt" : "lt", {a, b});
        Value* tie = ew("eq", {a, b});
        Value* share_a = ew("select", {wins, one(), ew("select", {tie, scalar(0.5, t), zero()})});
        if (active_.count(a)) accumulate(a, ew("mul", {g, share_a}));
        if (active_.count(b)) accumulate(b, ew("mul", {g, ew("sub", {one(), share_a})}));
        return;
      }
      case ElementwiseOp::Neg: return accumulate(a, ew("neg", {g}));
      case ElementwiseOp::Abs: {
        Value* sign = ew("select", {ew("gt", {a, zero()}), one(),
                                    ew("select", {ew("lt", {a, zero()}), scalar(-1.0, t), zero()})});
        return accumulate(a, ew("mul", {g, sign}));
      }
      case ElementwiseOp::Exp: return accumulate(a, ew("mul", {g, y}));
      case ElementwiseOp::Log: return accumulate(a, ew("div", {g, a}));
      case ElementwiseOp::Sqrt: return accumulate(a, ew("div", {g, ew("mul", {y, scalar(2.0, t)})}));
      case ElementwiseOp::Rsqrt:
        // d/da a^(-1/2) = -1/2 a^(-3/2) = -0.5 * y / a
        return accumulate(a, ew("mul", {g, ew("div", {ew("mul", {y, scalar(-0.5, t)}), a})}));
      case ElementwiseOp::Tanh: return accumulate(a, ew("mul", {g, ew("sub", {one(), ew("mul", {y, y})})}));
      case ElementwiseOp::Sin: return accumulate(a, ew("mul", {g, ew("cos", {a})}));
      case ElementwiseOp::Cos: return accumulate(a, ew("neg", {ew("mul", {g, ew("sin", {a})})}));
      case ElementwiseOp::Sigmoid:
        return accumulate(a, ew("mul", {g, ew("mul", {y, ew("sub", {one(), y})})}));
      case ElementwiseOp::Relu: return accumulate(a, ew("select", {ew("gt", {a, zero()}), g, zero()}));
      case ElementwiseOp::Gelu: {
        // y = 0.5 a (1 + tanh(u)), u = c (a + k a^3):
        // y' = 0.5 (1 + tanh u) + 0.5 a (1 - tanh^2 u) c (1 + 3 k a^2)
        constexpr double c = 0.7978845608028654, k = 0.044715;
        Value* a2 = ew("mul", {a, a});
        Value* u = ew("mul", {scalar(c, t), ew("add", {a, ew("mul", {scalar(k, t), ew("mul", {a2, a})})})});
        Value* th = ew("tanh", {u});
        Value* left = ew("mul", {scalar(0.5, t), ew("add", {one(), th})});
        Value* du = ew("mul", {scalar(c, t), ew("add", {one(), ew("mul", {scalar(3 * k, t), a2})})});
        Value* right = ew("mul", {ew("mul", {scalar(0.5, t), a}), ew("mul", {ew("sub", {one(), ew("mul", {th, th})}), du})});
        return accumulate(a, ew("mul", {g, ew("add", {left, right})}));
      }
      case ElementwiseOp::Silu: {
        Value* s = ew("sigmoid", {a});
        Value* d = ew("mul", {s, ew("add", {one(), ew("mul", {a, ew("sub", {one(), s})})})});
        return accumulate(a, ew("mul", {g, d}));
      }
      case ElementwiseOp::Copy: return accumulate(a, g);
      case ElementwiseOp::Mod:
        accumulate(a, g);
        if (active_.count(b)) accumulate(b, ew("neg", {ew("mul", {g, ew("floordiv", {a, b})})}));
        return;
      case ElementwiseOp::Select:
        if (active_.count(b)) accumulate(b, ew("select", {a, g, zero()}));
        if (active_.count(op->operand(2))) accumulate(op->operand(2), ew("select", {a, zero(), g}));
        return;
      // Piecewise constant: no gradient.
      case ElementwiseOp::Floor:
      case ElementwiseOp::Ceil:
      case ElementwiseOp::Round:
      case ElementwiseOp::FloorDiv: return;
      // Bool or integer results are never active.
      case ElementwiseOp::Lt:
      case ElementwiseOp::Le:
      case ElementwiseOp::Gt:
      case ElementwiseOp::Ge:
      case ElementwiseOp::Eq:
      case ElementwiseOp::Ne:
      case ElementwiseOp::And:
      case ElementwiseOp::Or:
      case ElementwiseOp::Xor:
      case ElementwiseOp::Not:
      case ElementwiseOp::Shl:
      case ElementwiseOp::Shr: return;
    }
  }

  void reduce(Operation* op) {
    Value* x = op->operand(0);
    Value* y = op->result();
    Value* g = grad_of(y);
    std::vector<int64_t> axes = op->attr("axes").int_array();
    bool keep = op->has_attr("keepdims");
    // The gradient and the result with the reduced axes kept (size 1).
    auto kept = [&](Value* v) { return with_reduced_axes(v, x, axes, keep); };
    ScalarType t = x->type().scalar();
    switch (reduce_kind(op)) {
      case ReduceKind::Sum: return accumulate(x, broadcast_like(kept(g), x));
      case ReduceKind::Mean: return accumulate(x, broadcast_like(ew("div", {kept(g), count(x, axes, t)}), x));
      case ReduceKind::Max:
      case ReduceKind::Min: {
        // Split equally between the elements equal to the extremum.
        Value* hit = ew("eq", {x, kept(y)});
        Value* ones = ew("select", {hit, scalar(1.0, t), scalar(0.0, t)});
        Value* share = ew("div", {kept(g), sum(ones, axes, true)});
        return accumulate(x, ew("select", {hit, share, scalar(0.0, t)}));
      }
      case ReduceKind::Prod: {
        // The product of the others, exact with zeros (graph_building.h).
        Value* others = product_of_others(x, kept(y), axes);
        return accumulate(x, ew("mul", {broadcast_like(kept(g), x), others}));
      }
    }
  }

  void matmul(Operation* op) {
    Value* a = op->operand(0);
    Value* b = op->operand(1);
    Value* g = grad_of(op->result());
    if (active_.count(a))
      accumulate(a, make(OpKind::GraphMatmul, {g, swap_last_two(b)}, context_.tensor_type({}, g->type().scalar())));
    if (active_.count(b))
      accumulate(b, make(OpKind::GraphMatmul, {swap_last_two(a), g}, context_.tensor_type({}, g->type().scalar())));
  }

  // One graph.attention_grad for the three operands (only attention in the
  // flash kernels' form is left whole): the stdlib's flash backward.
  void attention(Operation* op) {
    std::vector<Value*> operands{op->operand(0), op->operand(1), op->operand(2), op->result(), grad_of(op->result())};
    std::vector<Type> types{operands[0]->type(), operands[1]->type(), operands[2]->type()};
    Operation* grad = builder_.create(OpKind::GraphAttentionGrad, std::span<Value* const>(operands),
                                      std::span<const Type>(types), op->attributes());
    for (unsigned i = 0; i < 3; ++i) accumulate(op->operand(i), grad->result(i));
  }

  // A slice of `x` along `axis` (step 1 or -1), the other dimensions whole.
  Value* slice_axis(Value* x, size_t axis, int64_t start, int64_t limit, int64_t step) {
    size_t rank = x->type().rank();
    std::vector<int64_t> starts(rank, 0), limits(rank, -1), steps(rank, 1);
    starts[axis] = start;
    limits[axis] = limit;
    steps[axis] = step;
    return make(OpKind::GraphSlice, {x}, context_.tensor_type({}, x->type().scalar()),
                {{"starts", context_.int_array_attr(starts)},
                 {"limits", context_.int_array_attr(limits)},
                 {"steps", context_.int_array_attr(steps)}});
  }
  // Zeros of `like`'s type but `size` along `axis`.
  Value* zeros_along(Value* like, size_t axis, int64_t size) {
    std::vector<int64_t> dims(like->type().shape().begin(), like->type().shape().end());
    dims[axis] = size;
    Type zt = context_.tensor_type(dims, like->type().scalar());
    return make(OpKind::GraphConstant, dynamic_sizes(dims, like, identity(dims.size())), zt,
                {{"value", context_.float_attr(0.0)}});
  }
  Value* concat_along(std::vector<Value*> parts, size_t axis) {
    if (parts.size() == 1) return parts[0];
    return make(OpKind::GraphConcat, parts, context_.tensor_type({}, parts[0]->type().scalar()),
                {{"axis", context_.int_attr(static_cast<int64_t>(axis))}});
  }

  // The gradient of a slice: its gradient placed in zeros, one dimension at
  // a time. A step k > 1 interleaves k - 1 zeros after each element (a
  // reshape to [..., n, 1, ...], a concat with zeros [..., n, k - 1, ...],
  // a reshape to [..., n k, ...]); a negative step reverses the gradient
  // and is then the slice with step -k from the last element taken.
  // Offsets given by index operands must be constants (they are after a
  // loop over a static range is unrolled).
  void slice(Operation* op) {
    Value* x = op->operand(0);
    std::vector<int64_t> starts = op->attr("starts").int_array(), limits = op->attr("limits").int_array(),
                         steps = op->attr("steps").int_array();
    // The bounds given by index operands: constants folded in, the others
    // kept as values (the lowering made them in range).
    std::vector<Value*> start_values(starts.size(), nullptr), limit_values(starts.size(), nullptr);
    unsigned next = 1;
    auto resolve = [&](int64_t& bound, Value*& value) {
      if (bound != kDynamic) return;
      value = op->operand(next++);
      if (Attribute c = constant_value(value); c && c.is(AttributeKind::Integer)) {
        bound = c.int_value();
        value = nullptr;
      }
    };
    bool run_time = false;
    for (size_t d = 0; d < starts.size(); ++d) {
      resolve(starts[d], start_values[d]);
      resolve(limits[d], limit_values[d]);
      bool whole = steps[d] == 1 && starts[d] == 0 && limits[d] == -1;
      if (start_values[d] || limit_values[d] || (!whole && x->type().shape()[d] == kDynamic)) run_time = true;
    }
    if (run_time) return slice_at_run_time(op, starts, steps, start_values);
    Value* g = grad_of(op->result());
    if (!g->type().has_static_shape()) {
      // The offsets are constants now: the window's sizes are known.
      std::vector<int64_t> dims(g->type().shape().begin(), g->type().shape().end());
      for (size_t d = 0; d < dims.size(); ++d) {
        if (dims[d] != kDynamic || x->type().shape()[d] == kDynamic) continue;
        int64_t extent = x->type().shape()[d], limit = limits[d] == -1 && steps[d] > 0 ? extent : limits[d];
        dims[d] = steps[d] > 0 ? std::max<int64_t>(0, (limit - starts[d] + steps[d] - 1) / steps[d])
                               : (starts[d] - limit - 1) / -steps[d] + 1;
      }
      g = reshape(g, context_.tensor_type(dims, g->type().scalar()), dynamic_sizes(dims, g, identity(dims.size())));
    }
    for (size_t d = 0; d < starts.size(); ++d) {
      int64_t extent = x->type().shape()[d];
      if (steps[d] == 1 && starts[d] == 0 && (limits[d] == -1 || limits[d] == extent)) continue;
      int64_t n = g->type().shape()[d];
      if (n == kDynamic) fail(op, "a slice whose window is known only at run time", "its rule needs the size");
      int64_t first = starts[d], step = steps[d];
      if (n == 0) {
        g = zeros_along(g, d, extent);
        continue;
      }
      if (step < 0) {
        g = slice_axis(g, d, n - 1, -1, -1);
        first = starts[d] + (n - 1) * step;
        step = -step;
      }
      if (step > 1) {
        g = interleave_zeros(g, d, step, nullptr);
        if (n * step > extent - first) g = slice_axis(g, d, 0, extent - first, 1);
      }
      int64_t covered = g->type().shape()[d];
      std::vector<Value*> parts;
      if (first > 0) parts.push_back(zeros_along(g, d, first));
      parts.push_back(g);
      if (first + covered < extent) parts.push_back(zeros_along(g, d, extent - first - covered));
      g = concat_along(parts, d);
    }
    accumulate(x, reshape_like(g, x));
  }

  // The gradient of a slice with a bound or a sliced dimension known only
  // at run time (x[t:t + 3], x[1:] or x[::2] of an f32[N]): for each sliced
  // dimension, the static rule's steps with run-time sizes. With n = g's
  // length there: a negative step reverses g and starts at the lowest
  // element taken, start + (n - 1) step; a step k > 1 interleaves k - 1
  // zeros after each element and keeps the first min(n k, extent - first);
  // then zeros before (first) and after. The lowering made start and the
  // window in range; `first` is clamped for an empty window.
  void slice_at_run_time(Operation* op, const std::vector<int64_t>& starts, const std::vector<int64_t>& steps,
                         const std::vector<Value*>& start_values) {
    Value* x = op->operand(0);
    std::vector<int64_t> limits = op->attr("limits").int_array();
    Value* g = grad_of(op->result());
    Type index = context_.index_type();
    auto arith = [&](OpKind kind, Value* a, Value* b) { return builder_.create(kind, {a, b}, {index})->result(); };
    for (size_t d = 0; d < starts.size(); ++d) {
      bool whole = steps[d] == 1 && starts[d] == 0 && limits[d] == -1 && !start_values[d];
      if (whole) continue;
      Value* first = start_values[d] ? start_values[d] : builder_.constant_index(starts[d]);
      Value* n = dim(g, d);
      Value* extent = dim(x, d);
      int64_t step = steps[d];
      if (step < 0) {
        g = slice_at(g, d, arith(OpKind::SubI, n, builder_.constant_index(1)), builder_.constant_index(-1), -1);
        first = arith(OpKind::AddI, first, arith(OpKind::MulI, arith(OpKind::SubI, n, builder_.constant_index(1)),
                                                 builder_.constant_index(step)));
        step = -step;
      }
      Value* covered = n;
      if (step > 1) {
        Value* spread_length = arith(OpKind::MulI, n, builder_.constant_index(step));
        g = interleave_zeros(g, d, step, spread_length);
        // The last element's k - 1 zeros may run past the extent.
        Value* room = arith(OpKind::SubI, extent, first);
        covered = arith(OpKind::MaxSI, builder_.constant_index(0), arith(OpKind::MinSI, spread_length, room));
        g = slice_at(g, d, builder_.constant_index(0), covered, 1);
      }
      // An empty window's first may lie outside [0, extent].
      first = arith(OpKind::MinSI, arith(OpKind::MaxSI, first, builder_.constant_index(0)), extent);
      Value* after = arith(OpKind::SubI, extent, arith(OpKind::AddI, first, covered));
      g = concat_along({zeros_sized(g, d, first), g, zeros_sized(g, d, after)}, d);
    }
    accumulate(x, reshape_like(g, x));
  }
  // `g` with step - 1 zeros after each element along `axis`: a reshape to
  // [..., n, 1, ...], a concat with zeros [..., n, step - 1, ...], a reshape
  // to [..., n step, ...]. `length`: n step as an index value, when the
  // result's length is to be known only at run time (null: n is static).
  Value* interleave_zeros(Value* g, size_t axis, int64_t step, Value* length) {
    std::vector<int64_t> dims(g->type().shape().begin(), g->type().shape().end());
    std::vector<int64_t> split = dims;
    split.insert(split.begin() + static_cast<std::ptrdiff_t>(axis) + 1, 1);
    std::vector<size_t> from = identity(dims.size());
    from.insert(from.begin() + static_cast<std::ptrdiff_t>(axis) + 1, axis);
    Value* column = reshape(g, context_.tensor_type(split, g->type().scalar()), dynamic_sizes(split, g, from));
    Value* spread = concat_along({column, zeros_along(column, axis + 1, step - 1)}, axis + 1);
    dims[axis] = length ? kDynamic : dims[axis] * step;
    std::vector<Value*> sizes;
    for (size_t e = 0; e < dims.size(); ++e)
      if (dims[e] == kDynamic) sizes.push_back(e == axis ? length : dim(g, e));
    return reshape(spread, context_.tensor_type(dims, g->type().scalar()), sizes);
  }
  // g[start:limit:step] along `axis` (bounds as index values, in range), the
  // other dimensions whole. `window`: the slice's length when the code that
  // made the bounds knows it (the `sizes` attribute; kDynamic there when not).
  Value* slice_at(Value* g, size_t axis, Value* start, Value* limit, int64_t step,
                  std::optional<int64_t> window = std::nullopt) {
    size_t rank = g->type().rank();
    std::vector<int64_t> starts(rank, 0), limits(rank, -1), steps(rank, 1);
    starts[axis] = kDynamic;
    limits[axis] = kDynamic;
    steps[axis] = step;
    std::vector<NamedAttribute> attributes{{"starts", context_.int_array_attr(starts)},
                                           {"limits", context_.int_array_attr(limits)},
                                           {"steps", context_.int_array_attr(steps)}};
    if (window) {
      std::vector<int64_t> sizes(rank, kDynamic);
      sizes[axis] = *window;
      attributes.push_back({"sizes", context_.int_array_attr(sizes)});
    }
    return make(OpKind::GraphSlice, {g, start, limit}, context_.tensor_type({}, g->type().scalar()),
                std::move(attributes));
  }
  // Zeros of `like`'s shape but `size` (an index value) along `axis`.
  Value* zeros_sized(Value* like, size_t axis, Value* size) {
    std::vector<int64_t> dims(like->type().shape().begin(), like->type().shape().end());
    dims[axis] = kDynamic;
    if (Attribute c = constant_value(size); c && c.is(AttributeKind::Integer)) dims[axis] = c.int_value();
    std::vector<Value*> sizes;
    for (size_t d = 0; d < dims.size(); ++d)
      if (dims[d] == kDynamic) sizes.push_back(d == axis ? size : dim(like, d));
    return make(OpKind::GraphConstant, sizes, context_.tensor_type(dims, like->type().scalar()),
                {{"value", context_.float_attr(0.0)}});
  }

  void concat(Operation* op) {
    Value* g = grad_of(op->result());
    auto axis = static_cast<size_t>(op->attr("axis").int_value());
    int64_t offset = 0;
    size_t rank = g->type().rank();
    bool run_time = false;
    for (Value* part : op->operands()) run_time = run_time || part->type().shape()[axis] == kDynamic;
    if (run_time) return concat_at_run_time(op, g, axis);
    for (Value* part : op->operands()) {
      int64_t size = part->type().shape()[axis];
      if (active_.count(part)) {
        std::vector<int64_t> starts(rank, 0), limits(rank, -1), steps(rank, 1);
        starts[axis] = offset;
        limits[axis] = offset + size;
        Value* piece = make(OpKind::GraphSlice, {g}, context_.tensor_type({}, g->type().scalar()),
                            {{"starts", context_.int_array_attr(starts)},
                             {"limits", context_.int_array_attr(limits)},
                             {"steps", context_.int_array_attr(steps)}});
        accumulate(part, reshape_like(piece, part));
      }
      offset += size;
    }
  }

  // Parts of sizes known only at run time: each part's gradient is the slice
  // of g at its run-time offset (graph.slice with index bounds).
  void concat_at_run_time(Operation* op, Value* g, size_t axis) {
    Type index = context_.index_type();
    Value* offset = builder_.constant_index(0);
    for (Value* part : op->operands()) {
      Value* end = builder_.create(OpKind::AddI, {offset, dim(part, axis)}, {index})->result();
      if (active_.count(part)) {
        Value* piece = slice_at(g, axis, offset, end, 1, part->type().shape()[axis]);
        accumulate(part, reshape_like(piece, part));
      }
      offset = end;
    }
  }

  // A call of a @custom_vjp function: fwd replaces it in the forward pass;
  // bwd(saved..., gradient) gives the arguments' gradients.
  void custom_rule(Operation* call) {
    Attribute rule = call->attr("custom_vjp");
    if (!rule && call->has_attr("custom_jvp"))  // forward mode only (jvp.cpp)
      fail(call, "a call of '@" + std::string(call->attr("callee").string_value()) + "'",
           "it is a @custom_jvp function, whose rule reverse mode does not transpose; give it a @custom_vjp rule");
    if (!rule) fail(call, "a call of '@" + std::string(call->attr("callee").string_value()) + "'",
                    "calls are inlined before autodiff; this one was not (recursion or a declaration)");
    Operation* fwd = lookup_function(module_, rule[0].string_value());
    Operation* bwd = lookup_function(module_, rule[1].string_value());
    if (!fwd || !bwd) internal_error("autodiff", "a custom rule names a missing function");
    Type fwd_type = fwd->attr("function_type").type(), bwd_type = bwd->attr("function_type").type();
    // The forward call, just before the original one.
    Builder forward(context_);
    forward.set_insertion_point(call);
    forward.set_location(call->loc());
    std::vector<Value*> arguments = call->operands();
    std::vector<Type> fwd_results = types_of(fwd_type, false);
    Operation* f = forward.create(OpKind::Call, std::span<Value* const>(arguments), std::span<const Type>(fwd_results),
                                  {{"callee", context_.symbol_attr(fwd->symbol_name())}});
    if (f->num_results() < 1 || call->num_results() != 1)
      internal_error("autodiff", "a custom rule whose forward function returns nothing");
    Value* y = call->result();
    std::vector<Value*> fwd_values = f->results();
    std::vector<Value*> operands(fwd_values.begin() + 1, fwd_values.end());
    operands.push_back(grad_of(y));
    std::vector<Type> bwd_results = types_of(bwd_type, false);
    Operation* b = builder_.create(OpKind::Call, std::span<Value* const>(operands), std::span<const Type>(bwd_results),
                                   {{"callee", context_.symbol_attr(bwd->symbol_name())}});
    if (b->num_results() != call->num_operands())
      internal_error("autodiff", "a custom rule's backward function returns the wrong number of gradients");
    for (unsigned i = 0; i < call->num_operands(); ++i)
      if (is_float_tensor(call->operand(i))) accumulate(call->operand(i), b->result(i));
    // The forward value from fwd (the original call is then dead).
    adjoint_[f->result(0)] = adjoint_.at(y);
    y->replace_all_uses_with(f->result(0));
  }

  // --- collectives (docs/language/autodiff.md, "Collectives") -----------------------
  // The SPMD convention (JAX's): what is differentiated is the sum over the
  // ranks of each rank's result, so a collective's transpose is the
  // collective that sends each rank's cotangent back where its input came
  // from: all_reduce(sum) -> all_reduce(sum), all_gather <-> reduce_scatter
  // (sum), broadcast -> a sum reduced to the root, recv -> a send back to
  // the sender, sendrecv(shift) -> sendrecv(-shift).
  Value* communicate(OpKind kind, Operation* like, Value* g, std::vector<NamedAttribute> extra) {
    std::vector<NamedAttribute> attributes{{"axis", like->attr("axis")}, {"mesh", like->attr("mesh")}};
    for (NamedAttribute& a : extra) attributes.push_back(std::move(a));
    return make(kind, {g}, g->type(), std::move(attributes));
  }
  void collective(Operation* op) {
    Value* x = op->operand(0);
    Value* y = op->result();
    Value* g = adjoint_.count(y) ? grad_of(y) : constant_like(y, 0.0);
    std::string reduction = op->attr("op") ? std::string(op->attr("op").string_value()) : "sum";
    if (reduction != "sum" && reduction != "mean")
      fail(op, "'" + std::string(op->name()) + "' with op '" + reduction + "'",
           "only sum and mean (avg) reductions have a derivative rule");
    Attribute op_attr = context_.string_attr(reduction), dim = op->attr("dim");
    switch (op->kind()) {
      case OpKind::GraphAllReduce: return accumulate(x, communicate(OpKind::GraphAllReduce, op, g, {{"op", op_attr}}));
      case OpKind::GraphAllGather:
        return accumulate(x, communicate(OpKind::GraphReduceScatter, op, g,
                                         {{"op", context_.string_attr("sum")}, {"dim", dim}}));
      case OpKind::GraphReduceScatter:
      {
        // mean: each block entered its rank's output divided by the group size.
        Value* gathered = communicate(OpKind::GraphAllGather, op, g, {{"dim", dim}});
        if (reduction == "mean")
          gathered = ew("mul", {gathered, scalar(1.0 / static_cast<double>(axis_size(op)), gathered->type().scalar())});
        return accumulate(x, gathered);
      }
      case OpKind::GraphBroadcast:
        // Every rank's cotangent summed on the root; zero elsewhere.
        return accumulate(x, communicate(OpKind::GraphAllReduce, op, g,
                                         {{"op", context_.string_attr("sum")}, {"root", op->attr("root")}}));
      case OpKind::GraphSendRecv:
        return accumulate(x, communicate(OpKind::GraphSendRecv, op, g,
                                         {{"shift", context_.int_attr(-op->attr("shift").int_value())}}));
      default: break;
    }
    // recv: index dst sends its cotangent back to src and passes zero to x;
    // every other rank passes its cotangent to x (x was its result).
    accumulate(x, communicate(OpKind::GraphRecv, op, g,
                              {{"src", op->attr("src")}, {"dst", op->attr("dst")}, {"transpose", context_.unit_attr()}}));
  }
  int64_t axis_size(Operation* op) {
    Attribute mesh = op->attr("mesh");
    std::vector<int64_t> shape = mesh[0].int_array();
    for (size_t a = 0; a < mesh[1].size(); ++a)
      if (mesh[1][a].string_value() == op->attr("axis").string_value()) return shape[a];
    return 1;
  }
  // send(h, src, dst): index src receives what dst's recv sent back.
  void send_rule(Operation* send) {
    Value* h = send->operand(0);
    Value* back = communicate(OpKind::GraphRecv, send, constant_like(h, 0.0),
                              {{"src", send->attr("dst")}, {"dst", send->attr("src")}});
    if (active_.count(h) && is_float_tensor(h)) accumulate(h, back);
  }
  // The k-th send and the k-th recv of the same axis, src and dst are a
  // pair (sema checked that each has its other side).
  void pair_transfers(const std::vector<Operation*>& ops) {
    std::map<std::tuple<std::string, int64_t, int64_t>, std::vector<Operation*>> open[2];
    for (Operation* op : ops) {
      if (!op->is(OpKind::GraphSend) && !op->is(OpKind::GraphRecv)) continue;
      auto key = std::make_tuple(std::string(op->attr("axis").string_value()), op->int_attr("src"), op->int_attr("dst"));
      bool is_send = op->is(OpKind::GraphSend);
      std::vector<Operation*>& other = open[is_send ? 0 : 1][key];
      if (other.empty()) {
        open[is_send ? 1 : 0][key].push_back(op);
        continue;
      }
      peers_[op] = other.front();
      peers_[other.front()] = op;
      other.erase(other.begin());
    }
  }
  Operation* peer_of(Operation* op) {
    auto it = peers_.find(op);
    return it == peers_.end() ? nullptr : it->second;
  }

  // An scf.if: the backward pass is an scf.if on the same condition whose
  // branches recompute their forward operations and run their backward pass,
  // yielding the gradients of the differentiated values the branches read
  // from outside. Never a select of both branches: the branch not taken
  // could give NaN or infinite gradients (sqrt at 0), and 0 * NaN is NaN.
  void branch(Operation* op) {
    std::vector<Value*> reads;
    for (Value* v : values_read_inside(op))
      if (active_.count(v)) reads.push_back(v);
    if (reads.empty()) return;
    std::vector<Type> types;
    for (Value* v : reads) types.push_back(v->type());
    Operation* backward = builder_.create(OpKind::If, std::span<Value* const>(op->operands()),
                                          std::span<const Type>(types), {}, 2);
    for (unsigned r = 0; r < 2; ++r) {
      Block* block = backward->region(r).add_block();
      Block& source = op->region(r).front();
      Operation* yield = source.terminator();
      IRMapping mapping;
      for (Operation* forward : source)
        if (forward != yield) block->push_back(forward->clone(mapping));
      std::vector<Value*> yielded;
      for (Value* v : yield->operands()) yielded.push_back(mapping.lookup_or_self(v));
      Operation* out = Operation::create(OpKind::Yield, yield->loc(), std::span<Value* const>(yielded), {});
      block->push_back(out);
      std::vector<std::pair<unsigned, Value*>> seeds;
      for (unsigned i = 0; i < op->num_results(); ++i) {
        auto it = adjoint_.find(op->result(i));
        if (it != adjoint_.end()) seeds.push_back({i, it->second});
      }
      Derivation inner(pass_, module_, unroll_budget_);
      std::vector<Value*> gradients = inner.run(*block, reads, seeds);
      out->set_operands(std::span<Value* const>(gradients));
    }
    for (unsigned i = 0; i < reads.size(); ++i) accumulate(reads[i], backward->result(i));
  }

  PassContext& pass_;
  Operation* module_;
  int64_t& unroll_budget_;
  // Loops that read a differentiated value but could not be unrolled, and why.
  std::unordered_map<Operation*, std::string> not_unrolled_;
  std::unordered_set<Value*> active_;
  std::unordered_map<Value*, Value*> adjoint_;
  std::unordered_map<Operation*, Operation*> peers_;  // send <-> recv
};

std::string derived_name(std::string_view of, const std::vector<int64_t>& argnums, bool with_value, bool with_aux) {
  std::string name = std::string(of) + ".grad";
  for (int64_t i : argnums) name += "." + std::to_string(i);
  if (with_value) name += ".value";
  if (with_aux) name += ".aux";
  return name;
}

Operation* derive(PassContext& pass, Operation* module, Operation* grad);

// Higher order: each graph.grad under `root` (a derived function being
// built) is replaced by the body of its own derived function, made first,
// so that the outer derivation differentiates the inner gradient's
// operations like any others. False when an inner derivation failed.
bool inline_inner_gradients(PassContext& pass, Operation* module, Operation* root) {
  std::vector<Operation*> inner;
  root->walk([&](Operation* op) {
    if (op->is(OpKind::GraphGrad)) inner.push_back(op);
  });
  for (Operation* grad : inner) {
    Operation* derived = derive(pass, module, grad);
    if (!derived) return false;
    Block& body = derived->region(0).front();
    IRMapping mapping;
    for (unsigned i = 0; i < body.num_arguments(); ++i) mapping.map(body.argument(i), grad->operand(i));
    Operation* ret = body.terminator();
    for (Operation* op : body)
      if (op != ret) grad->block()->insert_before(grad, op->clone(mapping));
    for (unsigned i = 0; i < grad->num_results(); ++i)
      grad->result(i)->replace_all_uses_with(mapping.lookup_or_self(ret->operand(i)));
    grad->erase();
  }
  return true;
}

// The functions whose derived function is being built (a gradient of a
// function inside its own derivation would never end).
std::set<std::string>& derivations_in_progress() {
  static thread_local std::set<std::string> names;
  return names;
}

// grad(grad(f)): `inner_argnums` lists the parameter each inner gradient
// differentiates, innermost first. Their derived functions are made in turn
// (each the `of` of the next) and `grad` then names the last one. False when
// one failed.
bool derive_inner_transforms(PassContext& pass, Operation* module, Operation* grad) {
  if (!grad->has_attr("inner_argnums")) return true;
  std::string of(grad->attr("of").string_value());
  for (int64_t argnum : grad->attr("inner_argnums").int_array()) {
    Operation* function = lookup_function(module, of);
    Type parameter = function->attr("function_type").type().input(static_cast<size_t>(argnum));
    Operation* request = Operation::create(OpKind::GraphGrad, grad->loc(), {}, std::span<const Type>(&parameter, 1),
                                           {{"of", pass.context.symbol_attr(of)},
                                            {"argnums", pass.context.int_array_attr(std::vector<int64_t>{argnum})}});
    Operation* derived = derive(pass, module, request);
    Operation::destroy(request);
    if (!derived) return false;
    of = std::string(derived->symbol_name());
  }
  grad->set_attr("of", pass.context.symbol_attr(of));
  grad->remove_attr("inner_argnums");
  return true;
}

// The derived function for one use of graph.grad, made on first use.
Operation* derive(PassContext& pass, Operation* module, Operation* grad) {
  if (!derive_inner_transforms(pass, module, grad)) return nullptr;
  Operation* source = lookup_function(module, grad->attr("of").string_value());
  std::vector<int64_t> argnums = grad->has_attr("argnums") ? grad->attr("argnums").int_array() : std::vector<int64_t>{0};
  bool with_value = grad->has_attr("value");
  bool with_aux = grad->has_attr("aux");
  bool with_cotangents = grad->has_attr("cotangents");
  std::string name = derived_name(source->symbol_name(), argnums, with_value, with_aux);
  if (with_cotangents) name = derived_name(source->symbol_name(), argnums, false, false) + ".vjp";
  if (derivations_in_progress().count(name)) {
    report_at<DiagnosticKind::IrAutodiffUnsupported>(pass, grad, "'@" + std::string(source->symbol_name()) + "'",
                                                     "its gradient is needed to compute itself");
    return nullptr;
  }
  if (Operation* existing = lookup_function(module, name)) return existing;
  if (source->region(0).num_blocks() != 1) {
    report_at<DiagnosticKind::IrAutodiffUnsupported>(pass, grad, "'@" + std::string(source->symbol_name()) + "'",
                                                     "it has no body or more than one block");
    return nullptr;
  }
  Type source_type = source->attr("function_type").type();
  std::vector<Type> inputs = types_of(source_type, true);
  // vjp: the cotangents follow the arguments.
  if (with_cotangents)
    for (Type r : types_of(source_type, false)) inputs.push_back(r);
  std::vector<Type> results(grad->result_types());
  std::vector<NamedAttribute> attributes{{"sym_name", pass.context.string_attr(name)},
                                         {"function_type", pass.context.type_attr(pass.context.function_type(inputs, results))}};
  Operation* derived = Operation::create(OpKind::Func, source->loc(), {}, {}, std::move(attributes), 1);
  Block* entry = derived->region(0).add_block();
  Block& body = source->region(0).front();
  IRMapping mapping;
  for (unsigned i = 0; i < inputs.size(); ++i) {
    Value* argument = entry->add_argument(inputs[i]);
    if (i < body.num_arguments()) mapping.map(body.argument(i), argument);
  }
  for (Operation* op : body) entry->push_back(op->clone(mapping));
  module->region(0).front().insert_before(source->next(), derived);
  derivations_in_progress().insert(name);
  bool inner_ok = inline_inner_gradients(pass, module, derived);
  derivations_in_progress().erase(name);
  if (!inner_ok) {
    derived->erase();
    return nullptr;
  }
  // Attention in the stdlib kernels' form stays whole: its rule is one
  // graph.attention_grad (the flash backward; decomposed later when no
  // stdlib is given). Other attention is differentiated through its
  // decomposition.
  decompose_graph_operations(derived, pass.context, DecomposeOptions{.keep_flash_attention = true});
  try {
    int64_t unroll_budget = kMaxUnrolledOperations;
    Derivation derivation(pass, module, unroll_budget);
    Operation* ret = entry->terminator();
    std::vector<std::pair<unsigned, Value*>> seeds{{0, nullptr}};
    if (with_cotangents) {
      seeds.clear();
      for (unsigned r = 0; r < ret->num_operands(); ++r) seeds.push_back({r, entry->argument(body.num_arguments() + r)});
    }
    std::vector<Value*> wrt;
    for (int64_t i : argnums) wrt.push_back(entry->argument(static_cast<unsigned>(i)));
    std::vector<Value*> gradients = derivation.run(*entry, wrt, seeds);
    std::vector<Value*> returned;
    if (with_value) returned.push_back(ret->operand(0));
    returned.insert(returned.end(), gradients.begin(), gradients.end());
    // has_aux: the function's other results, as computed by its body.
    if (with_aux)
      for (unsigned i = 1; i < ret->num_operands(); ++i) returned.push_back(ret->operand(i));
    Builder builder(pass.context);
    builder.set_insertion_point(ret);
    builder.set_location(ret->loc());
    builder.create(OpKind::Return, std::span<Value* const>(returned), std::span<const Type>{});
    ret->erase();
  } catch (AutodiffFailed&) {
    derived->erase();
    return nullptr;
  }
  return derived;
}

}  // namespace

void run_autodiff_pass(Operation* module, PassContext& context) {
  std::vector<Operation*> grads;
  module->walk([&](Operation* op) {
    if (op->is(OpKind::GraphGrad)) grads.push_back(op);
  });
  // Every derived function first, then the calls: a derived function whose
  // source itself takes a gradient clones that graph.grad (higher order).
  std::vector<Operation*> derived_functions;
  for (Operation* grad : grads) {
    Operation* derived = derive(context, module, grad);
    if (!derived) return;
    derived_functions.push_back(derived);
  }
  for (size_t k = 0; k < grads.size(); ++k) {
    Operation* grad = grads[k];
    Operation* derived = derived_functions[k];
    Builder builder(context.context);
    builder.set_insertion_point(grad);
    builder.set_location(grad->loc());
    std::vector<Value*> operands = grad->operands();
    std::vector<Type> results = grad->result_types();
    Operation* call = builder.create(OpKind::Call, std::span<Value* const>(operands), std::span<const Type>(results),
                                     {{"callee", context.context.symbol_attr(derived->symbol_name())}});
    for (unsigned i = 0; i < grad->num_results(); ++i) grad->result(i)->replace_all_uses_with(call->result(i));
    grad->erase();
  }
  // The rules have been used: the calls inline like any other from here.
  module->walk([&](Operation* op) {
    if (op->is(OpKind::Call) && op->has_attr("custom_vjp")) op->remove_attr("custom_vjp");
  });
}

}  // namespace tessera::ir
