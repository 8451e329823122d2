// Lowering: numeric policies (docs/numerics.md, "Policies").
//
// A policy lives on sema's types (sema::Policy on a scalar or a tensor
// type). The lowering applies it where a tensor element is read or written
// through a subscript (`t[i]`, `t[i] = v`, `t[i] op= v`) or tile.load /
// tile.store, and reports every other use of a value whose type carries a
// policy it does not implement as `lower.unsupported`: a policy is applied
// or rejected, never dropped.

#include "ir/core/rounding_conversion.h"
#include "lower/lowering.h"

namespace tessera::ir {

using SemaKind = sema::TypeKind;
using sema::ScalarType;

namespace {

// A policy that changes values (more than @accum, which sema's promotion
// implements): rounding, saturation, loss scaling or a custom class.
bool changes_values(const sema::Policy& p) {
  return p.stochastic_round || p.saturate || p.rounding != sema::RoundingMode::NearestEven || p.loss_scale != 0.0 ||
         p.custom.valid();
}

}  // namespace

std::optional<sema::Policy> Lowering::policy_of(NodeId node) const {
  sema::TypeId t = node_type(node);
  if (!t.valid()) return std::nullopt;
  SemaKind k = typed_.types.kind(t);
  if (k != SemaKind::Scalar && k != SemaKind::Tensor) return std::nullopt;
  sema::PolicyId id = typed_.types.info(t).policy;
  if (id == sema::PolicyId{}) return std::nullopt;
  return typed_.types.policy(id);
}

double Lowering::loss_scale_of(sema::TypeId type) const {
  if (!type.valid() || typed_.types.kind(type) != SemaKind::Tensor) return 0.0;
  return typed_.types.policy(typed_.types.info(type).policy).loss_scale;
}

void Lowering::require_policy(NodeId where, PolicyUse use) {
  std::optional<sema::Policy> policy = policy_of(where);
  if (!policy) return;
  sema::TypeId t = node_type(where);
  std::string type = "'" + typed_.types.to_string(t) + "'";
  bool tensor = typed_.types.kind(t) == SemaKind::Tensor;
  auto reject = [&](std::string_view what) {
    std::string use_text = use == PolicyUse::ElementLoad    ? "reading an element of type "
                           : use == PolicyUse::ElementStore ? "storing an element of type "
                           : tensor                         ? "this use of a tensor of type "
                                                            : "a value of type ";  // Other, AccumOnly
    unsupported(where, "the numeric policy " + std::string(what) + " (" + use_text + type + ")");
  };
  if (use == PolicyUse::AccumOnly) {
    if (changes_values(*policy)) reject("other than @accum of an MMA operand");
    return;
  }
  if (use == PolicyUse::Other && graph_ && tensor) {
    // A whole tensor in a @jit function: its elements read exactly as their
    // storage (arithmetic computes in the accumulation type, sema's result
    // types say so), which is all @accum, @rounding, @saturate and
    // @stochastic_round mean for a value that is only read. @loss_scale
    // changes what an element reads as: such a tensor holds its decoded
    // values (ir_type), decoded where a @jit entry receives it and where a
    // cast makes it (lower_jit_instance, graph_cast_to_loss_scale). A
    // @precision_policy class's tensor is codes with a per-tensor scale:
    // only a parameter receives a scale (its hidden `NAME.scale`), so a
    // local of a class has none to read its codes with.
    if (policy->custom.valid())
      reject("'@" + name_of(policy->custom.index) +
             "' (a @precision_policy class) in a @jit function: its codes need a per-tensor scale, which only a "
             "parameter receives; declare the local as its values' type");
    return;
  }
  if (use == PolicyUse::Other) {
    // Only element accesses apply policies. @accum alone on a scalar is
    // sema's business: arithmetic on the value already computes in the
    // accumulation type (Checker::compute_type), which the lowering follows.
    if (tensor) reject("of a tensor used other than by indexing one element");
    if (changes_values(*policy)) reject("of a scalar value (policies apply to tensor element stores and loads)");
    return;
  }
  if (policy->custom.valid()) reject("'@" + name_of(policy->custom.index) + "' (a @precision_policy class)");
  ScalarType element = typed_.types.info(t).scalar;
  if (element == ScalarType::F64 && changes_values(*policy)) reject("on an f64 element");
  // Stores: @rounding, @saturate, @stochastic_round and @loss_scale are
  // applied by convert_for_store; loads: @loss_scale by apply_load_policy
  // (rounding policies do not concern reads).
}

namespace {

RoundingMode truncf_rounding(const sema::Policy& policy) {
  if (policy.stochastic_round) return RoundingMode::Stochastic;
  switch (policy.rounding) {
    case sema::RoundingMode::NearestEven: return RoundingMode::NearestEven;
    case sema::RoundingMode::TowardZero: return RoundingMode::TowardZero;
    case sema::RoundingMode::Down: return RoundingMode::Down;
    case sema::RoundingMode::Up: return RoundingMode::Up;
    case sema::RoundingMode::NearestAway: return RoundingMode::NearestAway;
  }
  return RoundingMode::NearestEven;
}

}  // namespace

RoundingPolicy Lowering::rounding_policy(const sema::Policy& policy) {
  return RoundingPolicy{truncf_rounding(policy), policy.saturate};
}

// The seed of a stochastic rounding (docs/numerics.md, "Random bits of a
// stochastic store"): the policy's constant, or the integer parameter of
// this function it names, as i64.
Value* Lowering::stochastic_seed(const sema::Policy& policy, NodeId where) {
  Type i64 = context_.i64_type();
  if (!policy.seed_name.valid()) return builder_.constant_int(policy.seed, i64);
  auto it = env_.find(policy.seed_name.index);
  if (it == env_.end() || !it->second.is_value() || !it->second.value->type().is_scalar() ||
      !it->second.value->type().is_int())
    unsupported(where, "the seed '" + name_of(policy.seed_name.index) +
                           "' of @stochastic_round, which is not an integer parameter of this function,");
  return convert(it->second.value, i64);
}

// The random bits of a stochastically rounded store (docs/numerics.md,
// "Policies"): numerics::random_bits(seed, counter) with the policy's seed
// (a constant, or a kernel integer parameter read at run time) and as
// counter the element's row-major index in the tensor the subscript names,
// so that the bits depend on the data's position only, never on which lane
// or group stores it, and are the same on every target.
Value* Lowering::random_bits_for(const sema::Policy& policy, const Place& place, NodeId where) {
  Type i64 = context_.i64_type();
  Value* seed = stochastic_seed(policy, where);
  Type m = place.memref->type();
  Value* offset = nullptr;
  for (size_t axis = 0; axis < place.indices.size(); ++axis) {
    Value* i = place.indices[axis];
    if (!offset) {
      offset = i;
      continue;
    }
    int64_t extent = m.shape()[axis];
    Value* d = extent == kDynamic ? emit(OpKind::Dim, {place.memref}, context_.index_type(),
                                         {{"axis", context_.int_attr(static_cast<int64_t>(axis))}})
                                  : builder_.constant_index(extent);
    offset = emit(OpKind::AddI, {emit(OpKind::MulI, {offset, d}, context_.index_type()), i}, context_.index_type());
  }
  Value* counter = convert(offset ? offset : builder_.constant_index(0), i64);
  return emit(OpKind::RandomBits, {seed, counter}, context_.i32_type());
}

void Lowering::check_rounding_source(ScalarType from, ScalarType to, const sema::Policy& policy, NodeId where,
                                     std::string_view verb, const std::string& type_text) {
  bool directed = policy.stochastic_round || policy.rounding != sema::RoundingMode::NearestEven;
  if (!directed) return;
  // The value must become f32 exactly before the policy's rounding: an f64
  // or a wide integer would be rounded twice.
  if (!sema::is_float(from) && sema::scalar_info(from).bits > 16)
    unsupported(where, std::string(verb) + " a " + std::string(sema::scalar_info(from).name) +
                           " value with a rounding policy (" + type_text + ")");
  if (from == ScalarType::F64 && to != ScalarType::F64)
    unsupported(where, std::string(verb) + " an f64 value with a rounding policy (" + type_text +
                           "), which would round twice,");
}

std::optional<sema::Policy> Lowering::dtype_policy(NodeId dtype) {
  sema::TypeId t = dtype.valid() ? node_type(dtype) : sema::TypeId{};
  if (!t.valid() || typed_.types.kind(t) != SemaKind::Dtype) return std::nullopt;
  sema::TypeId scalar{typed_.types.info(t).payload};
  sema::PolicyId id = typed_.types.info(scalar).policy;
  if (id == sema::PolicyId{}) return std::nullopt;
  sema::Policy policy = typed_.types.policy(id);
  std::string type = "'" + typed_.types.to_string(scalar) + "'";
  // The result of a cast is a value of the storage type without a policy
  // (later reads decode it as stored): a scale or a class would have to
  // follow the tensor, which casts do not do yet.
  if (policy.custom.valid())
    unsupported(dtype, "the numeric policy '@" + name_of(policy.custom.index) +
                           "' (a @precision_policy class) as a dtype argument (" + type + ")");
  if (policy.loss_scale != 0.0) unsupported(dtype, "the numeric policy @loss_scale as a dtype argument (" + type + ")");
  if (!changes_values(policy)) return std::nullopt;
  if (typed_.types.info(scalar).scalar == ScalarType::F64)
    unsupported(dtype, "a numeric policy on an f64 dtype (" + type + ")");
  return policy;
}

std::string Lowering::dtype_text(NodeId dtype) const {
  sema::TypeId t = node_type(dtype);
  if (t.valid() && typed_.types.kind(t) == SemaKind::Dtype) t = sema::TypeId{typed_.types.info(t).payload};
  return t.valid() ? typed_.types.to_string(t) : std::string("?");
}

Value* Lowering::graph_cast_by_policy(Value* x, ScalarType element, const sema::Policy& policy, NodeId where,
                                      NodeId dtype) {
  check_rounding_source(x->type().scalar(), element, policy, where, "casting", dtype_text(dtype));
  std::vector<Value*> operands{x};
  if (policy.stochastic_round) operands.push_back(stochastic_seed(policy, where));
  Type t = context_.tensor_type(x->type().shape(), element);
  return graph_op(OpKind::GraphCast, operands, t, rounding_attributes(context_, rounding_policy(policy)), where);
}

// `ts.cast(x, T @loss_scale(k))` of a tensor (docs/language/graph.md, "Loss
// scaling"): x made f32, times k, rounded into T by the dtype's other
// policies (graph.cast {scale = k}: the storage a `T @loss_scale(k)` tensor
// holds), then decoded (graph.cast {unscale = k}): the value the result
// reads as, round_T(k x) / k, in f32 as every @loss_scale tensor of graph
// code. Autodiff passes gradients through the pair as round_T(k g) / k.
Value* Lowering::graph_cast_to_loss_scale(Value* x, ScalarType element, NodeId where, NodeId dtype) {
  sema::TypeId t = node_type(dtype);
  sema::TypeId scalar{typed_.types.info(t).payload};
  sema::Policy policy = typed_.types.policy(typed_.types.info(scalar).policy);
  std::string type = "'" + typed_.types.to_string(scalar) + "'";
  if (!is_float(x->type().scalar()) || x->type().scalar() == ScalarType::F64)
    unsupported(where, "casting a tensor of " + std::string(sema::scalar_info(x->type().scalar()).name) +
                           " to a dtype with @loss_scale (" + type + ") other than through f32");
  if (policy.custom.valid())
    unsupported(dtype, "the numeric policy '@" + name_of(policy.custom.index) +
                           "' (a @precision_policy class) as a dtype argument (" + type + ")");
  if (element == ScalarType::F64) unsupported(dtype, "a numeric policy on an f64 dtype (" + type + ")");
  Value* stored = encode_loss_scaled(x, element, policy, where, [&] { return stochastic_seed(policy, where); });
  return decode_loss_scaled(stored, policy.loss_scale, where);
}

Value* Lowering::decode_loss_scaled(Value* stored, double k, NodeId where) {
  std::vector<int64_t> shape(stored->type().shape().begin(), stored->type().shape().end());
  return graph_op(OpKind::GraphCast, {stored}, context_.tensor_type(shape, ScalarType::F32),
                  {{"unscale", context_.float_attr(k)}}, where);
}

Value* Lowering::encode_loss_scaled(Value* x, ScalarType element, const sema::Policy& policy, NodeId where,
                                    const std::function<Value*()>& seed) {
  std::vector<int64_t> shape(x->type().shape().begin(), x->type().shape().end());
  std::vector<NamedAttribute> attributes = rounding_attributes(context_, rounding_policy(policy));
  attributes.push_back({"scale", context_.float_attr(policy.loss_scale)});
  std::vector<Value*> operands{to_element(x, ScalarType::F32, where)};
  if (policy.stochastic_round) operands.push_back(seed());
  return graph_op(OpKind::GraphCast, operands, context_.tensor_type(shape, element), std::move(attributes), where);
}

Value* Lowering::convert_for_store(Value* v, NodeId target, const Place& place) {
  Type element = context_.scalar_type(place.memref->type().scalar());
  std::optional<sema::Policy> policy = policy_of(target);
  if (!policy || !changes_values(*policy)) return convert(v, element);  // (custom: rejected by require_policy)
  Type f32 = context_.f32_type();
  Type from = v->type();
  if (from.is_scalar())
    check_rounding_source(from.scalar(), element.scalar(), *policy, target, "storing",
                          typed_.types.to_string(node_type(target)));
  // The value as f32, exactly where the policy's rounding is not nearest
  // even (checked above); an f64 or an integer is rounded by the policy's
  // conversion itself, once (a scaled integer is scaled in f32).
  bool scaled = policy->loss_scale != 0.0;
  Value* x = rounding_conversion_takes(from) && !(scaled && from.is_int()) ? v : convert(v, f32);
  if (scaled) x = emit(OpKind::MulF, {x, builder_.constant_float(policy->loss_scale, x->type())}, x->type());
  Value* bits = policy->stochastic_round ? random_bits_for(*policy, place, target) : nullptr;
  return emit_rounding_conversion(builder_, x, element, rounding_policy(*policy), bits);
}

Value* Lowering::apply_load_policy(Value* loaded, NodeId node) {
  std::optional<sema::Policy> policy = policy_of(node);
  if (!policy || policy->loss_scale == 0.0) return loaded;
  Type f32 = context_.f32_type();
  Value* x = convert(loaded, f32);
  return emit(OpKind::DivF, {x, builder_.constant_float(policy->loss_scale, f32)}, f32);
}

}  // namespace tessera::ir

