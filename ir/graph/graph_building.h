// Building Graph IR operations in the passes that derive functions
// (autodiff.cpp: reverse mode, jvp.cpp: forward mode) and in graph-decompose
// (decompose.cpp, whose attention gradient sums broadcast operands too). Each operation built
// is typed by infer_graph_result, so a mistake is an internal error at the
// pass that made it, not invalid IR later.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/core/builder.h"
#include "ir/core/graph_shapes.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::ir {

// The values the operations nested in `op`'s regions read from outside it,
// in order of first use.
inline std::vector<Value*> values_read_inside(Operation* op) {
  std::vector<Value*> out;
  std::unordered_set<Value*> seen;
  for (unsigned r = 0; r < op->num_regions(); ++r) {
    for (size_t b = 0; b < op->region(r).num_blocks(); ++b) {
      for (Operation* nested : op->region(r).block(b)) {
        nested->walk(
            [&](Operation* inner) {
              for (Value* v : inner->operands()) {
                Operation* owner = v->is_block_argument() ? v->owner_block()->parent_op() : v->defining_op();
                bool inside = owner && (owner == op ? v->is_block_argument() : op->is_proper_ancestor_of(owner));
                if (!inside && seen.insert(v).second) out.push_back(v);
              }
            },
            WalkOrder::PreOrder);
      }
    }
  }
  return out;
}

// What an operation reads: its operands, then what its regions read from outside.
inline std::vector<Value*> inputs_of(Operation* op) {
  std::vector<Value*> inputs = op->operands();
  if (op->num_regions() == 0) return inputs;
  for (Value* v : values_read_inside(op))
    if (std::find(inputs.begin(), inputs.end(), v) == inputs.end()) inputs.push_back(v);
  return inputs;
}

class GraphBuilding {
 protected:
  GraphBuilding(Context& context, std::string_view pass) : context_(context), builder_(context), pass_name_(pass) {}

  // An operation of `kind`; its result type is inferred (`declared` only
  // fixes what inference needs: a reshape's or a cast's target).
  Value* make(OpKind kind, std::vector<Value*> operands, Type declared, std::vector<NamedAttribute> attributes = {}) {
    Operation* op = builder_.create(kind, std::span<Value* const>(operands), std::span<const Type>(&declared, 1),
                                    std::move(attributes));
    std::string why;
    std::optional<GraphResult> r = infer_graph_result(op, 0, why);
    if (!r) internal_error(std::string(pass_name_), "built an invalid '" + std::string(op->name()) + "': " + why);
    op->result()->set_type(r->type(context_));
    return op->result();
  }
  Value* ew(std::string_view fn, std::vector<Value*> operands) {
    return make(OpKind::GraphElementwise, std::move(operands), context_.tensor_type({}, ScalarType::F32),
                {{"op", context_.string_attr(fn)}});
  }
  Value* scalar(double v, ScalarType element) { return builder_.constant_float(v, context_.scalar_type(element)); }
  // log(a) for the rules of `pow`: `a` may be a scalar (`2.0 ** x`), which
  // graph.elementwise does not take alone (it needs a tensor operand).
  Value* log_of(Value* a) {
    if (a->type().is(TypeKind::Tensor)) return ew("log", {a});
    return builder_.create(OpKind::Log, {a}, {a->type()})->result();
  }
  // Dimension `axis` of `x`: a constant, or graph.dim.
  Value* dim(Value* x, size_t axis) {
    int64_t d = x->type().shape()[axis];
    if (d != kDynamic) return builder_.constant_index(d);
    return builder_
        .create(OpKind::GraphDim, {x}, {context_.index_type()}, {{"axis", context_.int_attr(static_cast<int64_t>(axis))}})
        ->result();
  }
  // Index operands for the `?` dimensions of `dims`, read from `like`'s
  // dimension `from[d]` for dimension d.
  std::vector<Value*> dynamic_sizes(const std::vector<int64_t>& dims, Value* like, const std::vector<size_t>& from) {
    std::vector<Value*> sizes;
    for (size_t d = 0; d < dims.size(); ++d)
      if (dims[d] == kDynamic) sizes.push_back(dim(like, from[d]));
    return sizes;
  }
  // Index operands for the `?` dimensions of `like` itself.
  std::vector<Value*> dynamic_sizes(Value* like) {
    std::vector<int64_t> dims(like->type().shape().begin(), like->type().shape().end());
    return dynamic_sizes(dims, like, identity(dims.size()));
  }
  static std::vector<size_t> identity(size_t rank) {
    std::vector<size_t> axes(rank);
    for (size_t i = 0; i < rank; ++i) axes[i] = i;
    return axes;
  }
  Value* reshape(Value* x, Type to, std::vector<Value*> sizes) {
    std::vector<Value*> operands{x};
    operands.insert(operands.end(), sizes.begin(), sizes.end());
    return make(OpKind::GraphReshape, operands, to);
  }
  // `x` broadcast to `like`'s shape (select(true, x, x), as decompose does).
  Value* broadcast_like(Value* x, Value* like) {
    if (x->type().shape().size() == like->type().rank() &&
        std::equal(x->type().shape().begin(), x->type().shape().end(), like->type().shape().begin()))
      return x;
    std::vector<int64_t> dims(like->type().shape().begin(), like->type().shape().end());
    Value* yes = make(OpKind::GraphConstant, dynamic_sizes(dims, like, identity(dims.size())),
                      context_.tensor_type(dims, ScalarType::Bool), {{"value", context_.bool_attr(true)}});
    return ew("select", {yes, x, x});
  }
  Value* reduce_with(std::string_view kind, Value* x, const std::vector<int64_t>& axes, bool keep) {
    std::vector<NamedAttribute> attributes{{"kind", context_.string_attr(kind)},
                                           {"axes", context_.int_array_attr(axes)}};
    if (keep) attributes.push_back({"keepdims", context_.unit_attr()});
    return make(OpKind::GraphReduce, {x}, context_.tensor_type({}, x->type().scalar()), std::move(attributes));
  }
  Value* sum(Value* x, const std::vector<int64_t>& axes, bool keep) { return reduce_with("sum", x, axes, keep); }
  // `v`, a reduction of `x` over `axes` without keepdims, with those axes
  // kept (size 1); `v` itself when `keep` (it has them already).
  Value* with_reduced_axes(Value* v, Value* x, const std::vector<int64_t>& axes, bool keep) {
    if (keep) return v;
    std::vector<int64_t> dims(x->type().shape().begin(), x->type().shape().end());
    for (int64_t a : axes) dims[static_cast<size_t>(a)] = 1;
    return reshape(v, context_.tensor_type(dims, v->type().scalar()), dynamic_sizes(dims, x, identity(dims.size())));
  }

