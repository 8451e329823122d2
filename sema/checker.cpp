// Sema: module symbols, decorators, functions and statements.
#include "sema/checker.h"
#include "sema/definite_assignment.h"
#include "sema/decorators.h"

#include <algorithm>
#include <array>
#include <functional>
#include <unordered_set>

#include "support/diagnostics/internal_error.h"

namespace tessera::sema {

std::string dotted_path_of(const Ast& ast, const ValueStores& values, NodeId node);

std::string_view function_kind_name(FunctionKind kind) {
  switch (kind) {
    case FunctionKind::Kernel:
      return "kernel";
    case FunctionKind::Jit:
      return "jit";
    case FunctionKind::Helper:
      return "helper";
  }
  return "helper";
}

Checker::Checker(const Ast& ast, ValueStores& values, DiagnosticEngine& diags, TypedModule& out)
    : ast_(ast), values_(values), diags_(diags), out_(out), types_(out.types), constants_(out.constants) {
  out_.node_types.assign(ast_.size(), TypeId{});
  call_instances_ = &out_.call_instances;
  element_tables_ = &out_.element_tables;
}

std::string Checker::source_text(NodeId node) const {
  SourceRange r = ast_.range(node);
  return std::string(diags_.sources().pointer(r.begin), r.end - r.begin);
}

uint32_t Checker::module_id(const std::string& path) {
  auto [it, inserted] = module_ids_.emplace(path, static_cast<uint32_t>(module_paths_.size()));
  if (inserted) module_paths_.push_back(path);
  return it->second;
}

void Checker::raise_effect(Effect effect, SourceRange where) {
  if (function_ == nullptr) return;
  if (effect > function_->effect) {
    function_->effect = effect;
    function_->effect_source = where;
  }
}

void Checker::report_missing_arguments(SourceRange call, const std::string& callee,
                                       const std::vector<std::string>& names) {
  std::string text = names.size() == 1 ? "the argument " : "the arguments ";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? " and " : ", ";
    text += "'" + names[i] + "'";
  }
  diags_.emit<diag::SemaMissingArgument>(call, callee, text);
}

