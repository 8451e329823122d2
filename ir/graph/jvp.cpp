// jvp: forward-mode differentiation of Graph IR (docs/language/autodiff.md,
// "Forward mode").
//
// Each `graph.jvp %primals..., %tangents... {of = @f}` becomes a call of a
// derived function `@f.jvp`, built once per function: the body of @f cloned,
// its composite operations decomposed (decompose.cpp), and after every
// operation that reads a value with a tangent, the operations that compute
// the tangent of its result (the rules below, one per operation that has a
// reverse rule in autodiff.cpp). @f.jvp takes f's arguments, then one tangent
// per float-tensor argument; it returns f's results, then one tangent per
// float-tensor result. A value without a tangent has a zero one; a returned
// result without one gets a zero tensor.
//
// A call left in the body (calls are inlined first, so: one that carries a
// custom rule) is handled by its rule: `custom_jvp = @rule` (a @custom_jvp
// function, lower_jvp.cpp) is replaced by a call of the rule, which returns
// the outputs, then their tangents; any other call (a @custom_vjp function,
// whose reverse rule says nothing about forward mode) by a call of the
// callee's own derived function. Afterwards the `custom_jvp` attributes are
// dropped so that the inline pass that follows inlines the calls.
//
// Collectives: a linear one's tangent is the same collective of the
// tangent; a send or recv of a float tensor gets a companion moving the
// tangent, always, so that tangent transfers pair across ranks as the
// primal ones do.
//
// Control flow: an scf.if yields the tangents of its results as extra
// results, each branch computing its own (never a select of the two); an
// scf.for carries the tangents of its float loop-carried values as extra
// loop-carried values, so nothing is unrolled and the trip count may be a
// run-time value; an scf.while likewise, its condition region linearized
// too.
//
// The graph-building helpers are GraphBuilding's (graph_building.h), shared
// with autodiff.cpp, as is the product-of-the-others rule of a product
// reduction.
#include <functional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ir/core/builder.h"
#include "ir/core/graph_ops.h"
#include "ir/core/graph_shapes.h"
#include "ir/graph/decompose.h"
#include "ir/graph/graph_building.h"
#include "ir/passes/passes.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::ir {

namespace {

// Reported once; the derived function is then dropped.
struct JvpFailed {};

bool is_float_tensor(Value* v) { return v->type().is(TypeKind::Tensor) && is_float(v->type().scalar()); }
bool is_float_tensor(Type t) { return t.is(TypeKind::Tensor) && is_float(t.scalar()); }

// The pass's state: the functions whose derivation failed (reported once).
struct JvpState {
  PassContext& pass;
  Operation* module;
  std::set<Operation*> failed;
};

Operation* derive_jvp(JvpState& state, Operation* source, Operation* at);
bool replace_jvps(JvpState& state, Operation* root);

class Linearization : GraphBuilding {
 public:
  Linearization(JvpState& state, Operation* function)
      : GraphBuilding(state.pass.context, "jvp"), state_(state), pass_(state.pass), module_(state.module),
        function_(function) {}

  // Adds the tangent computations to `function_` (a decomposed clone of the
  // source); `tangents` pairs arguments with their tangents. Returns the
  // tangents of the returned values (float tensors only).
  std::vector<Value*> run(const std::vector<std::pair<Value*, Value*>>& tangents) {
    Block& body = function_->region(0).front();
    Operation* ret = body.terminator();
    for (auto [argument, tangent] : tangents) tangent_[argument] = tangent;
    linearize_block(body);
    builder_.set_insertion_point(ret);
    builder_.set_location(ret->loc());
    std::vector<Value*> out;
    for (Value* r : ret->operands())
      if (is_float_tensor(r)) out.push_back(tangent_or_zero(r));
    return out;
  }

 private:
  [[noreturn]] void fail(Operation* op, std::string what, std::string why) {
    report_at<DiagnosticKind::IrAutodiffUnsupported>(pass_, op, std::move(what), std::move(why));
    throw JvpFailed{};
  }

