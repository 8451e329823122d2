// graph-decompose: composite graph operations written with the primitive
// ones, so that fusion (and the kernels generated from it) sees only
// elementwise operations, reductions, matmul and attention:
//
//   softmax(x, a)      m = max(x, a, keepdims); e = exp(x - m); e / sum(e, a, keepdims)
//   log_softmax(x, a)  (x - m) - log(sum(exp(x - m), a, keepdims))
//   layer norm         d = x - mean(x); d * rsqrt(mean(d * d) + eps) [* w] [+ b]   (over the last axis)
//   rms norm           x * rsqrt(mean(x * x) + eps) [* w]
//   attention          s = q @ k^T * scale (f32 for narrow q), masked with -inf
//                      above the diagonal when causal (key j > query i),
//                      softmax(s) @ v, cast to q's type; kept whole when a
//                      stdlib is given and it has the flash kernels' form
//                      (flash_attention_form: generate-kernels launches
//                      stdlib/attention.tsr's kernels, no S x S matrix)
//   attention_grad     p recomputed as above; dv = p^T do, ds = p (do v^T -
//                      rowsum(do o)), dq = scale ds k, dk = scale ds^T q;
//                      kept whole like attention
//   matmul             the form the stdlib GEMM takes: operands of one of
//                      its storage types (else both cast to f32) with the
//                      product in f32 and cast to the result type; batch
//                      dimensions equal (broadcast ones materialised), and
//                      [..., M, K] @ [K, N] folded into one [P*M, K] @ [K, N].
//                      f64 and integer products stay as they are (generated
//                      kernels compute them).
//
// A spelled-out softmax or norm is the same IR, so it fuses the same way.
#include <algorithm>
#include <cmath>

#include "ir/graph/decompose.h"

#include "ir/core/builder.h"
#include "ir/core/graph_ops.h"
#include "ir/core/graph_shapes.h"
#include "ir/core/schedule_hints.h"
#include "ir/graph/graph_building.h"
#include "ir/passes/passes.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::ir {

namespace {

class Decomposer : GraphBuilding {
 public:
  Decomposer(Context& context, Operation* op) : GraphBuilding(context, "graph-decompose"), op_(op) {
    builder_.set_insertion_point(op);
    builder_.set_location(op->loc());
  }

  Value* make(OpKind kind, std::vector<Value*> operands, std::vector<NamedAttribute> attributes) {
    Type placeholder = context_.tensor_type({}, ScalarType::F32);
    Operation* op = builder_.create(kind, std::span<Value* const>(operands), std::span<const Type>(&placeholder, 1),
                                    std::move(attributes));
    copy_schedule_hints(op_, op);  // an attention's tile reaches its products
    std::string why;
    std::optional<GraphResult> r = infer_graph_result(op, 0, why);
    internal_check(r.has_value(), "graph-decompose", "built an invalid graph operation");
    op->result()->set_type(r->type(context_));
    return op->result();
  }
  Value* elementwise(std::string_view fn, std::vector<Value*> operands) {
    return make(OpKind::GraphElementwise, std::move(operands), {{"op", context_.string_attr(fn)}});
  }
  Value* reduce(std::string_view kind, Value* x, int64_t axis) {
    return make(OpKind::GraphReduce, {x},
                {{"kind", context_.string_attr(kind)},
                 {"axes", context_.int_array_attr(std::vector<int64_t>{axis})},
                 {"keepdims", context_.unit_attr()}});
  }

  // An operation whose result type is `declared` (reshape, transpose's
  // shape follows from it, cast, constant, iota), checked against inference.
  Value* declared(OpKind kind, std::vector<Value*> operands, Type t, std::vector<NamedAttribute> attributes = {}) {
    Operation* op = builder_.create(kind, std::span<Value* const>(operands), std::span<const Type>(&t, 1),
                                    std::move(attributes));
    copy_schedule_hints(op_, op);
    std::string why;
    std::optional<GraphResult> r = infer_graph_result(op, 0, why);
    if (!r) internal_error("graph-decompose", "built an invalid '" + std::string(op->name()) + "': " + why);
    op->result()->set_type(r->type(context_));
    return op->result();
  }
  Value* index(int64_t v) { return builder_.constant_index(v); }
  Value* cast(Value* x, ScalarType to) {
    if (x->type().scalar() == to) return x;
    return declared(OpKind::GraphCast, {x}, context_.tensor_type(x->type().shape(), to));
  }
  // A tensor of `dims` (kDynamic where `sizes` has the value).
  Value* shaped(OpKind kind, std::vector<Value*> leading, const std::vector<int64_t>& dims,
                const std::vector<Value*>& sizes, ScalarType element, std::vector<NamedAttribute> attributes) {
    for (size_t a = 0; a < dims.size(); ++a)
      if (dims[a] == kDynamic) leading.push_back(sizes[a]);
    return declared(kind, leading, context_.tensor_type(dims, element), std::move(attributes));
  }
  Value* reshape(Value* x, const std::vector<int64_t>& dims, const std::vector<Value*>& sizes) {
    return shaped(OpKind::GraphReshape, {x}, dims, sizes, x->type().scalar(), {});
  }
  Value* swap_last_two(Value* x) {
    size_t r = x->type().rank();
    std::vector<int64_t> perm;
    for (size_t a = 0; a < r; ++a) perm.push_back(static_cast<int64_t>(a));
    std::swap(perm[r - 1], perm[r - 2]);
    Type placeholder = context_.tensor_type({}, ScalarType::F32);
    return declared(OpKind::GraphTranspose, {x}, placeholder, {{"perm", context_.int_array_attr(perm)}});
  }
  Value* matmul(Value* a, Value* b, ScalarType result) {
    Type placeholder = context_.tensor_type({}, result);
    return declared(OpKind::GraphMatmul, {a, b}, placeholder);
  }

