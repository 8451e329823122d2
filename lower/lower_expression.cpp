// Lowering: expressions, builtin and helper calls, memory accesses.
//
// Every expression lowers to one value of the IR type of its sema type;
// untyped literals take the type the context wants. Arithmetic follows
// sema's promotion: operands convert to the result type first (a bf16 load
// extends to f32 before it is added). Python semantics are kept where they
// differ from C: `//` and `%` round toward negative infinity, `and`/`or`
// short-circuit (through scf.if, so `i < n and x[i] > 0` never reads out of
// bounds).
#include <algorithm>
#include <cmath>

#include "lower/lowering.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::ir {

using sema::BuiltinId;
using SemaKind = sema::TypeKind;

namespace {

unsigned bits(Type t) { return sema::scalar_info(t.scalar()).bits; }

}  // namespace

Value* Lowering::emit(OpKind kind, std::initializer_list<Value*> operands, Type result,
                      std::vector<NamedAttribute> attributes) {
  Operation* op = builder_.create(kind, std::span<Value* const>(operands.begin(), operands.size()),
                                  std::span<const Type>(&result, 1), std::move(attributes));
  return op->result();
}

const sema::Constant* Lowering::known_constant(NodeId node) const {
  // In an element of a loop over a tuple of mixed types: that element's.
  if (element_tables_in_use_ && element_tables_in_use_->node_types.count(node.index)) {
    auto it = element_tables_in_use_->constants.find(node.index);
    return it == element_tables_in_use_->constants.end() ? nullptr : &it->second;
  }
  if (instance_constants_) {
    if (auto it = instance_constants_->find(node.index); it != instance_constants_->end()) return &it->second;
  }
  auto it = typed_.constants.find(node.index);
  return it == typed_.constants.end() ? nullptr : &it->second;
}

std::optional<uint32_t> Lowering::call_instance(NodeId call) const {
  if (element_tables_in_use_ && element_tables_in_use_->node_types.count(call.index)) {
    auto it = element_tables_in_use_->call_instances.find(call.index);
    if (it == element_tables_in_use_->call_instances.end()) return std::nullopt;
    return it->second;
  }
  if (!call_instances_) return std::nullopt;
  auto it = call_instances_->find(call.index);
  if (it == call_instances_->end()) return std::nullopt;
  return it->second;
}

std::optional<int64_t> Lowering::constant_of(NodeId node) const {
  NodeKind k = ast_.kind(node);
  if (k != NodeKind::IntLiteral && k != NodeKind::Name && k != NodeKind::UnaryOp && k != NodeKind::BinaryOp)
    return std::nullopt;
  // A local may change (a parameter given a constant argument does not).
  if (k == NodeKind::Name && is_local(ast_.node(node).payload) && !constant_parameters_.count(ast_.node(node).payload))
    return std::nullopt;
  const sema::Constant* c = known_constant(node);
  if (!c || !c->as_int64()) return std::nullopt;
  // Expressions over locals may hold stale values (sema.h): only trust
  // literals, module constants, constant parameters and arithmetic on them.
  if (k == NodeKind::UnaryOp || k == NodeKind::BinaryOp) {
    for (NodeId child : ast_.children(node))
      if (!constant_of(child)) return std::nullopt;
  }
  return c->as_int64();
}

std::optional<int64_t> Lowering::constant_int_value(Value* v) const {
  Operation* op = v->defining_op();
  if (!op || !op->is(OpKind::Constant)) return std::nullopt;
  Attribute a = op->attr("value");
  if (!a.is(AttributeKind::Integer)) return std::nullopt;
  return a.int_value();
}

std::optional<Type> Lowering::typed_type(NodeId expression) {
  sema::TypeId t = node_type(expression);
  if (!t.valid()) return std::nullopt;
  SemaKind k = typed_.types.kind(t);
  if (k == SemaKind::UntypedInt || k == SemaKind::UntypedFloat) return std::nullopt;
  return ir_type(t);
}

// The type two operands of a comparison meet in.
Type Lowering::common_type(NodeId a, NodeId b) {
  std::optional<Type> ta = typed_type(a), tb = typed_type(b);
  auto untyped_float = [&](NodeId n) { return typed_.types.kind(node_type(n)) == SemaKind::UntypedFloat; };
  if (ta && !tb) return untyped_float(b) && !float_element(*ta) ? context_.f32_type() : *ta;
  if (tb && !ta) return untyped_float(a) && !float_element(*tb) ? context_.f32_type() : *tb;
  if (!ta && !tb) return untyped_float(a) || untyped_float(b) ? context_.f32_type() : context_.i32_type();
  if (*ta == *tb) return *ta;
  if (!ta->is_scalar() || !tb->is_scalar()) return *ta;
  bool fa = float_element(*ta), fb = float_element(*tb);
  if (fa != fb) return fa ? *ta : *tb;
  if (fa && (sema::is_storage_float(ta->scalar()) || sema::is_storage_float(tb->scalar()))) return context_.f32_type();
  return bits(*ta) >= bits(*tb) ? *ta : *tb;
}

std::string Lowering::expression_phrase(NodeId e) const {
  switch (ast_.kind(e)) {
    case NodeKind::StringLiteral: return "a string";
    case NodeKind::FString: return "an f-string in a kernel";
    case NodeKind::NoneLiteral: return "None as a value";
    case NodeKind::EllipsisLiteral: return "'...' as a value";
    case NodeKind::Lambda: return "a lambda";
    case NodeKind::Dict: return "a dict";
    case NodeKind::ListComp: return "a list comprehension";
    case NodeKind::GeneratorExp: return "a generator expression other than the argument of sum(), max() or min()";
    case NodeKind::StarArgument:
    case NodeKind::DoubleStarArgument: return "a starred argument";
    case NodeKind::SizeLiteral: return "a size literal as a value";
    default: return "the expression '" + std::string(node_kind_name(ast_.kind(e))) + "'";
  }
}

Value* Lowering::convert(Value* v, Type to) {
  Type from = v->type();
  if (!to || from == to) return v;
  // A 0-d tensor of graph code where a number is wanted (an if or while
  // condition, a kernel's scalar argument): its value, read back to the host.
  if (from.is(TypeKind::Tensor) && from.rank() == 0 && (to.is_scalar() || to.is_index()))
    return convert(emit(OpKind::GraphItem, {v}, context_.scalar_type(from.scalar())), to);
  if ((to.is(TypeKind::Tile) || to.is(TypeKind::Vector)) && from.is_scalar()) {
    Value* element = convert(v, context_.scalar_type(to.scalar()));
    return emit(OpKind::Splat, {element}, to);
  }
  if (from.is_index() || to.is_index()) {
    if (from.is_index() && to.is_index()) return v;
    if (from.is_index()) return to.is_int() ? emit(OpKind::IndexCast, {v}, to)
                                            : convert(emit(OpKind::IndexCast, {v}, context_.i64_type()), to);
    if (from.is_bool()) from = (v = convert(v, context_.i32_type()))->type();
    if (float_element(from)) v = convert(v, context_.i64_type());
    return emit(OpKind::IndexCast, {v}, to);
  }
  if (!from.is_scalar() || !to.is_scalar()) return v;  // memrefs, vectors: callers check (the verifier too)
  bool from_float = float_element(from), to_float = float_element(to);
  if (to.is_bool()) {
    Value* zero = from_float ? builder_.constant_float(0.0, from) : builder_.constant_int(0, from);
    return emit(from_float ? OpKind::CmpF : OpKind::CmpI, {v, zero}, to,
                {{"predicate", context_.string_attr(from_float ? "une" : "ne")}});
  }
  if (!from_float && !to_float) {
    if (bits(from) < bits(to))
      return emit(from.is_bool() || is_unsigned(from) ? OpKind::ExtUI : OpKind::ExtSI, {v}, to);
    if (bits(from) > bits(to)) return emit(OpKind::TruncI, {v}, to);
    return emit(OpKind::Bitcast, {v}, to);  // i32 <-> u32: the same bits
  }
  if (!from_float) return emit(from.is_bool() || is_unsigned(from) ? OpKind::UIToFP : OpKind::SIToFP, {v}, to);
  if (!to_float) return emit(is_unsigned(to) ? OpKind::FPToUI : OpKind::FPToSI, {v}, to);
  if (bits(from) < bits(to)) return emit(OpKind::ExtF, {v}, to);
  if (bits(from) > bits(to)) return emit(OpKind::TruncF, {v}, to);
  return emit(OpKind::TruncF, {emit(OpKind::ExtF, {v}, context_.f32_type())}, to);  // f16 <-> bf16
}

