// Sema: distribution (docs/distributed.md, "The language"): dist.mesh,
// ShardSpec, dist.tensor, the collectives, and the propagation of shardings
// through the operations of @jit functions.
//
// A sharded tensor's type is a tensor type with a sharding (types.h,
// ShardingInfo). In program code its dimensions are global; a @jit call
// gives the instance this rank's shard (each split dimension divided by its
// mesh axis's size), and turns the instance's result back into a global
// type with the sharding the body propagated to it. The mesh of an instance
// is the mesh of its sharded arguments; its collectives run on it.
#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "sema/builtin_call.h"
#include "sema/checker.h"

namespace tessera::sema {

namespace {

std::string joined_axes(const MeshInfo& mesh) {
  std::string out;
  for (const std::string& a : mesh.axes) out += (out.empty() ? "'" : ", '") + a + "'";
  return out;
}

std::optional<PartialOp> partial_op_by_name(std::string_view name) {
  if (name == "sum") return PartialOp::Sum;
  if (name == "max") return PartialOp::Max;
  if (name == "min") return PartialOp::Min;
  if (name == "avg" || name == "mean") return PartialOp::Avg;
  if (name == "prod") return PartialOp::Prod;
  return std::nullopt;
}

// Whether a reduction `builtin` of a value partial over `op` is partial over
// it too: a sum or mean of partial sums (or means), a max of partial maxima,
// and so on; the max of a partial sum is not the sum of the terms' maxima.
bool reduction_keeps_partial(BuiltinId builtin, PartialOp op) {
  switch (builtin) {
    case BuiltinId::Sum:
    case BuiltinId::Mean: return op == PartialOp::Sum || op == PartialOp::Avg;
    case BuiltinId::Max:
    case BuiltinId::AnyOf: return op == PartialOp::Max;
    case BuiltinId::Min:
    case BuiltinId::AllOf: return op == PartialOp::Min;
    case BuiltinId::Prod: return op == PartialOp::Prod;
    default: return false;
  }
}

}  // namespace

// Whether a value laid out so is something other than one whole value on
// every rank: split, partial, varying or of unknown layout.
bool distributed_layout(const ShardingInfo* sharding) {
  if (!sharding) return false;
  return sharding->partial_axes || sharding->varying_axes || sharding->unknown ||
         std::ranges::any_of(sharding->dim_axes, [](int32_t axis) { return axis >= 0; });
}

// What a partial value must become before an operation that needs its
// reduced value. In a @jit body that is an all_reduce; the program's
// diagnostic spells out the call, one all_reduce per partial axis.
std::string Checker::reduce_first(const ShardingInfo& partial) {
  if (function_) return "an operation that needs the reduced value (all_reduce it first)";
  const MeshInfo& mesh = types_.mesh_info(partial.mesh);
  std::string call = "value";
  std::string op =
      partial.partial_op == PartialOp::Sum ? "" : fmt::format(", op=\"{}\"", partial_op_name(partial.partial_op));
  for (size_t a = 0; a < mesh.axes.size(); ++a)
    if (partial.partial_axes & (1u << a))
      call = fmt::format("dist.all_reduce({}, axis=\"{}\"{})", call, mesh.axes[a], op);
  return "an operation that needs the reduced value (write " + call + " first)";
}

// The program sees global values: where an operation needs a partial
// value's reduced value (`ts.sum(x) + 1.0`, `ts.exp(p)`, `p > 0` of a sharded
// x or a partial p), the program reduces it first, one all_reduce per
// partial axis that lowering puts right after the operand
// (TypedModule::program_reductions), and the operation sees it whole on
// those axes. A @jit body is written per rank and says where it reduces:
// there this returns `type` unchanged and the caller reports reduce_first.
TypeId Checker::reduce_partial_in_program(NodeId operand, TypeId type) {
  if (function_ || !operand.valid() || types_.kind(type) != TypeKind::Tensor) return type;
  const ShardingInfo* s = types_.sharding(type);
  if (!s || !s->partial_axes) return type;
  out_.program_reductions[operand.index] = types_.info(type).payload;
  ShardingInfo whole = *s;
  whole.partial_axes = 0;
  whole.partial_op = PartialOp::Sum;
  return types_.with_sharding(type, types_.intern_sharding(whole));
}

// `l = dist.all_reduce(l, ...)`, `x = dist.tensor(data=x, ...)`: the layout
// is the value's, not the name's, so a straight-line rebinding gives the
// local the new value's layout (keeping the sizes it was first given; a
// program's ts.save and a @jit call's mesh read it). In a loop or branch
// the first binding's layout would describe the value after it only on
// some paths, so a change that matters there is an error rather than a
// value saved or gathered under the wrong layout.
void Checker::rebind_layout(Local& local, IdentifierId name, TypeId value, NodeId value_node) {
  if (types_.kind(local.type) != TypeKind::Tensor || types_.kind(value) != TypeKind::Tensor) return;
  uint32_t had = types_.info(local.type).payload;
  uint32_t has = types_.info(value).payload;
  if (had == has) return;
  if (control_depth_ == local.control_depth) {
    local.type = types_.with_sharding(local.type, has);
    return;
  }
  if (!distributed_layout(types_.sharding(local.type)) && !distributed_layout(types_.sharding(value))) return;
  diags_.emit<diag::SemaDistLayoutRebind>(ast_.range(value_node), name_of(name), types_.to_string(local.type),
                                          types_.to_string(value));
}

// A loop whose body rebinds a name to a recv or sendrecv over mesh axis A
// (a ring: `blk = dist.sendrecv(blk, axis="r")`) would change the name's
// layout on its first iteration when the name enters split over A: the
// value then varies over A in a way no split describes. The name enters
// the loop with the join of both layouts instead, varying over A and not
// split over it (a weaker, still true description of the entering value:
// each rank holds its own block), so every iteration keeps one layout.
void Checker::widen_loop_layouts(NodeId body) {
  std::function<void(NodeId)> visit = [&](NodeId n) {
    if (!n.valid()) return;
    NodeKind kind = ast_.kind(n);
    if (kind == NodeKind::FunctionDef || kind == NodeKind::ClassDef || kind == NodeKind::Lambda) return;
    if (kind == NodeKind::Assign && ast_.children(n).size() == 2 &&
        ast_.kind(ast_.child(n, 0)) == NodeKind::Name && ast_.kind(ast_.child(n, 1)) == NodeKind::Call) {
      NodeId call = ast_.child(n, 1), callee = ast_.child(call, 0);
      std::string callee_name = ast_.kind(callee) == NodeKind::Attribute || ast_.kind(callee) == NodeKind::Name
                                    ? name_of(ast_.node(callee).payload)
                                    : std::string();
      if (callee_name == "sendrecv" || callee_name == "recv") {
        std::optional<std::string> axis;
        auto arguments = ast_.children(call).subspan(1);
        for (size_t k = 0; k < arguments.size(); ++k) {
          NodeId a = arguments[k];
          if (ast_.kind(a) == NodeKind::KeywordArgument && name_of(ast_.node(a).payload) == "axis")
            axis = constant_string(ast_.child(a, 0));
          else if (k == 1 && ast_.kind(a) != NodeKind::KeywordArgument)
            axis = constant_string(a);
        }
        auto local = locals_.find(ast_.node(ast_.child(n, 0)).payload);
        const ShardingInfo* s = local == locals_.end() ? nullptr : types_.sharding(local->second.type);
        if (axis && s && !s->unknown) {
          const MeshInfo& mesh = types_.mesh_info(s->mesh);
          auto at = std::find(mesh.axes.begin(), mesh.axes.end(), *axis);
          if (at != mesh.axes.end()) {
            const auto k = static_cast<int32_t>(at - mesh.axes.begin());
            ShardingInfo joined = *s;
            for (int32_t& a : joined.dim_axes)
              if (a == k) a = -1;
            joined.varying_axes |= 1u << k;
            if (!(joined == *s))
              local->second.type = types_.with_sharding(local->second.type, types_.intern_sharding(joined));
          }
        }
      }
    }
    for (NodeId child : ast_.children(n)) visit(child);
  };
  visit(body);
}

std::optional<std::string> Checker::constant_string(NodeId node) const {
  if (!node.valid() || ast_.kind(node) != NodeKind::StringLiteral) return std::nullopt;
  return values_.strings[ast_.node(node).payload];
}

// The elements of a tuple or list literal (one element for anything else).
std::vector<NodeId> Checker::literal_elements(NodeId node) {
  if (ast_.kind(node) == NodeKind::Tuple || ast_.kind(node) == NodeKind::List)
    return {ast_.children(node).begin(), ast_.children(node).end()};
  return {node};
}

std::optional<int64_t> Checker::constant_int_of(NodeId node) {
  auto it = constants_.find(node.index);
  if (it != constants_.end() && !it->second.is_float) return it->second.integer;
  if (ast_.kind(node) == NodeKind::IntLiteral) return static_cast<int64_t>(values_.integers[ast_.node(node).payload]);
  // A module constant (-D NAME=VALUE) or arithmetic on constants.
  if (ast_.kind(node) == NodeKind::Name || ast_.kind(node) == NodeKind::BinaryOp)
    if (auto d = resolve_dim(node)) return types_.constant_value(*d);
  return std::nullopt;
}

// range(n) / range(a, b) with constant bounds.
std::optional<std::vector<int64_t>> Checker::constant_range(NodeId node) {
  if (ast_.kind(node) != NodeKind::Call) return std::nullopt;
  NodeId callee = ast_.child(node, 0);
  if (ast_.kind(callee) != NodeKind::Name || name_of(ast_.node(callee).payload) != "range") return std::nullopt;
  auto args = ast_.children(node).subspan(1);
  if (args.empty() || args.size() > 2) return std::nullopt;
  std::optional<int64_t> lo = args.size() == 2 ? constant_int_of(args[0]) : std::optional<int64_t>(0);
  std::optional<int64_t> hi = constant_int_of(args.back());
  if (!lo || !hi || *hi - *lo > 65536) return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t i = *lo; i < *hi; ++i) out.push_back(i);
  return out;
}