  Value* tangent_or_zero(Value* v) {
    auto it = tangent_.find(v);
    return it != tangent_.end() ? it->second : constant_like(v, 0.0);
  }
  Value* tangent_of(Value* v) {
    auto it = tangent_.find(v);
    return it != tangent_.end() ? it->second : nullptr;
  }
  // `t` (a tangent of an operand, of the operand's shape) with `y`'s type:
  // broadcast to its shape (select(true, t, t), as decompose does) and cast
  // to its element type.
  Value* fit(Value* t, Value* y) {
    Type yt = y->type();
    if (t->type().scalar() != yt.scalar()) t = make(OpKind::GraphCast, {t}, context_.tensor_type(t->type().shape(), yt.scalar()));
    if (t->type() == yt) return t;
    Value* yes = make(OpKind::GraphConstant, dynamic_sizes(y), context_.tensor_type(yt.shape(), ScalarType::Bool),
                      {{"value", context_.bool_attr(true)}});
    t = ew("select", {yes, t, t});
    if (t->type() != yt) {
      std::vector<Value*> operands{t};
      for (Value* s : dynamic_sizes(y)) operands.push_back(s);
      t = make(OpKind::GraphReshape, operands, yt);
    }
    return t;
  }
  // The sum of the terms present (null: none), with `y`'s type.
  Value* sum_terms(Value* y, std::initializer_list<Value*> terms) {
    Value* total = nullptr;
    for (Value* term : terms) {
      if (!term) continue;
      total = total ? ew("add", {total, term}) : term;
    }
    return total ? fit(total, y) : nullptr;
  }
  // A copy of `op` whose operands are replaced as `replace` says (a linear
  // operation applied to tangents).
  Value* clone_with(Operation* op, const std::vector<std::pair<Value*, Value*>>& replace) {
    IRMapping mapping;
    for (auto [from, to] : replace) mapping.map(from, to);
    Operation* copy = op->clone(mapping);
    op->block()->insert_before(builder_.insertion_point(), copy);
    std::string why;
    for (unsigned i = 0; i < copy->num_results(); ++i) {
      std::optional<GraphResult> r = infer_graph_result(copy, i, why);
      if (!r) internal_error("jvp", "built an invalid '" + std::string(copy->name()) + "': " + why);
      copy->result(i)->set_type(r->type(context_));
    }
    return copy->result(0);
  }
  void set(Value* y, Value* t) {
    if (t) tangent_[y] = t;
  }
  // Whether `op` reads a value with a tangent (inside its regions too).
  bool reads_tangent(Operation* op) {
    for (Value* v : inputs_of(op))
      if (tangent_.count(v)) return true;
    return false;
  }

  // A send or recv of a float tensor: it gets a companion carrying the
  // tangent whether or not its own operand has one, so that the k-th
  // tangent send pairs with the k-th tangent recv on the other rank as the
  // primal ones pair (a rank cannot see whether its peer's value has one).
  static bool is_float_transfer(Operation* op) {
    return (op->is(OpKind::GraphSend) || op->is(OpKind::GraphRecv)) && is_float_tensor(op->operand(0));
  }
  // `op` is one, or holds one in its regions (a loop or a branch around a
  // send must be linearized even when nothing in it has a tangent).
  static bool has_float_transfer(Operation* op) {
    bool found = false;
    op->walk([&](Operation* nested) { found = found || is_float_transfer(nested); });
    return found;
  }

  // Adds, after each operation of `block` (but its terminator) that reads a
  // value with a tangent, the operations computing the tangents of its
  // results; nested regions (an scf.for's body, an scf.if's branches) are
  // linearized in place by their operation's rule.
  void linearize_block(Block& block) {
    Operation* end = block.terminator();
    std::vector<Operation*> ops;
    for (Operation* op : block)
      if (op != end) ops.push_back(op);
    for (size_t i = 0; i < ops.size(); ++i) {
      Operation* op = ops[i];
      if (op->is(OpKind::GraphItem) && reads_tangent(op)) {
        if (Operation* host = read_back(op, nullptr)) fail(host, kReadBackWhat, kReadBackWhy);
        // The operations after it again: read_back may have added some.
        ops.resize(i + 1);
        for (Operation* next = op->next(); next != end; next = next->next()) ops.push_back(next);
        continue;
      }
      bool float_result = false;
      for (Value* r : op->results()) float_result = float_result || is_float_tensor(r);
      if (!has_float_transfer(op) && (!float_result || !reads_tangent(op))) continue;
      builder_.set_insertion_point_after(op);
      builder_.set_location(op->loc());
      linearize(op);
    }
  }