std::optional<std::string> Checker::closest_name(std::string_view name,
                                                 const std::vector<std::string>& candidates) const {
  // Levenshtein distance, accepting at most a third of the name's length.
  // Optimal string alignment distance: edits and adjacent transpositions.
  auto distance = [](std::string_view a, std::string_view b) {
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      for (size_t j = 1; j <= b.size(); ++j) {
        size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
        d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
          d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
    return d[a.size()][b.size()];
  };
  size_t best = name.size() / 3 + 1;  // names shorter than 3 characters get no suggestion
  std::optional<std::string> result;
  for (const std::string& candidate : candidates) {
    size_t d = distance(name, candidate);
    if (d < best || (d == best && result && candidate < *result)) {
      if (d < best) best = d;
      result = candidate;
    }
  }
  return result;
}

SourceRange Checker::function_name_range(NodeId def, std::string_view keyword) const {
  NodeId decorators = ast_.child(def, 0);
  SourceOffset from = ast_.children(decorators).empty() ? ast_.range(def).begin : ast_.range(decorators).end;
  std::string_view text(diags_.sources().pointer(from), ast_.range(def).end - from);
  size_t at = text.find(keyword);
  if (at == std::string_view::npos) return ast_.range(def);
  size_t name = text.find_first_not_of(" \t\\\r\n", at + keyword.size());
  std::string identifier = name_of(ast_.node(def).payload);
  if (name == std::string_view::npos) return ast_.range(def);
  return SourceRange{from + static_cast<SourceOffset>(name),
                     from + static_cast<SourceOffset>(name + identifier.size())};
}

void Checker::run(NodeId module) {
  collect_module_symbols(module);
  collect_custom_vjps(module);
  collect_custom_jvps(module);
  mark_device_functions();
  for (NodeId statement : ast_.children(module))
    if (ast_.kind(statement) == NodeKind::ClassDef) check_class_decorators(statement);
  checked_.assign(out_.functions.size(), 0);
  // Module-level statements other than definitions, in order (host code and
  // seed fragments): typed like a function body without a function.
  function_ = nullptr;
  // A name that one top-level `NAME = <constant>` binds and no other
  // statement rebinds is a constant of the program (`I = 5; x[I - 1]`): exact
  // after its statement, as the lowering makes it (lower_program).
  auto simple_assignment = [&](NodeId statement) {
    return ast_.kind(statement) == NodeKind::Assign && ast_.children(statement).size() == 2 &&
           ast_.kind(ast_.child(statement, 0)) == NodeKind::Name;
  };
  for (NodeId statement : ast_.children(module)) {
    NodeKind kind = ast_.kind(statement);
    if (kind == NodeKind::FunctionDef || kind == NodeKind::ClassDef || kind == NodeKind::Import ||
        kind == NodeKind::ImportFrom || kind == NodeKind::TypeAlias)
      continue;
    if (simple_assignment(statement)) {
      ++program_bindings_[ast_.node(ast_.child(statement, 0)).payload];
      continue;
    }
    std::vector<uint32_t> names;
    assigned_names(ast_, statement, names);
    for (uint32_t name : names) program_bindings_[name] += 2;
  }
  for (NodeId statement : ast_.children(module)) {
    NodeKind kind = ast_.kind(statement);
    if (kind == NodeKind::FunctionDef || kind == NodeKind::ClassDef || kind == NodeKind::Import ||
        kind == NodeKind::ImportFrom) {
      continue;
    }
    if (kind == NodeKind::TypeAlias) {
      resolve_type(ast_.child(statement, 0));
      continue;
    }
    if (kind == NodeKind::Assign && binds_type_alias(statement)) {
      // `T = bf16`: typed as a type (unknown policies are reported); a
      // later rebinding of T was reported as a redefinition.
      if (defines_type_alias(statement)) resolve_type(ast_.child(statement, 1));
      out_.compile_time_statements.insert(statement.index);
      continue;
    }
    module_statement_begin_ = ast_.range(statement).begin;
    check_statement(statement);
    if (kind == NodeKind::Assign && ast_.children(statement).size() == 2) {
      NodeId value = ast_.child(statement, 1);
      module_value_types_[value.index] = out_.node_types[value.index];
    }
    if (simple_assignment(statement) && program_bindings_[ast_.node(ast_.child(statement, 0)).payload] == 1) {
      auto local = locals_.find(ast_.node(ast_.child(statement, 0)).payload);
      if (local != locals_.end() && local->second.constant && !local->second.constant->from_local)
        local->second.exact_constant = true;
      if (local != locals_.end()) local->second.literal = constant_literal(ast_.child(statement, 1));
    }
  }
  module_statement_begin_.reset();
  check_unmatched_transfers();  // the program's sends and recvs pair among its statements
  locals_.clear();
  for (uint32_t i = 0; i < out_.functions.size(); ++i) check_function(i);
  // Generic @jit functions no call instantiated: their bodies are checked
  // once with their unannotated parameters unknown (names, arity, kernel
  // rules), so that mistakes are found even in code nothing calls yet.
  for (uint32_t index : generic_functions_) {
    bool instantiated = std::any_of(out_.instances.begin(), out_.instances.end(),
                                    [&](const JitInstance& i) { return i.function == index; });
    if (!instantiated) check_generic(index);
  }
  // In source order, for a deterministic order of diagnostics.
  for (NodeId statement : ast_.children(module)) {
    if (ast_.kind(statement) != NodeKind::ClassDef) continue;
    auto it = out_.policy_classes.find(ast_.node(statement).payload);
    if (it != out_.policy_classes.end() && it->second.def == statement)
      check_policy_class(IdentifierId{it->first}, it->second);
  }
}

std::optional<Constant> Checker::evaluate_constant(NodeId node) const {
  const Node& n = ast_.node(node);
  switch (n.kind) {
    case NodeKind::IntLiteral:
    case NodeKind::SizeLiteral:
      return Constant{false, static_cast<ConstantInt>(values_.integers[n.payload])};
    case NodeKind::FloatLiteral:
      return Constant{true, 0, values_.reals[n.payload]};
    case NodeKind::Name: {
      auto it = module_symbols_.find(n.payload);
      if (it != module_symbols_.end() && it->second.kind == ModuleSymbol::Kind::Constant) return it->second.constant;
      return std::nullopt;
    }
    case NodeKind::UnaryOp: {
      auto operand = evaluate_constant(ast_.child(node, 0));
      if (!operand || static_cast<UnaryOperator>(n.op) != UnaryOperator::Neg) return std::nullopt;
      Constant c = *operand;
      c.real = -c.real;
      if (!c.is_float && fold_integer(BinaryOperator::Sub, 0, operand->integer, c.integer) != FoldError::None)
        return std::nullopt;
      return c;
    }
    case NodeKind::BinaryOp: {
      auto a = evaluate_constant(ast_.child(node, 0));
      auto b = evaluate_constant(ast_.child(node, 1));
      auto op = static_cast<BinaryOperator>(n.op);
      if (!a || !b || a->is_float || b->is_float || op == BinaryOperator::Div) return std::nullopt;
      // Exact, as check_binary folds it; no diagnostics here (the statement
      // is checked later and reports what is wrong with it).
      Constant c;
      if (fold_integer(op, a->integer, b->integer, c.integer) != FoldError::None) return std::nullopt;
      return c;
    }
    default:
      return std::nullopt;
  }
}

namespace {

// What a function's decorators make it, read without diagnostics
// (read_decorators reports what is wrong with them).
FunctionKind declared_kind(const Ast& ast, const ValueStores& values, NodeId def) {
  FunctionKind kind = FunctionKind::Helper;
  for (NodeId decorator : ast.children(ast.child(def, 0))) {
    NodeId head = ast.child(decorator, 0);
    NodeId callee = ast.kind(head) == NodeKind::Call ? ast.child(head, 0) : head;
    switch (lookup_decorator(dotted_path_of(ast, values, callee)).value_or(Decorator::PrecisionPolicy)) {
      case Decorator::Kernel:
      case Decorator::KernelAutotune: return FunctionKind::Kernel;
      case Decorator::Jit:
      case Decorator::Autodiff:
      case Decorator::CustomVjp:
      case Decorator::CustomJvp: kind = FunctionKind::Jit; break;
      case Decorator::PrecisionPolicy: break;
    }
  }
  return kind;
}

// The names of module functions that `node` calls (as `f(...)`).
void called_names(const Ast& ast, NodeId node, std::vector<uint32_t>& out) {
  if (!node.valid()) return;
  if (ast.kind(node) == NodeKind::Call) {
    NodeId callee = ast.child(node, 0);
    if (ast.kind(callee) == NodeKind::Name) out.push_back(ast.node(callee).payload);
  }
  for (NodeId child : ast.children(node)) called_names(ast, child, out);
}

}  // namespace

void Checker::mark_device_functions() {
  std::vector<uint32_t> work;
  for (uint32_t i = 0; i < out_.functions.size(); ++i)
    if (declared_kind(ast_, values_, out_.functions[i].def) == FunctionKind::Kernel) work.push_back(i);
  std::vector<bool> seen(out_.functions.size());
  for (uint32_t i : work) seen[i] = true;
  while (!work.empty()) {
    uint32_t index = work.back();
    work.pop_back();
    std::vector<uint32_t> names;
    called_names(ast_, ast_.child(out_.functions[index].def, 3), names);
    for (uint32_t name : names) {
      auto it = module_symbols_.find(name);
      if (it == module_symbols_.end() || it->second.kind != ModuleSymbol::Kind::Function) continue;
      uint32_t callee = it->second.function_index;
      if (seen[callee] || declared_kind(ast_, values_, out_.functions[callee].def) != FunctionKind::Helper) continue;
      seen[callee] = true;
      out_.functions[callee].device = true;
      work.push_back(callee);
    }
  }
}

void Checker::check_class_decorators(NodeId def) {
  for (NodeId decorator : ast_.children(ast_.child(def, 0))) {
    NodeId head = ast_.child(decorator, 0);
    NodeId callee = ast_.kind(head) == NodeKind::Call ? ast_.child(head, 0) : head;
    std::string path = dotted_path_of(ast_, values_, callee);
    std::optional<Decorator> kind = lookup_decorator(path);
    if (kind == Decorator::PrecisionPolicy) continue;
    if (!kind) {
      diags_.emit<diag::SemaUnknownDecorator>(ast_.range(head), path.empty() ? source_text(head) : path);
      continue;
    }
    diags_.emit<diag::SemaDecoratorOnClass>(ast_.range(head), path, name_of(ast_.node(def).payload));
  }
}

bool Checker::module_symbol_bound(uint32_t name) const {
  if (!module_statement_begin_) return true;
  auto it = module_binding_begin_.find(name);
  return it != module_binding_begin_.end() && it->second < *module_statement_begin_;
}

void Checker::collect_module_symbols(NodeId module) {
  for (NodeId statement : ast_.children(module)) {
    // The names a top-level statement binds (the ones collected below).
    auto bind = [&](uint32_t name) { module_binding_begin_.emplace(name, ast_.range(statement).begin); };
    const Node& n = ast_.node(statement);
    switch (n.kind) {
      case NodeKind::FunctionDef:
      case NodeKind::ClassDef:
      case NodeKind::TypeAlias:
        bind(n.payload);
        break;
      case NodeKind::Import:
      case NodeKind::ImportFrom:
        for (NodeId alias : ast_.children(statement).subspan(n.kind == NodeKind::ImportFrom ? 1 : 0)) {
          NodeId target = ast_.child(alias, 0);
          if (ast_.node(alias).payload != UINT32_MAX) {
            bind(ast_.node(alias).payload);
          } else if (n.kind == NodeKind::ImportFrom) {
            bind(ast_.node(target).payload);
          } else {
            while (ast_.kind(target) == NodeKind::Attribute) target = ast_.child(target, 0);
            bind(ast_.node(target).payload);
          }
        }
        break;
      case NodeKind::Assign: {
        auto children = ast_.children(statement);
        if (children.size() == 2 && ast_.kind(children[0]) == NodeKind::Name) bind(ast_.node(children[0]).payload);
        break;
      }
      default:
        break;
    }
  }
  auto define = [&](uint32_t name, ModuleSymbol symbol, SourceRange where) {
    auto [it, inserted] = module_symbols_.emplace(name, symbol);
    if (!inserted && it->second.kind != ModuleSymbol::Kind::Constant && symbol.kind != ModuleSymbol::Kind::Constant) {
      diags_.emit<diag::SemaRedefinition>(where, name_of(name))
          .note<diag::NotePreviousDefinition>(ast_.range(it->second.node), name_of(name));
    }
    return it;
  };
  for (NodeId statement : ast_.children(module)) {
    const Node& n = ast_.node(statement);
    switch (n.kind) {
      case NodeKind::FunctionDef: {
        FunctionInfo info;
        info.def = statement;
        info.name = IdentifierId{n.payload};
        out_.functions.push_back(info);
        ModuleSymbol symbol{ModuleSymbol::Kind::Function, statement, std::nullopt,
                            static_cast<uint32_t>(out_.functions.size() - 1)};
        define(n.payload, symbol, function_name_range(statement));
        break;
      }
      case NodeKind::ClassDef:
        define(n.payload, ModuleSymbol{ModuleSymbol::Kind::Class, statement}, n.range);
        collect_policy_class(statement);
        break;
      case NodeKind::TypeAlias:
        define(n.payload, ModuleSymbol{ModuleSymbol::Kind::TypeAlias, statement}, n.range);
        break;
      case NodeKind::Import:
      case NodeKind::ImportFrom: {
        std::string base =
            n.kind == NodeKind::ImportFrom ? dotted_path_of(ast_, values_, ast_.child(statement, 0)) : "";
        auto names = ast_.children(statement).subspan(n.kind == NodeKind::ImportFrom ? 1 : 0);
        for (NodeId alias : names) {
          NodeId target = ast_.child(alias, 0);
          std::string path = dotted_path_of(ast_, values_, target);
          if (!base.empty()) path = base + "." + path;
          uint32_t bound;
          if (ast_.node(alias).payload != UINT32_MAX) {
            bound = ast_.node(alias).payload;
          } else {
            // `import a.b` binds `a`; `from x import y` binds `y`.
            NodeId root = target;
            while (ast_.kind(root) == NodeKind::Attribute) root = ast_.child(root, 0);
            bound = n.kind == NodeKind::ImportFrom ? ast_.node(target).payload : ast_.node(root).payload;
            if (n.kind == NodeKind::Import) path = dotted_path_of(ast_, values_, root);
          }
          ModuleSymbol symbol{ModuleSymbol::Kind::Import, alias};
          symbol.module_id = module_id(path);
          module_symbols_[bound] = symbol;
        }
        break;
      }
      case NodeKind::Assign: {
        // Module constants: NAME = <constant expression>. Evaluated without
        // diagnostics here; the statement itself is checked later.
        auto children = ast_.children(statement);
        if (children.size() == 2 && ast_.kind(children[0]) == NodeKind::Name) {
          uint32_t name = ast_.node(children[0]).payload;
          auto previous = module_symbols_.find(name);
          bool alias = denotes_dtype(children[1]) && !lookup_dtype(name_of(name));
          if (alias || (previous != module_symbols_.end() && previous->second.kind == ModuleSymbol::Kind::TypeAlias)) {
            // A type alias (`T = bf16`), or a name rebound after being one:
            // an alias is bound once, as a function or class is.
            if (previous != module_symbols_.end()) {
              diags_.emit<diag::SemaRedefinition>(ast_.range(children[0]), name_of(name))
                  .note<diag::NotePreviousDefinition>(ast_.range(previous->second.node), name_of(name));
              break;
            }
            module_symbols_.emplace(name, ModuleSymbol{ModuleSymbol::Kind::TypeAlias, statement});
            break;
          }
          ModuleSymbol symbol{ModuleSymbol::Kind::Constant, statement, evaluate_constant(children[1])};
          module_symbols_[name] = symbol;
        }
        break;
      }
      default:
        break;
    }
  }
}

// A `@precision_policy` class: its dtype fields (`storage`, `scale`,
// `compute`, `accumulate`; f32 when absent, `accumulate` defaulting to
// `compute`) and its `quantize` / `dequantize` methods, which become helper
// functions without `self` (checked with the other functions, their
// signatures by check_policy_class).
void Checker::collect_policy_class(NodeId def) {
  bool decorated = false;
  for (NodeId decorator : ast_.children(ast_.child(def, 0))) {
    NodeId head = ast_.child(decorator, 0);
    if (lookup_decorator(dotted_path_of(ast_, values_, head)) == Decorator::PrecisionPolicy) decorated = true;
  }
  if (!decorated) return;
  IdentifierId class_name{ast_.node(def).payload};
  PolicyClass policy;
  policy.def = def;
  bool has_accumulate = false;
  for (NodeId statement : ast_.children(ast_.child(def, 2))) {
    if (ast_.kind(statement) == NodeKind::Assign && ast_.children(statement).size() == 2 &&
        ast_.kind(ast_.child(statement, 0)) == NodeKind::Name) {
      std::string field = name_of(ast_.node(ast_.child(statement, 0)).payload);
      ScalarType* slot = field == "storage"      ? &policy.storage
                         : field == "scale"      ? &policy.scale
                         : field == "compute"    ? &policy.compute
                         : field == "accumulate" ? &policy.accumulate
                                                 : nullptr;
      if (!slot) continue;
      NodeId value = ast_.child(statement, 1);
      if (auto dtype = resolve_dtype_name(value, true)) {
        *slot = *dtype;
        if (field == "accumulate") has_accumulate = true;
      } else {
        diags_.emit<diag::SemaNotAType>(ast_.range(value), source_text(value));
      }
      continue;
    }
    if (ast_.kind(statement) != NodeKind::FunctionDef) continue;
    std::string method = name_of(ast_.node(statement).payload);
    if (method != "quantize" && method != "dequantize") continue;
    FunctionInfo info;
    info.def = statement;
    info.name = values_.identifiers.intern(name_of(class_name) + "." + method);
    info.policy_class = class_name;
    info.first_parameter = ast_.children(ast_.child(statement, 1)).empty() ? 0 : 1;
    out_.functions.push_back(info);
    (method == "quantize" ? policy.quantize : policy.dequantize) = static_cast<uint32_t>(out_.functions.size() - 1);
  }
  if (!has_accumulate) policy.accumulate = policy.compute;
  out_.policy_classes[class_name.index] = policy;
}

bool Checker::method_signature_matches(uint32_t index, std::span<const TypeId> parameters, TypeId result) {
  check_function(index);  // no-op when done or in progress
  const FunctionInfo& f = out_.functions[index];
  if (f.first_parameter != 1 || f.parameter_types.size() != parameters.size()) return false;
  for (size_t i = 0; i < parameters.size(); ++i)
    if (f.parameter_types[i] != parameters[i]) return false;
  return ast_.child(f.def, 2).valid() && f.return_type == result;
}

bool Checker::has_element_quantize(const PolicyClass& policy) {
  if (policy.quantize == UINT32_MAX) return false;
  TypeId parameters[] = {types_.scalar(policy.compute), types_.scalar(policy.scale)};
  return method_signature_matches(policy.quantize, parameters, types_.scalar(policy.storage));
}

// After the methods were checked: the signatures a kernel's element loads
// and stores call (docs/numerics.md, "Precision policy classes").
void Checker::check_policy_class(IdentifierId class_name, PolicyClass& policy) {
  std::string name = name_of(class_name);
  std::string storage(scalar_info(policy.storage).name), scale(scalar_info(policy.scale).name),
      compute(scalar_info(policy.compute).name);
  TypeId storage_type = types_.scalar(policy.storage), scale_type = types_.scalar(policy.scale),
         compute_type = types_.scalar(policy.compute);
  SourceRange class_range = function_name_range(policy.def, "class");
  auto signature_matches = [&](uint32_t index, std::initializer_list<TypeId> parameters, TypeId result) {
    return method_signature_matches(index, std::span<const TypeId>(parameters.begin(), parameters.size()), result);
  };
  std::string dequantize_text = "dequantize(self, code: " + storage + ", scale: " + scale + ") -> " + compute;
  std::string quantize_text = "quantize(self, x: " + compute + ", scale: " + scale + ") -> " + storage;
  if (policy.dequantize == UINT32_MAX) {
    diags_.emit<diag::SemaPolicyMissingMethod>(class_range, name, "dequantize",
                                               "element loads call '" + dequantize_text + "'");
  } else if (!signature_matches(policy.dequantize, {storage_type, scale_type}, compute_type)) {
    diags_.emit<diag::SemaPolicyMethodSignature>(function_name_range(out_.functions[policy.dequantize].def), name,
                                                 "dequantize", dequantize_text);
  }
  if (policy.quantize == UINT32_MAX) {
    diags_.emit<diag::SemaPolicyMissingMethod>(class_range, name, "quantize",
                                               "element stores call '" + quantize_text + "'");
  } else if (signature_matches(policy.quantize, {compute_type, scale_type}, storage_type)) {
    policy.element_quantize = true;
  } else {
    TypeId pair[] = {storage_type, scale_type};
    if (!signature_matches(policy.quantize, {compute_type}, types_.tuple(pair))) {
      diags_.emit<diag::SemaPolicyMethodSignature>(
          function_name_range(out_.functions[policy.quantize].def), name, "quantize",
          quantize_text + "' (per element, as kernels use it) or 'quantize(self, x: " + compute + ") -> (" + storage +
              ", " + scale + ")");
    }
  }
}

void Checker::read_kernel_decorator(FunctionInfo& info, NodeId decorator) {
  auto group_shape = [&](NodeId value) {
    std::vector<NodeId> axes;
    if (ast_.kind(value) == NodeKind::Tuple || ast_.kind(value) == NodeKind::List) {
      axes.assign(ast_.children(value).begin(), ast_.children(value).end());
    } else {
      axes.push_back(value);
    }
    std::vector<int64_t> shape;
    for (NodeId axis : axes) {
      Value v = check_expression(axis);
      std::optional<int64_t> extent = v.constant ? v.constant->as_int64() : std::nullopt;
      if (!extent || *extent <= 0) {
        shape.clear();
        break;
      }
      shape.push_back(*extent);
    }
    if (shape.empty() || shape.size() > 3) {
      diags_.emit<diag::SemaInvalidGroupShape>(ast_.range(value));
      return;
    }
    // The hardware's limits (CUDA's, which the CPU target keeps too): at
    // most 1024 lanes per group, and at most 64 along the third axis.
    uint64_t lanes = 1;
    std::string written;
    for (int64_t extent : shape) {
      lanes = std::min<uint64_t>(lanes * static_cast<uint64_t>(extent), uint64_t{1} << 40);
      written += (written.empty() ? "" : " x ") + std::to_string(extent);
    }
    if (lanes > kMaxGroupLanes) {
      diags_.emit<diag::SemaGroupTooLarge>(ast_.range(value), written, lanes, kMaxGroupLanes);
      return;
    }
    if (shape.size() == 3 && shape[2] > kMaxGroupAxis2) {
      diags_.emit<diag::SemaGroupAxisTooLarge>(ast_.range(axes[2]), shape[2], kMaxGroupAxis2);
      return;
    }
    info.group_shape = shape;
  };
  auto grid_rank = [&](NodeId value) {
    Value v = check_expression(value);
    std::optional<int64_t> rank = v.constant ? v.constant->as_int64() : std::nullopt;
    if (!rank || *rank < 1 || *rank > 3) {
      diags_.emit<diag::SemaInvalidGridRank>(ast_.range(value));
      return;
    }
    info.grid_rank = static_cast<int>(*rank);
  };
  auto shared_budget = [&](NodeId value) {
    Value v = check_expression(value);
    std::optional<int64_t> budget = v.constant ? v.constant->as_int64() : std::nullopt;
    if (!budget || *budget < 0) {
      diags_.emit<diag::SemaInvalidSharedBudget>(ast_.range(value));
      return;
    }
    info.shared_budget = static_cast<uint64_t>(*budget);
  };
  auto autotune_space = [&](NodeId value) {
    // dict(NAME=[...]) or {"NAME": [...]}
    std::vector<std::pair<IdentifierId, NodeId>> entries;
    bool ok = true;
    if (ast_.kind(value) == NodeKind::Call && dotted_path_of(ast_, values_, ast_.child(value, 0)) == "dict") {
      for (NodeId argument : ast_.children(value).subspan(1)) {
        if (ast_.kind(argument) != NodeKind::KeywordArgument) {
          ok = false;
          continue;
        }
        entries.emplace_back(IdentifierId{ast_.node(argument).payload}, ast_.child(argument, 0));
      }
    } else if (ast_.kind(value) == NodeKind::Dict) {
      for (NodeId entry : ast_.children(value)) {
        NodeId key = ast_.child(entry, 0);
        if (ast_.kind(key) != NodeKind::StringLiteral) {
          ok = false;
          continue;
        }
        entries.emplace_back(values_.identifiers.intern(values_.strings[ast_.node(key).payload]), ast_.child(entry, 1));
      }
    } else {
      ok = false;
    }
    if (!ok) {
      diags_.emit<diag::SemaInvalidAutotuneSpace>(ast_.range(value), std::string("write space=dict(BM=[128, 256])"));
      return;
    }
    for (auto& [name, list] : entries) {
      AutotuneParameter parameter{name, {}};
      if (ast_.kind(list) != NodeKind::List || ast_.children(list).empty()) {
        diags_.emit<diag::SemaInvalidAutotuneSpace>(ast_.range(list),
                                                    "'" + name_of(name) + "' needs a non-empty list of values");
        continue;
      }
      for (NodeId candidate : ast_.children(list)) {
        Value v = check_expression(candidate);
        std::optional<int64_t> candidate_value = v.constant ? v.constant->as_int64() : std::nullopt;
        if (!candidate_value || !integer_range(ScalarType::I32).contains(*candidate_value)) {
          diags_.emit<diag::SemaInvalidAutotuneSpace>(ast_.range(candidate),
                                                      "'" + name_of(name) + "' values must be integer constants of i32");
          parameter.candidates.clear();
          break;
        }
        parameter.candidates.push_back(*candidate_value);
      }
      if (!parameter.candidates.empty()) info.autotune.push_back(parameter);
    }
  };
  // One option given twice (`@kernel(tile=(128,)) tile[(64,)]`, or
  // `tile=` and `group=`): the second silently replaced the first.
  std::vector<std::string> given;
  auto once = [&](std::string option, SourceRange where) {
    std::string canonical = option == "group" ? "tile" : option;
    if (std::find(given.begin(), given.end(), canonical) != given.end()) {
      diags_.emit<diag::SemaDuplicateArgument>(where, "@kernel", canonical);
      return false;
    }
    given.push_back(canonical);
    return true;
  };
  auto keyword = [&](NodeId argument, std::string_view context) {
    std::string name = name_of(ast_.node(argument).payload);
    NodeId value = ast_.child(argument, 0);
    if (!once(name, ast_.node(argument).range)) return;
    if (name == "tile" || name == "group") {
      group_shape(value);
    } else if (name == "shared") {
      shared_budget(value);
    } else if (name == "grid_rank") {
      grid_rank(value);
    } else if (name == "space" && context == "autotune") {
      autotune_space(value);
    } else if (name == "where" && context == "autotune") {
      info.autotune_where = value;
    } else if (name == "key" && context == "autotune") {
      read_autotune_key(info, value);
    } else {
      diags_.emit<diag::SemaUnknownKernelClause>(ast_.node(argument).range, name);
    }
  };

  auto children = ast_.children(decorator);
  NodeId head = children[0];
  std::string_view context = "kernel";
  if (ast_.kind(head) == NodeKind::Call) {
    std::string path = dotted_path_of(ast_, values_, ast_.child(head, 0));
    if (path.ends_with("autotune")) context = "autotune";
    for (NodeId argument : ast_.children(head).subspan(1)) {
      if (ast_.kind(argument) == NodeKind::KeywordArgument) {
        keyword(argument, context);
      } else {
        diags_.emit<diag::SemaUnknownKernelClause>(ast_.range(argument), source_text(argument));
      }
    }
  }
  // Seed clauses: `tile[(128,)]`, `shared(16_KiB)`.
  for (NodeId clause : children.subspan(1)) {
    NodeKind kind = ast_.kind(clause);
    NodeId callee = kind == NodeKind::Subscript || kind == NodeKind::Call ? ast_.child(clause, 0) : clause;
    std::string name = dotted_path_of(ast_, values_, callee);
    if (name == "tile" && kind == NodeKind::Subscript) {
      if (once(name, ast_.range(clause))) group_shape(ast_.child(clause, 1));
    } else if (name == "shared" && kind == NodeKind::Call && ast_.children(clause).size() == 2) {
      if (once(name, ast_.range(clause))) shared_budget(ast_.child(clause, 1));
    } else {
      diags_.emit<diag::SemaUnknownKernelClause>(ast_.range(clause), source_text(clause));
    }
  }
}

void Checker::read_decorators(FunctionInfo& info, NodeId decorators) {
  // The decorator that made the function a kernel or a @jit function: the
  // other kind on the same function is an error (`@kernel @jit def f`),
  // which the last one used to win silently.
  NodeId kind_head;
  std::string kind_path;
  for (NodeId decorator : ast_.children(decorators)) {
    NodeId head = ast_.child(decorator, 0);
    NodeId callee = ast_.kind(head) == NodeKind::Call ? ast_.child(head, 0) : head;
    std::string path = dotted_path_of(ast_, values_, callee);
    std::optional<Decorator> kind = lookup_decorator(path);
    if (kind == Decorator::Kernel || kind == Decorator::KernelAutotune || kind == Decorator::Jit) {
      FunctionKind made = kind == Decorator::Jit ? FunctionKind::Jit : FunctionKind::Kernel;
      if (kind_head.valid() && made != info.kind) {
        diags_.emit<diag::SemaConflictingDecorators>(ast_.range(head), path, kind_path)
            .note<diag::NoteFirstDecorator>(ast_.range(kind_head), kind_path);
        continue;
      }
      kind_head = head;
      kind_path = path;
    }
    switch (kind.value_or(Decorator::PrecisionPolicy)) {
      case Decorator::Kernel:
      case Decorator::KernelAutotune:
        info.kind = FunctionKind::Kernel;
        read_kernel_decorator(info, decorator);
        break;
      case Decorator::Jit:
        info.kind = FunctionKind::Jit;
        if (ast_.kind(head) == NodeKind::Call) {
          for (NodeId argument : ast_.children(head).subspan(1)) {
            if (ast_.kind(argument) == NodeKind::KeywordArgument &&
                name_of(ast_.node(argument).payload) == "deterministic") {
              Value v = check_expression(ast_.child(argument, 0));
              info.deterministic = v.constant && v.constant->integer != 0;
            } else if (ast_.kind(argument) == NodeKind::KeywordArgument &&
                       name_of(ast_.node(argument).payload) == "mesh") {
              read_jit_mesh(info, ast_.child(argument, 0));
            } else {
              diags_.emit<diag::SemaUnknownJitOption>(ast_.range(argument), source_text(argument));
            }
          }
        }
        break;
      case Decorator::Autodiff:
        info.autodiff = true;
        if (info.kind == FunctionKind::Helper) info.kind = FunctionKind::Jit;
        break;
      case Decorator::CustomVjp:
      case Decorator::CustomJvp:
        if (info.kind == FunctionKind::Helper) info.kind = FunctionKind::Jit;
        break;
      case Decorator::PrecisionPolicy:  // a class decorator; unknown paths land here too
        diags_.emit<diag::SemaUnknownDecorator>(ast_.range(head), path.empty() ? source_text(head) : path);
        break;
    }
    if (ast_.children(decorator).size() > 1 && info.kind != FunctionKind::Kernel) {
      diags_.emit<diag::SemaUnknownKernelClause>(ast_.range(ast_.child(decorator, 1)),
                                                 source_text(ast_.child(decorator, 1)));
    }
  }
  if (info.kind == FunctionKind::Kernel && info.group_shape.empty()) info.group_shape = {128};
}

// `@jit(mesh=M)`: M must be a mesh (dist.mesh), usually a module-level name.
void Checker::read_jit_mesh(FunctionInfo& info, NodeId expression) {
  Value v = check_expression(expression);
  if (types_.is_error(v.type)) return;
  if (types_.kind(v.type) != TypeKind::Mesh) {
    diags_.emit<diag::SemaArgumentType>(ast_.range(expression), "mesh", "jit", "a mesh made by dist.mesh",
                                        types_.to_string(v.type));
    return;
  }
  info.mesh = types_.info(v.type).payload;
}

void Checker::check_function(uint32_t index) {
  if (checked_[index] != 0) return;
  checked_[index] = 1;
  // A function's own check types its body in the module's tables, which the
  // lowering reads for kernels, helpers and annotated @jit functions, even
  // when the first call that reaches it is checked in a @jit instance's
  // tables (the program calling a generic function that calls it): the
  // program is checked before the functions.
  std::vector<TypeId>* saved_module = module_node_types_;
  if (saved_module) std::swap(out_.node_types, *saved_module);
  module_node_types_ = nullptr;
  std::unordered_map<uint32_t, uint32_t>* saved_calls = call_instances_;
  call_instances_ = &out_.call_instances;
  ElementTablesMap* saved_element_tables = element_tables_;
  element_tables_ = &out_.element_tables;
  bool saved_generic = check_generic_bodies_;
  check_generic_bodies_ = false;
  uint32_t saved_mesh = current_mesh_;
  current_mesh_ = UINT32_MAX;
  std::vector<Transfer> saved_transfers;
  std::swap(saved_transfers, open_transfers_);
  check_function_body(out_.functions[index], nullptr, index);
  std::swap(saved_transfers, open_transfers_);
  current_mesh_ = saved_mesh;
  check_generic_bodies_ = saved_generic;
  call_instances_ = saved_calls;
  element_tables_ = saved_element_tables;
  module_node_types_ = saved_module;
  if (saved_module) std::swap(out_.node_types, *saved_module);
  checked_[index] = 2;
}

// The generic check of a function (`given` null: parameter types from the
// annotations), or one @jit instance's (`given`: the instance's parameter
// types). A @jit function with an unannotated parameter is generic: its body
// is checked per instance (check_jit.cpp), and only here when no call made one.
void Checker::check_function_body(FunctionInfo& info, const std::vector<TypeId>* given, uint32_t index) {
  // Save the caller's state: checking a call may check its callee first.
  FunctionInfo* saved_function = function_;
  auto saved_locals = std::move(locals_);
  int saved_loops = loop_depth_;
  int saved_control = control_depth_;
  locals_.clear();
  loop_depth_ = 0;
  control_depth_ = 0;

  function_ = &info;
  NodeId def = info.def;
  auto children = ast_.children(def);
  NodeId decorators = children[0], parameters = children[1], returns = children[2], body = children[3];
  if (!given) read_decorators(info, decorators);
  info.parameter_types.clear();
  std::string function_name = name_of(info.name);

  // The knobs: at one point of the space when pinned (exact), else each at
  // its largest value, which types the body but rejects nothing: every
  // point is checked on its own (docs/autotuning.md).
  if (!given && info.kind == FunctionKind::Kernel && !info.autotune.empty()) {
    info.name_range = function_name_range(def);
    enumerate_autotune_points(info);
  }
  info.autotune_pinned = pin_ && info.kind == FunctionKind::Kernel && !info.autotune.empty() &&
                         pin_->kernel == function_name && pin_->values.size() == info.autotune.size();
  for (size_t k = 0; k < info.autotune.size(); ++k) {
    const AutotuneParameter& parameter = info.autotune[k];
    Local local;
    local.type = types_.scalar(ScalarType::I32);
    local.def = decorators;
    int64_t largest = *std::max_element(parameter.candidates.begin(), parameter.candidates.end());
    local.constant = Constant{false, info.autotune_pinned ? pin_->values[k] : largest};
    local.constant->from_local = !info.autotune_pinned;  // one of several values: not exact enough to reject a program with
    locals_[parameter.name.index] = local;
  }

  uint32_t parameter_index = 0;
  for (NodeId parameter : ast_.children(parameters).subspan(info.first_parameter)) {
    const Node& p = ast_.node(parameter);
    NodeId annotation = ast_.child(parameter, 0);
    NodeId default_value = ast_.child(parameter, 1);
    TypeId type;
    auto parameter_kind = static_cast<ParameterKind>(p.op);
    bool device = info.kind == FunctionKind::Kernel || info.device;
    if (device && parameter_kind != ParameterKind::Normal && parameter_kind != ParameterKind::KeywordOnly) {
      diags_.emit<diag::SemaUnsupportedInKernel>(p.range, std::string("a '*' or '**' parameter"));
      type = types_.error();
    } else if (given && parameter_index < given->size() && !annotation.valid()) {
      type = (*given)[parameter_index];
    } else if (annotation.valid()) {
      type = resolve_type(annotation);
    } else if (device && p.payload != UINT32_MAX) {
      diags_.emit<diag::SemaMissingParameterType>(
          p.range, name_of(p.payload), (info.kind == FunctionKind::Kernel ? "kernel '" : "helper '") + function_name + "'");
      type = types_.error();
    } else {
      type = types_.dynamic();
    }
    if (default_value.valid()) {
      Value v = check_expression(default_value);
      if (info.kind == FunctionKind::Kernel) {
        // `tesserac run`, the AOT header and the runtime pass every argument:
        // a default would be silently ignored.
        auto builder =
            diags_.emit<diag::SemaKernelParameterDefault>(ast_.range(default_value), name_of(p.payload), function_name);
        if (annotation.valid()) builder.fix_it_replace({ast_.range(annotation).end, ast_.range(default_value).end}, "");
      } else if (device && !types_.is_error(v.type)) {
        // A device helper's default is used at each call that omits it: a
        // compile-time constant of the parameter's type.
        if (!v.constant || v.constant->from_local) {
          diags_.emit<diag::SemaNotConstant>(ast_.range(default_value),
                                             "the default value of parameter '" + name_of(p.payload) + "'");
        } else if (!types_.is_error(type)) {
          check_store(default_value, type, v, default_value);
        }
      }
    }
    set_type(parameter, type);
    info.parameter_types.push_back(type);
    if (p.payload == UINT32_MAX) {
      ++parameter_index;
      continue;
    }
    Local local;
    local.type = graph_policy_values(type, device);
    local.def = parameter;
    local.is_parameter = true;
    if (given && constant_arguments_ && parameter_index < constant_arguments_->size() &&
        (*constant_arguments_)[parameter_index]) {
      local.constant = (*constant_arguments_)[parameter_index];
      local.exact_constant = true;
    }
    if (given && literal_arguments_ && parameter_index < literal_arguments_->size())
      local.literal = (*literal_arguments_)[parameter_index];
    local.parameter_index = parameter_index++;
    locals_[p.payload] = local;
    // Symbolic dimensions become integer values readable in the body.
    if (types_.kind(type) == TypeKind::Tensor) {
      for (DimId dim : types_.dims(type)) {
        const Dim& d = types_.dim(dim);
        if (d.kind == DimKind::Symbol && !locals_.count(d.symbol.index)) {
          Local symbol;
          symbol.type = types_.scalar(ScalarType::I32);
          symbol.def = parameter;
          symbol.is_dimension = true;
          locals_[d.symbol.index] = symbol;
        }
      }
    }
  }

  // A parameter named as a symbolic dimension of an annotated parameter
  // (`x: f32[n], n: i32`, the CUDA habit of passing the size): the name
  // would denote both, and nothing makes the two values agree.
  auto all_parameters = ast_.children(parameters).subspan(info.first_parameter);
  // @stochastic_round(seed) names an integer parameter of this function,
  // which the store reads at run time (docs/numerics.md).
  for (size_t j = 0; j < all_parameters.size() && j < info.parameter_types.size(); ++j) {
    TypeId type = info.parameter_types[j];
    NodeId annotation = ast_.child(all_parameters[j], 0);
    if (!annotation.valid() || types_.is_error(type) ||
        (types_.kind(type) != TypeKind::Tensor && types_.kind(type) != TypeKind::Scalar))
      continue;
    IdentifierId seed = types_.policy(types_.info(type).policy).seed_name;
    if (!seed.valid()) continue;
    auto it = locals_.find(seed.index);
    if (it == locals_.end()) {
      diags_.emit<diag::SemaUndefinedName>(ast_.range(annotation), name_of(seed.index));
      continue;
    }
    TypeId seed_type = it->second.type;
    if (!it->second.is_parameter || types_.kind(seed_type) != TypeKind::Scalar ||
        !is_integer(types_.info(seed_type).scalar))
      diags_.emit<diag::SemaInvalidPolicyArgument>(
          ast_.range(annotation), "stochastic_round",
          "names '" + name_of(seed.index) + "', which is not an integer parameter of this function: the seed is an "
          "integer constant or an integer parameter");
  }
  for (size_t i = 0; i < all_parameters.size(); ++i) {
    uint32_t name = ast_.node(all_parameters[i]).payload;
    if (name == UINT32_MAX) continue;
    for (size_t j = 0; j < all_parameters.size() && j < info.parameter_types.size(); ++j) {
      TypeId type = info.parameter_types[j];
      if (j == i || !ast_.child(all_parameters[j], 0).valid() || types_.kind(type) != TypeKind::Tensor) continue;
      auto dims = types_.dims(type);
      if (std::none_of(dims.begin(), dims.end(), [&](DimId dim) {
            const Dim& d = types_.dim(dim);
            return d.kind == DimKind::Symbol && d.symbol.index == name;
          }))
        continue;
      diags_.emit<diag::SemaRedefinition>(ast_.range(all_parameters[i]), name_of(name))
          .note<diag::NotePreviousDefinition>(ast_.range(ast_.child(all_parameters[j], 0)), name_of(name));
      break;
    }
  }

  // key=(...) names symbolic dimensions of the parameters.
  for (const std::string& key : info.autotune_key) {
    auto it = locals_.find(values_.identifiers.intern(key).index);
    if (it == locals_.end() || !it->second.is_dimension)
      diags_.emit<diag::SemaInvalidAutotuneKey>(ast_.range(decorators), "'" + key + "' is not a symbolic dimension of '" +
                                                                           function_name + "''s parameters");
  }

  // A generic @jit function: each instance checks the body with its types.
  bool generic = !given && info.kind == FunctionKind::Jit &&
                 std::any_of(info.parameter_types.begin(), info.parameter_types.end(),
                             [&](TypeId t) { return types_.kind(t) == TypeKind::Dynamic; });
  if (generic && !check_generic_bodies_) {
    generic_functions_.push_back(index);
    function_ = saved_function;
    locals_ = std::move(saved_locals);
    loop_depth_ = saved_loops;
    control_depth_ = saved_control;
    return;
  }

  info.return_type = types_.none();
  if (returns.valid()) {
    if (info.kind == FunctionKind::Kernel) {
      diags_.emit<diag::SemaKernelReturnType>(ast_.range(returns), function_name)
          .fix_it_replace(SourceRange{ast_.range(parameters).end, ast_.range(returns).end}, "");
      resolve_type(returns);
    } else {
      info.return_type = resolve_type(returns);
    }
  }

  // @jit(mesh=M): the body's collectives run on M; an instance called with
  // sharded arguments runs on their mesh.
  uint32_t saved_mesh = current_mesh_;
  if (info.mesh != UINT32_MAX && (!given || current_mesh_ == UINT32_MAX)) current_mesh_ = info.mesh;
  path_ended_ = false;
  check_statements(body);
  path_ended_ = false;
  current_mesh_ = saved_mesh;
  // Python would return None from the path that falls off the end; a
  // function with a result has no None to give (reported once per function,
  // not per instance).
  if (info.kind != FunctionKind::Kernel && index < out_.functions.size() && !missing_return_checked_[index] &&
      (returns_value(ast_, body) || (returns.valid() && types_.kind(info.return_type) != TypeKind::None)) &&
      !always_returns(ast_, body)) {
    missing_return_checked_[index] = true;
    diags_.emit<diag::SemaMissingReturn>(function_name_range(def), function_name);
  }
  if (info.kind == FunctionKind::Kernel || info.device) {
    check_definite_assignment(info);
    check_uniformity(info);
  }

  uint64_t limit = kDefaultSharedLimitBytes;
  bool exact_sizes = info.autotune.empty() || info.autotune_pinned;  // an autotuned kernel: per point
  if (!exact_sizes) {
  } else if (info.kind == FunctionKind::Kernel && info.shared_budget && info.shared_bytes > *info.shared_budget) {
    diags_.emit<diag::SemaSharedBudgetExceeded>(function_name_range(def), function_name, info.shared_bytes,
                                                *info.shared_budget);
  } else if (info.kind == FunctionKind::Kernel && info.shared_bytes > limit) {
    diags_.emit<diag::SemaSharedTargetLimit>(function_name_range(def), function_name, info.shared_bytes, limit);
  }
  if (info.deterministic && info.effect > Effect::Random) {
    std::string effect(effect_name(info.effect));
    diags_.emit<diag::SemaDeterministicEffect>(function_name_range(def), function_name, effect)
        .note<diag::NoteEffectSource>(info.effect_source, effect);
  }

  if (!given && info.kind == FunctionKind::Jit && !generic) {
    // An annotated @jit function is its own (only) instance, typed in the
    // module's tables.
    JitInstance instance;
    instance.function = index;
    instance.info = info;
    instance.symbol = name_of(info.name);
    out_.function_instance[index] = static_cast<uint32_t>(out_.instances.size());
    out_.instances.push_back(std::move(instance));
  }
  function_ = saved_function;
  locals_ = std::move(saved_locals);
  loop_depth_ = saved_loops;
  control_depth_ = saved_control;
}

void Checker::check_statements(NodeId suite) {
  for (NodeId statement : ast_.children(suite)) {
    check_statement(statement);
    // Graph code: what follows a `return`, or an `if` whose branch taken
    // when compiling returned, is never run (nor compiled), and, as in
    // Python, not checked: its types may differ (`if keepdims: return
    // ts.sum(x, axis=0, keepdims=True)` then `return ts.sum(x, axis=0)`).
    if (path_ended_ && !in_device()) return;
  }
}

// An `if` / `while` condition: a number in kernels; in graph code also a
// tensor of one element (0-d: a comparison of such tensors, one element, a
// reduction), whose value the host reads back (graph.item) and takes as
// Python's bool() does. A tensor of more elements is ambiguous, as in NumPy.
void Checker::check_condition(NodeId node, const Value& condition) {
  if (types_.kind(condition.type) != TypeKind::Tensor) return;
  if (in_device()) {
    diags_.emit<diag::SemaConditionType>(ast_.range(node), types_.to_string(condition.type));
  } else if (!types_.dims(condition.type).empty()) {
    diags_.emit<diag::SemaTensorCondition>(ast_.range(node), types_.to_string(condition.type),
                                           "is ambiguous: it has more than one element (as in NumPy); reduce it to one "
                                           "value (ts.sum(c) > 0, c[0])");
  }
  // A 0-d tensor is read back to the host, by a statement or a conditional
  // expression alike (docs/language/graph.md, "Conditions on tensors").
}

// Device code has no function values: `tile.barrier` without its call is
// a forgotten `()` (a Python expression statement that does nothing, and a
// barrier that never happens), and a local bound to a builtin cannot be
// compiled. The seeds' bare `smem = tshared.alloc` is the exception: a
// shared buffer typed by its first use (docs/language/kernels.md).
bool Checker::reject_uncalled_builtin(NodeId expression, const Value& value) {
  if (!in_device() || types_.kind(value.type) != TypeKind::Builtin) return false;
  if (static_cast<BuiltinId>(types_.info(value.type).payload) == BuiltinId::TileAllocShared) return false;
  std::string text = source_text(expression);
  diags_.emit<diag::SemaUnsupportedInKernel>(ast_.range(expression),
                                             "'" + text + "' without a call (a builtin used as a value; write '" + text + "()')")
      .fix_it_insert(ast_.range(expression).end, "()");
  return true;
}

void Checker::check_statement(NodeId statement) {
  const Node& n = ast_.node(statement);
  auto children = ast_.children(statement);
  switch (n.kind) {
    case NodeKind::ExprStmt: {
      NodeId expression = children[0];
      // A docstring or a bare string is allowed anywhere.
      if (ast_.kind(expression) == NodeKind::StringLiteral) return;
      reject_uncalled_builtin(expression, check_expression(expression));
      return;
    }
    case NodeKind::Assign: {
      NodeId value_node = children.back();
      // `t[a:b] = u[c:d]`: an element loop, whose bounds may be run-time values.
      for (NodeId target : children.first(children.size() - 1)) {
        if (ast_.kind(target) != NodeKind::Subscript) continue;
        allow_runtime_length(target);
        if (ast_.kind(value_node) == NodeKind::Subscript) allow_runtime_length(value_node);
      }
      Value value = check_expression(value_node);
      if (reject_uncalled_builtin(value_node, value)) value = Value{types_.error()};  // no follow-on errors
      for (NodeId target : children.first(children.size() - 1)) assign_to(target, value, value_node);
      return;
    }
    case NodeKind::AnnAssign: {
      NodeId target = children[0];
      TypeId declared = resolve_type(children[1]);
      if (children[2].valid()) {
        Value value = check_expression(children[2]);
        if (!is_assignable(value.type, declared) && !types_.is_error(value.type) && !types_.is_error(declared)) {
          diags_.emit<diag::SemaAssignTypeMismatch>(ast_.range(children[2]), types_.to_string(value.type),
                                                    source_text(target), types_.to_string(declared));
        } else {
          check_constant_fits(children[2], value, declared);
        }
      }
      if (ast_.kind(target) == NodeKind::Name) {
        Local local;
        local.type = declared;
        local.def = statement;
        locals_[ast_.node(target).payload] = local;
        set_type(target, declared);
      } else {
        check_expression(target);
      }
      return;
    }
    case NodeKind::AugAssign: {
      NodeId target = children[0];
      if (ast_.kind(target) == NodeKind::Subscript) allow_runtime_length(target);  // a slice is invalid-operands
      assigning_ = ast_.kind(target) == NodeKind::Subscript;
      Value current = check_expression(target);
      assigning_ = false;
      Value value = check_expression(children[1]);
      TypeId result =
          binary_result(statement, BinaryUse::of(static_cast<BinaryOperator>(n.op), true), current.type, value.type);
      if (types_.is_error(result) || types_.is_error(current.type)) return;
      check_operand_constants(current, target, value, children[1], result);
      if (ast_.kind(target) == NodeKind::Name) {
        auto it = locals_.find(ast_.node(target).payload);
        if (it == locals_.end()) return;  // undefined: already reported
        it->second.constant.reset();
        it->second.literal = NodeId{};
        it->second.global_id = it->second.global_id && value.global_id;
        if (!is_assignable(result, it->second.type) && !promote_local_to_tensor(it->second, result)) {
          diags_.emit<diag::SemaLocalTypeChange>(ast_.range(children[1]), name_of(ast_.node(target).payload),
                                                 types_.to_string(it->second.type), types_.to_string(result));
        }
      } else if (ast_.kind(target) == NodeKind::Subscript) {
        NodeId root = ast_.child(target, 0);
        while (ast_.kind(root) == NodeKind::Subscript) root = ast_.child(root, 0);
        TypeId object = out_.node_types[ast_.child(target, 0).index];
        if (object.valid() && types_.kind(object) == TypeKind::Tensor) {
          if (types_.info(object).space == AddressSpace::Register) {
            diags_.emit<diag::SemaWriteRegisterValue>(ast_.range(target), source_text(ast_.child(target, 0)));
            return;
          }
          if (in_device()) write_tensor_element(target, object, root);  // graph code: a functional update
        }
      }
      return;
    }
    case NodeKind::If: {
      Value condition = check_expression(children[0]);
      check_condition(children[0], condition);
      auto check_branch = [&](NodeId branch) {
        if (!branch.valid()) return;
        if (ast_.kind(branch) == NodeKind::If) check_statement(branch);
        else check_statements(branch);
      };
      // Graph code is Python: a condition fixed when compiling (a constant
      // argument of the instance, a module constant, `scale is None`) runs
      // one branch, and only that one is checked and compiled, as a
      // template's discarded `if constexpr` branch is not instantiated; the
      // branches may bind or return values of different types. The lowering
      // reads the decision recorded at the condition (known_branch).
      if (std::optional<bool> taken = decide_condition(children[0], condition)) {
        check_branch(children[*taken ? 1 : 2]);
        return;
      }
      ++control_depth_;
      check_statements(children[1]);
      path_ended_ = false;
      check_branch(children[2]);
      path_ended_ = false;
      --control_depth_;
      return;
    }
    case NodeKind::While: {
      Value condition = check_expression(children[0]);
      check_condition(children[0], condition);
      widen_loop_layouts(children[1]);
      ++loop_depth_;
      ++control_depth_;
      check_statements(children[1]);
      path_ended_ = false;
      --control_depth_;
      --loop_depth_;
      return;
    }
    case NodeKind::For: {
      Value element = iteration_element(children[1]);
      widen_loop_layouts(children[2]);
      ++control_depth_;
      std::vector<TypeId> mixed = mixed_elements(out_.node_types[children[1].index]);
      auto check_body = [&] {
        ++loop_depth_;
        check_statements(children[2]);
        path_ended_ = false;
        --loop_depth_;
      };
      // An unrolled loop, checked once per element with `bind_target(i)`:
      // the target and the names the body binds first are bound anew for
      // each element (Python rebinds them; after the loop they hold the
      // last element's). Its body is straight-line code of the control
      // around it: a name the body binds again takes each element's type in
      // turn (`for W in (W1, W2): h = h @ W`, h wider after each).
      auto check_unrolled = [&](size_t count, const std::function<void(size_t)>& bind_target) {
        std::unordered_set<uint32_t> outside;
        for (const auto& [id, local] : locals_) outside.insert(id);
        std::vector<uint32_t> targets;
        target_names(ast_, children[0], targets);
        for (uint32_t id : targets) outside.erase(id);
        std::array<NodeId, 2> roots{children[0], children[2]};
        --control_depth_;
        check_per_element(statement, count, roots, [&](size_t i) {
          std::erase_if(locals_, [&](const auto& local) { return !outside.count(local.first); });
          bind_target(i);
          check_body();
        });
        ++control_depth_;
      };
      std::optional<std::vector<int64_t>> unrolled_range;
      if (mixed.empty() && !in_device()) unrolled_range = range_indexing_mixed_tuple(children[0], children[1], children[2]);
      if (unrolled_range) {
        // `for i in range(len(params)): W, b = params[i]` over a tuple whose
        // elements differ in type: each value of i a constant that picks
        // its element's type (as a loop over the tuple itself).
        check_unrolled(unrolled_range->size(), [&](size_t i) {
          Value value{element.type};
          value.constant = Constant{false, (*unrolled_range)[i], 0.0};
          assign_to(children[0], value, children[1]);
        });
      } else if (mixed.empty()) {
        assign_to(children[0], element, children[1]);
        check_body();
      } else {
        check_unrolled(mixed.size(), [&](size_t i) { assign_to(children[0], Value{mixed[i]}, children[1]); });
      }
      --control_depth_;
      return;
    }
    case NodeKind::With:
      for (NodeId item : children.first(children.size() - 1)) {
        Value context = check_expression(ast_.child(item, 0));
        if (ast_.child(item, 1).valid()) assign_to(ast_.child(item, 1), context, ast_.child(item, 0));
      }
      check_statements(children.back());
      return;
    case NodeKind::Return: {
      if (function_ == nullptr) {
        diags_.emit<diag::SemaReturnOutsideFunction>(n.range);
        return;
      }
      path_ended_ = true;
      if (!children[0].valid()) return;
      Value value = check_expression(children[0]);
      if (function_->kind == FunctionKind::Kernel) {
        diags_.emit<diag::SemaKernelReturnsValue>(ast_.range(children[0]), name_of(function_->name));
      } else if (types_.kind(function_->return_type) == TypeKind::None && !ast_.child(function_->def, 2).valid()) {
        function_->return_type = value.type;  // inferred from the first return
      } else if (TypeId given = in_device() ? value.type : read_back_numbers(value.type, function_->return_type);
                 !types_.is_error(value.type) && !types_.is_error(function_->return_type) &&
                 (!is_assignable(given, function_->return_type) ||
                  constant_sizes_differ(given, function_->return_type))) {
        diags_.emit<diag::SemaAssignTypeMismatch>(ast_.range(children[0]), types_.to_string(value.type), "the result",
                                                  types_.to_string(function_->return_type));
      } else {
        check_constant_fits(children[0], value, function_->return_type);
      }
      return;
    }
    case NodeKind::Break:
    case NodeKind::Continue:
      if (loop_depth_ == 0) {
        diags_.emit<diag::SemaLoopControlOutsideLoop>(n.range,
                                                      std::string(n.kind == NodeKind::Break ? "break" : "continue"));
      }
      return;
    case NodeKind::Assert:
      check_condition(children[0], check_expression(children[0]));
      if (children[1].valid()) check_expression(children[1]);
      return;
    case NodeKind::FunctionDef:
    case NodeKind::ClassDef:
      if (in_device()) {
        diags_.emit<diag::SemaUnsupportedInKernel>(n.range, std::string("a nested definition"));
      } else if (function_) {
        // Graph code: JAX users write the loss inside the step; the name
        // would otherwise be undefined at its use, with nothing at the def.
        diags_.emit<diag::SemaNestedDefinition>(n.range, name_of(n.payload));
      }
      return;
    case NodeKind::Pass:
    case NodeKind::TypeAlias:
    case NodeKind::Import:
    case NodeKind::ImportFrom:
    case NodeKind::ErrorStmt:
      return;
    default:
      internal_error("sema", "unexpected statement kind " + std::string(node_kind_name(n.kind)));
  }
}

void Checker::assign_to(NodeId target, const Value& value, NodeId value_node) {
  const Node& n = ast_.node(target);
  switch (n.kind) {
    case NodeKind::Name: {
      auto it = locals_.find(n.payload);
      if (it == locals_.end()) {
        Local local;
        local.type = default_type(value);
        check_constant_fits(value_node, value, local.type);
        if (std::optional<TypeId> promoted = promoted_local_type(target, local.type)) local.type = *promoted;
        local.def = target;
        local.global_id = value.global_id;
        local.constant = value.constant;
        local.control_depth = control_depth_;
        // `smem = tshared.alloc`: a shared buffer typed by its first use.
        if (types_.kind(value.type) == TypeKind::Builtin &&
            static_cast<BuiltinId>(types_.info(value.type).payload) == BuiltinId::TileAllocShared) {
          local.bare_shared = true;
          local.type = types_.error();
        }
        locals_[n.payload] = local;
        set_type(target, local.type);
        return;
      }
      // Python rebinding of a name that held None (`if scale is None: scale
      // = 0.5`, that `if` fixed in the instance given None): a new binding
      // of the value's type, unless a run-time branch or loop may skip it.
      if (!in_device() && types_.kind(it->second.type) == TypeKind::None && !types_.is_error(value.type) &&
          types_.kind(value.type) != TypeKind::None && control_depth_ <= it->second.control_depth) {
        locals_.erase(it);
        assign_to(target, value, value_node);
        return;
      }
      // Python rebinding in graph code (`x = x.reshape(-1)`, `h = h @ W` to
      // another width): where no run-time branch or loop may skip it, the
      // name is bound anew with the value's type (lowering binds names to
      // values). Inside one, a tensor whose known sizes change is
      // sema.local-type-change below: the loop or the join would see two.
      if (!in_device() && rebinds_with_new_type(it->second, value.type) &&
          control_depth_ <= it->second.control_depth) {
        locals_.erase(it);
        assign_to(target, value, value_node);
        return;
      }
      Local& local = it->second;
      local.constant.reset();
      local.literal = NodeId{};
      local.global_id = local.global_id && value.global_id;
      if (local.bare_shared && types_.kind(value.type) == TypeKind::Tensor) {
        local.type = value.type;  // s0, s1 = s1, s0 swaps shared buffers
      } else if (!types_.is_error(local.type) && !types_.is_error(value.type) &&
                 (!is_assignable(value.type, local.type) || !same_tensor_kind(value.type, local.type) ||
                  (!in_device() && rebinds_with_new_type(local, value.type) &&
                   constant_sizes_differ(value.type, local.type))) &&
                 !promote_local_to_tensor(local, value.type)) {
        diags_.emit<diag::SemaLocalTypeChange>(ast_.range(value_node), name_of(n.payload), types_.to_string(local.type),
                                               types_.to_string(value.type));
      } else {
        check_constant_fits(value_node, value, local.type);
        rebind_layout(local, IdentifierId{n.payload}, value.type, value_node);
      }
      set_type(target, local.type);
      return;
    }
    case NodeKind::Tuple:
    case NodeKind::List: {
      auto targets = ast_.children(target);
      if (types_.kind(value.type) == TypeKind::Tuple) {
        // A copy: assigning the elements may create types.
        std::vector<TypeId> elements(types_.tuple_elements(value.type).begin(),
                                     types_.tuple_elements(value.type).end());
        if (elements.size() != targets.size()) {
          diags_.emit<diag::SemaTupleArity>(ast_.range(value_node), static_cast<unsigned>(elements.size()),
                                            static_cast<unsigned>(targets.size()));
          for (NodeId t : targets) assign_to(t, Value{types_.error()}, value_node);
          return;
        }
        // Per-element global-id flags come from the value's own tuple, when written as one.
        bool literal_tuple =
            ast_.kind(value_node) == NodeKind::Tuple && ast_.children(value_node).size() == targets.size();
        for (size_t i = 0; i < targets.size(); ++i) {
          Value element{elements[i]};
          if (literal_tuple) {
            NodeId source = ast_.child(value_node, i);
            if (auto c = constants_.find(source.index); c != constants_.end()) element.constant = c->second;
            if (ast_.kind(source) == NodeKind::Name) {
              auto local = locals_.find(ast_.node(source).payload);
              if (local != locals_.end()) element.global_id = local->second.global_id;
            }
          }
          assign_to(targets[i], element, literal_tuple ? ast_.child(value_node, i) : value_node);
        }
        return;
      }
      // `a, b, c = x` of a tensor in graph code: its rows along the first
      // axis, whose size must be known when compiling (NumPy checks it when
      // it runs; here the count of names is the count of values).
      if (types_.kind(value.type) == TypeKind::Tensor && !in_device() && !types_.dims(value.type).empty()) {
        std::optional<int64_t> rows = types_.constant_value(types_.dims(value.type).front());
        if (!rows)
          diags_.emit<diag::SemaUnpackTensorSize>(ast_.range(value_node), types_.to_string(value.type),
                                                  static_cast<unsigned>(targets.size()));
        else if (*rows != static_cast<int64_t>(targets.size()))
          diags_.emit<diag::SemaTupleArity>(ast_.range(value_node), static_cast<unsigned>(*rows),
                                            static_cast<unsigned>(targets.size()));
        Value row{rows && *rows == static_cast<int64_t>(targets.size()) ? first_axis_element(value.type) : types_.error()};
        for (NodeId t : targets) assign_to(t, row, value_node);
        return;
      }
      // A number (or None) is no sequence: Python's "cannot unpack non-iterable".
      TypeKind value_kind = types_.kind(value.type);
      bool scalar = value_kind == TypeKind::Scalar || value_kind == TypeKind::None || value_kind == TypeKind::UntypedInt ||
                    value_kind == TypeKind::UntypedFloat ||
                    (value_kind == TypeKind::Tensor && !in_device() && types_.dims(value.type).empty());
      if (scalar)
        diags_.emit<diag::SemaUnpackNotTuple>(ast_.range(value_node), types_.to_string(value.type),
                                              static_cast<unsigned>(targets.size()));
      for (NodeId t : targets)
        assign_to(t, Value{types_.is_error(value.type) || scalar ? types_.error() : types_.dynamic()}, value_node);
      return;
    }
    case NodeKind::Subscript: {
      // Find the tensor being written and check write permission.
      NodeId root = ast_.child(target, 0);
      while (ast_.kind(root) == NodeKind::Subscript) root = ast_.child(root, 0);
      if (ast_.kind(root) == NodeKind::Name) {
        auto it = locals_.find(ast_.node(root).payload);
        if (it != locals_.end() && it->second.bare_shared && types_.is_error(it->second.type)) {
          TypeId element = default_type(value.type);
          if (types_.kind(element) == TypeKind::Scalar)
            finalize_bare_shared(IdentifierId{ast_.node(root).payload}, element);
        }
      }
      assigning_ = true;
      Value slot = check_expression(target);
      assigning_ = false;
      NodeId object = ast_.child(target, 0);
      TypeId object_type = out_.node_types[object.index];
      if (object_type.valid() && types_.kind(object_type) == TypeKind::Tensor) {
        if (types_.info(object_type).space == AddressSpace::Register && !types_.is_error(slot.type)) {
          diags_.emit<diag::SemaWriteRegisterValue>(ast_.range(target), source_text(object));
          return;
        }
        // A register tile (a tile.mma result) is stored by its warps at
        // once, into a view of its shape.
        if (in_device() && types_.kind(value.type) == TypeKind::Tensor &&
            types_.info(value.type).space == AddressSpace::Register && types_.dims(value.type).size() > 1 &&
            types_.kind(slot.type) == TypeKind::Tensor &&
            std::ranges::any_of(types_.dims(slot.type), [&](DimId d) { return !types_.constant_value(d); })) {
          diags_.emit<diag::SemaSliceNotStatic>(ast_.range(target), source_text(target), types_.to_string(slot.type),
                                                std::string("storing a register tile (a tile.mma result)"));
          return;
        }
        // Graph code updates a value (x is bound to the new tensor; a
        // caller's is unchanged): no effect, no write privilege.
        if (in_device()) write_tensor_element(target, object_type, root);
      }
      check_store(target, slot.type, value, value_node);
      return;
    }
    case NodeKind::Attribute:
      check_expression(target);
      return;
    default:
      check_expression(target);
      return;
  }
}

void Checker::check_store(NodeId target, TypeId slot, const Value& value, NodeId value_node) {
  if (types_.is_error(slot) || types_.is_error(value.type)) return;
  TypeInfo to = types_.info(slot);
  TypeInfo from = types_.info(value.type);
  if (to.kind == TypeKind::Tensor && in_device()) {
    // A slice store (docs/language/kernels.md, "Slice assignment"): a
    // tensor of the same shape is copied element by element, a scalar
    // fills the slice. Either way each element is stored as `t[i] = v` is.
    TypeId element = types_.element_type(slot);
    if (from.kind == TypeKind::Tensor) {
      std::vector<DimId> want(types_.dims(slot).begin(), types_.dims(slot).end());
      std::vector<DimId> have(types_.dims(value.type).begin(), types_.dims(value.type).end());
      bool mismatch = want.size() != have.size();
      for (size_t d = 0; !mismatch && d < want.size(); ++d) {
        auto a = types_.constant_value(want[d]), b = types_.constant_value(have[d]);
        mismatch = a && b && *a != *b;
      }
      if (mismatch) {
        diags_.emit<diag::SemaShapeMismatch>(ast_.range(value_node), "slice assignment", types_.to_string(slot),
                                             types_.to_string(value.type));
        return;
      }
      Value each{types_.element_type(value.type)};
      check_store(target, compute_type(element), each, value_node);
      return;
    }
    check_store(target, element_value_type(slot), value, value_node);
    return;
  }
  if (to.kind == TypeKind::Tensor) {
    // Graph code, `x[a:b] = v` (docs/language/graph.md, "Assigning into a
    // tensor"): NumPy's rule, v a number or a tensor that broadcasts to the
    // selection's shape, converted to x's element type.
    if (from.kind == TypeKind::Tensor) {
      std::span<const DimId> want = types_.dims(slot), have = types_.dims(value.type);
      // NumPy's assignment also drops v's leading dimensions of size 1
      // (`x[0:2] = ones((1, 2, 3))` into a [2, 3] selection).
      bool mismatch = false;
      while (have.size() > want.size() && !mismatch) {
        mismatch = types_.constant_value(have.front()) != std::optional<int64_t>(1);
        have = have.subspan(1);
      }
      for (size_t d = 0; !mismatch && d < have.size(); ++d) {
        auto a = types_.constant_value(want[want.size() - have.size() + d]), b = types_.constant_value(have[d]);
        mismatch = a && b && *a != *b && *b != 1;
      }
      if (mismatch)
        diags_.emit<diag::SemaShapeMismatch>(ast_.range(value_node), "assignment into a tensor", types_.to_string(slot),
                                             types_.to_string(value.type));
    } else if (from.kind != TypeKind::Scalar && from.kind != TypeKind::UntypedInt &&
               from.kind != TypeKind::UntypedFloat && from.kind != TypeKind::Dynamic) {
      diags_.emit<diag::SemaAssignTypeMismatch>(ast_.range(value_node), types_.to_string(value.type),
                                                source_text(target), types_.to_string(slot));
    }
    return;
  }
  if (to.kind != TypeKind::Scalar) return;
  // A store into a narrower float tensor rounds by the tensor's policy.
  bool policy_store = is_float(to.scalar) && from.kind == TypeKind::Scalar && is_float(from.scalar);
  if (policy_store) return;
  if (!is_assignable(value.type, slot)) {
    bool narrowing_to_int = from.kind == TypeKind::Scalar && is_float(from.scalar) && is_integer(to.scalar);
    if (narrowing_to_int || from.kind == TypeKind::UntypedFloat) {
      diags_.emit<diag::SemaNarrowingConversion>(ast_.range(value_node), types_.to_string(value.type),
                                                 std::string(scalar_info(to.scalar).name));
    } else {
      diags_.emit<diag::SemaAssignTypeMismatch>(ast_.range(value_node), types_.to_string(value.type),
                                                source_text(target), types_.to_string(slot));
    }
    return;
  }
  check_constant_fits(value_node, value, slot);
}

void Checker::write_tensor_element(NodeId target, TypeId tensor, NodeId root) {
  raise_effect(Effect::State, ast_.range(target));
  const TypeInfo& info = types_.info(tensor);
  // A kernel stores one element of a @precision_policy tensor with the
  // per-element quantize (the one that takes the tensor's scale).
  if (Policy policy = types_.policy(info.policy); in_device() && policy.custom.valid()) {
    const PolicyClass* custom = out_.policy_class(policy.custom);
    if (custom && custom->quantize != UINT32_MAX && !has_element_quantize(*custom)) {
      diags_.emit<diag::SemaPolicyStoreNeedsScale>(ast_.range(target), name_of(policy.custom),
                                                   std::string(scalar_info(custom->compute).name),
                                                   std::string(scalar_info(custom->scale).name),
                                                   std::string(scalar_info(custom->storage).name));
    }
  }
  if (info.space != AddressSpace::Global || info.mut) return;
  if (ast_.kind(root) != NodeKind::Name) return;
  auto it = locals_.find(ast_.node(root).payload);
  if (it == locals_.end() || !it->second.is_parameter) return;
  Local& local = it->second;
  local.written = true;
  std::string name = name_of(ast_.node(root).payload);
  NodeId parameter = local.def;
  if (info.seed_style) {
    // The seeds' `ts.Tensor[...]` parameters are writable where written:
    // the signature says so (a launch, `tesserac run --out`, the AOT
    // header treat it as `mut`).
    if (function_ && local.parameter_index && *local.parameter_index < function_->parameter_types.size()) {
      TypeId& declared = function_->parameter_types[*local.parameter_index];
      if (types_.kind(declared) == TypeKind::Tensor && !types_.info(declared).mut) {
        const TypeInfo& d = types_.info(declared);
        std::vector<DimId> dims(types_.dims(declared).begin(), types_.dims(declared).end());
        declared = types_.tensor(d.scalar, d.policy, dims, d.space, true, d.seed_style);
      }
    }
    // Reported once per parameter.
    if (!reported_inferred_write_[parameter.index]) {
      reported_inferred_write_[parameter.index] = true;
      diags_.emit<diag::SemaInferredWrite>(ast_.range(target), name);
    }
    return;
  }
  // The note at the declaration carries the fix-it (the write may be far
  // from it).
  NodeId annotation = ast_.child(parameter, 0);
  auto builder = diags_.emit<diag::SemaWriteToImmutable>(ast_.range(target), name);
  builder.note<diag::NoteParameterNotMut>(ast_.range(parameter), name);
  if (annotation.valid()) builder.note_fix_it_insert(ast_.range(annotation).begin, "mut ");
}

// The type a `range(...)` loop counts in: i32, or i64 when a bound is a
// wider integer (i64, u32, u64) or a constant outside i32, so the counter
// never wraps where its bounds do not.
ScalarType Checker::range_element_type(NodeId iterable) {
  if (ast_.kind(iterable) != NodeKind::Call) return ScalarType::I32;
  auto args = ast_.children(iterable);
  for (size_t a = 1; a < args.size(); ++a) {
    NodeId arg = args[a];
    if (!arg.valid() || ast_.kind(arg) == NodeKind::KeywordArgument) continue;
    if (auto c = constants_.find(arg.index); c != constants_.end() && !c->second.is_float) {
      std::optional<int64_t> v = c->second.as_int64();
      if (!v || *v > INT32_MAX || *v < INT32_MIN) return ScalarType::I64;
    }
    TypeId t = out_.node_types[arg.index];
    if (!t.valid() || types_.kind(t) != TypeKind::Scalar) continue;
    ScalarType s = types_.info(t).scalar;
    if (s == ScalarType::I64 || s == ScalarType::U64 || s == ScalarType::U32) return ScalarType::I64;
  }
  return ScalarType::I32;
}

namespace {

// The element type of `s` after `s = <number of type a>` and `s = <0-d
// tensor of type b>`: the type `s + t` computes in (floats over integers,
// the wider of two floats or of two integers of one signedness); none for a
// bool with a number or integers of different signedness.
std::optional<ScalarType> combined_element(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (a == ScalarType::Bool || b == ScalarType::Bool) return std::nullopt;
  const ScalarInfo& x = scalar_info(a);
  const ScalarInfo& y = scalar_info(b);
  if (is_float(a) != is_float(b)) return is_float(a) ? a : b;
  if (is_float(a)) {
    if (x.bits != y.bits) return x.bits > y.bits ? a : b;
    return ScalarType::F32;  // bf16 and f16: the accumulation type of both
  }
  if (x.category != y.category) return std::nullopt;
  return x.bits >= y.bits ? a : b;
}

}  // namespace

std::optional<TypeId> Checker::promoted_local_type(NodeId target, TypeId first) {
  if (in_device() || !promoted_locals_ || types_.kind(first) != TypeKind::Scalar) return std::nullopt;
  auto it = promoted_locals_->find(target.index);
  if (it == promoted_locals_->end()) return std::nullopt;
  return types_.tensor(it->second, {}, {}, value_space(), false, false);
}

// The values of `for i in range(...)` (constant bounds) when its body
// indexes a tuple whose elements differ in type with an index that uses i
// (`params[i]`): such a loop is checked (and compiled) once per value.
std::optional<std::vector<int64_t>> Checker::range_indexing_mixed_tuple(NodeId target, NodeId iterable, NodeId body) {
  if (ast_.kind(target) != NodeKind::Name) return std::nullopt;
  const uint32_t variable = ast_.node(target).payload;
  std::function<bool(NodeId)> uses_variable = [&](NodeId n) {
    if (!n.valid()) return false;
    if (ast_.kind(n) == NodeKind::Name && ast_.node(n).payload == variable) return true;
    return std::ranges::any_of(ast_.children(n), uses_variable);
  };
  std::function<bool(NodeId)> indexes_mixed = [&](NodeId n) {
    if (!n.valid()) return false;
    if (ast_.kind(n) == NodeKind::Subscript && ast_.kind(ast_.child(n, 0)) == NodeKind::Name &&
        uses_variable(ast_.child(n, 1))) {
      auto local = locals_.find(ast_.node(ast_.child(n, 0)).payload);
      if (local != locals_.end() && !mixed_elements(local->second.type).empty()) return true;
    }
    return std::ranges::any_of(ast_.children(n), indexes_mixed);
  };
  if (!indexes_mixed(body)) return std::nullopt;
  return constant_range(iterable);
}

// Whether binding `value` to a graph-code name that holds `local` gives
// the name a new type: a tensor or a tuple of another type (a number's
// widening is promote_local_to_tensor's; None's is assign_to's).
bool Checker::rebinds_with_new_type(const Local& local, TypeId value) const {
  if (local.bare_shared || local.is_dimension || value == local.type || types_.is_error(value) ||
      types_.is_error(local.type))
    return false;
  const TypeKind from = types_.kind(local.type), to = types_.kind(value);
  if (from == TypeKind::Dynamic || to == TypeKind::Dynamic || from == TypeKind::None || to == TypeKind::None)
    return false;
  // Numbers and 0-d tensors keep one type from the first binding, the
  // widest (promote_local_to_tensor): `s = 0.0`, then `s = s + ts.sum(x)`.
  auto one_number = [&](TypeId t, TypeKind kind) {
    return kind == TypeKind::Scalar || kind == TypeKind::UntypedInt || kind == TypeKind::UntypedFloat ||
           (kind == TypeKind::Tensor && types_.dims(t).empty());
  };
  if (one_number(local.type, from) && one_number(value, to)) return false;
  return from == TypeKind::Tensor || from == TypeKind::Tuple || to == TypeKind::Tensor || to == TypeKind::Tuple;
}

bool Checker::promote_local_to_tensor(Local& local, TypeId value) {
  if (in_device() || !promoted_locals_ || local.is_parameter || local.is_dimension || !local.def.valid() ||
      ast_.kind(local.def) != NodeKind::Name)
    return false;
  TypeInfo held = types_.info(local.type), given = types_.info(value);
  // (A value whole on every rank of a mesh, an all_reduced loss, is one
  // number as well.)
  if (given.kind != TypeKind::Tensor || !types_.dims(value).empty() || distributed_layout(types_.sharding(value)) ||
      given.policy.index != 0)
    return false;
  // A number, or a 0-d tensor this rule made of one (a later value of a
  // wider type widens it again).
  bool number = held.kind == TypeKind::Scalar && held.policy.index == 0;
  bool promoted = held.kind == TypeKind::Tensor && types_.dims(local.type).empty() &&
                  promoted_locals_->count(local.def.index);
  if (!number && !promoted) return false;
  std::optional<ScalarType> element = combined_element(held.scalar, given.scalar);
  if (!element) return false;
  auto [it, inserted] = promoted_locals_->emplace(local.def.index, *element);
  if (inserted || it->second != *element) new_promotion_ = true;
  it->second = *element;
  local.type = types_.tensor(*element, {}, {}, value_space(), false, false);
  set_type(local.def, local.type);
  return true;
}

std::unique_ptr<TypedModule> check_module(const Ast& ast, ValueStores& values, DiagnosticEngine& diags,
                                          const AutotunePin* pin) {
  // A local promoted to a 0-d tensor is one from its first assignment: when
  // a check finds one, the module is checked again knowing it (a few rounds
  // at most: each widens a local's type). The diagnostics are those of the
  // last check.
  std::unordered_map<uint32_t, ScalarType> promoted;
  for (int round = 0;; ++round) {
    CollectingDiagnosticConsumer collected;
    DiagnosticEngine trial(diags.sources(), collected, DiagnosticOptions{false, false, 0});
    auto module = std::make_unique<TypedModule>(values.identifiers);
    Checker checker(ast, values, trial, *module);
    checker.set_autotune_pin(pin);
    checker.set_promoted_locals(&promoted);
    checker.run(ast.root());
    if (checker.found_new_promotion() && round < 8) continue;
    trial.flush();
    for (Diagnostic& d : collected.diagnostics) diags.report(std::move(d));
    return module;
  }
}

}  // namespace tessera::sema