Value* Lowering::value(NodeId expression, Type want) {
  Bound b = lower(expression, want);
  if (!b.is_value()) unsupported(expression, "a list or tuple used as a value");
  return want ? convert(b.value, want) : b.value;
}

Value* Lowering::constant_value(const sema::Constant& c, Type want) {
  Type t = want;
  if (!t || !t.is_scalar()) {
    bool fits_i32 = c.is_float || sema::integer_range(sema::ScalarType::I32).contains(c.integer);
    t = c.is_float ? context_.f32_type() : fits_i32 ? context_.i32_type() : context_.i64_type();
  }
  if (t.is_bool()) return builder_.constant_bool(c.as_double() != 0.0);
  if (float_element(t)) return builder_.constant_float(c.as_double(), t);
  if (c.is_float) return builder_.constant_float(c.real, context_.f32_type());  // sema reported the narrowing
  // Sema checked that the value fits `t`; an unsigned 64-bit value keeps its bits.
  return builder_.constant_int(static_cast<int64_t>(static_cast<uint64_t>(c.integer)), t);
}

Bound Lowering::lower(NodeId e, Type want) {
  Location saved = builder_.location();
  builder_.set_location(location(e));
  Bound result;
  // An untyped constant expression (`2**40 // 2**20`, `-0.001`, `ts.pi`,
  // a module constant) is its exact value, which sema folded: made in the
  // type the context wants, never computed in it (where it could wrap).
  // (node_type: this @jit instance's typing of the node, not the module's.)
  if (sema::TypeId t = node_type(e); t.valid() && (typed_.types.kind(t) == SemaKind::UntypedInt ||
                                                                 typed_.types.kind(t) == SemaKind::UntypedFloat)) {
    if (const sema::Constant* c = known_constant(e); c && !c->from_local) {
      result.value = constant_value(*c, want);
      builder_.set_location(saved);
      return result;
    }
  }
  // A string of graph code: text and values to format (lower_strings.cpp).
  if (graph_ && is_string_node(e)) {
    result.text = std::make_shared<const Text>(lower_text(e));
    builder_.set_location(saved);
    return result;
  }
  switch (ast_.kind(e)) {
    case NodeKind::Name:
      // A name bound to a tuple (`grads` of `loss, grads = value_and_grad(...)(...)`)
      // or a list (`for w in weights` in a kernel too).
      if (auto it = env_.find(ast_.node(e).payload); it != env_.end() && !it->second.is_value() &&
                                                        node_type(e).valid() &&
                                                        (typed_.types.kind(node_type(e)) == sema::TypeKind::Tuple ||
                                                         typed_.types.kind(node_type(e)) == sema::TypeKind::List)) {
        builder_.set_location(saved);
        return it->second;
      }
      // A module constant tuple of numbers (`SHAPE = (2, 3)`) in a @jit
      // function: its literal, lowered here (the program binds it itself).
      if (NodeId literal = module_constant_tuple(e); literal.valid()) {
        builder_.set_location(saved);
        return lower(literal);
      }
      result.value = lower_name(e, want);
      break;
    case NodeKind::IntLiteral:
    case NodeKind::SizeLiteral:
    case NodeKind::FloatLiteral:
    case NodeKind::BoolLiteral: result.value = lower_literal(e, want); break;
    case NodeKind::BinaryOp:
      if (is_string_node(e)) unsupported(e, "a string in a kernel");
      result.value = lower_binary(e);
      break;
    case NodeKind::Compare:
    case NodeKind::BoolOp:
      // Fixed by sema (`scale is None`, an `and` it short-circuited, whose
      // right operand it left unchecked): a constant.
      if (std::optional<bool> decided = graph_ ? sema_decision(e) : std::nullopt) {
        result.value = builder_.constant_bool(*decided);
        break;
      }
      result.value = ast_.kind(e) == NodeKind::Compare ? lower_compare(e, nullptr) : lower_bool_op(e);
      break;
    case NodeKind::UnaryOp: result.value = lower_unary(e, want); break;
    case NodeKind::IfExp: result.value = lower_if_expression(e); break;
    case NodeKind::Call: result = lower_call(e); break;
    case NodeKind::Subscript: result = lower_subscript(e); break;
    case NodeKind::Attribute:
      if (!graph_ || !is_tensor_node(ast_.child(e, 0)))
        unsupported(e, "the attribute '." + name_of(ast_.node(e).payload) + "'");
      result = lower_tensor_attribute(e);
      break;
    case NodeKind::ListComp:
      if (!graph_) unsupported(e, expression_phrase(e));
      result = lower_comprehension(e);
      break;
    case NodeKind::Tuple:
    case NodeKind::List: {
      // Values in `elements`; with a tuple or list inside (`((x, y), (z,
      // w))`), every element in `nested`.
      std::vector<Bound> parts;
      for (NodeId element : ast_.children(e)) parts.push_back(lower(element));
      if (std::ranges::all_of(parts, [](const Bound& b) { return b.is_value(); })) {
        for (const Bound& b : parts) result.elements.push_back(b.value);
      } else {
        result.nested = std::move(parts);
      }
      // (Also a list of values of several types, a tuple to sema: it prints
      // as a list.)
      if (is_list_node(e) || (graph_ && ast_.kind(e) == NodeKind::List)) result.list_block = builder_.insertion_block();
      break;
    }
    default:
      unsupported(e, expression_phrase(e));
  }
  // An element read (a scalar subscript, tile.load) applied its tensor's
  // policy already; any other value whose type carries a policy is checked.
  bool element_read = (ast_.kind(e) == NodeKind::Subscript || is_builtin_call(e, BuiltinId::TileLoad)) &&
                      result.is_value() && result.value->type().is_scalar();
  if (!element_read) require_policy(e, PolicyUse::Other);
  // A program value whose reduced value an operation needs (sema's
  // reduce_partial_in_program): all_reduced over its partial axes.
  if (graph_ && result.is_value())
    if (auto r = typed_.program_reductions.find(e.index); r != typed_.program_reductions.end()) {
      const sema::ShardingInfo& partial = typed_.types.sharding_info(r->second);
      result.value = all_reduce_over(result.value, partial.mesh, partial.partial_axes,
                                     collective_op_name(partial.partial_op), e);
    }
  builder_.set_location(saved);
  return result;
}

Value* Lowering::symbol_dim(uint32_t identifier) {
  if (auto it = dim_values_.find(identifier); it != dim_values_.end()) return it->second;
  const DimSource& source = dim_sources_.at(identifier);
  // Read once, at the top of the function, so that every region sees it.
  Block* saved_block = builder_.insertion_block();
  Operation* saved_point = builder_.insertion_point();
  if (prologue_end_)
    builder_.set_insertion_point_after(prologue_end_);
  else
    builder_.set_insertion_point_to_start(entry_);
  if (!builder_.insertion_point()) builder_.set_insertion_point_to_end(entry_);
  Value* dim = emit(OpKind::Dim, {source.memref}, context_.index_type(), {{"axis", context_.int_attr(source.axis)}});
  Value* as_i32 = convert(dim, context_.i32_type());
  prologue_end_ = as_i32->defining_op();
  if (saved_point)
    builder_.set_insertion_point(saved_point);
  else
    builder_.set_insertion_point_to_end(saved_block);
  dim_values_[identifier] = as_i32;
  return as_i32;
}