// devices=: a list of names ("cuda:0", "cpu:1"), a comprehension
// [f"cuda:{i}" for i in range(n)], or range(n) / a list of integers (GPU i).
std::optional<std::vector<std::string>> Checker::mesh_devices(NodeId node) {
  std::vector<std::string> out;
  if (auto r = constant_range(node)) {
    for (int64_t i : *r) out.push_back(fmt::format("cuda:{}", i));
    return out;
  }
  if (ast_.kind(node) == NodeKind::ListComp && ast_.children(node).size() == 2) {
    NodeId element = ast_.child(node, 0), generator = ast_.child(node, 1);
    if (ast_.kind(generator) != NodeKind::Comprehension || ast_.children(generator).size() != 2) return std::nullopt;
    NodeId target = ast_.child(generator, 0);
    auto r = constant_range(ast_.child(generator, 1));
    if (!r || ast_.kind(target) != NodeKind::Name) return std::nullopt;
    auto is_target = [&](NodeId n) {
      return ast_.kind(n) == NodeKind::Name && ast_.node(n).payload == ast_.node(target).payload;
    };
    for (int64_t i : *r) {
      if (is_target(element)) {
        out.push_back(fmt::format("cuda:{}", i));
        continue;
      }
      if (ast_.kind(element) != NodeKind::FString) return std::nullopt;
      std::string text;
      for (NodeId part : ast_.children(element)) {
        if (ast_.kind(part) == NodeKind::FStringText) {
          text += values_.strings[ast_.node(part).payload];
        } else if (ast_.kind(part) == NodeKind::FormattedValue && is_target(ast_.child(part, 0)) &&
                   ast_.node(part).payload == UINT32_MAX && ast_.node(part).op == 0) {
          text += std::to_string(i);
        } else {
          return std::nullopt;
        }
      }
      out.push_back(text);
    }
    return out;
  }
  if (ast_.kind(node) != NodeKind::List && ast_.kind(node) != NodeKind::Tuple) return std::nullopt;
  for (NodeId e : ast_.children(node)) {
    if (auto s = constant_string(e)) {
      out.push_back(*s);
    } else if (auto i = constant_int_of(e)) {
      out.push_back(fmt::format("cuda:{}", *i));
    } else {
      return std::nullopt;
    }
  }
  return out;
}

Value Checker::check_dist_mesh(BuiltinCall& bc) {
  auto bound = bc.bind({"devices", "axes", "shape"}, 2);
  if (bound.empty()) return Value{types_.error()};
  for (NodeId b : bound)
    if (b.valid()) bc.value_of(b);
  auto bad = [&](NodeId where, std::string why) {
    diags_.emit<diag::SemaDistMesh>(ast_.range(where), std::move(why));
    return Value{types_.error()};
  };
  MeshInfo mesh;
  auto devices = mesh_devices(bound[0]);
  if (!devices)
    return bad(bound[0], "devices= must be a list of device names (\"cuda:0\", \"cpu:1\"), a comprehension such as "
                         "[f\"cuda:{i}\" for i in range(8)], or range(n)");
  mesh.devices = *devices;
  if (mesh.devices.empty()) return bad(bound[0], "the mesh has no devices");
  for (NodeId a : literal_elements(bound[1])) {
    auto name = constant_string(a);
    if (!name || name->empty()) return bad(a, "axes= must be a tuple of axis names (strings)");
    if (std::find(mesh.axes.begin(), mesh.axes.end(), *name) != mesh.axes.end())
      return bad(a, "the axis '" + *name + "' is named twice");
    mesh.axes.push_back(*name);
  }
  if (mesh.axes.size() > 8) return bad(bound[1], "a mesh has at most 8 axes");
  if (bound[2].valid()) {
    for (NodeId e : literal_elements(bound[2])) {
      auto n = constant_int_of(e);
      if (!n || *n <= 0) return bad(e, "shape= must be a tuple of positive integer constants");
      mesh.shape.push_back(*n);
    }
  } else if (mesh.axes.size() == 1) {
    mesh.shape.push_back(static_cast<int64_t>(mesh.devices.size()));
  } else {
    return bad(bc.call, "a mesh of several axes needs shape=");
  }
  if (mesh.shape.size() != mesh.axes.size())
    return bad(bound[2], fmt::format("{} axes but a shape of {} dimensions", mesh.axes.size(), mesh.shape.size()));
  int64_t product = 1;
  for (int64_t n : mesh.shape) product *= n;
  if (product != static_cast<int64_t>(mesh.devices.size()))
    return bad(bound[2], fmt::format("the shape has {} positions but the mesh has {} devices", product, mesh.devices.size()));
  return Value{types_.mesh(mesh)};
}

Value Checker::check_shard_spec(BuiltinCall& bc) {
  auto bound = bc.bind({"partition", "mesh_axes", "replicate", "reduce"}, 0);
  if (bound.empty()) return Value{types_.error()};
  for (NodeId b : bound)
    if (b.valid()) bc.value_of(b);
  LayoutInfo layout;
  auto bad = [&](NodeId where, std::string why) {
    diags_.emit<diag::SemaDistLayout>(ast_.range(where), "ShardSpec", std::move(why));
    return Value{types_.error()};
  };
  if (bound[0].valid() && ast_.kind(bound[0]) != NodeKind::NoneLiteral) {
    for (NodeId e : literal_elements(bound[0])) {
      if (auto s = constant_string(e); s && (*s == "row" || *s == "col")) {
        layout.partition.push_back(*s);
      } else if (auto i = constant_int_of(e)) {
        layout.partition.push_back(std::to_string(*i));
      } else {
        return bad(e, "partition= names dimensions: \"row\" (the first), \"col\" (the last) or a dimension number");
      }
    }
  }
  if (bound[1].valid()) {
    for (NodeId e : literal_elements(bound[1])) {
      auto s = constant_string(e);
      if (!s) return bad(e, "mesh_axes= must be a tuple of mesh axis names");
      layout.mesh_axes.push_back(*s);
    }
    if (layout.mesh_axes.size() != layout.partition.size())
      return bad(bound[1], fmt::format("{} partitioned dimensions but {} mesh axes", layout.partition.size(),
                                       layout.mesh_axes.size()));
  }
  if (bound[2].valid()) {
    auto it = constants_.find(bound[2].index);
    bool is_bool = ast_.kind(bound[2]) == NodeKind::BoolLiteral || it != constants_.end();
    if (!is_bool) return bad(bound[2], "replicate= must be True or False");
    layout.replicate = ast_.kind(bound[2]) == NodeKind::BoolLiteral ? (ast_.node(bound[2]).flags & 1) != 0
                                                                   : it->second.integer != 0;
    if (layout.replicate && !layout.partition.empty())
      return bad(bound[2], "replicate=True with a partition: a tensor is either split or replicated");
  }
  if (bound[3].valid()) {
    auto s = constant_string(bound[3]);
    if (!s || !partial_op_by_name(*s)) return bad(bound[3], "reduce= is one of \"sum\", \"max\", \"min\", \"avg\", \"prod\"");
    layout.reduce = *s;
  }
  return Value{types_.layout(layout)};
}

