// Building Graph IR operations in the passes that derive functions
// (autodiff.cpp: reverse mode, jvp.cpp: forward mode). Each operation built
// is typed by infer_graph_result, so a mistake is an internal error at the
// pass that made it, not invalid IR later.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/core/builder.h"
#include "ir/core/graph_shapes.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::ir {

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
  // A tensor of `like`'s type filled with `v`.
  Value* constant_like(Value* like, double v) {
    Type t = like->type();
    Attribute value = is_float(t.scalar()) ? context_.float_attr(v) : context_.int_attr(static_cast<int64_t>(v));
    return make(OpKind::GraphConstant, dynamic_sizes(like), t, {{"value", value}});
  }

  Context& context_;
  Builder builder_;

 private:
  std::string_view pass_name_;
};

}  // namespace tessera::ir