// The tuple of constants a name not bound here stands for when the module
// assigns it once at its top level (`SHAPE = (2, 3)`); invalid otherwise.
NodeId Lowering::module_constant_tuple(NodeId name) const {
  uint32_t id = ast_.node(name).payload;
  if (!graph_ || env_.count(id) || !node_type(name).valid() || typed_.types.kind(node_type(name)) != SemaKind::Tuple)
    return NodeId{};
  NodeId literal = literal_assigned_once(id);
  return literal.valid() && ast_.kind(literal) == NodeKind::Tuple ? literal : NodeId{};
}

// The tuple of integer constants a name stands for: a @jit instance's
// parameter given one (sema::JitInstance::literal_arguments), or a name the
// module assigns it once at its top level; invalid otherwise.
NodeId Lowering::constant_tuple_of(NodeId name) const {
  NodeId literal = constant_literal_of(name);
  return literal.valid() && ast_.kind(literal) != NodeKind::StringLiteral ? literal : NodeId{};
}

// The literal a name stands for (sema::Checker::constant_literal): a @jit
// instance's parameter given a tuple of integer constants or a string, or a
// name the module assigns one once at its top level; invalid otherwise.
NodeId Lowering::constant_literal_of(NodeId name) const {
  if (ast_.kind(name) != NodeKind::Name) return NodeId{};
  uint32_t id = ast_.node(name).payload;
  if (auto it = literal_parameters_.find(id); it != literal_parameters_.end()) return it->second;
  if (std::find(locals_.begin(), locals_.end(), id) != locals_.end() && !program_) return NodeId{};
  return literal_assigned_once(id);
}

std::string Lowering::string_of(NodeId node) const {
  if (ast_.kind(node) == NodeKind::Name) node = constant_literal_of(node);
  if (!node.valid() || ast_.kind(node) != NodeKind::StringLiteral) internal_error("lower", "a string sema did not check");
  return values_.strings[ast_.node(node).payload];
}

// The value of the one top-level `NAME = value` that binds the name (no other
// statement assigns it) when it is a tuple of constants or a string literal;
// invalid otherwise.
NodeId Lowering::literal_assigned_once(uint32_t id) const {
  NodeId found;
  for (NodeId statement : ast_.children(ast_.root())) {
    NodeKind kind = ast_.kind(statement);
    if (kind != NodeKind::Assign && kind != NodeKind::AugAssign && kind != NodeKind::AnnAssign) continue;
    NodeId target = ast_.child(statement, 0);
    if (ast_.kind(target) != NodeKind::Name || ast_.node(target).payload != id) continue;
    if (found.valid() || kind != NodeKind::Assign || ast_.children(statement).size() != 2) return NodeId{};
    found = ast_.child(statement, 1);
  }
  if (!found.valid()) return NodeId{};
  if (ast_.kind(found) == NodeKind::StringLiteral) return found;
  if (ast_.kind(found) != NodeKind::Tuple) return NodeId{};
  for (NodeId element : ast_.children(found))
    if (!typed_.constants.count(element.index)) return NodeId{};
  return found;
}

Value* Lowering::lower_name(NodeId name, Type want) {
  uint32_t id = ast_.node(name).payload;
  if (auto it = env_.find(id); it != env_.end()) {
    if (!it->second.is_value()) unsupported(name, "a list used as a value");
    return it->second.value;
  }
  if (dim_sources_.count(id)) return symbol_dim(id);
  // A @jit function's symbolic dimension: graph.dim of its first parameter
  // that has it, read at the top of the function (lower_graph.cpp).
  if (auto it = dim_values_.find(id); graph_ && it != dim_values_.end()) return it->second;
  if (const sema::Constant* c = known_constant(name); c && !is_local(id))
    return constant_value(*c, want && want.is_scalar() ? want : typed_type(name).value_or(Type{}));
  if (sema::TypeId t = node_type(name); t.valid() && typed_.types.kind(t) == SemaKind::None)
    unsupported(name, "'" + name_of(id) + "', which is None here, as a value (compiled code reads None only in "
                          "'is None' and 'is not None' tests)");
  if (is_local(id))  // bound, but only on some paths before here: in a loop's body or one branch
    unsupported(name, "using '" + name_of(id) + "' after the loop or branch that binds it ('" + name_of(id) +
                          "' is carried out of a loop or an 'if' only when it is bound before it: give it a "
                          "value first, such as '" + name_of(id) + " = ts.zeros_like(...)' or '" + name_of(id) +
                          " = 0.0')");
  // A function reading a variable of the program (a closure over it, as
  // JAX's `def loss(W): return mse(x @ W, y)`): its value is the program's
  // at the call, which the function has no way to reach yet.
  if (!program_) {
    std::vector<uint32_t> program_names;
    for (NodeId statement : ast_.children(ast_.root())) assigned_names(ast_, statement, program_names);
    if (std::ranges::find(program_names, id) != program_names.end())
      unsupported(name, "reading the program's variable '" + name_of(id) +
                            "' in a function (a closure) (pass it as an argument: 'def f(W, " + name_of(id) +
                            ")', and for a gradient 'ts.grad(f)(W, " + name_of(id) + ")')");
  }
  unsupported(name, "using '" + name_of(id) + "' as a value");
}

Value* Lowering::lower_literal(NodeId literal, Type want) {
  const Node& n = ast_.node(literal);
  if (n.kind == NodeKind::BoolLiteral) return builder_.constant_bool((n.flags & 1) != 0);
  Type t = want && want.is_scalar() ? want : typed_type(literal).value_or(Type{});
  if (n.kind == NodeKind::FloatLiteral) {
    if (!t || !float_element(t)) t = context_.f32_type();
    return builder_.constant_float(values_.reals[n.payload], t);
  }
  sema::Constant c;
  c.integer = static_cast<sema::ConstantInt>(values_.integers[n.payload]);
  return constant_value(c, t && t.is_bool() ? Type{} : t);
}

Value* Lowering::lower_binary(NodeId node) {
  if (graph_ && is_tensor_node(node)) return graph_binary(node);
  auto op = static_cast<BinaryOperator>(ast_.node(node).op);
  NodeId lhs = ast_.child(node, 0), rhs = ast_.child(node, 1);
  Type result = typed_type(node).value_or(common_type(lhs, rhs));
  if (op == BinaryOperator::MatMul) unsupported(node, "'@' (use tile.mma)");
  // Operands meet in the result type, except that a float result of an
  // integer-typed `/` converts after; shifts keep the left operand's type.
  Value* a = value(lhs, result.is(TypeKind::Tile) ? Type{} : result);
  Value* b = value(rhs, result.is(TypeKind::Tile) ? context_.scalar_type(result.scalar()) : result);
  // Sema calls every register tile a tile; a load_vector result is an IR
  // vector of sema's element type (an f16 vector times a float is f32), and
  // a scalar meeting it is splatted to that vector.
  if (result.is(TypeKind::Tile)) {
    Value* vector = a->type().is(TypeKind::Vector) ? a : b->type().is(TypeKind::Vector) ? b : nullptr;
    if (vector) {
      result = context_.vector_type(vector->type().shape()[0], result.scalar());
      a = convert_vector(a, result, lhs);
      b = convert_vector(b, result, rhs);
    }
  }
  return emit_binary(op, convert(a, result), convert(b, result), node);
}

// A vector converted element by element to vector type `to` (floats
// widened, integers to floats); scalars are left to convert()'s splat.
Value* Lowering::convert_vector(Value* v, Type to, NodeId where) {
  Type from = v->type();
  if (!from.is(TypeKind::Vector) || from == to) return v;
  ScalarType f = from.scalar(), t = to.scalar();
  bool from_float = float_element(context_.scalar_type(f)), to_float = float_element(context_.scalar_type(t));
  if (from_float && to_float && scalar_info(f).bits < scalar_info(t).bits) return emit(OpKind::ExtF, {v}, to);
  if (!from_float && to_float && f != ScalarType::Bool)
    return emit(is_unsigned(context_.scalar_type(f)) ? OpKind::UIToFP : OpKind::SIToFP, {v}, to);
  unsupported(where, "converting a vector of " + std::string(scalar_info(f).name) + " to " +
                         std::string(scalar_info(t).name) + " in vector arithmetic");
}