// The sharding a ShardSpec gives a tensor of `rank` dims on `mesh`.
std::optional<uint32_t> Checker::apply_layout(NodeId where, uint32_t layout_index, uint32_t mesh_index, size_t rank) {
  const LayoutInfo layout = types_.layout_info(layout_index);
  const MeshInfo& mesh = types_.mesh_info(mesh_index);
  ShardingInfo s;
  s.mesh = mesh_index;
  s.dim_axes.assign(rank, -1);
  uint32_t used = 0;
  for (size_t i = 0; i < layout.partition.size(); ++i) {
    const std::string& p = layout.partition[i];
    int64_t dim = p == "row" ? 0 : p == "col" ? static_cast<int64_t>(rank) - 1 : std::stoll(p);
    if (dim < 0) dim += static_cast<int64_t>(rank);
    if (rank == 0 || dim < 0 || dim >= static_cast<int64_t>(rank)) {
      diags_.emit<diag::SemaDistLayout>(ast_.range(where), "dist.tensor",
                                        fmt::format("partition '{}' is not a dimension of a tensor of rank {}", p, rank));
      return std::nullopt;
    }
    std::string axis = layout.mesh_axes.empty() ? (i < mesh.axes.size() ? mesh.axes[i] : "") : layout.mesh_axes[i];
    auto it = std::find(mesh.axes.begin(), mesh.axes.end(), axis);
    if (it == mesh.axes.end()) {
      diags_.emit<diag::SemaDistMeshAxis>(ast_.range(where), axis.empty() ? "(none left)" : axis, joined_axes(mesh));
      return std::nullopt;
    }
    auto a = static_cast<int32_t>(it - mesh.axes.begin());
    if ((used & (1u << a)) || s.dim_axes[static_cast<size_t>(dim)] >= 0) {
      diags_.emit<diag::SemaDistLayout>(ast_.range(where), "dist.tensor",
                                        "a mesh axis or a dimension is partitioned twice");
      return std::nullopt;
    }
    used |= 1u << a;
    s.dim_axes[static_cast<size_t>(dim)] = a;
  }
  if (!layout.reduce.empty()) {
    s.partial_op = *partial_op_by_name(layout.reduce);
    for (size_t a = 0; a < mesh.axes.size(); ++a)
      if (!(used & (1u << a))) s.partial_axes |= 1u << a;
  }
  // A mesh axis of size 1 splits nothing and leaves nothing to reduce: the
  // one rank holds the whole dimension (so a mesh shrunk with -D, tp=1 say,
  // propagates as the data-parallel program it then is).
  for (int32_t& a : s.dim_axes)
    if (a >= 0 && mesh.shape[static_cast<size_t>(a)] == 1) a = -1;
  for (size_t a = 0; a < mesh.axes.size(); ++a)
    if (mesh.shape[a] == 1) s.partial_axes &= ~(1u << a);
  return types_.intern_sharding(s);
}

// Dims of a program (global) tensor of sharding `s` as one rank holds them,
// or the reverse (`to_local` false).
std::optional<TypeId> Checker::shard_view(NodeId where, TypeId tensor, bool to_local) {
  const ShardingInfo* s = types_.sharding(tensor);
  if (!s || s->unknown) return tensor;
  ShardingInfo sharding = *s;
  const MeshInfo& mesh = types_.mesh_info(sharding.mesh);
  TypeInfo info = types_.info(tensor);
  std::vector<DimId> dims(types_.dims(tensor).begin(), types_.dims(tensor).end());
  for (size_t d = 0; d < dims.size() && d < sharding.dim_axes.size(); ++d) {
    if (sharding.dim_axes[d] < 0) continue;
    int64_t n = mesh.shape[static_cast<size_t>(sharding.dim_axes[d])];
    auto c = types_.constant_value(dims[d]);
    if (!c) {
      dims[d] = types_.binary_dim(to_local ? DimKind::Div : DimKind::Mul, dims[d], types_.constant_dim(n));
      continue;
    }
    if (to_local && *c % n != 0) {
      diags_.emit<diag::SemaDistIndivisible>(ast_.range(where), static_cast<unsigned>(d), source_text(where),
                                             std::to_string(*c), mesh.axes[static_cast<size_t>(sharding.dim_axes[d])], n);
      return std::nullopt;
    }
    dims[d] = types_.constant_dim(to_local ? *c / n : *c * n);
  }
  TypeId out = types_.tensor(info.scalar, info.policy, dims, info.space, false, info.seed_style);
  return types_.with_sharding(out, info.payload);
}

Value Checker::check_dist_tensor(BuiltinCall& bc) {
  auto bound = bc.bind({"shape", "layout", "mesh", "dtype", "data"}, 0);
  if (bound.empty()) return Value{types_.error()};
  TypeId error = types_.error();
  std::optional<TypeId> base;
  if (bound[4].valid()) {
    base = graph_tensor_argument(bc, bound[4], "data");
    if (!base) return Value{error};
    if (types_.sharding(*base)) {
      diags_.emit<diag::SemaArgumentType>(ast_.range(bound[4]), "data", bc.name, "a tensor every rank holds whole",
                                          types_.to_string(*base));
      return Value{error};
    }
    if (bound[0].valid() || bound[3].valid()) {
      diags_.emit<diag::SemaDistLayout>(bc.where, "dist.tensor",
                                        "data= gives the shape and dtype: leave shape= and dtype= out");
      return Value{error};
    }
  } else {
    if (!bound[0].valid()) {
      diags_.emit<diag::SemaDistLayout>(bc.where, "dist.tensor", "give shape= (zeros) or data=");
      return Value{error};
    }
    auto dims = shape_argument(bc, bound[0]);
    ScalarType element = ScalarType::F32;
    if (bound[3].valid()) {
      Value v = bc.value_of(bound[3]);
      if (auto text = constant_string(bound[3])) {
        // "bf16" or "bf16 @accum(f32)" (f32 accumulation is what bf16 computes in anyway).
        std::string name = text->substr(0, text->find(' '));
        std::string rest = text->size() > name.size() ? text->substr(name.size() + 1) : "";
        auto found = lookup_dtype(name);
        if (!found || !(rest.empty() || rest == "@accum(f32)")) {
          diags_.emit<diag::SemaArgumentType>(ast_.range(bound[3]), "dtype", bc.name, "a dtype such as \"bf16\"",
                                              *text);
          return Value{error};
        }
        element = found->type;
      } else {
        auto dtype = bc.require_dtype(bound[3], "dtype");
        if (!dtype) return Value{error};
        element = *dtype;
      }
      (void)v;
    }
    if (!dims) return Value{error};
    base = graph_tensor(element, *dims);
  }
  Value layout = bound[1].valid() ? bc.value_of(bound[1]) : Value{types_.none()};
  Value mesh = bound[2].valid() ? bc.value_of(bound[2]) : Value{types_.none()};
  if (types_.is_error(layout.type) || types_.is_error(mesh.type)) return Value{error};
  // A generic body's parameters: typed by each instance.
  if (types_.kind(mesh.type) == TypeKind::Dynamic || types_.kind(layout.type) == TypeKind::Dynamic)
    return Value{types_.dynamic()};
  // mesh=None: not distributed; every rank holds the whole tensor.
  if (types_.kind(mesh.type) == TypeKind::None) return Value{*base};
  if (types_.kind(mesh.type) != TypeKind::Mesh) {
    diags_.emit<diag::SemaArgumentType>(ast_.range(bound[2]), "mesh", bc.name, "a mesh made by dist.mesh",
                                        types_.to_string(mesh.type));
    return Value{error};
  }
  if (types_.kind(layout.type) != TypeKind::Layout) {
    diags_.emit<diag::SemaArgumentType>(ast_.range(bound[1].valid() ? bound[1] : bc.call), "layout", bc.name,
                                        "a ShardSpec", types_.to_string(layout.type));
    return Value{error};
  }
  auto sharding = apply_layout(bound[1], types_.info(layout.type).payload, types_.info(mesh.type).payload,
                               types_.dims(*base).size());
  if (!sharding) return Value{error};
  TypeId global = types_.with_sharding(*base, *sharding);
  // Every split dimension must divide evenly.
  if (!shard_view(bound[0].valid() ? bound[0] : bound[4], global, true)) return Value{error};
  return Value{global};
}

