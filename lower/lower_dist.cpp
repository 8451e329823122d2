// Lowering of distribution (docs/distributed.md, "The language"): meshes,
// dist.tensor, the collectives of @jit functions, and the global view of a
// sharded value that ts.save and print take.
//
// Graph code holds a sharded tensor as this rank's shard (sema typed @jit
// bodies so; a program's sharded values are global in sema and local here).
// Every operation that needs the mesh carries it as an attribute
// `mesh = [[shape...], [axes...], [devices...]]`, so host code needs no mesh
// value: the runtime creates a mesh when it first meets it.
#include "ir/core/graph_shapes.h"
#include "lower/lowering.h"

namespace tessera::ir {

using sema::BuiltinId;
using SemaKind = sema::TypeKind;

Attribute Lowering::mesh_attribute(uint32_t mesh) {
  const sema::MeshInfo& m = typed_.types.mesh_info(mesh);
  std::vector<Attribute> axes, devices;
  for (const std::string& a : m.axes) axes.push_back(context_.string_attr(a));
  for (const std::string& d : m.devices) devices.push_back(context_.string_attr(d));
  Attribute parts[] = {context_.int_array_attr(m.shape), context_.array_attr(axes), context_.array_attr(devices)};
  return context_.array_attr(parts);
}

// One entry per dimension: the mesh axis it is split over, or "".
Attribute Lowering::spec_attribute(const sema::ShardingInfo& s) {
  const sema::MeshInfo& m = typed_.types.mesh_info(s.mesh);
  std::vector<Attribute> spec;
  for (int32_t a : s.dim_axes) spec.push_back(context_.string_attr(a < 0 ? "" : m.axes[static_cast<size_t>(a)]));
  return context_.array_attr(spec);
}

std::vector<NamedAttribute> Lowering::sharding_attributes(const sema::ShardingInfo& s) {
  const sema::MeshInfo& m = typed_.types.mesh_info(s.mesh);
  std::vector<NamedAttribute> out{{"mesh", mesh_attribute(s.mesh)}, {"spec", spec_attribute(s)}};
  if (s.partial_axes) {
    std::vector<Attribute> axes;
    for (size_t a = 0; a < m.axes.size(); ++a)
      if (s.partial_axes & (1u << a)) axes.push_back(context_.string_attr(m.axes[a]));
    out.push_back({"partial", context_.array_attr(axes)});
    out.push_back({"op", context_.string_attr(collective_op_name(s.partial_op))});
  }
  return out;
}

std::string_view Lowering::collective_op_name(sema::PartialOp op) {
  switch (op) {
    case sema::PartialOp::Sum: return "sum";
    case sema::PartialOp::Max: return "max";
    case sema::PartialOp::Min: return "min";
    case sema::PartialOp::Avg: return "mean";
    case sema::PartialOp::Prod: return "prod";
  }
  return "sum";
}

// A gradient the program asked for of an argument laid out as `argument`,
// the function run on `mesh`: each rank holds its own term (of the gradient
// of its block), so the sum over every axis that does not split the
// argument is the global gradient, laid out as the argument.
Value* Lowering::sum_gradient_terms(Value* gradient, uint32_t mesh, sema::TypeId argument, NodeId where) {
  const sema::MeshInfo& m = typed_.types.mesh_info(mesh);
  const sema::ShardingInfo* s = typed_.types.sharding(argument);
  uint32_t axes = 0;
  for (size_t a = 0; a < m.axes.size(); ++a) {
    if (m.shape[a] == 1) continue;
    if (s && std::find(s->dim_axes.begin(), s->dim_axes.end(), static_cast<int32_t>(a)) != s->dim_axes.end()) continue;
    axes |= 1u << a;
  }
  return all_reduce_over(gradient, mesh, axes, "sum", where);
}

// `v` all_reduced with `op` over each axis of `mesh` whose bit is set in
// `axes`, one graph.all_reduce per axis.
Value* Lowering::all_reduce_over(Value* v, uint32_t mesh, uint32_t axes, std::string_view op, NodeId where) {
  const sema::MeshInfo& m = typed_.types.mesh_info(mesh);
  for (size_t a = 0; a < m.axes.size(); ++a)
    if (axes & (1u << a))
      v = graph_op(OpKind::GraphAllReduce, {v}, v->type(),
                   {{"axis", context_.string_attr(m.axes[a])},
                    {"mesh", mesh_attribute(mesh)},
                    {"op", context_.string_attr(op)}},
                   where);
  return v;
}

// A program value of a sharded type, made whole on every rank (ts.save and
// print write the global array).
Value* Lowering::global_view(Value* v, NodeId node) {
  sema::TypeId t = node_type(node);
  const sema::ShardingInfo* s = t.valid() ? typed_.types.sharding(t) : nullptr;
  if (!s || !v->type().is(TypeKind::Tensor)) return v;
  if (s->unknown)
    unsupported(node, "the global value of a sharded tensor whose layout the compiler does not know (an operation "
                      "without a sharding rule made it; all_gather it in the @jit function)");
  if (s->varying_axes)
    unsupported(node, "the global value of a tensor that differs between the ranks of a mesh axis (a recv or "
                      "sendrecv made it; broadcast it from the rank that holds the result in the @jit function)");
  Type local = v->type();
  std::vector<int64_t> dims;
  for (sema::DimId d : typed_.types.dims(t)) dims.push_back(typed_.types.constant_value(d).value_or(kDynamic));
  return graph_op(OpKind::GraphUnshard, {v}, context_.tensor_type(dims, local.scalar()), sharding_attributes(*s), node);
}

Bound Lowering::lower_dist_builtin(NodeId call, BuiltinId builtin) {
  auto arg = [&](size_t i) { return call_argument(call, i); };
  sema::TypeId type = node_type(call);
  switch (builtin) {
    case BuiltinId::DistMesh: {
      uint32_t mesh = typed_.types.info(type).payload;
      const sema::MeshInfo& m = typed_.types.mesh_info(mesh);
      std::vector<Attribute> axes, devices;
      for (const std::string& a : m.axes) axes.push_back(context_.string_attr(a));
      for (const std::string& d : m.devices) devices.push_back(context_.string_attr(d));
      Type result = context_.opaque_type("mesh");
      Operation* op = builder_.create(OpKind::GraphMesh, std::span<Value* const>{}, std::span<const Type>(&result, 1),
                                      {{"shape", context_.int_array_attr(m.shape)},
                                       {"axes", context_.array_attr(axes)},
                                       {"devices", context_.array_attr(devices)}});
      return Bound{op->result(), {}};
    }
    case BuiltinId::ShardSpec: return {};  // a description: no code
    case BuiltinId::DistTensor: {
      const sema::ShardingInfo* s = typed_.types.sharding(type);
      NodeId data = arg(4);
      std::vector<int64_t> dims;
      for (sema::DimId d : typed_.types.dims(type)) dims.push_back(typed_.types.constant_value(d).value_or(kDynamic));
      ScalarType element = typed_.types.info(type).scalar;
      std::vector<int64_t> local = dims;
      if (s)
        for (size_t d = 0; d < local.size(); ++d)
          if (s->dim_axes[d] >= 0 && local[d] != kDynamic)
            local[d] /= typed_.types.mesh_info(s->mesh).shape[static_cast<size_t>(s->dim_axes[d])];
      if (data.valid()) {
        Value* whole = value(data);
        if (!s) return Bound{whole, {}};
        // A partial layout (reduce=): the partial axes and operation, so
        // that the ranks' terms reduce to `whole` (host_collectives.cpp).
        return Bound{graph_op(OpKind::GraphShard, {whole}, context_.tensor_type(local, whole->type().scalar()),
                              sharding_attributes(*s), call),
                     {}};
      }
      for (int64_t d : local)
        if (d == kDynamic) unsupported(call, "a dist.tensor whose shape is known only at run time");
      return Bound{graph_op(OpKind::GraphConstant, {}, context_.tensor_type(local, element),
                            {{"value", zero_attribute(element)}}, call),
                   {}};
    }
    case BuiltinId::AllReduce:
    case BuiltinId::AllGather:
    case BuiltinId::ReduceScatter:
    case BuiltinId::Broadcast: {
      Value* x = value(arg(0));
      const sema::ShardingInfo* result = typed_.types.sharding(type);
      uint32_t mesh = result ? result->mesh : 0;
      std::string axis = string_of(arg(1));
      std::vector<NamedAttribute> attributes{{"axis", context_.string_attr(axis)}, {"mesh", mesh_attribute(mesh)}};
      OpKind kind = OpKind::GraphAllReduce;
      auto op_name = [&](NodeId n) {
        if (!n.valid()) return std::string("sum");
        std::string name = string_of(n);
        return name == "avg" ? std::string("mean") : name;
      };
      auto dim = [&] { return static_cast<int64_t>(typed_.collective_dims.at(call.index)); };
      switch (builtin) {
        case BuiltinId::AllReduce: attributes.push_back({"op", context_.string_attr(op_name(arg(2)))}); break;
        case BuiltinId::AllGather:
          kind = OpKind::GraphAllGather;
          attributes.push_back({"dim", context_.int_attr(dim())});
          break;
        case BuiltinId::ReduceScatter: {
          kind = OpKind::GraphReduceScatter;
          attributes.push_back({"op", context_.string_attr(op_name(arg(2)))});
          attributes.push_back({"dim", context_.int_attr(dim())});
          // A size known only at run time that the axis does not divide
          // (sema checks the constant ones): one block per rank would drop
          // the rest.
          const sema::MeshInfo info = typed_.types.mesh_info(mesh);
          auto named = std::ranges::find(info.axes, axis);
          if (x->type().shape()[static_cast<size_t>(dim())] == kDynamic && named != info.axes.end()) {
            const int64_t ranks = info.shape[static_cast<size_t>(named - info.axes.begin())];
            const Type i64 = context_.i64_type();
            Value* rest = emit(OpKind::RemSI, {convert(graph_dim(x, dim()), i64), builder_.constant_int(ranks, i64)}, i64);
            Value* divides = emit(OpKind::CmpI, {rest, builder_.constant_int(0, i64)}, context_.bool_type(),
                                  {{"predicate", context_.string_attr("eq")}});
            builder_.create(OpKind::HostCheck, std::span<Value* const>(&divides, 1), std::span<const Type>{},
                            {{"message", context_.string_attr(fmt::format(
                                             "{}: dimension {} of reduce_scatter's operand has a size that mesh axis "
                                             "'{}' of size {} does not divide (every rank keeps an equal block)",
                                             source_position(call), dim(), axis, ranks))}});
          }
          break;
        }
        default: {
          kind = OpKind::GraphBroadcast;
          std::optional<int64_t> root = arg(2).valid() ? constant_of(arg(2)) : std::optional<int64_t>(0);
          attributes.push_back({"root", context_.int_attr(root.value_or(0))});
          break;
        }
      }
      return Bound{graph_op(kind, {x}, x->type(), std::move(attributes), call), {}};
    }
    case BuiltinId::Send:
    case BuiltinId::Recv:
    case BuiltinId::SendRecv: {
      // The peers are constants sema checked; the mesh is the instance's.
      Value* x = value(arg(0));
      uint32_t mesh = typed_.collective_meshes.at(call.index);
      std::string axis = string_of(arg(1));
      std::vector<NamedAttribute> attributes{{"axis", context_.string_attr(axis)}, {"mesh", mesh_attribute(mesh)}};
      if (builtin == BuiltinId::SendRecv) {
        attributes.push_back({"shift", context_.int_attr(arg(2).valid() ? constant_of(arg(2)).value_or(1) : 1)});
        return Bound{graph_op(OpKind::GraphSendRecv, {x}, x->type(), std::move(attributes), call), {}};
      }
      attributes.push_back({"src", context_.int_attr(constant_of(arg(2)).value_or(0))});
      attributes.push_back({"dst", context_.int_attr(constant_of(arg(3)).value_or(0))});
      if (builtin == BuiltinId::Recv)
        return Bound{graph_op(OpKind::GraphRecv, {x}, x->type(), std::move(attributes), call), {}};
      builder_.create(OpKind::GraphSend, std::span<Value* const>(&x, 1), std::span<const Type>{}, std::move(attributes));
      return {};
    }
    default: break;
  }
  unsupported(call, "the graph-level builtin '" + std::string(sema::builtin_info(builtin).path) + "'");
}

}  // namespace tessera::ir