  // --- rules -------------------------------------------------------------------------
  void linearize(Operation* op) {
    switch (op->kind()) {
      case OpKind::GraphElementwise: return elementwise(op);
      case OpKind::GraphCast: {
        // Straight through, except that @loss_scale's `scale` / `unscale`
        // apply to the tangent too (as autodiff.cpp's rule): a cast to
        // `T @loss_scale(k)` passes a tangent t as round_T(k t) / k.
        if (!is_float_tensor(op->result())) return;
        if (Attribute method = op->attr("dequantize"); method && is_float_tensor(op->operand(0)))
          fail(op, "the dequantization by '@" + std::string(method.string_value()) + "'",
               "quantized codes have no tangent");
        if (op->has_attr("dequantize")) return;  // integer codes: no tangent
        std::vector<NamedAttribute> scaling;
        for (std::string_view name : {"scale", "unscale"})
          if (Attribute k = op->attr(name)) scaling.push_back({std::string(name), k});
        set(op->result(), make(OpKind::GraphCast, {tangent_of(op->operand(0))}, op->result()->type(), std::move(scaling)));
        return;
      }
      case OpKind::GraphReduce: return reduce(op);
      case OpKind::GraphMatmul: {
        Value* a = op->operand(0);
        Value* b = op->operand(1);
        Value* ta = tangent_of(a);
        Value* tb = tangent_of(b);
        return set(op->result(), sum_terms(op->result(), {ta ? clone_with(op, {{a, ta}}) : nullptr,
                                                          tb ? clone_with(op, {{b, tb}}) : nullptr}));
      }
      // Linear in their first operand (the others are sizes).
      case OpKind::GraphReshape:
      case OpKind::GraphTranspose:
      case OpKind::GraphSlice:
        return set(op->result(), clone_with(op, {{op->operand(0), tangent_of(op->operand(0))}}));
      case OpKind::GraphConcat: {
        std::vector<std::pair<Value*, Value*>> parts;
        for (Value* part : op->operands()) parts.push_back({part, tangent_or_zero(part)});
        return set(op->result(), clone_with(op, parts));
      }
      case OpKind::GraphAllReduce:
      case OpKind::GraphAllGather:
      case OpKind::GraphReduceScatter:
      case OpKind::GraphBroadcast:
      case OpKind::GraphSendRecv: return collective(op);
      case OpKind::GraphSend:
      case OpKind::GraphRecv: return transfer(op);
      case OpKind::Call: return call(op);
      case OpKind::GraphLaunch:
        report_at<DiagnosticKind::IrAutodiffKernel>(pass_, op, std::string(op->attr("kernel").string_value()));
        throw JvpFailed{};
      case OpKind::GraphGrad:
      case OpKind::GraphJvp:
        fail(op, "'" + std::string(op->name()) + "'", "a derivative inside a forward-mode derivative (higher order) is not supported yet");
      case OpKind::If: return branch(op);
      case OpKind::For: return loop(op);
      case OpKind::While: return while_loop(op);
      default: break;
    }
    fail(op, "'" + std::string(op->name()) + "'", "it has no tangent rule");
  }