Value* Lowering::emit_binary(BinaryOperator op, Value* a, Value* b, NodeId where) {
  Type t = a->type();
  if (b->type() != t) b = convert(b, t);
  if (float_element(t)) {
    switch (op) {
      case BinaryOperator::Add: return emit(OpKind::AddF, {a, b}, t);
      case BinaryOperator::Sub: return emit(OpKind::SubF, {a, b}, t);
      case BinaryOperator::Mul: return emit(OpKind::MulF, {a, b}, t);
      case BinaryOperator::Div: return emit(OpKind::DivF, {a, b}, t);
      case BinaryOperator::Pow: return emit(OpKind::PowF, {a, b}, t);
      case BinaryOperator::FloorDiv: return emit(OpKind::Floor, {emit(OpKind::DivF, {a, b}, t)}, t);
      case BinaryOperator::Mod: {
        // a - floor(a / b) * b: the sign of the divisor, as in Python.
        Value* q = emit(OpKind::Floor, {emit(OpKind::DivF, {a, b}, t)}, t);
        return emit(OpKind::SubF, {a, emit(OpKind::MulF, {q, b}, t)}, t);
      }
      default: unsupported(where, "the operator '" + std::string(operator_spelling(op)) + "' on floats");
    }
  }
  bool u = is_unsigned(t);
  switch (op) {
    case BinaryOperator::Add: return emit(OpKind::AddI, {a, b}, t);
    case BinaryOperator::Sub: return emit(OpKind::SubI, {a, b}, t);
    case BinaryOperator::Mul: return emit(OpKind::MulI, {a, b}, t);
    case BinaryOperator::FloorDiv: return emit(u ? OpKind::DivUI : OpKind::FloorDivSI, {a, b}, t);
    case BinaryOperator::Mod: {
      if (u) return emit(OpKind::RemUI, {a, b}, t);
      // The remainder takes the divisor's sign: add b when they differ.
      Value* r = emit(OpKind::RemSI, {a, b}, t);
      Value* zero = builder_.constant_int(0, t);
      Type flag = context_.bool_type();
      Value* nonzero = emit(OpKind::CmpI, {r, zero}, flag, {{"predicate", context_.string_attr("ne")}});
      Value* r_negative = emit(OpKind::CmpI, {r, zero}, flag, {{"predicate", context_.string_attr("slt")}});
      Value* b_negative = emit(OpKind::CmpI, {b, zero}, flag, {{"predicate", context_.string_attr("slt")}});
      Value* differ = emit(OpKind::XOrI, {r_negative, b_negative}, flag);
      Value* fix = emit(OpKind::AndI, {nonzero, differ}, flag);
      return emit(OpKind::Select, {fix, emit(OpKind::AddI, {r, b}, t), r}, t);
    }
    case BinaryOperator::Pow: return integer_power(a, b);
    case BinaryOperator::LShift:
    case BinaryOperator::RShift: return shift(op, a, b);
    case BinaryOperator::BitAnd: return emit(OpKind::AndI, {a, b}, t);
    case BinaryOperator::BitOr: return emit(OpKind::OrI, {a, b}, t);
    case BinaryOperator::BitXor: return emit(OpKind::XOrI, {a, b}, t);
    default: unsupported(where, "the operator '" + std::string(operator_spelling(op)) + "' on integers");
  }
}

// `a << b` and `a >> b` (docs/language/types.md, "Integer arithmetic"):
// a * 2**b wrapped to the type, and floor(a / 2**b). A count of the width
// or more (or a negative one, at run time; sema rejects a negative
// constant) shifts every bit out: 0, or -1 for `>>` of a negative signed
// value. The IR leaves such counts unspecified, so they never reach it.
Value* Lowering::shift(BinaryOperator op, Value* a, Value* b) {
  Type t = a->type();
  bool left = op == BinaryOperator::LShift;
  OpKind kind = left ? OpKind::ShLI : is_unsigned(t) ? OpKind::ShRUI : OpKind::ShRSI;
  auto width = static_cast<int64_t>(bits(t));
  if (auto count = constant_int_value(b); count && *count >= 0 && *count < width) return emit(kind, {a, b}, t);
  Type flag = context_.bool_type();
  Value* in_range = emit(OpKind::CmpI, {b, builder_.constant_int(width, t)}, flag, {{"predicate", context_.string_attr("ult")}});
  Value* count = emit(OpKind::Select, {in_range, b, builder_.constant_int(0, t)}, t);
  Value* shifted = emit(kind, {a, count}, t);
  Value* out = kind == OpKind::ShRSI ? emit(OpKind::ShRSI, {a, builder_.constant_int(width - 1, t)}, t)
                                     : builder_.constant_int(0, t);
  return emit(OpKind::Select, {in_range, shifted, out}, t);
}

// `a ** b` on integers (docs/language/types.md, "Integer arithmetic"): the
// product of b factors, wrapping as multiplication does; for a negative b
// (only at run time: sema rejects a negative constant) the real result
// truncated toward zero: 1 for a == 1, ±1 for a == -1, else 0 (0 ** -k
// included). The same IR for every target, so that they agree.
Value* Lowering::integer_power(Value* a, Value* b) {
  Type t = a->type();
  Type flag = context_.bool_type();
  auto compare = [&](const char* predicate, Value* x, Value* y) {
    return emit(OpKind::CmpI, {x, y}, flag, {{"predicate", context_.string_attr(predicate)}});
  };
  std::optional<int64_t> constant_exponent = constant_int_value(b);
  Value* power = nullptr;
  Value* one = builder_.constant_int(1, t);
  if (constant_exponent && *constant_exponent >= 0 && *constant_exponent <= 64) {
    // Square and multiply, unrolled.
    power = one;
    Value* square = a;
    for (int64_t k = *constant_exponent; k > 0; k >>= 1) {
      if (k & 1) power = emit(OpKind::MulI, {power, square}, t);
      if (k > 1) square = emit(OpKind::MulI, {square, square}, t);
    }
    return power;
  }
  // Square and multiply in a loop over the exponent's bits: (power, square,
  // exponent) while exponent != 0. A negative exponent runs no iteration.
  bool is_signed = !is_unsigned(t);
  Value* zero = builder_.constant_int(0, t);
  Value* exponent = is_signed ? emit(OpKind::Select, {compare("slt", b, zero), zero, b}, t) : b;
  std::vector<Type> types{t, t, t};
  std::vector<Value*> inits{one, a, exponent};
  Operation* loop = builder_.create(OpKind::While, std::span<Value* const>(inits), std::span<const Type>(types), {}, 2);
  Block* saved = builder_.insertion_block();
  Block* before = loop->region(0).add_block();
  for (Type type : types) before->add_argument(type);
  builder_.set_insertion_point_to_end(before);
  std::vector<Value*> forwarded{compare("ne", before->argument(2), zero)};
  for (Value* v : before->arguments()) forwarded.push_back(v);
  builder_.create(OpKind::Condition, std::span<Value* const>(forwarded), std::span<const Type>{});
  Block* after = loop->region(1).add_block();
  for (Type type : types) after->add_argument(type);
  builder_.set_insertion_point_to_end(after);
  Value* odd = compare("ne", emit(OpKind::AndI, {after->argument(2), one}, t), zero);
  Value* next_power =
      emit(OpKind::Select, {odd, emit(OpKind::MulI, {after->argument(0), after->argument(1)}, t), after->argument(0)}, t);
  Value* next_square = emit(OpKind::MulI, {after->argument(1), after->argument(1)}, t);
  Value* next_exponent = emit(OpKind::ShRUI, {after->argument(2), one}, t);
  builder_.create(OpKind::Yield, {next_power, next_square, next_exponent}, {});
  builder_.set_insertion_point_to_end(saved);
  power = loop->result(0);
  if (!is_signed) return power;
  Value* minus_one = builder_.constant_int(-1, t);
  Value* odd_exponent = compare("ne", emit(OpKind::AndI, {b, one}, t), zero);
  Value* of_minus_one = emit(OpKind::Select, {odd_exponent, minus_one, one}, t);
  Value* negative_power = emit(OpKind::Select, {compare("eq", a, one), one,
                                                emit(OpKind::Select, {compare("eq", a, minus_one), of_minus_one, zero}, t)},
                               t);
  return emit(OpKind::Select, {compare("slt", b, zero), negative_power, power}, t);
}