  // `x` ([..., R, C]) broadcast to batch dims `batch` (with their sizes):
  // select(true, x, x) over the full shape makes every element.
  Value* broadcast_batch(Value* x, const std::vector<int64_t>& batch, const std::vector<Value*>& sizes) {
    Type t = x->type();
    size_t r = t.rank();
    std::vector<int64_t> dims = batch;
    std::vector<Value*> all = sizes;
    for (size_t a = r - 2; a < r; ++a) {
      dims.push_back(t.shape()[a]);
      all.push_back(dim(x, a));
    }
    Value* yes = shaped(OpKind::GraphConstant, {}, dims, all, ScalarType::Bool, {{"value", context_.bool_attr(true)}});
    return elementwise("select", {yes, x, x});
  }

  Value* matmul_normalized() {
    Value* a = op_->operand(0);
    Value* b = op_->operand(1);
    Type ct = op_->result()->type();
    ScalarType result = ct.scalar();
    auto stdlib_storage = [](ScalarType s) {
      return s == ScalarType::F32 || s == ScalarType::F16 || s == ScalarType::BF16 || s == ScalarType::FP8E4M3 ||
             s == ScalarType::FP8E5M2;
    };
    ScalarType accumulate = result;
    if (is_float(result) && result != ScalarType::F64) {
      accumulate = ScalarType::F32;
      if (a->type().scalar() != b->type().scalar() || !stdlib_storage(a->type().scalar())) {
        a = cast(a, ScalarType::F32);
        b = cast(b, ScalarType::F32);
      }
    } else {
      a = cast(a, result);
      b = cast(b, result);
    }
    size_t ra = a->type().rank(), rb = b->type().rank(), rc = ct.rank();
    Value* product;
    if (rb == 2 && ra > 2) {
      // [..., M, K] @ [K, N]: one [P*M, K] @ [K, N].
      int64_t rows = 1;
      Value* rows_size = index(1);
      for (size_t d = 0; d + 1 < ra; ++d) {
        int64_t s = a->type().shape()[d];
        rows = rows == kDynamic || s == kDynamic ? kDynamic : rows * s;
        rows_size = builder_.create(OpKind::MulI, {rows_size, dim(a, d)}, {context_.index_type()})->result();
      }
      int64_t k = a->type().shape()[ra - 1];
      Value* flat = reshape(a, {rows, k}, {rows_size, dim(a, ra - 1)});
      Value* p = matmul(flat, b, accumulate);
      std::vector<int64_t> dims(ct.shape().begin(), ct.shape().end());
      std::vector<Value*> sizes;
      for (size_t d = 0; d + 1 < ra; ++d) sizes.push_back(dim(a, d));
      sizes.push_back(dim(p, 1));
      product = reshape(p, dims, sizes);
    } else {
      std::vector<int64_t> batch(ct.shape().begin(), ct.shape().end() - 2);
      std::vector<int64_t> a_batch(a->type().shape().begin(), a->type().shape().end() - 2);
      std::vector<int64_t> b_batch(b->type().shape().begin(), b->type().shape().end() - 2);
      bool dynamic = std::count(batch.begin(), batch.end(), kDynamic) > 0;
      if (a_batch != batch || b_batch != batch || (dynamic && a != b)) {
        std::vector<Value*> sizes;
        for (size_t d = 0; d < batch.size(); ++d) {
          // The broadcast size, NumPy's: b's where a's is 1, else a's (a
          // missing dim is 1; not the larger: 0 against 1 is 0).
          auto side = [&](Value* x, size_t rank) -> Value* {
            int64_t at = static_cast<int64_t>(d) - static_cast<int64_t>(rc - rank);
            return at < 0 ? index(1) : dim(x, static_cast<size_t>(at));
          };
          Value* from_a = side(a, ra);
          Value* a_is_one = builder_.create(OpKind::CmpI, {from_a, index(1)}, {context_.bool_type()},
                                            {{"predicate", context_.string_attr("eq")}})
                                ->result();
          sizes.push_back(
              builder_.create(OpKind::Select, {a_is_one, side(b, rb), from_a}, {context_.index_type()})->result());
        }
        if (a_batch != batch || dynamic) a = broadcast_batch(a, batch, sizes);
        if (b_batch != batch || dynamic) b = broadcast_batch(b, batch, sizes);
      }
      product = matmul(a, b, accumulate);
    }
    return cast(product, result);
  }