  void elementwise(Operation* op) {
    Value* y = op->result();
    ScalarType t = y->type().scalar();
    Value* a = op->operand(0);
    Value* b = op->num_operands() > 1 ? op->operand(1) : nullptr;
    Value* ta = tangent_of(a);
    Value* tb = b ? tangent_of(b) : nullptr;
    auto zero = [&] { return scalar(0.0, t); };
    auto one = [&] { return scalar(1.0, t); };
    // d(y) = factor * da, when a has a tangent.
    auto unary = [&](Value* factor) { return set(y, fit(ew("mul", {ta, factor}), y)); };
    switch (elementwise_op(op)) {
      case ElementwiseOp::Add: return set(y, sum_terms(y, {ta, tb}));
      case ElementwiseOp::Sub: return set(y, sum_terms(y, {ta, tb ? ew("neg", {tb}) : nullptr}));
      case ElementwiseOp::Mul:
        return set(y, sum_terms(y, {ta ? ew("mul", {ta, b}) : nullptr, tb ? ew("mul", {a, tb}) : nullptr}));
      case ElementwiseOp::Div:
        // (da - y db) / b
        return set(y, sum_terms(y, {ta ? ew("div", {ta, b}) : nullptr,
                                    tb ? ew("neg", {ew("div", {ew("mul", {y, tb}), b})}) : nullptr}));
      case ElementwiseOp::Pow: {
        Value* da = nullptr;
        if (ta) {
          // b * a^(b - 1)
          Value* b_minus_one;
          if (b->type().is(TypeKind::Tensor)) {
            b_minus_one = ew("sub", {b, one()});
          } else {
            Type st = b->type();
            b_minus_one = builder_.create(OpKind::SubF, {b, builder_.constant_float(1.0, st)}, {st})->result();
          }
          da = ew("mul", {ta, ew("mul", {ew("pow", {a, b_minus_one}), b})});
        }
        Value* db = tb ? ew("mul", {tb, ew("mul", {y, log_of(a)})}) : nullptr;
        return set(y, sum_terms(y, {da, db}));
      }
      case ElementwiseOp::Max:
      case ElementwiseOp::Min: {
        // Ties take the mean of the two tangents (JAX splits the gradient).
        bool max = elementwise_op(op) == ElementwiseOp::Max;
        Value* wins = ew(max ? "gt" : "lt", {a, b});
        Value* tie = ew("eq", {a, b});
        Value* share_a = ew("select", {wins, one(), ew("select", {tie, scalar(0.5, t), zero()})});
        return set(y, sum_terms(y, {ta ? ew("mul", {ta, share_a}) : nullptr,
                                    tb ? ew("mul", {tb, ew("sub", {one(), share_a})}) : nullptr}));
      }
      case ElementwiseOp::Neg: return set(y, fit(ew("neg", {ta}), y));
      case ElementwiseOp::Abs:
        return unary(ew("select", {ew("gt", {a, zero()}), one(),
                                   ew("select", {ew("lt", {a, zero()}), scalar(-1.0, t), zero()})}));
      case ElementwiseOp::Exp: return unary(y);
      case ElementwiseOp::Log: return set(y, fit(ew("div", {ta, a}), y));
      case ElementwiseOp::Sqrt: return set(y, fit(ew("div", {ta, ew("mul", {y, scalar(2.0, t)})}), y));
      case ElementwiseOp::Rsqrt: return unary(ew("div", {ew("mul", {y, scalar(-0.5, t)}), a}));
      case ElementwiseOp::Tanh: return unary(ew("sub", {one(), ew("mul", {y, y})}));
      case ElementwiseOp::Sin: return unary(ew("cos", {a}));
      case ElementwiseOp::Cos: return set(y, fit(ew("neg", {ew("mul", {ta, ew("sin", {a})})}), y));
      case ElementwiseOp::Sigmoid: return unary(ew("mul", {y, ew("sub", {one(), y})}));
      case ElementwiseOp::Relu: return set(y, fit(ew("select", {ew("gt", {a, zero()}), ta, zero()}), y));
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
        return unary(ew("add", {left, right}));
      }
      case ElementwiseOp::Silu: {
        Value* s = ew("sigmoid", {a});
        return unary(ew("mul", {s, ew("add", {one(), ew("mul", {a, ew("sub", {one(), s})})})}));
      }
      case ElementwiseOp::Copy: return set(y, fit(ta, y));
      case ElementwiseOp::Mod:
        // a - b floor(a / b)
        return set(y, sum_terms(y, {ta, tb ? ew("neg", {ew("mul", {tb, ew("floordiv", {a, b})})}) : nullptr}));
      case ElementwiseOp::Select: {
        Value* c = op->operand(2);
        Value* tc = tangent_of(c);
        if (!tb && !tc) return;
        return set(y, fit(ew("select", {a, tb ? tb : zero(), tc ? tc : zero()}), y));
      }
      // Piecewise constant: a zero tangent.
      case ElementwiseOp::Floor:
      case ElementwiseOp::Ceil:
      case ElementwiseOp::Round:
      case ElementwiseOp::FloorDiv: return;
      // Bool or integer results (never reached: no float result).
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
    Value* tx = tangent_of(x);
    switch (reduce_kind(op)) {
      // Linear: the same reduction of the tangent.
      case ReduceKind::Sum:
      case ReduceKind::Mean: return set(y, clone_with(op, {{x, tx}}));
      case ReduceKind::Max:
      case ReduceKind::Min: {
        // The mean of the tangents of the elements equal to the extremum
        // (ties share, as the reverse rule splits the gradient).
        std::vector<int64_t> axes = op->attr("axes").int_array();
        bool keep = op->has_attr("keepdims");
        ScalarType t = x->type().scalar();
        Value* hit = ew("eq", {x, with_reduced_axes(y, x, axes, keep)});
        auto summed = [&](Value* v) { return sum(v, axes, keep); };
        Value* hits = summed(ew("select", {hit, scalar(1.0, t), scalar(0.0, t)}));
        Value* total = summed(ew("select", {hit, tx, scalar(0.0, t)}));
        return set(y, fit(ew("div", {total, hits}), y));
      }
      case ReduceKind::Prod: {
        // The sum over each group of t_i times the product of the others
        // (graph_building.h, shared with the reverse rule: exact with zeros).
        std::vector<int64_t> axes = op->attr("axes").int_array();
        bool keep = op->has_attr("keepdims");
        Value* others = product_of_others(x, with_reduced_axes(y, x, axes, keep), axes);
        return set(y, fit(sum(ew("mul", {tx, others}), axes, keep), y));
      }
    }
  }