// all_reduce, all_gather, reduce_scatter, broadcast: on this rank's shard,
// along an axis of the instance's mesh (in the program, of the operand's).
Value Checker::check_collective(BuiltinCall& bc) {
  TypeId error = types_.error();
  std::vector<NodeId> bound;
  switch (bc.id) {
    case BuiltinId::AllReduce: bound = bc.bind({"x", "axis", "op"}, 2); break;
    case BuiltinId::AllGather: bound = bc.bind({"x", "axis", "dim"}, 2); break;
    case BuiltinId::ReduceScatter: bound = bc.bind({"x", "axis", "op", "dim"}, 2); break;
    default: bound = bc.bind({"x", "axis", "root"}, 2); break;
  }
  if (bound.empty()) return Value{error};
  std::optional<TypeId> x = graph_tensor_argument(bc, bound[0], "x");
  for (size_t i = 1; i < bound.size(); ++i)
    if (bound[i].valid()) bc.value_of(bound[i]);
  if (!x) return Value{check_generic_bodies_ ? types_.dynamic() : error};
  if (check_generic_bodies_) return Value{types_.dynamic()};
  return in_mesh_view(bc, bound[0], *x, [&](TypeId local) { return collective_on_mesh(bc, bound, local); });
}

// The program's collectives (docs/distributed.md, "Collectives in the
// program") are the @jit ones applied to its operand's mesh and this rank's
// shard of it: the program's sharded values are global in sema and this
// rank's shards in the lowering, so `dist.all_reduce(v, axis="dp")` written
// in the program is the call of a @jit function that returns it. Inside a
// @jit body `check` runs as it is.
Value Checker::in_mesh_view(BuiltinCall& bc, NodeId x_node, TypeId x, const std::function<Value(TypeId)>& check) {
  if (function_ || current_mesh_ != UINT32_MAX) return check(x);
  const ShardingInfo* s = types_.sharding(x);
  if (!s) {
    diags_.emit<diag::SemaDistCollectiveInProgram>(
        ast_.range(x_node), std::string(bc.name),
        fmt::format("its operand '{}' is not laid out on a mesh (a collective in the program runs on the mesh of a "
                    "tensor made by dist.tensor or returned by a @jit function on a mesh)",
                    types_.to_string(x)));
    return Value{types_.error()};
  }
  const uint32_t mesh = s->mesh;
  std::optional<TypeId> local = shard_view(x_node, x, true);
  if (!local) return Value{types_.error()};
  current_mesh_ = mesh;
  Value result = check(*local);
  current_mesh_ = UINT32_MAX;
  if (types_.is_error(result.type) || types_.kind(result.type) != TypeKind::Tensor) return result;
  std::optional<TypeId> global = shard_view(bc.call, result.type, false);
  return global ? Value{*global} : Value{types_.error()};
}

Value Checker::collective_on_mesh(BuiltinCall& bc, std::vector<NodeId>& bound, TypeId x_type) {
  TypeId error = types_.error();
  std::optional<TypeId> x = x_type;
  std::optional<int32_t> found_axis = collective_axis(bc, bound[1]);
  if (!found_axis) return Value{error};
  const MeshInfo mesh = types_.mesh_info(current_mesh_);
  const int32_t axis = *found_axis;
  const std::string* axis_name = &mesh.axes[static_cast<size_t>(axis)];
  int64_t size = mesh.shape[static_cast<size_t>(axis)];
  ShardingInfo s;
  if (const ShardingInfo* given = types_.sharding(*x)) s = *given;
  else s.mesh = current_mesh_;
  // Every rank of the axis holds the same value (or its block of it) after
  // any of these: what a recv made differ along the axis is settled.
  s.varying_axes &= ~(1u << axis);
  std::vector<DimId> dims(types_.dims(*x).begin(), types_.dims(*x).end());
  s.dim_axes.resize(dims.size(), -1);
  TypeInfo info = types_.info(*x);
  PartialOp op = PartialOp::Sum;
  if (bc.id == BuiltinId::AllReduce || bc.id == BuiltinId::ReduceScatter) {
    if (bound[2].valid()) {
      // (A name for the string: a constant argument, a name bound once.)
      auto name = constant_string(constant_literal(bound[2]));
      auto parsed = name ? partial_op_by_name(*name) : std::nullopt;
      if (!parsed) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[2]), "op", bc.name,
                                            "one of \"sum\", \"max\", \"min\", \"avg\", \"prod\"", source_text(bound[2]));
        return Value{error};
      }
      op = *parsed;
    }
    // What the runtime's reductions take (collectives_api.cpp,
    // check_reduction): the narrow floats are moved, never reduced; bool
    // reduces with max and min only.
    bool narrow = info.scalar == ScalarType::FP8E4M3 || info.scalar == ScalarType::FP8E5M2 ||
                  info.scalar == ScalarType::FP6E2M3 || info.scalar == ScalarType::FP6E3M2 ||
                  info.scalar == ScalarType::FP4E2M1;
    bool boolean_sum = info.scalar == ScalarType::Bool && op != PartialOp::Max && op != PartialOp::Min;
    if (narrow || boolean_sum) {
      diags_.emit<diag::SemaArgumentType>(
          ast_.range(bound[0]), "x", bc.name,
          narrow ? "a tensor of bool, an integer type, f16, bf16, f32 or f64 (reductions do not take the narrow floats: "
                   "convert first; all_gather, broadcast, send and recv move any dtype)"
                 : "a tensor that is not bool (bool reduces with \"max\" and \"min\" only)",
          types_.to_string(*x));
      return Value{error};
    }
    if ((s.partial_axes & (1u << axis)) && s.partial_op != op) {
      // Each rank holds a term of the value (a row-parallel product's
      // partial sum): reducing the terms any other way is not the value.
      const std::string_view held = partial_op_name(s.partial_op);
      diags_.emit<diag::SemaArgumentType>(
          ast_.range(bound[2].valid() ? bound[2] : bc.call), "op", bc.name,
          fmt::format("\"{}\" for a value that is a partial {} over mesh axis '{}' ('{}': each rank holds a term of it, "
                      "and op=\"{}\" of the terms is the value{})",
                      held, held, *axis_name, types_.to_string(*x), held,
                      op == PartialOp::Avg && s.partial_op == PartialOp::Sum
                          ? "; for the mean, divide the result by the axis size, " + std::to_string(size)
                          : std::string()),
          "\"" + std::string(partial_op_name(op)) + "\"");
      return Value{error};
    }
    s.partial_axes &= ~(1u << axis);
    if (s.partial_axes == 0) s.partial_op = PartialOp::Sum;
  }
  auto dim_argument = [&](NodeId node, std::optional<size_t> otherwise) -> std::optional<size_t> {
    if (!node.valid() || ast_.kind(node) == NodeKind::NoneLiteral) return otherwise;
    auto d = constant_int_of(node);
    if (!d) {
      diags_.emit<diag::SemaArgumentType>(ast_.range(node), "dim", bc.name, "an integer constant", source_text(node));
      return std::nullopt;
    }
    return tensor_axis(node, *d, dims.size());
  };
  switch (bc.id) {
    case BuiltinId::AllReduce:
      // Every rank of the axis now holds the same (combined) values.
      for (int32_t& a : s.dim_axes)
        if (a == axis) a = -1;
      break;
    case BuiltinId::AllGather: {
      if (dims.empty()) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[0]), "x", bc.name, "a tensor of rank 1 or more",
                                            types_.to_string(*x));
        return Value{error};
      }
      // Along the dimension split over the axis, else dim= (default 0).
      auto split = std::find(s.dim_axes.begin(), s.dim_axes.end(), axis);
      std::optional<size_t> at = split != s.dim_axes.end() ? static_cast<size_t>(split - s.dim_axes.begin()) : 0;
      if (bound[2].valid()) {
        at = dim_argument(bound[2], at);
        if (!at) return Value{error};
        if (split != s.dim_axes.end() && *at != static_cast<size_t>(split - s.dim_axes.begin())) {
          diags_.emit<diag::SemaDistLayoutMismatch>(ast_.range(bound[2]), std::string(bc.name), types_.to_string(*x),
                                                    fmt::format("a gather along dimension {}", *at));
          return Value{error};
        }
      }
      if (split == s.dim_axes.end() && s.dim_axes[*at] >= 0) {
        // The dimension is split over another axis: the blocks gathered
        // are all the same block of it, no layout of the whole.
        diags_.emit<diag::SemaDistLayoutMismatch>(ast_.range(bc.call), std::string(bc.name), types_.to_string(*x),
                                                  fmt::format("a gather along dimension {} over '{}'", *at, *axis_name));
        return Value{error};
      }
      dims[*at] = types_.binary_dim(DimKind::Mul, dims[*at], types_.constant_dim(size));
      s.dim_axes[*at] = -1;
      for (int32_t& a : s.dim_axes)
        if (a == axis) a = -1;
      bound.resize(4);
      out_.collective_dims[bc.call.index] = *at;
      break;
    }
    case BuiltinId::ReduceScatter: {
      if (dims.empty()) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[0]), "x", bc.name, "a tensor of rank 1 or more",
                                            types_.to_string(*x));
        return Value{error};
      }
      auto at = dim_argument(bound[3], size_t{0});
      if (!at) return Value{error};
      // Dimensions split over the axis were summed with the others' blocks.
      for (int32_t& a : s.dim_axes)
        if (a == axis) a = -1;
      if (s.dim_axes[*at] >= 0) {
        diags_.emit<diag::SemaDistLayoutMismatch>(ast_.range(bc.call), std::string(bc.name), types_.to_string(*x),
                                                  fmt::format("a scatter along dimension {} over '{}'", *at, *axis_name));
        return Value{error};
      }
      auto c = types_.constant_value(dims[*at]);
      if (c && *c % size != 0) {
        diags_.emit<diag::SemaDistIndivisible>(ast_.range(bound[0]), static_cast<unsigned>(*at), source_text(bound[0]),
                                               std::to_string(*c), *axis_name, size);
        return Value{error};
      }
      dims[*at] = types_.binary_dim(DimKind::Div, dims[*at], types_.constant_dim(size));
      s.dim_axes[*at] = axis;
      out_.collective_dims[bc.call.index] = *at;
      break;
    }
    default: {  // broadcast
      if (bound[2].valid()) {
        auto root = constant_int_of(bound[2]);
        if (!root || *root < 0 || *root >= size) {
          diags_.emit<diag::SemaArgumentType>(ast_.range(bound[2]), "root", bc.name,
                                              fmt::format("an index along '{}' (0 to {})", *axis_name, size - 1),
                                              source_text(bound[2]));
          return Value{error};
        }
      }
      for (int32_t& a : s.dim_axes)
        if (a == axis) a = -1;
      break;
    }
  }
  TypeId result = types_.tensor(info.scalar, info.policy, dims, AddressSpace::Global, false, false);
  return Value{types_.with_sharding(result, types_.intern_sharding(s))};
}