  // For y = prod(x, axes) (`y_kept`: y with the reduced axes kept), the
  // product of the other elements of each element's group, d y / d x_i, of
  // x's shape: the reverse rule (autodiff.cpp) multiplies it by the
  // gradient, the tangent rule (jvp.cpp) by the tangent before summing.
  // Exact with zeros (never y / x, NaN at a zero). At a nonzero x_i:
  // y / x_i. At a zero: with no other zero in the group, p (the product of
  // the nonzero elements); with one other zero z, p z (0, but its
  // derivative in z is p); with more, 0. Written so that its own derivative
  // is right too (higher order): every value keeps its dependence on the
  // elements, and the division is by x with its zeros replaced by 1, so no
  // infinity appears even where select drops it.
  Value* product_of_others(Value* x, Value* y_kept, const std::vector<int64_t>& axes) {
    ScalarType t = x->type().scalar();
    Value* zero = scalar(0.0, t);
    Value* one = scalar(1.0, t);
    Value* is_zero = ew("eq", {x, zero});
    Value* nonzero = ew("select", {is_zero, one, x});
    Value* product = reduce_with("prod", nonzero, axes, true);
    Value* zeros = sum(ew("select", {is_zero, one, zero}), axes, true);
    Value* zero_sum = sum(ew("select", {is_zero, x, zero}), axes, true);
    Value* other_zero = ew("sub", {zero_sum, x});
    Value* at_zero = ew("select", {ew("eq", {zeros, one}), product,
                                   ew("select", {ew("eq", {zeros, scalar(2.0, t)}),
                                                 ew("mul", {product, other_zero}), zero})});
    return ew("select", {is_zero, at_zero, ew("div", {broadcast_like(y_kept, x), nonzero})});
  }

  // `x` in `like`'s shape, keeping x's element type (a gradient reaches a
  // value of another float type through a cast; callers convert it).
  Value* reshape_like(Value* x, Value* like) {
    Type target = context_.tensor_type(like->type().shape(), x->type().scalar());
    if (x->type() == target) return x;
    std::vector<int64_t> dims(like->type().shape().begin(), like->type().shape().end());
    return reshape(x, target, dynamic_sizes(dims, like, identity(dims.size())));
  }
  // `g` (of a broadcast result's shape) summed over the leading dimensions
  // `like` lacks and those where `like` has a 1, then shaped as `like`: the
  // gradient of a broadcast operand.
  Value* unbroadcast(Value* g, Value* like) {
    Type gt = g->type(), lt = like->type();
    if (gt == lt) return g;
    size_t r = gt.rank(), s = lt.rank();
    if (s > r) internal_error(std::string(pass_name_), "a gradient of lower rank than its value");
    std::vector<int64_t> axes;
    for (size_t d = 0; d < r; ++d)
      if (d < r - s || (lt.shape()[d - (r - s)] == 1 && gt.shape()[d] != 1)) axes.push_back(static_cast<int64_t>(d));
    return reshape_like(axes.empty() ? g : sum(g, axes, false), like);
  }