  // --- collectives (docs/language/autodiff.md, "Collectives") -----------------------
  // The linear ones: the tangent is the same collective applied to the
  // tangent, on every rank (the SPMD program runs it everywhere, in the
  // same order as the primal ones). Reductions by max, min or prod have no
  // rule yet, as in reverse mode.
  void collective(Operation* op) {
    std::string reduction = op->attr("op") ? std::string(op->attr("op").string_value()) : "sum";
    if (reduction != "sum" && reduction != "mean")
      fail(op, "'" + std::string(op->name()) + "' with op '" + reduction + "'",
           "only sum and mean (avg) reductions have a tangent rule");
    set(op->result(), clone_with(op, {{op->operand(0), tangent_or_zero(op->operand(0))}}));
  }
  // send / recv: a companion of the same attributes right after the primal
  // one moves the tangent (zero when the value has none) the same way.
  void transfer(Operation* op) {
    IRMapping mapping;
    mapping.map(op->operand(0), tangent_or_zero(op->operand(0)));
    Operation* copy = op->clone(mapping);
    op->block()->insert_before(builder_.insertion_point(), copy);
    if (op->is(OpKind::GraphRecv)) set(op->result(), copy->result());
  }

  // --- control flow (docs/language/autodiff.md, "Control flow") --------------------
  // An scf.if keeps its condition; each branch computes its primal values
  // and, after them, their tangents, which the if yields as extra results
  // (zero from a branch whose value has none). Never a select of the two
  // branches: the branch not taken could give a NaN or infinite tangent
  // (sqrt at 0), and 0 * NaN is NaN.
  void branch(Operation* op) {
    Block* blocks[2] = {&op->region(0).front(), &op->region(1).front()};
    for (Block* block : blocks) linearize_block(*block);
    std::vector<unsigned> with_tangent;
    for (unsigned i = 0; i < op->num_results(); ++i) {
      if (!is_float_tensor(op->result(i))) continue;
      bool any = false;
      for (Block* block : blocks) any = any || tangent_.count(block->terminator()->operand(i));
      if (any) with_tangent.push_back(i);
    }
    for (Block* block : blocks) {
      Operation* yield = block->terminator();
      builder_.set_insertion_point(yield);
      builder_.set_location(yield->loc());
      for (unsigned i : with_tangent) yield->append_operand(tangent_or_zero(yield->operand(i)));
    }
    for (unsigned i : with_tangent) tangent_[op->result(i)] = op->append_result(op->result(i)->type());
  }