std::optional<int32_t> Checker::collective_axis(BuiltinCall& bc, NodeId axis_node) {
  if (current_mesh_ == UINT32_MAX) {
    diags_.emit<diag::SemaDistNoMesh>(ast_.range(bc.children[0]), std::string(bc.name));
    return std::nullopt;
  }
  const MeshInfo& mesh = types_.mesh_info(current_mesh_);
  // (A name for the string: a constant argument, a name bound once.)
  auto axis_name = constant_string(constant_literal(axis_node));
  if (!axis_name) {
    diags_.emit<diag::SemaArgumentType>(ast_.range(axis_node), "axis", bc.name, "a mesh axis name (a string)",
                                        source_text(axis_node));
    return std::nullopt;
  }
  auto found = std::find(mesh.axes.begin(), mesh.axes.end(), *axis_name);
  if (found == mesh.axes.end()) {
    diags_.emit<diag::SemaDistMeshAxis>(ast_.range(axis_node), *axis_name, joined_axes(mesh));
    return std::nullopt;
  }
  return static_cast<int32_t>(found - mesh.axes.begin());
}

// Point to point along a mesh axis, in the SPMD view (docs/distributed.md,
// "Pipelines: send and recv"): every rank runs the statement, and the peers
// are constant indices along the axis.
//   send(x, axis, src, dst)  the rank at index src sends x to index dst (None)
//   recv(x, axis, src, dst)  index dst: what src sent (x's type); others: x
//   sendrecv(x, axis, shift) every index j sends x to j + shift and receives
//                            from j - shift (modulo the axis size)
// A send and a recv of the same axis, src and dst match in program order;
// sema pairs them within the instance, so that a transfer one side would
// wait for for ever, or whose sides differ in type, is an error here.
Value Checker::check_point_to_point(BuiltinCall& bc) {
  TypeId error = types_.error();
  std::vector<NodeId> bound = bc.id == BuiltinId::SendRecv ? bc.bind({"x", "axis", "shift"}, 2)
                                                           : bc.bind({"x", "axis", "src", "dst"}, 4);
  if (bound.empty()) return Value{error};
  std::optional<TypeId> x = graph_tensor_argument(bc, bound[0], "x");
  for (size_t i = 1; i < bound.size(); ++i)
    if (bound[i].valid()) bc.value_of(bound[i]);
  if (!x) return Value{check_generic_bodies_ ? types_.dynamic() : error};
  if (check_generic_bodies_) return Value{bc.id == BuiltinId::Send ? types_.none() : types_.dynamic()};
  return in_mesh_view(bc, bound[0], *x, [&](TypeId local) { return point_to_point_on_mesh(bc, bound, local); });
}