Value* Lowering::lower_compare(NodeId node, Value** rhs_out) {
  if (graph_ && is_tensor_node(node)) return graph_compare(node);
  if (std::optional<bool> equal = graph_ ? compare_texts(node) : std::nullopt)
    return builder_.constant_bool(*equal);
  auto op = static_cast<CompareOperator>(ast_.node(node).op);
  NodeId lhs = ast_.child(node, 0), rhs = ast_.child(node, 1);
  bool chained = (ast_.node(node).flags & 1) != 0;
  Value* chain = nullptr;
  Value* a = nullptr;
  Type t;
  if (chained) {
    // `a < b < c`: b is evaluated once, then compared again.
    chain = lower_compare(lhs, &a);
    t = common_type(ast_.child(lhs, 1), rhs);
  } else {
    t = common_type(lhs, rhs);
    a = value(lhs, t);
  }
  Value* b = value(rhs, t);
  a = convert(a, t);
  if (rhs_out) *rhs_out = b;
  bool f = float_element(t), u = is_unsigned(t) || t.is_bool();  // false < true, as Python has it
  const char* predicate = nullptr;
  switch (op) {
    case CompareOperator::Lt: predicate = f ? "olt" : u ? "ult" : "slt"; break;
    case CompareOperator::Le: predicate = f ? "ole" : u ? "ule" : "sle"; break;
    case CompareOperator::Gt: predicate = f ? "ogt" : u ? "ugt" : "sgt"; break;
    case CompareOperator::Ge: predicate = f ? "oge" : u ? "uge" : "sge"; break;
    case CompareOperator::Eq: predicate = f ? "oeq" : "eq"; break;
    case CompareOperator::Ne: predicate = f ? "une" : "ne"; break;  // NaN != NaN is true
    default: unsupported(node, "the comparison '" + std::string(operator_spelling(op)) + "'");
  }
  Value* c = emit(f ? OpKind::CmpF : OpKind::CmpI, {a, b}, context_.bool_type(),
                  {{"predicate", context_.string_attr(predicate)}});
  return chain ? emit(OpKind::AndI, {chain, c}, context_.bool_type()) : c;
}

// `a and b`: b only when a is true, as scf.if (b may read memory a guards).
Value* Lowering::lower_bool_op(NodeId node) {
  auto op = static_cast<BoolOperator>(ast_.node(node).op);
  Type flag = context_.bool_type();
  Value* a = value(ast_.child(node, 0), flag);
  Operation* branch = builder_.create(OpKind::If, {a}, {flag}, {}, 2);
  Block* saved = builder_.insertion_block();
  for (unsigned r = 0; r < 2; ++r) {
    builder_.set_insertion_point_to_end(branch->region(r).add_block());
    bool evaluate = (op == BoolOperator::And) == (r == 0);
    Value* v = evaluate ? value(ast_.child(node, 1), flag) : builder_.constant_bool(op == BoolOperator::Or);
    builder_.create(OpKind::Yield, {v}, {});
  }
  builder_.set_insertion_point_to_end(saved);
  return branch->result();
}

Value* Lowering::lower_unary(NodeId node, Type want) {
  if (graph_ && is_tensor_node(node)) return graph_unary(node);
  auto op = static_cast<UnaryOperator>(ast_.node(node).op);
  NodeId operand = ast_.child(node, 0);
  // (A negated literal is an untyped constant, made by lower() directly.)
  Type t = typed_type(node).value_or(want && want.is_scalar() ? want : Type{});
  if (op == UnaryOperator::Not) {
    Value* v = value(operand, context_.bool_type());
    return emit(OpKind::XOrI, {v, builder_.constant_bool(true)}, context_.bool_type());
  }
  Value* v = value(operand, t);
  t = v->type();
  switch (op) {
    case UnaryOperator::Pos: return v;
    case UnaryOperator::Neg:
      if (float_element(t)) return emit(OpKind::NegF, {v}, t);
      return emit(OpKind::SubI, {builder_.constant_int(0, t), v}, t);
    case UnaryOperator::Invert: return emit(OpKind::XOrI, {v, builder_.constant_int(-1, t)}, t);
    default: unsupported(node, "this unary operator");
  }
}

Value* Lowering::lower_if_expression(NodeId node) {
  // Fixed by sema in graph code, which checked only the branch taken.
  if (std::optional<bool> decided = graph_ ? sema_decision(ast_.child(node, 0)) : std::nullopt)
    return value(ast_.child(node, *decided ? 1 : 2));
  // A condition known when compiling whose branch has the expression's
  // type (sema typed it as that branch where the two differ): the branch
  // taken alone, as Python evaluates it.
  if (graph_)
    if (std::optional<int64_t> known = constant_condition(ast_.child(node, 0))) {
      NodeId chosen = ast_.child(node, *known ? 1 : 2);
      if (node_type(chosen) == node_type(node)) return value(chosen);
    }
  Type t = typed_type(node).value_or(common_type(ast_.child(node, 1), ast_.child(node, 2)));
  Value* c = value(ast_.child(node, 0), context_.bool_type());
  Operation* branch = builder_.create(OpKind::If, {c}, {t}, {}, 2);
  Block* saved = builder_.insertion_block();
  for (unsigned r = 0; r < 2; ++r) {
    builder_.set_insertion_point_to_end(branch->region(r).add_block());
    NodeId chosen = ast_.child(node, r + 1);
    Value* v;
    if (graph_ && t.is(TypeKind::Tensor)) {
      // Tensors (the condition a 0-d tensor read back, or a number): each
      // branch's value in the expression's type, as an `if` statement
      // merges its branches.
      v = value(chosen);
      if (v->type().is(TypeKind::Tensor)) v = to_element(v, t.scalar(), chosen);
      if (v->type() != t && same_tensor_shape(t, v->type())) v = reshape_as(v, t, v);
      if (v->type() != t)
        unsupported(chosen, "a conditional expression whose branches have different shapes or kinds ('" +
                                std::string(v->type().str()) + "' and '" + std::string(t.str()) + "')");
    } else {
      v = value(chosen, t);
    }
    builder_.create(OpKind::Yield, {v}, {});
  }
  builder_.set_insertion_point_to_end(saved);
  return branch->result();
}

bool Lowering::is_builtin_call(NodeId node, BuiltinId builtin) const {
  if (ast_.kind(node) != NodeKind::Call) return false;
  sema::TypeId t = node_type(ast_.child(node, 0));
  return t.valid() && typed_.types.kind(t) == SemaKind::Builtin &&
         static_cast<BuiltinId>(typed_.types.info(t).payload) == builtin;
}