  // Which of a loop's carried values (its results) get a tangent: those
  // whose initial value (operand `first_initial + i`) has one, then, until
  // nothing changes, those whose value leaving an iteration (`exits(i)`)
  // depends on a value with a tangent: from outside, from a carried value
  // that has one (`arguments(i)`: the block arguments standing for it), or
  // from a recv. Float tensors only; in order.
  std::vector<unsigned> carried_tangents(Operation* op, unsigned first_initial, std::initializer_list<Block*> blocks,
                                         const std::function<std::vector<Value*>(unsigned)>& arguments,
                                         const std::function<std::vector<Value*>(unsigned)>& exits) {
    unsigned n = op->num_results();
    std::vector<bool> carried(n);
    for (unsigned i = 0; i < n; ++i)
      carried[i] = is_float_tensor(op->result(i)) && tangent_.count(op->operand(first_initial + i));
    for (bool changed = true; changed;) {
      std::unordered_set<Value*> inside;
      auto has = [&](Value* v) { return tangent_.count(v) || inside.count(v); };
      for (unsigned i = 0; i < n; ++i)
        if (carried[i])
          for (Value* a : arguments(i)) inside.insert(a);
      for (Block* block : blocks)
        for (Operation* nested : *block) {
          bool reads = has_float_transfer(nested);
          for (Value* v : inputs_of(nested)) reads = reads || has(v);
          if (reads)
            for (Value* r : nested->results())
              if (is_float_tensor(r)) inside.insert(r);
        }
      changed = false;
      for (unsigned i = 0; i < n; ++i) {
        if (carried[i] || !is_float_tensor(op->result(i))) continue;
        bool depends = false;
        for (Value* v : exits(i)) depends = depends || has(v);
        if (!depends) continue;
        carried[i] = true;
        changed = true;
      }
    }
    std::vector<unsigned> with_tangent;
    for (unsigned i = 0; i < n; ++i)
      if (carried[i]) with_tangent.push_back(i);
    return with_tangent;
  }

  // An scf.for carries the tangents of its float loop-carried values that
  // depend on a value with a tangent as extra loop-carried values (their
  // initial values the tangents of the initial values, or zero), and its
  // body computes them after the primal operations. Nothing is unrolled, so
  // the trip count may be known only at run time.
  void loop(Operation* op) {
    Block& body = op->region(0).front();
    Operation* yield = body.terminator();
    std::vector<unsigned> with_tangent = carried_tangents(
        op, 3, {&body}, [&](unsigned i) { return std::vector<Value*>{body.argument(1 + i)}; },
        [&](unsigned i) { return std::vector<Value*>{yield->operand(i)}; });
    if (with_tangent.empty()) {  // no tangent leaves the loop; sends and recvs in it still get theirs
      if (has_float_transfer(op)) linearize_block(body);
      return;
    }
    builder_.set_insertion_point(op);
    for (unsigned i : with_tangent) {
      op->append_operand(tangent_or_zero(op->operand(3 + i)));
      tangent_[body.argument(1 + i)] = body.add_argument(op->result(i)->type());
    }
    linearize_block(body);
    builder_.set_insertion_point(yield);
    builder_.set_location(yield->loc());
    for (unsigned i : with_tangent) yield->append_operand(tangent_or_zero(yield->operand(i)));
    for (unsigned i : with_tangent) tangent_[op->result(i)] = op->append_result(op->result(i)->type());
  }

  // An scf.while carries tangents as an scf.for does: each float carried
  // value that depends on a value with a tangent gets one, appended to the
  // operands, to both regions' arguments, to the values scf.condition
  // forwards, to the body's yield and to the results. Both regions are
  // linearized (the condition region may compute the forwarded values); the
  // condition itself, a bool, has no tangent, so the tangent loop runs
  // exactly the primal loop's iterations.
  void while_loop(Operation* op) {
    Block& before = op->region(0).front();
    Block& after = op->region(1).front();
    Operation* condition = before.terminator();
    Operation* yield = after.terminator();
    unsigned n = op->num_operands();
    bool same = n == op->num_results();
    for (unsigned i = 0; same && i < n; ++i) same = op->operand(i)->type() == op->result(i)->type();
    if (!same)
      fail(op, "the 'while' loop", "its condition forwards values other than the ones it carries");
    std::vector<unsigned> with_tangent = carried_tangents(
        op, 0, {&before, &after},
        [&](unsigned i) { return std::vector<Value*>{before.argument(i), after.argument(i)}; },
        [&](unsigned i) { return std::vector<Value*>{condition->operand(1 + i), yield->operand(i)}; });
    if (with_tangent.empty()) {  // no tangent leaves the loop; sends and recvs in it still get theirs
      if (has_float_transfer(op)) {
        linearize_block(before);
        linearize_block(after);
      }
      return;
    }
    builder_.set_insertion_point(op);
    for (unsigned i : with_tangent) {
      op->append_operand(tangent_or_zero(op->operand(i)));
      tangent_[before.argument(i)] = before.add_argument(op->result(i)->type());
    }
    linearize_block(before);
    builder_.set_insertion_point(condition);
    builder_.set_location(condition->loc());
    for (unsigned i : with_tangent) condition->append_operand(tangent_or_zero(condition->operand(1 + i)));
    for (unsigned i : with_tangent) tangent_[after.argument(i)] = after.add_argument(op->result(i)->type());
    linearize_block(after);
    builder_.set_insertion_point(yield);
    builder_.set_location(yield->loc());
    for (unsigned i : with_tangent) yield->append_operand(tangent_or_zero(yield->operand(i)));
    for (unsigned i : with_tangent) tangent_[op->result(i)] = op->append_result(op->result(i)->type());
  }