Value Checker::point_to_point_on_mesh(BuiltinCall& bc, std::vector<NodeId>& bound, TypeId x_type) {
  TypeId error = types_.error();
  std::optional<TypeId> x = x_type;
  std::optional<int32_t> axis = collective_axis(bc, bound[1]);
  if (!axis) return Value{error};
  const MeshInfo mesh = types_.mesh_info(current_mesh_);
  const std::string& axis_name = mesh.axes[static_cast<size_t>(*axis)];
  out_.collective_meshes[bc.call.index] = current_mesh_;
  int64_t size = mesh.shape[static_cast<size_t>(*axis)];
  ShardingInfo s;
  if (const ShardingInfo* given = types_.sharding(*x)) {
    s = *given;
  } else {
    s.mesh = current_mesh_;
    s.dim_axes.assign(types_.dims(*x).size(), -1);
  }
  TypeInfo info = types_.info(*x);
  std::vector<DimId> dims(types_.dims(*x).begin(), types_.dims(*x).end());
  auto result_of = [&](const ShardingInfo& sharding) {
    TypeId plain = types_.tensor(info.scalar, info.policy, dims, AddressSpace::Global, false, false);
    return Value{types_.with_sharding(plain, types_.intern_sharding(sharding))};
  };
  if (bc.id == BuiltinId::SendRecv) {
    if (bound[2].valid() && !constant_int_of(bound[2])) {
      diags_.emit<diag::SemaArgumentType>(ast_.range(bound[2]), "shift", bc.name, "an integer constant",
                                          source_text(bound[2]));
      return Value{error};
    }
    // Each rank now holds its neighbour's value: blocks split over the axis
    // are no longer where the layout says; a partial sum over it stays one
    // (the same terms, on other ranks).
    if (!s.unknown)
      for (int32_t& a : s.dim_axes)
        if (a == *axis) a = -1;
    s.varying_axes |= 1u << *axis;
    return result_of(s);
  }
  std::optional<int64_t> peers[2];
  for (size_t i = 0; i < 2; ++i) {
    NodeId n = bound[2 + i];
    peers[i] = constant_int_of(n);
    if (!peers[i] || *peers[i] < 0 || *peers[i] >= size) {
      diags_.emit<diag::SemaArgumentType>(ast_.range(n), i ? "dst" : "src", bc.name,
                                          fmt::format("a constant index along '{}' (0 to {})", axis_name, size - 1),
                                          source_text(n));
      return Value{error};
    }
  }
  const int64_t src = *peers[0], dst = *peers[1];
  if (src == dst) {
    diags_.emit<diag::SemaDistPeer>(ast_.range(bc.call), std::string(bc.name),
                                    fmt::format("from index {} to itself along '{}': src and dst must differ", src,
                                                axis_name));
    return Value{error};
  }
  // Match the other side, else wait for it.
  const bool is_send = bc.id == BuiltinId::Send;
  auto other = std::find_if(open_transfers_.begin(), open_transfers_.end(), [&](const Transfer& t) {
    return t.is_send != is_send && t.mesh == current_mesh_ && t.axis == *axis && t.src == src && t.dst == dst;
  });
  if (other != open_transfers_.end()) {
    TypeId sent = is_send ? *x : other->type, expected = is_send ? other->type : *x;
    // Shapes and dtypes must agree; the layouts need not (the data is moved as it is).
    auto plain = [&](TypeId t) {
      TypeInfo i = types_.info(t);
      std::vector<DimId> d(types_.dims(t).begin(), types_.dims(t).end());
      return types_.to_string(types_.tensor(i.scalar, i.policy, d, AddressSpace::Global, false, false));
    };
    if (plain(sent) != plain(expected)) {
      diags_.emit<diag::SemaDistPeer>(
          ast_.range(bc.call), std::string(bc.name),
          fmt::format("from index {} to index {} along '{}': the recv expects '{}' but the send sends '{}' (the same "
                      "shape and dtype on both sides)",
                      src, dst, axis_name, plain(expected), plain(sent)));
      open_transfers_.erase(other);
      return Value{error};
    }
    open_transfers_.erase(other);
  } else {
    open_transfers_.push_back(Transfer{is_send, function_ == nullptr, current_mesh_, *axis, src, dst, *x, bc.call});
  }
  if (is_send) return Value{types_.none()};
  if (!s.unknown && (s.partial_axes & (1u << *axis))) {
    diags_.emit<diag::SemaDistLayoutMismatch>(ast_.range(bc.call), std::string(bc.name), types_.to_string(*x),
                                              "a recv, which replaces one rank's term (all_reduce it first)");
    return Value{error};
  }
  // Index dst now holds index src's block: the layout along the axis is gone.
  if (!s.unknown)
    for (int32_t& a : s.dim_axes)
      if (a == *axis) a = -1;
  s.varying_axes |= 1u << *axis;
  return result_of(s);
}

void Checker::check_unmatched_transfers() {
  for (const Transfer& t : open_transfers_) {
    const MeshInfo& mesh = types_.mesh_info(t.mesh);
    std::string axis = mesh.axes[static_cast<size_t>(t.axis)];
    const char* where = t.in_program ? "the program" : "this function";
    diags_.emit<diag::SemaDistPeer>(
        ast_.range(t.where), t.is_send ? "dist.send" : "dist.recv",
        t.is_send ? fmt::format("from index {} to index {} along '{}' has no matching recv in {}: index {} "
                                "would never take it (write dist.recv(x, axis=\"{}\", src={}, dst={}))",
                                t.src, t.dst, axis, where, t.dst, axis, t.src, t.dst)
                  : fmt::format("from index {} to index {} along '{}' has no matching send in {}: index {} "
                                "would wait for ever (write dist.send(x, axis=\"{}\", src={}, dst={}))",
                                t.src, t.dst, axis, where, t.dst, axis, t.src, t.dst));
  }
  open_transfers_.clear();
}

Value Checker::check_dist_builtin(BuiltinCall& bc) {
  switch (bc.id) {
    case BuiltinId::DistMesh: return check_dist_mesh(bc);
    case BuiltinId::ShardSpec: return check_shard_spec(bc);
    case BuiltinId::DistTensor: return check_dist_tensor(bc);
    case BuiltinId::AllReduce:
    case BuiltinId::AllGather:
    case BuiltinId::ReduceScatter:
    case BuiltinId::Broadcast: return check_collective(bc);
    case BuiltinId::Send:
    case BuiltinId::Recv:
    case BuiltinId::SendRecv: return check_point_to_point(bc);
    default: break;
  }
  bc.check_all_arguments();
  return Value{types_.dynamic()};
}

// ---------------------------------------------------------------- propagation

// The sharding of an elementwise result of rank `rank` from its operands
// (NumPy broadcasting: trailing dims aligned; a size-1 dim takes no part).
std::optional<uint32_t> Checker::elementwise_sharding(NodeId where, std::string_view what,
                                                       const std::vector<TypeId>& operands, size_t rank,
                                                       bool linear_sum) {
  const ShardingInfo* first = nullptr;
  TypeId first_type{};
  ShardingInfo out;
  out.dim_axes.assign(rank, -1);
  bool any = false;
  int partial_count = 0;
  for (TypeId t : operands) {
    const ShardingInfo* s = types_.sharding(t);
    if (!s) continue;
    auto mismatch = [&] {
      diags_.emit<diag::SemaDistLayoutMismatch>(ast_.range(where), std::string(what), types_.to_string(first_type),
                                                types_.to_string(t));
      return std::nullopt;
    };
    if (!any) {
      first = s;
      first_type = t;
      out.mesh = s->mesh;
      any = true;
    } else if (s->mesh != out.mesh) {
      return mismatch();
    }
    if (s->unknown) {
      out.unknown = true;
      continue;
    }
    out.varying_axes |= s->varying_axes;
    if (s->partial_axes) {
      if (partial_count && (s->partial_axes != out.partial_axes || s->partial_op != out.partial_op)) return mismatch();
      out.partial_axes = s->partial_axes;
      out.partial_op = s->partial_op;
      ++partial_count;
    }
    auto d = types_.dims(t);
    for (size_t i = 0; i < s->dim_axes.size() && i < d.size(); ++i) {
      if (s->dim_axes[i] < 0) continue;
      size_t at = rank - d.size() + i;
      auto c = types_.constant_value(d[i]);
      if (c && *c == 1 && s->dim_axes[i] < 0) continue;
      if (out.dim_axes[at] >= 0 && out.dim_axes[at] != s->dim_axes[i]) return mismatch();
      // One mesh axis splits one dimension: `a + b` of a row-split a and a
      // column-split b over the same axis has blocks of equal shapes, but
      // no layout of the result.
      for (size_t other = 0; other < rank; ++other)
        if (other != at && out.dim_axes[other] == s->dim_axes[i]) return mismatch();
      out.dim_axes[at] = s->dim_axes[i];
    }
  }
  if (!any) return 0;
  if (out.unknown) {
    ShardingInfo u;
    u.mesh = out.mesh;
    u.unknown = true;
    return types_.intern_sharding(u);
  }
  // A partial value is a sum still to be done: adding partial values of the
  // same kind, or scaling one by a value that is not partial, keeps it so.
  if (out.partial_axes) {
    // (The terms of a max, min or product do not add up to anything.)
    bool ok = linear_sum ? partial_count == static_cast<int>(operands.size()) &&
                               (operands.size() == 1 || out.partial_op == PartialOp::Sum ||
                                out.partial_op == PartialOp::Avg)
                         : partial_count == 1 && out.partial_op == PartialOp::Sum;
    if (!ok) {
      diags_.emit<diag::SemaDistLayoutMismatch>(ast_.range(where), std::string(what), types_.to_string(first_type),
                                                reduce_first(out));
      return std::nullopt;
    }
  }
  (void)first;
  return types_.intern_sharding(out);
}