Bound Lowering::lower_call(NodeId call) {
  NodeId callee = ast_.child(call, 0);
  if (graph_) {
    // float(t), int(t), bool(t) of a 0-d tensor, t.item() of a tensor of
    // one element: the value read back to the host (graph.item), converted
    // (sema's check_call; int() truncates toward zero as Python's).
    if (ast_.children(call).size() == 2 && ast_.kind(callee) == NodeKind::Name && is_tensor_node(ast_.child(call, 1))) {
      std::string name = name_of(ast_.node(callee).payload);
      if (name == "float" || name == "int" || name == "bool") {
        Value* t = value(ast_.child(call, 1));
        return Bound{convert(convert(t, context_.scalar_type(t->type().scalar())), *typed_type(call)), {}};
      }
    }
    // float(x), int(x), bool(x) of a number sema could not fold: converted
    // (int() truncates toward zero; bool() is x != 0).
    if (ast_.children(call).size() == 2 && ast_.kind(callee) == NodeKind::Name && typed_type(call) &&
        typed_type(call)->is_scalar()) {
      std::string name = name_of(ast_.node(callee).payload);
      sema::TypeId arg = node_type(ast_.child(call, 1));
      if ((name == "float" || name == "int" || name == "bool") && arg.valid() && typed_.types.is_numeric_scalar(arg))
        return Bound{convert(value(ast_.child(call, 1)), *typed_type(call)), {}};
    }
    // round(x[, ndigits]) of a number known at run time (sema's check_call;
    // constants were folded there): halves to even; with ndigits the value
    // times 10^ndigits rounded and divided back, in f64.
    if (ast_.kind(callee) == NodeKind::Name && name_of(ast_.node(callee).payload) == "round" &&
        (ast_.children(call).size() == 2 || ast_.children(call).size() == 3) && typed_type(call) &&
        typed_type(call)->is_scalar() && node_type(callee).valid() && typed_.types.kind(node_type(callee)) == SemaKind::Object) {
      Type result = *typed_type(call);
      Value* x = value(ast_.child(call, 1));
      if (!float_element(x->type())) return Bound{convert(x, result), {}};
      if (ast_.children(call).size() == 2) return Bound{convert(emit(OpKind::Round, {x}, x->type()), result), {}};
      Type f64 = context_.scalar_type(ScalarType::F64);
      std::optional<int64_t> digits = constant_of(ast_.child(call, 2));
      if (!digits) unsupported(ast_.child(call, 2), "round()'s ndigits held in a variable");
      Value* scale = builder_.constant_float(std::pow(10.0, static_cast<double>(*digits)), f64);
      Value* scaled = emit(OpKind::MulF, {convert(x, f64), scale}, f64);
      return Bound{convert(emit(OpKind::DivF, {emit(OpKind::Round, {scaled}, f64), scale}, f64), result), {}};
    }
    if (ast_.children(call).size() == 1 && ast_.kind(callee) == NodeKind::Attribute &&
        name_of(ast_.node(callee).payload) == "item" && is_tensor_node(ast_.child(callee, 0))) {
      Value* t = value(ast_.child(callee, 0));
      if (t->type().rank() != 0)
        t = graph_op(OpKind::GraphReshape, {t}, context_.tensor_type({}, t->type().scalar()), {}, call);
      return Bound{convert(convert(t, context_.scalar_type(t->type().scalar())), *typed_type(call)), {}};
    }
    // enumerate(l), zip(a, b) of lists: lists of tuples (lower_lists.cpp).
    // Of a tuple whose elements differ in type: a tuple of tuples.
    if (ast_.kind(callee) == NodeKind::Name && graph_ &&
        (is_list_node(call) || (node_type(call).valid() && typed_.types.kind(node_type(call)) == SemaKind::Tuple)) &&
        (name_of(ast_.node(callee).payload) == "enumerate" || name_of(ast_.node(callee).payload) == "zip"))
      return lower_list_tuples(call);
    // l.append(x), len(l) of a list (lower_lists.cpp).
    if (ast_.kind(callee) == NodeKind::Attribute && name_of(ast_.node(callee).payload) == "append" &&
        is_list_node(ast_.child(callee, 0)) && ast_.kind(ast_.child(callee, 0)) == NodeKind::Name)
      return lower_list_append(call);
    if (ast_.kind(callee) == NodeKind::Name && name_of(ast_.node(callee).payload) == "len" &&
        ast_.children(call).size() == 2 && is_list_node(ast_.child(call, 1)))
      return Bound{builder_.constant_int(static_cast<int64_t>(lower(ast_.child(call, 1)).size()), context_.i32_type()),
                   {}};
    if (ast_.kind(callee) == NodeKind::Name && name_of(ast_.node(callee).payload) == "len" &&
        ast_.children(call).size() == 2 && node_type(ast_.child(call, 1)).valid() &&
        typed_.types.kind(node_type(ast_.child(call, 1))) == SemaKind::Tuple)
      return Bound{builder_.constant_int(static_cast<int64_t>(typed_.types.tuple_elements(node_type(ast_.child(call, 1))).size()),
                                         context_.i32_type()),
                   {}};
    // len(x) of a tensor: the size of its first axis (sema's check_call).
    if (ast_.kind(callee) == NodeKind::Name && name_of(ast_.node(callee).payload) == "len" &&
        ast_.children(call).size() == 2 && is_tensor_node(ast_.child(call, 1)))
      return Bound{tensor_size(value(ast_.child(call, 1)), 0), {}};
    if (is_transform_node(callee)) return lower_transform_call(call);
    if (is_builtin_call(call, BuiltinId::Vjp)) return lower_vjp(call);
    if (is_builtin_call(call, BuiltinId::Jvp)) return lower_jvp(call);
    if (call_instance(call)) return lower_jit_call(call);
    if (ast_.kind(callee) == NodeKind::Subscript) {
      sema::TypeId k = node_type(ast_.child(callee, 0));
      if (k.valid() && typed_.types.kind(k) == SemaKind::Function) return lower_kernel_launch(call);
    }
  }
  sema::TypeId t = node_type(callee);
  // tshared.alloc[f16](...): the callee is a subscript of the builtin.
  if (ast_.kind(callee) == NodeKind::Subscript) t = node_type(ast_.child(callee, 0));
  if (t.valid() && typed_.types.kind(t) == SemaKind::Builtin) {
    auto builtin = static_cast<BuiltinId>(typed_.types.info(t).payload);
    if (graph_) return lower_graph_builtin(call, builtin);
    return lower_builtin_call(call, builtin);
  }
  // `f32(x)` of a number: cast(x, f32) (sema's check_call).
  if (t.valid() && typed_.types.kind(t) == SemaKind::Dtype && ast_.children(call).size() == 2) {
    std::optional<Type> to = ir_type(sema::TypeId{typed_.types.info(t).payload});
    Value* x = value(ast_.child(call, 1));
    if (to && to->is_scalar() && x->type().is_scalar()) {
      if (x->type().is_index()) x = convert(x, context_.i64_type());
      return Bound{convert(x, *to), {}};
    }
  }
  if (t.valid() && typed_.types.kind(t) == SemaKind::Function) {
    std::vector<Value*> results = lower_user_call(call, typed_.types.info(t).payload);
    if (results.size() == 1) return Bound{results[0], {}};
    return Bound{nullptr, results};
  }
  // (A method names itself: `saxpy.inspect_ir("tile")`.)
  std::string what = ast_.kind(callee) == NodeKind::Name ? "calling '" + name_of(ast_.node(callee).payload) + "'"
                     : ast_.kind(callee) == NodeKind::Attribute
                         ? "calling '" +
                               (ast_.kind(ast_.child(callee, 0)) == NodeKind::Name
                                    ? name_of(ast_.node(ast_.child(callee, 0)).payload)
                                    : std::string("...")) +
                               "." + name_of(ast_.node(callee).payload) + "'"
                         : std::string("calling this");
  unsupported(call, what);
}