  // A call left after inlining: a custom rule's (custom_jvp: the rule gives
  // outputs and tangents) or a call of the callee's derived function.
  void call(Operation* op) {
    std::vector<Value*> operands = op->operands();
    std::string callee_name(op->attr("callee").string_value());
    Operation* callee = lookup_function(module_, callee_name);
    if (!callee) internal_error("jvp", "a call of a missing function");
    Operation* target = nullptr;
    bool rule = op->has_attr("custom_jvp");
    if (rule) {
      target = lookup_function(module_, op->attr("custom_jvp").string_value());
      if (!target) internal_error("jvp", "a custom_jvp rule names a missing function");
      // The rule takes (primals, tangents): one tangent per argument.
      for (Value* v : op->operands()) operands.push_back(tangent_or_zero(v));
    } else {
      if (callee->region(0).empty())
        fail(op, "a call of '@" + callee_name + "'", "it has no body to differentiate");
      target = derive_jvp(state_, callee, op);
      if (!target) throw JvpFailed{};
      for (Value* v : op->operands())
        if (is_float_tensor(v)) operands.push_back(tangent_or_zero(v));
    }
    Type fn = target->attr("function_type").type();
    std::vector<Type> results;
    for (size_t i = 0; i < fn.num_results(); ++i) results.push_back(fn.result(i));
    Operation* replacement = builder_.create(OpKind::Call, std::span<Value* const>(operands), std::span<const Type>(results),
                                             {{"callee", context_.symbol_attr(target->symbol_name())}});
    unsigned n = op->num_results();
    if (replacement->num_results() < n) internal_error("jvp", "a derived function with too few results");
    unsigned next = n;
    for (unsigned i = 0; i < n; ++i) {
      Value* y = op->result(i);
      y->replace_all_uses_with(replacement->result(i));
      if (rule || is_float_tensor(y)) {
        if (next >= replacement->num_results()) internal_error("jvp", "a derived function with too few tangents");
        Value* t = replacement->result(next++);
        if (is_float_tensor(y)) tangent_[replacement->result(i)] = t;
      }
    }
  }