  // scale (the attribute, else 1/sqrt(D)) in the compute type.
  Value* attention_scale(Value* q, ScalarType compute) {
    size_t d_axis = q->type().rank() - 1;
    if (op_->has_attr("scale")) return scalar(op_->attr("scale").float_value(), compute);
    if (int64_t d = q->type().shape()[d_axis]; d != kDynamic) return scalar(1.0 / std::sqrt(static_cast<double>(d)), compute);
    Type f = context_.scalar_type(compute);
    Value* as_int = builder_.create(OpKind::IndexCast, {dim(q, d_axis)}, {context_.i64_type()})->result();
    Value* as_float = builder_.create(OpKind::SIToFP, {as_int}, {f})->result();
    return builder_.create(OpKind::Rsqrt, {as_float}, {f})->result();
  }

  // p = softmax(scale q k^T) over the keys, masked above the diagonal when
  // causal, in the compute type: [..., Sq, Sk].
  Value* attention_probabilities(Value* q, Value* k, Value* scale, ScalarType compute) {
    Value* scores = matmul(q, swap_last_two(k), compute);
    size_t r = scores->type().rank();  // batch dims broadcast: q's rank or more
    scores = elementwise("mul", {scores, scale});
    if (op_->has_attr("causal")) {
      // Query i sees keys 0..i: mask where the key's index exceeds the query's.
      std::vector<int64_t> square{scores->type().shape()[r - 2], scores->type().shape()[r - 1]};
      std::vector<Value*> sizes{dim(scores, r - 2), dim(scores, r - 1)};
      Value* row = shaped(OpKind::GraphIota, {}, square, sizes, ScalarType::I64, {{"axis", context_.int_attr(0)}});
      Value* column = shaped(OpKind::GraphIota, {}, square, sizes, ScalarType::I64, {{"axis", context_.int_attr(1)}});
      Value* above = elementwise("gt", {column, row});
      scores = elementwise("select", {above, scalar(-INFINITY, compute), scores});
    }
    int64_t last = static_cast<int64_t>(r) - 1;
    Value* m = reduce("max", scores, last);
    Value* e = elementwise("exp", {elementwise("sub", {scores, m})});
    return elementwise("div", {e, reduce("sum", e, last)});
  }

  static ScalarType attention_compute_type(ScalarType element) {
    return is_float(element) && scalar_info(element).bits < 32 ? ScalarType::F32 : element;
  }

  Value* attention() {
    Value* q = op_->operand(0);
    ScalarType element = q->type().scalar();
    ScalarType compute = attention_compute_type(element);
    Value* p = attention_probabilities(q, op_->operand(1), attention_scale(q, compute), compute);
    Value* out = matmul(p, cast(op_->operand(2), compute), compute);
    return cast(out, element);
  }

  // The gradients of attention (the probabilities recomputed):
  //   dv = p^T do; ds = p (do v^T - rowsum(do o)); dq = scale ds k; dk = scale ds^T q,
  // each summed over the batch dimensions its operand was broadcast along.
  std::vector<Value*> attention_grad() {
    Value* q = op_->operand(0);
    Value* k = op_->operand(1);
    Value* v = op_->operand(2);
    ScalarType element = q->type().scalar();
    ScalarType compute = attention_compute_type(element);
    Value* scale = attention_scale(q, compute);
    Value* p = attention_probabilities(q, k, scale, compute);
    Value* d_out = cast(op_->operand(4), compute);
    int64_t last = static_cast<int64_t>(d_out->type().rank()) - 1;
    Value* delta = reduce("sum", elementwise("mul", {d_out, cast(op_->operand(3), compute)}), last);
    Value* dp = matmul(d_out, swap_last_two(cast(v, compute)), compute);
    Value* ds = elementwise("mul", {p, elementwise("sub", {dp, delta})});
    Value* dq = elementwise("mul", {matmul(ds, cast(k, compute), compute), scale});
    Value* dk = elementwise("mul", {matmul(swap_last_two(ds), cast(q, compute), compute), scale});
    Value* dv = matmul(swap_last_two(p), d_out, compute);
    return {cast(unbroadcast(dq, q), element), cast(unbroadcast(dk, k), element), cast(unbroadcast(dv, v), element)};
  }