std::vector<Value*> Lowering::lower_user_call(NodeId call, uint32_t function_index) {
  const sema::FunctionInfo& info = typed_.functions[function_index];
  // `def helper(x, *rest)`: a variable number of arguments has no
  // parameter of its own in an instance.
  for (NodeId p : ast_.children(ast_.child(info.def, 1))) {
    auto kind = static_cast<ParameterKind>(ast_.node(p).op);
    if (kind == ParameterKind::VarPositional || kind == ParameterKind::VarKeyword)
      unsupported(call, sema::variadic_call_phrase(name_of(info.name.index), name_of(ast_.node(p).payload),
                                                   kind == ParameterKind::VarKeyword));
  }
  if (info.kind != sema::FunctionKind::Helper) unsupported(call, "calling a kernel or @jit function");
  // The arguments sema bound to the parameters (positional, keyword, the
  // parameters' defaults), in the parameters' order.
  auto bound = typed_.call_arguments.find(call.index);
  std::vector<NodeId> arguments;
  if (bound != typed_.call_arguments.end()) {
    arguments = bound->second;
  } else {
    for (NodeId a : ast_.children(call).subspan(1)) arguments.push_back(a);
  }
  NodeId parameters = ast_.child(info.def, 1);
  if (arguments.size() != info.parameter_types.size()) unsupported(call, "this helper call");
  std::vector<Value*> operands;
  std::vector<Type> specialization(arguments.size());
  for (size_t i = 0; i < arguments.size(); ++i) {
    NodeId parameter = ast_.children(parameters)[info.first_parameter + i];
    Type declared = required_type(info.parameter_types[i], parameter,
                                  "parameter '" + name_of(ast_.node(parameter).payload) + "'");
    if (declared.is_scalar()) {
      operands.push_back(convert(value(arguments[i], declared), declared));
      continue;
    }
    // A tensor: the helper is specialised for the memory it is given
    // (shared, local, a static shape, a layout) or for a vector.
    Value* v = memref_of(arguments[i], true);
    if (v->type() != declared) specialization[i] = v->type();
    operands.push_back(v);
  }
  Operation* callee = function_op(function_index, specialization);
  // A tensor with a numeric policy cannot be passed (reported once the
  // callee is declared, so that its body reports what it does with it too).
  for (size_t i = 0; i < arguments.size(); ++i)
    if (!operands[i]->type().is_scalar()) require_policy(arguments[i], PolicyUse::Other);
  Type fn = callee->attr("function_type").type();
  std::vector<Type> results;
  for (size_t i = 0; i < fn.num_results(); ++i) results.push_back(fn.result(i));
  Operation* op = builder_.create(OpKind::Call, std::span<Value* const>(operands), std::span<const Type>(results),
                                  {{"callee", context_.symbol_attr(callee->symbol_name())}});
  return op->results();
}

Value* Lowering::select_element(const std::vector<Value*>& elements, Value* index, NodeId where) {
  if (elements.empty()) unsupported(where, "indexing an empty list");
  if (auto k = constant_int_value(index)) {
    int64_t i = *k < 0 ? *k + static_cast<int64_t>(elements.size()) : *k;
    if (i < 0 || i >= static_cast<int64_t>(elements.size())) unsupported(where, "a list index out of range");
    return elements[static_cast<size_t>(i)];
  }
  // A run-time index: a chain of selects (the list is small: buffers of a
  // pipeline), which needs one type for every element.
  for (Value* e : elements)
    if (e->type() != elements.front()->type())
      unsupported(where, "indexing a list whose elements differ in type or shape by a run-time index");
  Value* result = elements.back();
  for (size_t i = elements.size() - 1; i-- > 0;) {
    Value* k = builder_.constant_int(static_cast<int64_t>(i), index->type());
    Value* is_k = emit(OpKind::CmpI, {index, k}, context_.bool_type(), {{"predicate", context_.string_attr("eq")}});
    result = emit(OpKind::Select, {is_k, elements[i], result}, elements[i]->type());
  }
  return result;
}

Place Lowering::place_of(NodeId subscript, bool element_access) {
  NodeId object = ast_.child(subscript, 0), index = ast_.child(subscript, 1);
  if (!element_access) require_policy(subscript, PolicyUse::Other);
  Value* memref = memref_of(object, true);
  Type m = memref->type();
  // (Messages name types as the language does: sema's, never the IR's.)
  if (!m.is(TypeKind::MemRef)) {
    sema::TypeId object_type = typed_.node_types[object.index];
    // `y[0] = 5.0` in graph code: a tensor there is a value (in-place
    // updates are a later extension), so say what to write instead.
    if (m.is(TypeKind::Tensor) && object_type.valid() && typed_.types.kind(object_type) == SemaKind::Tensor)
      unsupported(subscript, "assigning to an element or slice of a tensor of type '" +
                                 typed_.types.to_string(object_type) +
                                 "' in @jit code (a tensor is a value there: make the new tensor with ts.where, "
                                 "ts.concat or a @kernel launch)");
    unsupported(subscript, "indexing a value of type '" + typed_.types.to_string(object_type) + "'");
  }
  std::vector<NodeId> indices = subscript_indices(index);
  if (indices.size() > m.rank()) unsupported(subscript, "more indices than dimensions");
  // Slice lengths: from sema's type of the subscript (its dims are the
  // sliced dimensions, in order).
  std::vector<int64_t> slice_lengths;
  if (auto t = node_type(subscript); t.valid() && typed_.types.kind(t) == SemaKind::Tensor)
    for (sema::DimId d : typed_.types.dims(t)) slice_lengths.push_back(typed_.types.constant_value(d).value_or(kDynamic));
  size_t next_slice = 0;
  Place place;
  place.memref = memref;
  for (size_t axis = 0; axis < m.rank(); ++axis) {
    if (axis >= indices.size()) {  // trailing dimensions: whole
      place.indices.push_back(builder_.constant_index(0));
      place.extents.push_back(m.shape()[axis]);
      place.indexed.push_back(false);
      place.has_slice = true;
      ++next_slice;
      continue;
    }
    NodeId i = indices[axis];
    if (ast_.kind(i) == NodeKind::Slice) {
      if (ast_.child(i, 2).valid()) unsupported(i, "a slice with a step");
      NodeId lower_bound = ast_.child(i, 0);
      place.indices.push_back(lower_bound.valid() ? to_index(value(lower_bound, context_.i32_type()))
                                                  : builder_.constant_index(0));
      place.extents.push_back(next_slice < slice_lengths.size() ? slice_lengths[next_slice] : kDynamic);
      place.indexed.push_back(false);
      ++next_slice;
      place.has_slice = true;
      continue;
    }
    if (ast_.kind(i) == NodeKind::NoneLiteral || ast_.kind(i) == NodeKind::EllipsisLiteral)
      unsupported(i, "'None' or '...' in an index");
    place.indices.push_back(to_index(value(i, context_.i32_type())));
    place.extents.push_back(1);
    place.indexed.push_back(true);
  }
  return place;
}

Value* Lowering::memref_of(NodeId expression, bool element_access) {
  if (!element_access) require_policy(expression, PolicyUse::Other);
  if (ast_.kind(expression) == NodeKind::Name) {
    auto it = env_.find(ast_.node(expression).payload);
    if (it != env_.end() && it->second.is_value()) return it->second.value;
  }
  if (ast_.kind(expression) == NodeKind::Subscript) {
    Bound b = lower_subscript(expression);
    if (b.is_value()) return b.value;
  }
  return value(expression);
}

Value* Lowering::view_of(const Place& place, NodeId where) {
  Type m = place.memref->type();
  std::vector<int64_t> sizes, shape, dropped;
  for (size_t axis = 0; axis < place.extents.size(); ++axis) {
    // Sema allows a size known only at run time where no view is made
    // (sema.slice-not-static); views of run-time size are not compiled yet.
    if (place.extents[axis] == kDynamic) unsupported(where, "a view of a slice whose size is known only at run time");
    sizes.push_back(place.extents[axis]);
    if (place.indexed[axis]) dropped.push_back(static_cast<int64_t>(axis));
    else shape.push_back(place.extents[axis]);
  }
  // A rank-reducing view: the integer-indexed dimensions are dropped.
  Type view = context_.memref_type(shape, m.scalar(), m.space(), m.padding(), m.swizzle());
  std::vector<Value*> operands{place.memref};
  operands.insert(operands.end(), place.indices.begin(), place.indices.end());
  std::vector<NamedAttribute> attributes{{"sizes", context_.int_array_attr(sizes)}};
  if (!dropped.empty()) attributes.push_back({"drop", context_.int_array_attr(dropped)});
  return builder_.create(OpKind::Subview, std::span<Value* const>(operands), std::span<const Type>(&view, 1),
                         std::move(attributes))->result();
}