// a[..., m, k] @ b[..., k, n]: rows from a, columns from b; a contraction
// split over one axis on both sides is a partial sum over that axis.
std::optional<uint32_t> Checker::matmul_sharding(NodeId where, TypeId a, TypeId b, TypeId result) {
  const ShardingInfo *sa = types_.sharding(a), *sb = types_.sharding(b);
  if (!sa && !sb) return 0;
  auto mismatch = [&](std::string other) {
    diags_.emit<diag::SemaDistLayoutMismatch>(ast_.range(where), "matmul", types_.to_string(a), std::move(other));
    return std::nullopt;
  };
  if (sa && sb && sa->mesh != sb->mesh) return mismatch(types_.to_string(b));
  size_t ra = types_.dims(a).size(), rb = types_.dims(b).size(), rank = types_.dims(result).size();
  ShardingInfo out;
  out.mesh = sa ? sa->mesh : sb->mesh;
  out.dim_axes.assign(rank, -1);
  if ((sa && sa->unknown) || (sb && sb->unknown) || ra < 2 || rb < 2) {
    ShardingInfo u;
    u.mesh = out.mesh;
    u.unknown = true;
    return types_.intern_sharding(u);
  }
  auto axis_of = [](const ShardingInfo* s, size_t d) { return s ? s->dim_axes[d] : -1; };
  for (size_t d = 0; d + 2 < ra; ++d) out.dim_axes[rank - ra + d] = axis_of(sa, d);
  for (size_t d = 0; d + 2 < rb; ++d) {
    int32_t x = axis_of(sb, d);
    if (x < 0) continue;
    int32_t& o = out.dim_axes[rank - rb + d];
    if (o >= 0 && o != x) return mismatch(types_.to_string(b));
    o = x;
  }
  out.dim_axes[rank - 2] = axis_of(sa, ra - 2);
  out.dim_axes[rank - 1] = axis_of(sb, rb - 1);
  if (out.dim_axes[rank - 2] >= 0 && out.dim_axes[rank - 2] == out.dim_axes[rank - 1]) return mismatch(types_.to_string(b));
  int32_t ka = axis_of(sa, ra - 1), kb = axis_of(sb, rb - 2);
  if (ka != kb) return mismatch(types_.to_string(b));
  uint32_t pa = sa ? sa->partial_axes : 0, pb = sb ? sb->partial_axes : 0;
  if (pa && pb) return mismatch(types_.to_string(b));
  if ((pa && sa->partial_op != PartialOp::Sum) || (pb && sb->partial_op != PartialOp::Sum))
    return mismatch(reduce_first(pa && sa->partial_op != PartialOp::Sum ? *sa : *sb));
  out.partial_axes = pa | pb;
  out.varying_axes = (sa ? sa->varying_axes : 0) | (sb ? sb->varying_axes : 0);
  if (ka >= 0) {
    if (out.partial_axes & (1u << ka)) return mismatch(types_.to_string(b));
    out.partial_axes |= 1u << ka;
  }
  return types_.intern_sharding(out);
}

// The result sharding of a graph builtin from its tensor arguments'.
TypeId Checker::propagate_builtin_sharding(BuiltinCall& bc, TypeId result) {
  if (types_.kind(result) != TypeKind::Tensor || in_device()) return result;
  switch (bc.id) {
    case BuiltinId::DistTensor:
    case BuiltinId::AllReduce:
    case BuiltinId::AllGather:
    case BuiltinId::ReduceScatter:
    case BuiltinId::Broadcast:
    case BuiltinId::Send:
    case BuiltinId::Recv:
    case BuiltinId::SendRecv: return result;
    default: break;
  }
  std::vector<NodeId> nodes;
  if (auto it = out_.call_arguments.find(bc.call.index); it != out_.call_arguments.end()) nodes = it->second;
  else nodes = bc.args.positional;
  std::vector<TypeId> tensors;
  std::vector<NodeId> tensor_nodes;
  bool sharded = false;
  for (NodeId n : nodes) {
    if (!n.valid() || n.index >= out_.node_types.size() || !out_.node_types[n.index].valid()) continue;
    TypeId t = out_.node_types[n.index];
    // The tensors of a list or tuple (concat's and stack's, whose literal
    // sema types as `dynamic`): sharded ones have no rule there (below), so
    // they must be seen.
    bool literal = ast_.kind(n) == NodeKind::List || ast_.kind(n) == NodeKind::Tuple;
    if (literal || types_.kind(t) == TypeKind::Tuple || types_.kind(t) == TypeKind::List) {
      // (Other builtins' tuples, jvp's primals, say what the builtin's own
      // rule handles.)
      if (bc.info.signature != Signature::ConcatArgs && bc.info.signature != Signature::StackArgs) continue;
      std::vector<TypeId> parts;
      if (literal) {
        for (NodeId element : ast_.children(n))
          if (out_.node_types[element.index].valid()) parts.push_back(out_.node_types[element.index]);
      } else if (types_.kind(t) == TypeKind::List) {
        parts.push_back(TypeId{types_.info(t).payload});
      } else {
        parts.assign(types_.tuple_elements(t).begin(), types_.tuple_elements(t).end());
      }
      for (TypeId part : parts)
        if (types_.kind(part) == TypeKind::Tensor && types_.sharding(part)) {
          tensors.push_back(part);
          tensor_nodes.push_back(n);
          sharded = true;
        }
      continue;
    }
    if (types_.kind(t) != TypeKind::Tensor) continue;
    tensors.push_back(t);
    tensor_nodes.push_back(n);
    sharded = sharded || types_.sharding(t);
  }
  if (!sharded) return result;
  // zeros_like(x), ones_like(x), full_like(x, number): every rank fills its
  // block of x. Zeros are also a consistent term of every partial reduction
  // (a sum, product, max, min or mean of zeros is zero), so zeros_like keeps
  // x's whole layout, partial and varying included (an accumulator started
  // as zeros_like(g) takes g's terms). Any other fill is one whole value on
  // every rank: a partial sum of ones would be the axis size.
  if ((bc.id == BuiltinId::ZerosLike || bc.id == BuiltinId::OnesLike || bc.id == BuiltinId::FullLike) &&
      tensors.size() == 1) {
    ShardingInfo u = *types_.sharding(tensors[0]);
    if (bc.id != BuiltinId::ZerosLike && !u.unknown) {
      u.partial_axes = u.varying_axes = 0;
      u.partial_op = PartialOp::Sum;
    }
    return types_.with_sharding(result, types_.intern_sharding(u));
  }
  // A function of a partial value's terms is not the function of their sum
  // (exp(a) + exp(b) is not exp(a + b), nor where(c, a, 1) + where(c, b, 1)
  // where(c, a + b, 1)), nor is a reduction of another kind (the max of a
  // partial sum): the value must be reduced first. (A cast keeps it partial;
  // the program reduces it itself, reduce_partial_in_program.)
  bool reduction = bc.info.signature == Signature::Reduction ||
                   (bc.info.signature == Signature::MinMax && tensors.size() == 1);
  bool nonlinear = bc.info.signature != Signature::CastArgs && bc.info.signature != Signature::MatmulArgs && !reduction;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const ShardingInfo* x = types_.sharding(tensors[i]);
    if (!x || !x->partial_axes) continue;
    bool needs_value = nonlinear || (reduction && !reduction_keeps_partial(bc.id, x->partial_op)) ||
                       (!function_ && bc.info.signature == Signature::MatmulArgs);
    if (!needs_value) continue;
    if (function_) {
      diags_.emit<diag::SemaDistLayoutMismatch>(ast_.range(bc.call), std::string(bc.name), types_.to_string(tensors[i]),
                                                reduce_first(*x));
      return types_.error();
    }
    tensors[i] = reduce_partial_in_program(tensor_nodes[i], tensors[i]);
  }
  size_t rank = types_.dims(result).size();
  std::optional<uint32_t> s;
  switch (bc.info.signature) {
    case Signature::UnaryFloat:
    case Signature::UnaryNumeric:
    case Signature::Activation:
    case Signature::BinaryNumeric:
    case Signature::WhereArgs:
    case Signature::DropoutArgs:
      s = elementwise_sharding(bc.call, bc.name, tensors, rank, false);
      break;
    case Signature::CastArgs:
      s = elementwise_sharding(bc.call, bc.name, tensors, rank, true);
      break;
    case Signature::MinMax:
      if (tensors.size() == 2) s = elementwise_sharding(bc.call, bc.name, tensors, rank, false);
      else s = reduction_sharding(bc, tensors[0], rank);
      break;
    case Signature::Reduction:
      s = reduction_sharding(bc, tensors[0], rank);
      break;
    case Signature::MatmulArgs:
      if (tensors.size() == 2) s = matmul_sharding(bc.call, tensors[0], tensors[1], result);
      break;
    case Signature::SoftmaxArgs:
    case Signature::NormArgs: {
      // Along the last (softmax: the given) axis, which must be whole.
      const ShardingInfo* x = types_.sharding(tensors[0]);
      if (x && !x->unknown && !x->dim_axes.empty() && x->dim_axes.back() >= 0 &&
          bc.info.signature == Signature::NormArgs) {
        diags_.emit<diag::SemaDistLayoutMismatch>(ast_.range(bc.call), std::string(bc.name),
                                                  types_.to_string(tensors[0]), "a normalization over the last dimension");
        return types_.error();
      }
      s = elementwise_sharding(bc.call, bc.name, {tensors[0]}, rank, false);
      if (s && *s && bc.info.signature == Signature::SoftmaxArgs) {
        // Along a whole axis each rank's rows are the global rows: the
        // layout is kept (softmax of row-split scores). Along a split axis
        // each rank normalizes its block alone: a value no layout describes.
        ShardingInfo u = types_.sharding_info(*s);
        std::optional<int64_t> axis = -1;
        if (auto it = out_.call_arguments.find(bc.call.index);
            it != out_.call_arguments.end() && it->second.size() >= 2 && it->second[1].valid())
          axis = constant_int_of(it->second[1]);
        if (axis && *axis < 0) *axis += static_cast<int64_t>(rank);
        bool whole = axis && *axis >= 0 && static_cast<size_t>(*axis) < u.dim_axes.size() &&
                     u.dim_axes[static_cast<size_t>(*axis)] < 0;
        if (!u.unknown && (!whole || u.partial_axes)) u.unknown = true, u.dim_axes.clear(), u.partial_axes = 0;
        s = types_.intern_sharding(u);
      }
      break;
    }
    case Signature::SplitQkvArgs:
    case Signature::MergeHeadsArgs:
    case Signature::AttentionArgs: {
      // Batch-leading operations ([B, ...] in, [B, ...] out, the batch's
      // rows independent): operands split over one mesh axis on their first
      // dimension only give results split alike (data parallelism); any
      // other layout gives an unknown one (below).
      // (Operands all whole on one mesh give whole results on it.)
      std::optional<ShardingInfo> batch;
      bool rule = true;
      for (TypeId t : tensors) {
        const ShardingInfo* x = types_.sharding(t);
        bool first_only = x && !x->unknown && !x->partial_axes && !x->varying_axes && !x->dim_axes.empty() &&
                          std::all_of(x->dim_axes.begin() + 1, x->dim_axes.end(), [](int32_t a) { return a < 0; });
        rule = rule && first_only && (!batch || (batch->mesh == x->mesh && batch->dim_axes[0] == x->dim_axes[0]));
        if (!rule) break;
        batch = *x;
      }
      if (rule && batch) {
        return each_tensor(result, [&](TypeId t) {
          ShardingInfo u;
          u.mesh = batch->mesh;
          u.dim_axes.assign(types_.dims(t).size(), -1);
          if (!u.dim_axes.empty()) u.dim_axes[0] = batch->dim_axes[0];
          return types_.with_sharding(t, types_.intern_sharding(u));
        });
      }
      [[fallthrough]];
    }
    default:
      // Each element of a tuple result (split_qkv's q, k, v) too.
      return each_tensor(result, [&](TypeId t) { return without_rule_sharding(t, tensors); });
  }
  if (!s) return types_.error();
  return types_.with_sharding(result, *s);
}