  // A tensor of `like`'s type filled with `v`.
  Value* constant_like(Value* like, double v) {
    Type t = like->type();
    Attribute value = is_float(t.scalar()) ? context_.float_attr(v) : context_.int_attr(static_cast<int64_t>(v));
    return make(OpKind::GraphConstant, dynamic_sizes(like), t, {{"value", value}});
  }

  // `s = graph.item t` of a differentiated 0-d float tensor (reverse or
  // forward mode): the number read back to the host (`float(t)`, a `@jit`
  // parameter `s: f32` given `ts.sum(x)`, a `-> f32` result). Graph
  // operations that read `s` read `t` instead (a 0-d tensor broadcasts as
  // the number did), and host arithmetic on `s` whose result graph code
  // reads gets a twin on 0-d tensors (`s * s` as graph.elementwise "mul"),
  // so the derivative flows through them. Returns an operation the
  // derivative cannot flow through although its result reaches graph code,
  // a branch's or loop's result or the function's (other than `ret`: the
  // caller seeds a number result at its twin, number_twins_); the caller
  // reports it (its
  // derivative would be dropped: a wrong number). Null when none.
  // Comparisons and printing need none.
  Operation* read_back(Operation* item, Operation* ret) { return number_as_tensor(item->result(), item->operand(0), ret); }
  // The same for a number `s` and the 0-d tensor `t` of its value (a
  // differentiated `f32` parameter, `t = select(true, s, s)`).
  Operation* number_as_tensor(Value* s, Value* t, Operation* ret) {
    if (!is_float(s->type().scalar()) || t->type().scalar() != s->type().scalar()) return nullptr;
    std::unordered_map<Value*, Value*>& twin = number_twins_;
    twin[s] = t;
    std::vector<Value*> work{s};
    while (!work.empty()) {
      Value* v = work.back();
      work.pop_back();
      Value* tv = twin.at(v);
      v->replace_uses_if(tv, [&](OpOperand& use) {
        Operation* user = use.owner();
        if (!user->is(OpKind::GraphElementwise) || user == tv->defining_op()) return false;
        for (Value* o : user->operands())
          if (o != v && o->type().scalar() != v->type().scalar()) return false;
        return true;
      });
      for (OpOperand* use : v->uses()) {
        Operation* user = use->owner();
        if (user == ret || user == tv->defining_op()) continue;
        bool one_float = user->num_results() == 1 && is_float(user->result()->type().scalar());
        if (one_float && twin.count(user->result())) continue;  // `s * s`: its second use
        std::string_view op = elementwise_twin(user->kind());
        if (!op.empty() && one_float && user->result()->type() == v->type()) {
          std::vector<Value*> operands;
          for (Value* o : user->operands()) operands.push_back(twin.count(o) ? twin.at(o) : o);
          builder_.set_insertion_point_after(user);
          builder_.set_location(user->loc());
          twin[user->result()] = ew(op, operands);
          work.push_back(user->result());
          continue;
        }
        if (reaches_graph(user)) return user;
      }
    }
    return nullptr;
  }
  // The graph.elementwise operation computing what a host float operation
  // does ("" for none).
  static std::string_view elementwise_twin(OpKind kind) {
    switch (kind) {
      case OpKind::AddF: return "add";
      case OpKind::SubF: return "sub";
      case OpKind::MulF: return "mul";
      case OpKind::DivF: return "div";
      case OpKind::NegF: return "neg";
      case OpKind::MaxF: return "max";
      case OpKind::MinF: return "min";
      case OpKind::PowF: return "pow";
      case OpKind::Exp: return "exp";
      case OpKind::Log: return "log";
      case OpKind::Sqrt: return "sqrt";
      case OpKind::Rsqrt: return "rsqrt";
      case OpKind::Tanh: return "tanh";
      case OpKind::Sin: return "sin";
      case OpKind::Cos: return "cos";
      case OpKind::AbsF: return "abs";
      default: return "";
    }
  }
  // Whether `op`'s results reach graph code, a branch's or loop's result,
  // the function's or a call, through host operations (`op` itself one).
  // A comparison's bool or an integer carries no derivative.
  static bool reaches_graph(Operation* op) {
    if (op->name().starts_with("graph.") || op->is(OpKind::Yield) || op->is(OpKind::Return) || op->is(OpKind::Call))
      return true;
    for (Value* r : op->results()) {
      if (!is_float(r->type().scalar())) continue;
      for (OpOperand* use : r->uses())
        if (reaches_graph(use->owner())) return true;
    }
    return false;
  }
  static constexpr const char* kReadBackWhat = "through the number read back from a tensor";
  static constexpr const char* kReadBackWhy =
      "the host computes with it by an operation whose derivative is not followed (only + - * / ** and the math "
      "functions of numbers are), and its derivative would be lost: compute with the 0-d tensor instead";

  Context& context_;
  Builder builder_;
  // A number's 0-d tensor twin (number_as_tensor).
  std::unordered_map<Value*, Value*> number_twins_;

 private:
  std::string_view pass_name_;
};

}  // namespace tessera::ir