// `x.T`, `x.shape` (a tuple of i32), `x.size` of a graph tensor (sema's
// tensor_attribute; `x.ndim`, constant sizes and `x.dtype` are constants).
Bound Lowering::lower_tensor_attribute(NodeId node) {
  std::string member = name_of(ast_.node(node).payload);
  Value* x = value(ast_.child(node, 0));
  Type t = x->type();
  size_t rank = t.rank();
  if (member == "T") {
    std::vector<int64_t> perm, dims;
    for (size_t d = rank; d-- > 0;) {
      perm.push_back(static_cast<int64_t>(d));
      dims.push_back(t.shape()[d]);
    }
    return Bound{graph_op(OpKind::GraphTranspose, {x}, context_.tensor_type(dims, t.scalar()),
                          {{"perm", context_.int_array_attr(perm)}}, node),
                 {}};
  }
  // A sharded program value is this rank's block: its sizes are the
  // global ones sema knows (the value's own otherwise).
  sema::TypeId typed = node_type(ast_.child(node, 0));
  const bool block = program_ && typed.valid() && typed_.types.kind(typed) == SemaKind::Tensor &&
                     typed_.types.sharding(typed);
  auto size_of = [&](size_t d) -> Value* {
    if (block && d < typed_.types.dims(typed).size())
      if (std::optional<int64_t> c = typed_.types.constant_value(typed_.types.dims(typed)[d]))
        return builder_.constant_int(*c, context_.i32_type());
    return tensor_size(x, static_cast<int64_t>(d));
  };
  if (member == "shape") {
    Bound shape;
    for (size_t d = 0; d < rank; ++d) shape.elements.push_back(size_of(d));
    return shape;
  }
  if (member == "size") {
    Value* total = builder_.constant_int(1, context_.i32_type());
    for (size_t d = 0; d < rank; ++d) total = emit(OpKind::MulI, {total, size_of(d)}, context_.i32_type());
    return Bound{total, {}};
  }
  unsupported(node, "the attribute '." + member + "' of a tensor");
}

Value* Lowering::tensor_size(Value* x, int64_t axis) {
  int64_t d = x->type().shape()[static_cast<size_t>(axis)];
  if (d != kDynamic) return builder_.constant_int(d, context_.i32_type());
  return convert(graph_dim(x, axis), context_.i32_type());
}

Bound Lowering::lower_subscript(NodeId node) {
  NodeId object = ast_.child(node, 0);
  if (graph_ && is_tensor_node(object)) return Bound{graph_subscript(node), {}};
  // `x.shape[k]` of a graph tensor (a size sema knows is a constant already).
  if (graph_ && ast_.kind(object) == NodeKind::Attribute && name_of(ast_.node(object).payload) == "shape" &&
      is_tensor_node(ast_.child(object, 0))) {
    Value* x = value(ast_.child(object, 0));
    std::optional<int64_t> k = constant_of(ast_.child(node, 1));
    if (!k) k = folded_int(value(ast_.child(node, 1)));  // an unrolled loop's variable
    int64_t rank = static_cast<int64_t>(x->type().rank());
    if (!k || *k < -rank || *k >= rank) unsupported(node, "an index of 'shape' that is not a constant in range");
    return Bound{tensor_size(x, *k < 0 ? *k + rank : *k), {}};
  }
  // An element of a tuple in graph code (`r[1]`, `r[1][0]`, `f(x)[0]`,
  // `params[i]` in a loop unrolled for it): an index known when compiling.
  if (sema::TypeId t = node_type(object); graph_ && t.valid() && typed_.types.kind(t) == SemaKind::Tuple) {
    Bound whole = lower(object, Type{});
    NodeId index = ast_.child(node, 1);
    std::optional<int64_t> k = constant_of(index);
    if (!k && ast_.kind(index) != NodeKind::Slice) k = folded_int(value(index));
    int64_t n = static_cast<int64_t>(whole.nested.empty() ? whole.elements.size() : whole.nested.size());
    if (k && *k < 0) *k += n;
    if (!whole.is_value() && k && *k >= 0 && *k < n) {
      size_t i = static_cast<size_t>(*k);
      return whole.nested.empty() ? Bound{whole.elements[i], {}} : whole.nested[i];
    }
    if (!whole.is_value() && !k && ast_.kind(index) != NodeKind::Slice)
      unsupported(index, "indexing a tuple with an index known only at run time (a loop over a range known when "
                         "compiling is unrolled for it)");
  }
  if (is_list_node(object)) return lower_list_subscript(node);
  // A list element: `smem[stage]`.
  if (ast_.kind(object) == NodeKind::Name) {
    auto it = env_.find(ast_.node(object).payload);
    if (it != env_.end() && !it->second.is_value()) {
      std::vector<Value*> elements = it->second.elements;
      Value* index = value(ast_.child(node, 1), context_.i32_type());
      return Bound{select_element(elements, index, node), {}};
    }
  }
  // An element of a vector (a tile.load_vector result): `v[1]`, `v[i]`.
  // (Also a helper's tensor parameter given a vector: its type is the IR's.)
  Value* vector = nullptr;
  if (ast_.kind(object) == NodeKind::Name) {
    auto it = env_.find(ast_.node(object).payload);
    if (it != env_.end() && it->second.is_value() && it->second.value->type().is(TypeKind::Vector))
      vector = it->second.value;
  } else if (sema::TypeId t = typed_.node_types[object.index];
             t.valid() && typed_.types.kind(t) == SemaKind::Tensor &&
             typed_.types.info(t).space == sema::AddressSpace::Register && typed_.types.dims(t).size() == 1) {
    vector = value(object);
  }
  if (vector && vector->type().is(TypeKind::Vector)) {
    if (ast_.kind(ast_.child(node, 1)) == NodeKind::Slice) unsupported(node, "a slice of a vector");
    return Bound{vector_element(vector, to_index(value(ast_.child(node, 1), context_.i32_type()))), {}};
  }
  Place place = place_of(node, true);
  if (place.has_slice) return Bound{view_of(place, node), {}};  // checked by the user of the view
  require_policy(node, PolicyUse::ElementLoad);
  std::vector<Value*> operands{place.memref};
  operands.insert(operands.end(), place.indices.begin(), place.indices.end());
  Type element = context_.scalar_type(place.memref->type().scalar());
  Value* loaded =
      builder_.create(OpKind::Load, std::span<Value* const>(operands), std::span<const Type>(&element, 1))->result();
  if (const sema::PolicyClass* custom = element_policy_class(node)) return Bound{dequantize_element(loaded, node, *custom), {}};
  return Bound{apply_load_policy(loaded, node), {}};
}

void Lowering::emit_store(NodeId target, Value* v) {
  Place place = place_of(target, true);
  require_policy(target, place.has_slice ? PolicyUse::Other : PolicyUse::ElementStore);
  if (place.has_slice) {
    if (!v->type().is(TypeKind::Tile)) return store_slice(target, NodeId{}, v);  // a fill or a copy
    Value* view = view_of(place, target);
    // Each element would be converted as `t[i] = x` converts it (the
    // tensor's policy included); register tiles have no per-element access
    // in the IR yet.
    if (view->type().scalar() != v->type().scalar())
      unsupported(target, "storing a register tile of " + std::string(sema::scalar_info(v->type().scalar()).name) +
                              " into a tensor of " + std::string(sema::scalar_info(view->type().scalar()).name) +
                              " (a conversion on store)");
    builder_.create(OpKind::StoreTile, {v, view}, {});
    return;
  }
  const sema::PolicyClass* custom = element_policy_class(target);
  std::vector<Value*> operands{custom ? quantize_element(v, target, *custom) : convert_for_store(v, target, place),
                               place.memref};
  operands.insert(operands.end(), place.indices.begin(), place.indices.end());
  builder_.create(OpKind::Store, std::span<Value* const>(operands), std::span<const Type>{});
}

}  // namespace tessera::ir