  Value* softmax() {
    Value* x = op_->operand(0);
    int64_t axis = op_->attr("axis").int_value();
    Value* m = reduce("max", x, axis);
    Value* shifted = elementwise("sub", {x, m});
    Value* e = elementwise("exp", {shifted});
    Value* s = reduce("sum", e, axis);
    if (op_->has_attr("log")) return elementwise("sub", {shifted, elementwise("log", {s})});
    return elementwise("div", {e, s});
  }

  Value* norm() {
    Value* x = op_->operand(0);
    ScalarType element = x->type().scalar();
    int64_t axis = static_cast<int64_t>(x->type().rank()) - 1;
    Value* eps = scalar(op_->attr("eps").float_value(), element);
    Value* centered = x;
    if (op_->string_attr("kind") == "layer") centered = elementwise("sub", {x, reduce("mean", x, axis)});
    Value* variance = reduce("mean", elementwise("mul", {centered, centered}), axis);
    Value* inverse = elementwise("rsqrt", {elementwise("add", {variance, eps})});
    Value* y = elementwise("mul", {centered, inverse});
    if (op_->num_operands() > 1) y = elementwise("mul", {y, op_->operand(1)});
    if (op_->num_operands() > 2) y = elementwise("add", {y, op_->operand(2)});
    return y;
  }

 private:
  Operation* op_;
};

}  // namespace

bool flash_attention_form(const Operation* op) {
  if (!op->is(OpKind::GraphAttention) && !op->is(OpKind::GraphAttentionGrad)) return false;
  Type q = op->operand(0)->type();
  ScalarType element = q.scalar();
  if (element != ScalarType::F32 && element != ScalarType::F16 && element != ScalarType::BF16) return false;
  size_t rank = q.rank();
  int64_t d = q.shape()[rank - 1];
  if (d != 64 && d != 128) return false;
  for (unsigned i = 1; i < 3; ++i) {
    Type t = op->operand(i)->type();
    if (t.rank() != rank || t.shape()[rank - 1] != d) return false;
  }
  // The same batch dimensions, all known: the kernels index [B*H, S, D].
  for (size_t a = 0; a + 2 < rank; ++a) {
    int64_t b = q.shape()[a];
    if (b == kDynamic) return false;
    for (unsigned i = 1; i < 3; ++i)
      if (op->operand(i)->type().shape()[a] != b) return false;
  }
  return true;
}

void decompose_graph_operations(Operation* root, Context& context, DecomposeOptions options) {
  auto rewrite = [&](OpKind kind, auto&& build) {
    std::vector<Operation*> ops;
    root->walk([&](Operation* op) {
      if (op->is(kind)) ops.push_back(op);
    });
    for (Operation* op : ops) {
      if (kind == OpKind::GraphAttention && options.keep_flash_attention && flash_attention_form(op)) continue;
      Decomposer d(context, op);
      Value* replacement = build(d);
      op->result()->replace_all_uses_with(replacement);
      op->erase();
    }
  };
  // Attention first: it makes softmaxes and matmuls.
  std::vector<Operation*> grads;
  root->walk([&](Operation* op) {
    if (op->is(OpKind::GraphAttentionGrad) && !(options.keep_flash_attention_grad && flash_attention_form(op)))
      grads.push_back(op);
  });
  for (Operation* op : grads) {
    Decomposer d(context, op);
    std::vector<Value*> gradients = d.attention_grad();
    for (unsigned i = 0; i < 3; ++i) op->result(i)->replace_all_uses_with(gradients[i]);
    op->erase();
  }
  rewrite(OpKind::GraphAttention, [](Decomposer& d) { return d.attention(); });
  rewrite(OpKind::GraphSoftmax, [](Decomposer& d) { return d.softmax(); });
  rewrite(OpKind::GraphNorm, [](Decomposer& d) { return d.norm(); });
  // Each matmul once (the rewritten ones are already in the stdlib's form).
  std::vector<Operation*> matmuls;
  root->walk([&](Operation* op) {
    if (op->is(OpKind::GraphMatmul)) matmuls.push_back(op);
  });
  for (Operation* op : matmuls) {
    Decomposer d(context, op);
    Value* replacement = d.matmul_normalized();
    op->result()->replace_all_uses_with(replacement);
    op->erase();
  }
}

void run_graph_decompose_pass(Operation* module, PassContext& context) {
  // With a stdlib, attention in the flash kernels' form stays whole
  // (generate-kernels launches them); without one, everything is decomposed.
  bool library = context.library != nullptr;
  decompose_graph_operations(module, context.context, DecomposeOptions{library, library});
}

}  // namespace tessera::ir