  JvpState& state_;
  PassContext& pass_;
  Operation* module_;
  Operation* function_;
  std::unordered_map<Value*, Value*> tangent_;
};

// The derived function @f.jvp of `source`, made on first use (`at`: the
// operation reported when it cannot be).
Operation* derive_jvp(JvpState& state, Operation* source, Operation* at) {
  PassContext& pass = state.pass;
  Operation* module = state.module;
  std::string name = std::string(source->symbol_name()) + ".jvp";
  if (Operation* existing = lookup_function(module, name)) return existing;
  if (source->region(0).num_blocks() != 1) {
    report_at<DiagnosticKind::IrAutodiffUnsupported>(pass, at, "'@" + std::string(source->symbol_name()) + "'",
                                                     "it has no body or more than one block");
    return nullptr;
  }
  // A graph.jvp inside the source (forward over forward) first becomes a
  // call, which is then differentiated like any other.
  if (!replace_jvps(state, source)) return nullptr;
  Type source_type = source->attr("function_type").type();
  std::vector<Type> inputs, results;
  for (size_t i = 0; i < source_type.num_inputs(); ++i) inputs.push_back(source_type.input(i));
  for (size_t i = 0; i < source_type.num_inputs(); ++i)
    if (is_float_tensor(source_type.input(i))) inputs.push_back(source_type.input(i));
  for (size_t i = 0; i < source_type.num_results(); ++i) results.push_back(source_type.result(i));
  for (size_t i = 0; i < source_type.num_results(); ++i)
    if (is_float_tensor(source_type.result(i))) results.push_back(source_type.result(i));
  std::vector<NamedAttribute> attributes{{"sym_name", pass.context.string_attr(name)},
                                         {"function_type", pass.context.type_attr(pass.context.function_type(inputs, results))}};
  Operation* derived = Operation::create(OpKind::Func, source->loc(), {}, {}, std::move(attributes), 1);
  Block* entry = derived->region(0).add_block();
  Block& body = source->region(0).front();
  IRMapping mapping;
  std::vector<std::pair<Value*, Value*>> tangents;
  for (unsigned i = 0; i < body.num_arguments(); ++i) mapping.map(body.argument(i), entry->add_argument(inputs[i]));
  for (unsigned i = 0; i < body.num_arguments(); ++i)
    if (is_float_tensor(inputs[i])) tangents.push_back({entry->argument(i), entry->add_argument(inputs[i])});
  for (Operation* op : body) entry->push_back(op->clone(mapping));
  // Before the source, so that a recursive use finds it (and the derivation
  // of a callee lands before its caller's).
  module->region(0).front().insert_before(source->next(), derived);
  decompose_graph_operations(derived, pass.context);
  try {
    Linearization linearization(state, derived);
    std::vector<Value*> out_tangents = linearization.run(tangents);
    Operation* ret = entry->terminator();
    std::vector<Value*> returned = ret->operands();
    returned.insert(returned.end(), out_tangents.begin(), out_tangents.end());
    Builder builder(pass.context);
    builder.set_insertion_point(ret);
    builder.set_location(ret->loc());
    builder.create(OpKind::Return, std::span<Value* const>(returned), std::span<const Type>{});
    ret->erase();
  } catch (JvpFailed&) {
    derived->erase();
    return nullptr;
  }
  return derived;
}

}  // namespace

void run_jvp_pass(Operation* module, PassContext& context) {
  JvpState state{context, module, {}};
  replace_jvps(state, module);
  // The rules have been used: the calls inline like any other from here.
  module->walk([&](Operation* op) {
    if (op->is(OpKind::Call) && op->has_attr("custom_jvp")) op->remove_attr("custom_jvp");
  });
}

namespace {

// Replaces each graph.jvp inside `root` with a call of its derived function;
// false when one could not be derived (reported).
bool replace_jvps(JvpState& state, Operation* root) {
  PassContext& pass = state.pass;
  Operation* module = state.module;
  // One at a time: deriving a function replaces the graph.jvp inside it too.
  std::set<Operation*> left;  // could not be replaced (reported)
  bool ok = true;
  while (true) {
    Operation* jvp = nullptr;
    root->walk([&](Operation* op) {
      if (!jvp && op->is(OpKind::GraphJvp) && !left.count(op)) jvp = op;
    });
    if (!jvp) break;
    Operation* source = lookup_function(module, jvp->attr("of").string_value());
    Operation* derived = source && !state.failed.count(source) ? derive_jvp(state, source, jvp) : nullptr;
    if (!derived) {
      if (source) state.failed.insert(source);  // reported once
      left.insert(jvp);
      ok = false;
      continue;
    }
    Builder builder(pass.context);
    builder.set_insertion_point(jvp);
    builder.set_location(jvp->loc());
    std::vector<Value*> operands = jvp->operands();
    std::vector<Type> results = jvp->result_types();
    Operation* call = builder.create(OpKind::Call, std::span<Value* const>(operands), std::span<const Type>(results),
                                     {{"callee", pass.context.symbol_attr(derived->symbol_name())}});
    for (unsigned i = 0; i < jvp->num_results(); ++i) jvp->result(i)->replace_all_uses_with(call->result(i));
    jvp->erase();
  }
  return ok;
}

}  // namespace

}  // namespace tessera::ir