// --- @precision_policy classes ---------------------------------------------------
//
// A kernel tensor whose element type is a @precision_policy class holds the
// class's `storage` codes; its per-tensor scale is the scalar argument that
// follows it. Element loads call the class's `dequantize(code, scale)`,
// element stores its per-element `quantize(x, scale)`: the methods are
// helpers (sema checked them), lowered once and called like any helper, so
// later passes and LLVM inline them like the others.

namespace tessera::ir {

const sema::PolicyClass* Lowering::tensor_policy_class(sema::TypeId t) const {
  if (!t.valid() || typed_.types.kind(t) != SemaKind::Tensor) return nullptr;
  sema::Policy policy = typed_.types.policy(typed_.types.info(t).policy);
  return policy.custom.valid() ? typed_.policy_class(policy.custom) : nullptr;
}

const sema::PolicyClass* Lowering::kernel_policy_class(const sema::FunctionInfo& function, size_t i) const {
  if (function.kind != sema::FunctionKind::Kernel) return nullptr;
  return tensor_policy_class(function.parameter_types[i]);
}

const sema::PolicyClass* Lowering::signature_policy_class(const sema::FunctionInfo& function, size_t i) const {
  // (A device helper takes no scale: only a kernel's own parameter has one.)
  if (function.kind != sema::FunctionKind::Kernel && function.device) return nullptr;
  return tensor_policy_class(function.parameter_types[i]);
}

// A @jit entry point's @precision_policy argument (its codes and its scale)
// as the tensor of values the function body sees: one graph.cast whose
// element code is a call of the class's `dequantize` helper, the same
// function a kernel's `w[i]` calls (generate-kernels emits the call per
// element), so the policy's arithmetic is written once, in the class.
Value* Lowering::graph_dequantize(Value* codes, Value* scale, const sema::PolicyClass& custom, NodeId where) {
  std::string class_name = name_of(ast_.node(custom.def).payload);
  if (custom.dequantize == UINT32_MAX)
    unsupported(where, "a '@" + class_name + "' tensor in a @jit function without 'dequantize'");
  bool saved_graph = graph_;
  graph_ = false;  // the method is a helper of kernels: scalars
  Operation* method = function_op(custom.dequantize);
  graph_ = saved_graph;
  std::vector<int64_t> shape(codes->type().shape().begin(), codes->type().shape().end());
  Value* s = convert(scale, context_.scalar_type(custom.scale));
  return graph_op(OpKind::GraphCast, {codes, s}, context_.tensor_type(shape, custom.compute),
                  {{"dequantize", context_.symbol_attr(method->symbol_name())}}, where);
}

const sema::PolicyClass* Lowering::element_policy_class(NodeId subscript) {
  if (ast_.kind(subscript) != NodeKind::Subscript) return nullptr;
  sema::TypeId t = node_type(ast_.child(subscript, 0));
  if (!t.valid() || typed_.types.kind(t) != SemaKind::Tensor) return nullptr;
  sema::Policy policy = typed_.types.policy(typed_.types.info(t).policy);
  if (!policy.custom.valid()) return nullptr;
  const sema::PolicyClass* custom = typed_.policy_class(policy.custom);
  // A class without the @precision_policy decorator: rejected, never ignored.
  if (!custom) unsupported(subscript, "the numeric policy '@" + name_of(policy.custom.index) + "' of a class that is not a @precision_policy");
  return custom;
}

namespace {

// The tensor a subscript chain names: `w` in `w[i]`, `w[r][c]`, `w[0:8][i]`.
NodeId subscript_root(const Ast& ast, NodeId node) {
  while (ast.kind(node) == NodeKind::Subscript) node = ast.child(node, 0);
  return node;
}

}  // namespace

namespace {

Value* call_method(Lowering& lowering, uint32_t function_index, std::vector<Value*> operands) {
  Operation* callee = lowering.function_op(function_index);
  Type fn = callee->attr("function_type").type();
  for (size_t i = 0; i < operands.size(); ++i) operands[i] = lowering.convert(operands[i], fn.input(i));
  Type result = fn.result(0);
  Operation* op = lowering.builder_.create(OpKind::Call, std::span<Value* const>(operands), std::span<const Type>(&result, 1),
                                           {{"callee", lowering.context_.symbol_attr(callee->symbol_name())}});
  return op->result();
}

}  // namespace

// The hidden scale argument of the '@Class' kernel parameter that
// `subscript` indexes; `access` ("reading", "storing") for the message when
// the tensor is not a kernel parameter.
Value* Lowering::policy_scale(NodeId subscript, const sema::PolicyClass& custom, std::string_view access) {
  NodeId root = subscript_root(ast_, subscript);
  auto scale = ast_.kind(root) == NodeKind::Name ? policy_scales_.find(ast_.node(root).payload) : policy_scales_.end();
  if (scale == policy_scales_.end())
    unsupported(subscript, std::string(access) + " an element of a '@" + name_of(ast_.node(custom.def).payload) +
                               "' tensor that is not a kernel parameter (its scale is the kernel argument after it)");
  return scale->second;
}

Value* Lowering::dequantize_element(Value* code, NodeId subscript, const sema::PolicyClass& custom) {
  Value* scale = policy_scale(subscript, custom, "reading");
  if (custom.dequantize == UINT32_MAX)
    unsupported(subscript, "reading '@" + name_of(ast_.node(custom.def).payload) + "' without 'dequantize'");
  return call_method(*this, custom.dequantize, {code, scale});
}

Value* Lowering::quantize_element(Value* v, NodeId target, const sema::PolicyClass& custom) {
  Value* scale = policy_scale(target, custom, "storing");
  if (!custom.element_quantize)
    unsupported(target, "storing into '@" + name_of(ast_.node(custom.def).payload) + "' without 'quantize(self, x, scale)'");
  return call_method(*this, custom.quantize, {v, scale});  // a `storage` value: the memref's element type
}

}  // namespace tessera::ir