// `result` of an operation no sharding rule covers (a reshape, a slice, a
// concat) on sharded `operands`: whole when each of them is whole on one mesh
// (the same value on every rank: so is any function of it), else a layout
// the compiler does not know (the value is this rank's; the program refuses
// to print or save it, docs/distributed.md).
TypeId Checker::without_rule_sharding(TypeId result, std::span<const TypeId> operands) {
  if (types_.kind(result) != TypeKind::Tensor) return result;
  const ShardingInfo* first = nullptr;
  bool whole = true;
  for (TypeId t : operands) {
    const ShardingInfo* x = types_.kind(t) == TypeKind::Tensor ? types_.sharding(t) : nullptr;
    if (!x) continue;
    if (!first) first = x;
    whole = whole && x->mesh == first->mesh && !x->unknown && !x->partial_axes && !x->varying_axes &&
            std::ranges::all_of(x->dim_axes, [](int32_t a) { return a < 0; });
  }
  if (!first) return result;
  ShardingInfo u;
  u.mesh = first->mesh;
  if (whole) u.dim_axes.assign(types_.dims(result).size(), -1);
  else u.unknown = true;
  return types_.with_sharding(result, types_.intern_sharding(u));
}

// `f` of a tensor type, or a tuple of `f` of each element.
TypeId Checker::each_tensor(TypeId type, const std::function<TypeId(TypeId)>& f) {
  if (types_.kind(type) != TypeKind::Tuple) return f(type);
  std::vector<TypeId> parts;
  for (TypeId e : types_.tuple_elements(type)) parts.push_back(f(e));
  return types_.tuple(parts);
}

// sum/mean/max/min over axes: a reduced dimension split over a mesh axis
// leaves a partial value over it.
std::optional<uint32_t> Checker::reduction_sharding(BuiltinCall& bc, TypeId x, size_t rank) {
  const ShardingInfo* s = types_.sharding(x);
  if (!s) return 0;
  if (s->unknown) return types_.intern_sharding(*s);
  std::vector<NodeId> nodes;
  if (auto it = out_.call_arguments.find(bc.call.index); it != out_.call_arguments.end()) nodes = it->second;
  size_t in_rank = types_.dims(x).size();
  std::vector<bool> reduced(in_rank, nodes.size() < 2 || !nodes[1].valid() || ast_.kind(nodes[1]) == NodeKind::NoneLiteral);
  if (nodes.size() >= 2 && nodes[1].valid() && ast_.kind(nodes[1]) != NodeKind::NoneLiteral)
    for (NodeId a : literal_elements(nodes[1]))
      if (auto v = constant_int_of(a)) {
        int64_t d = *v < 0 ? *v + static_cast<int64_t>(in_rank) : *v;
        if (d >= 0 && d < static_cast<int64_t>(in_rank)) reduced[static_cast<size_t>(d)] = true;
      }
  PartialOp op = bc.id == BuiltinId::Max ? PartialOp::Max
                 : bc.id == BuiltinId::Min ? PartialOp::Min
                 : bc.id == BuiltinId::Mean ? PartialOp::Avg
                                            : PartialOp::Sum;
  if (bc.id == BuiltinId::Prod) op = PartialOp::Prod;
  if (bc.id == BuiltinId::AnyOf) op = PartialOp::Max;  // of bools
  if (bc.id == BuiltinId::AllOf) op = PartialOp::Min;
  ShardingInfo out;
  out.mesh = s->mesh;
  out.partial_axes = s->partial_axes;
  out.partial_op = s->partial_op;
  out.varying_axes = s->varying_axes;
  bool keep = rank == in_rank;
  for (size_t d = 0; d < in_rank; ++d) {
    if (!reduced[d]) {
      out.dim_axes.push_back(s->dim_axes[d]);
      continue;
    }
    if (keep) out.dim_axes.push_back(-1);
    if (s->dim_axes[d] < 0) continue;
    if (out.partial_axes && out.partial_op != op) {
      diags_.emit<diag::SemaDistLayoutMismatch>(ast_.range(bc.call), std::string(bc.name), types_.to_string(x),
                                                "a reduction over a split dimension of another kind");
      return std::nullopt;
    }
    out.partial_axes |= 1u << s->dim_axes[d];
    out.partial_op = op;
  }
  if (s->partial_axes && s->partial_op != PartialOp::Sum && out.partial_axes == s->partial_axes) {
    // max of a partial max etc. is fine; anything else needs the value.
  }
  return types_.intern_sharding(out);
}

}  // namespace tessera::sema
