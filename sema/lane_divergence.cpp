// Lane divergence: which values differ between the lanes of a group or of a
// warp, and whether every collective operation is reached by all the lanes
// it needs (docs/language/kernels.md, "Lane divergence and convergence").
//
// Three levels: uniform over the group; the same within each warp (a value
// derived from tile.warp_id() or a warp reduction); varying between lanes
// (tile.linear_id, local_id, lane_id, an atomic, a shuffle, a local array,
// or a variable assigned such a value or under control flow that varies).
// The analysis iterates to a fixpoint over the function body,
// flow-insensitively per variable (conservative), with the same rules as the
// IR's `uniformity` pass, which runs after inlining: whatever that pass
// rejects, this one rejects first, with a message about the source.
//
// A group collective (tile.barrier, async copies and their groups, tile.mma,
// a register tile stored into a slice) needs control flow uniform over the
// group; a warp operation (shuffles, warp reductions) control flow uniform
// within each warp. Control flow is a condition of an enclosing `if`,
// `while` or `for`, a `return` some lanes took before, or a loop some lanes
// left with `break`/`continue`.
//
// Helpers are checked twice: on their own, with uniform arguments (what is
// wrong whatever the caller does is reported in the helper), and at each
// call from device code with the arguments' levels (a summary, cached): a
// call is reported when it sits under control flow that the collectives it
// reaches do not allow, or when a varying argument decides whether the
// helper reaches one.
#include <algorithm>
#include <unordered_map>

#include "sema/checker.h"

namespace tessera::sema {

namespace {

using Level = DivergenceLevel;

Level join(Level a, Level b) { return std::max(a, b); }

// Why control flow varies at a point: a condition, a `return` some lanes
// took, or a loop some lanes left.
struct Reason {
  enum class Kind : uint8_t { Condition, Returned, LoopExit } kind;
  Level level;
  NodeId node;  // the condition (Condition, LoopExit) or the return's condition
};

class Divergence {
 public:
  Divergence(Checker& checker, const FunctionInfo& function, std::vector<Level> parameters, bool report)
      : c_(checker), ast_(checker.ast_), function_(function), report_(report) {
    NodeId list = ast_.child(function.def, 1);
    auto nodes = ast_.children(list).subspan(function.first_parameter);
    for (size_t i = 0; i < nodes.size() && i < parameters.size(); ++i)
      if (parameters[i] != Level::Uniform) varying_[ast_.node(nodes[i]).payload] = parameters[i];
  }

  DivergenceSummary run() {
    NodeId body = ast_.child(function_.def, 3);
    bool changed = true;
    while (changed) {
      changed = false;
      propagate_block(body, Level::Uniform, changed);
    }
    std::vector<Reason> reasons;
    check_block(body, reasons);
    return summary_;
  }

 private:
  std::optional<BuiltinId> builtin_callee(NodeId call) const {
    TypeId type = c_.out_.node_types[ast_.child(call, 0).index];
    if (!type.valid() || c_.types_.kind(type) != TypeKind::Builtin) return std::nullopt;
    return static_cast<BuiltinId>(c_.types_.info(type).payload);
  }
  std::optional<uint32_t> helper_callee(NodeId call) const {
    TypeId type = c_.out_.node_types[ast_.child(call, 0).index];
    if (!type.valid() || c_.types_.kind(type) != TypeKind::Function) return std::nullopt;
    uint32_t index = c_.types_.info(type).payload;
    if (c_.out_.functions[index].kind != FunctionKind::Helper) return std::nullopt;
    return index;
  }

  // The argument nodes of a helper call in parameter order (sema bound them).
  std::vector<NodeId> helper_arguments(NodeId call) const {
    auto it = c_.out_.call_arguments.find(call.index);
    if (it != c_.out_.call_arguments.end()) return it->second;
    auto children = ast_.children(call).subspan(1);
    return {children.begin(), children.end()};
  }

  DivergenceSummary callee_summary(NodeId call, uint32_t index) const {
    std::vector<Level> levels;
    for (NodeId argument : helper_arguments(call)) levels.push_back(level(argument));
    return c_.helper_divergence(index, levels);
  }

  // How much a loop's trip count varies: a list or a tuple has a length
  // fixed when compiling (the loop is unrolled), whatever its elements hold
  // (`for v in [x[i], y[i]]` runs twice on every lane; its target varies).
  Level trip_level(NodeId iterable) const {
    TypeId type = c_.out_.node_types[iterable.index];
    if (type.valid() && (c_.types_.kind(type) == TypeKind::List || c_.types_.kind(type) == TypeKind::Tuple))
      return Level::Uniform;
    return level(iterable);
  }

  Level level(NodeId node) const {
    if (!node.valid()) return Level::Uniform;
    const Node& n = ast_.node(node);
    if (n.kind == NodeKind::Name) {
      auto it = varying_.find(n.payload);
      return it == varying_.end() ? Level::Uniform : it->second;
    }
    if (n.kind == NodeKind::Lambda) return Level::Uniform;
    Level own = Level::Uniform;
    if (n.kind == NodeKind::Call) {
      if (auto builtin = builtin_callee(node)) {
        switch (*builtin) {
          case BuiltinId::TileLinearId:
          case BuiltinId::TileLocalId:
          case BuiltinId::TileLaneId:
          case BuiltinId::TileAllocLocal:  // each lane's own memory
          case BuiltinId::TileAtomicAdd:
          case BuiltinId::TileAtomicMax:
          case BuiltinId::TileAtomicMin:
          case BuiltinId::TileAtomicCas:
          case BuiltinId::TileAtomicExch:
          case BuiltinId::TileAtomicAnd:
          case BuiltinId::TileAtomicOr:
          case BuiltinId::TileAtomicXor:
          case BuiltinId::TileShuffleDown:
          case BuiltinId::TileShuffleXor:
          case BuiltinId::TileShuffleUp:
          case BuiltinId::TileShuffleIdx: return Level::Lane;
          // The same on every lane of a warp, whatever its operand; not
          // over the group (a partial last warp sums fewer lanes).
          case BuiltinId::TileWarpId:
          case BuiltinId::TileWarpReduceSum:
          case BuiltinId::TileWarpReduceMax:
          case BuiltinId::TileWarpReduceMin: return Level::Warp;
          default: break;
        }
      } else if (auto helper = helper_callee(node)) {
        return callee_summary(node, *helper).result;
      }
    }
    for (NodeId child : ast_.children(node)) own = join(own, level(child));
    return own;
  }

  void mark(NodeId target, Level l, bool& changed) {
    if (l == Level::Uniform) return;
    const Node& n = ast_.node(target);
    if (n.kind == NodeKind::Name) {
      Level& slot = varying_.try_emplace(n.payload, Level::Uniform).first->second;
      if (l > slot) {
        slot = l;
        changed = true;
      }
    } else if (n.kind == NodeKind::Tuple || n.kind == NodeKind::List) {
      for (NodeId child : ast_.children(target)) mark(child, l, changed);
    }
  }

  void propagate_block(NodeId suite, Level control, bool& changed) {
    for (NodeId statement : ast_.children(suite)) propagate(statement, control, changed);
  }

  void propagate(NodeId statement, Level control, bool& changed) {
    const Node& n = ast_.node(statement);
    auto children = ast_.children(statement);
    switch (n.kind) {
      case NodeKind::Assign: {
        Level l = join(control, level(children.back()));
        for (NodeId target : children.first(children.size() - 1)) mark(target, l, changed);
        break;
      }
      case NodeKind::AugAssign: mark(children[0], join(control, level(children[1])), changed); break;
      case NodeKind::AnnAssign:
        if (children[2].valid()) mark(children[0], join(control, level(children[2])), changed);
        break;
      case NodeKind::If: {
        Level inner = join(control, level(children[0]));
        propagate_block(children[1], inner, changed);
        if (children[2].valid()) {
          if (ast_.kind(children[2]) == NodeKind::If)
            propagate(children[2], inner, changed);
          else
            propagate_block(children[2], inner, changed);
        }
        break;
      }
      case NodeKind::While: {
        Level inner = join(join(control, level(children[0])), loop_exit(children[1]).level);
        propagate_block(children[1], inner, changed);
        break;
      }
      case NodeKind::For: {
        Level inner = join(join(control, trip_level(children[1])), loop_exit(children[2]).level);
        mark(children[0], join(inner, level(children[1])), changed);
        propagate_block(children[2], inner, changed);
        break;
      }
      case NodeKind::With: propagate_block(children.back(), control, changed); break;
      case NodeKind::Return:
        if (children[0].valid()) summary_.result = join(summary_.result, join(control, level(children[0])));
        break;
      default: break;
    }
  }

  // The most varying condition under which the loop body leaves the loop
  // early (`break`/`continue` of this loop, not of a nested one).
  struct Exit {
    Level level = Level::Uniform;
    NodeId condition;
  };
  Exit loop_exit(NodeId suite, Level control = Level::Uniform, NodeId condition = {}) const {
    Exit worst;
    auto consider = [&](Exit e) {
      if (e.level > worst.level) worst = e;
    };
    for (NodeId statement : ast_.children(suite)) {
      const Node& n = ast_.node(statement);
      auto children = ast_.children(statement);
      if (n.kind == NodeKind::Break || n.kind == NodeKind::Continue) consider({control, condition});
      if (n.kind == NodeKind::If) consider(if_exit(statement, control, condition));
      if (n.kind == NodeKind::With) consider(loop_exit(children.back(), control, condition));
    }
    return worst;
  }
  Exit if_exit(NodeId statement, Level control, NodeId condition) const {
    auto children = ast_.children(statement);
    Level here = level(children[0]);
    Level inner = join(control, here);
    NodeId culprit = here > control ? children[0] : condition;
    Exit worst = loop_exit(children[1], inner, culprit);
    if (children[2].valid()) {
      Exit other = ast_.kind(children[2]) == NodeKind::If ? if_exit(children[2], inner, culprit)
                                                          : loop_exit(children[2], inner, culprit);
      if (other.level > worst.level) worst = other;
    }
    return worst;
  }

  // --- the check ---

  // The reason control flow does not allow an operation that needs `need`.
  static const Reason* blocking(const std::vector<Reason>& reasons, Level need) {
    for (const Reason& r : reasons)
      if (r.level > need) return &r;
    return nullptr;
  }

  std::string reason_text(const Reason& r) const {
    switch (r.kind) {
      case Reason::Kind::Condition: return "it is inside control flow on a lane-dependent value";
      case Reason::Kind::Returned: return "some lanes may have returned before reaching it";
      case Reason::Kind::LoopExit:
        return "some lanes may leave the loop early (break/continue on a lane-dependent condition)";
    }
    return "";
  }

  // A convergent operation `op` (named `name`) needing `need` is reached
  // under `reasons`; `inside`: it is inside the helper called at `op`.
  void require(NodeId op, const std::string& name, Level need, const std::vector<Reason>& reasons,
               const DivergenceSummary* callee = nullptr) {
    if (!summary_.need || need < *summary_.need) {
      summary_.need = need;
      summary_.need_node = callee ? callee->need_node : op;
      summary_.need_name = callee ? callee->need_name : name;
    }
    const Reason* r = blocking(reasons, need);
    if (!r) return;
    if (!report_) {
      if (!summary_.problem) summary_.problem = DivergenceProblem{op, need, r->node};
      return;
    }
    std::string text = reason_text(*r);
    auto emit = [&](auto&& builder) {
      // For lanes that returned: the condition of the branch they returned in.
      if (r->node.valid()) builder.template note<diag::NoteDivergentCondition>(ast_.range(r->node));
      if (callee)
        builder.template note<diag::NoteConvergentInHelper>(ast_.range(callee->need_node), callee->need_name);
    };
    if (need == Level::Uniform)
      emit(c_.diags_.emit<diag::SemaBarrierDivergent>(ast_.range(op), name, text));
    else
      emit(c_.diags_.emit<diag::SemaWarpOpDivergent>(ast_.range(op), name, text));
  }

  // A helper call: what the helper reaches must be allowed here, and no
  // argument that varies here may decide whether it reaches it.
  void check_call(NodeId call, uint32_t index, const std::vector<Reason>& reasons) {
    DivergenceSummary callee = callee_summary(call, index);
    std::string name = c_.source_text(call);
    if (callee.need) require(call, name, *callee.need, reasons, &callee);
    if (!callee.problem) return;
    // Only what the arguments cause: with uniform arguments the helper
    // reported it itself.
    std::vector<Level> uniform(helper_arguments(call).size(), Level::Uniform);
    if (c_.helper_divergence(index, uniform).problem) return;
    const DivergenceProblem& p = *callee.problem;
    if (!report_) {
      if (!summary_.problem) summary_.problem = DivergenceProblem{call, p.need, p.condition};
      if (!summary_.need || p.need < *summary_.need) summary_.need = p.need;
      return;
    }
    std::string text = "a lane-dependent argument decides whether the helper reaches '" +
                       c_.source_text(p.op) + "'";
    auto emit = [&](auto&& builder) {
      builder.template note<diag::NoteConvergentInHelper>(ast_.range(p.op), c_.source_text(p.op));
      if (p.condition.valid()) builder.template note<diag::NoteDivergentCondition>(ast_.range(p.condition));
    };
    if (p.need == Level::Uniform)
      emit(c_.diags_.emit<diag::SemaBarrierDivergent>(ast_.range(call), name, text));
    else
      emit(c_.diags_.emit<diag::SemaWarpOpDivergent>(ast_.range(call), name, text));
  }

  void check_expression(NodeId node, const std::vector<Reason>& reasons) {
    if (!node.valid()) return;
    const Node& n = ast_.node(node);
    if (n.kind == NodeKind::IfExp || n.kind == NodeKind::BoolOp) {
      // `a if c else b`, `x and y`, `x or y` evaluate their other operands
      // only on the lanes the first one selects (Python's rule; lowered to
      // scf.if): control flow on the first operand, as an `if` statement.
      auto children = ast_.children(node);
      check_expression(children[0], reasons);
      std::vector<Reason> inner = reasons;
      if (Level l = level(children[0]); l != Level::Uniform) inner.push_back({Reason::Kind::Condition, l, children[0]});
      for (NodeId child : children.subspan(1)) check_expression(child, inner);
      return;
    }
    for (NodeId child : ast_.children(node)) check_expression(child, reasons);
    if (n.kind != NodeKind::Call) return;
    if (auto builtin = builtin_callee(node)) {
      std::string name = c_.source_text(ast_.child(node, 0)) + "()";
      switch (*builtin) {
        case BuiltinId::TileBarrier:
        case BuiltinId::TileCpAsync:
        case BuiltinId::TileCpCommitGroup:
        case BuiltinId::TileCpWaitGroup:
        case BuiltinId::TileMma: require(node, name, Level::Uniform, reasons); break;
        case BuiltinId::TileShuffleDown:
        case BuiltinId::TileShuffleXor:
        case BuiltinId::TileShuffleUp:
        case BuiltinId::TileShuffleIdx:
        case BuiltinId::TileWarpReduceSum:
        case BuiltinId::TileWarpReduceMax:
        case BuiltinId::TileWarpReduceMin: require(node, name, Level::Warp, reasons); break;
        default: break;
      }
    } else if (auto helper = helper_callee(node)) {
      check_call(node, *helper, reasons);
    }
  }

  // `t[a:b, c:d] = tile`: storing a register tile is a collective of the
  // warps that hold it (lowered to tile.store_tile).
  bool stores_register_tile(NodeId statement) const {
    auto children = ast_.children(statement);
    NodeId value = children.back();
    TypeId type = c_.out_.node_types[value.index];
    if (!type.valid() || c_.types_.kind(type) != TypeKind::Tensor) return false;
    TypeInfo info = c_.types_.info(type);
    if (info.space != AddressSpace::Register || c_.types_.dims(type).size() != 2) return false;
    for (NodeId target : children.first(children.size() - 1))
      if (ast_.kind(target) == NodeKind::Subscript) return true;
    return false;
  }

  void check_block(NodeId suite, std::vector<Reason>& reasons) {
    for (NodeId statement : ast_.children(suite)) check_statement(statement, reasons);
  }

  void check_statement(NodeId statement, std::vector<Reason>& reasons) {
    const Node& n = ast_.node(statement);
    auto children = ast_.children(statement);
    auto with_condition = [&](NodeId condition, Level l, std::vector<Reason>& inner) {
      inner = reasons;
      if (l != Level::Uniform) inner.push_back({Reason::Kind::Condition, l, condition});
    };
    switch (n.kind) {
      case NodeKind::If: {
        check_expression(children[0], reasons);
        std::vector<Reason> inner;
        with_condition(children[0], level(children[0]), inner);
        std::vector<Reason> then_reasons = inner, else_reasons = inner;
        check_block(children[1], then_reasons);
        if (children[2].valid()) {
          if (ast_.kind(children[2]) == NodeKind::If)
            check_statement(children[2], else_reasons);
          else
            check_block(children[2], else_reasons);
        }
        // A `return` in either branch leaves the rest of the function to
        // the lanes that did not take it.
        for (auto* branch : {&then_reasons, &else_reasons})
          for (size_t i = inner.size(); i < branch->size(); ++i)
            if ((*branch)[i].kind == Reason::Kind::Returned) reasons.push_back((*branch)[i]);
        break;
      }
      case NodeKind::While: {
        check_expression(children[0], reasons);
        std::vector<Reason> inner;
        with_condition(children[0], level(children[0]), inner);
        Exit exit = loop_exit(children[1]);
        if (exit.level != Level::Uniform) inner.push_back({Reason::Kind::LoopExit, exit.level, exit.condition});
        check_block(children[1], inner);
        break;
      }
      case NodeKind::For: {
        check_expression(children[1], reasons);
        std::vector<Reason> inner;
        with_condition(children[1], trip_level(children[1]), inner);
        Exit exit = loop_exit(children[2]);
        if (exit.level != Level::Uniform) inner.push_back({Reason::Kind::LoopExit, exit.level, exit.condition});
        check_block(children[2], inner);
        break;
      }
      case NodeKind::With:
        for (NodeId item : children.first(children.size() - 1)) check_expression(item, reasons);
        check_block(children.back(), reasons);
        break;
      case NodeKind::Return: {
        check_expression(children[0], reasons);
        Level l = Level::Uniform;
        NodeId culprit;
        for (const Reason& r : reasons)
          if (r.kind == Reason::Kind::Condition && r.level > l) {
            l = r.level;
            culprit = r.node;
          }
        if (l != Level::Uniform) reasons.push_back({Reason::Kind::Returned, l, culprit});
        break;
      }
      case NodeKind::Assign:
        for (NodeId child : children) check_expression(child, reasons);
        if (stores_register_tile(statement))
          require(statement, c_.source_text(statement), Level::Uniform, reasons);
        break;
      default:
        for (NodeId child : children) check_expression(child, reasons);
        break;
    }
  }

  Checker& c_;
  const Ast& ast_;
  const FunctionInfo& function_;
  bool report_;
  std::unordered_map<uint32_t, Level> varying_;
  DivergenceSummary summary_;
};

}  // namespace

void Checker::check_uniformity(const FunctionInfo& info) {
  // A kernel's parameters are the same for the whole launch; a helper is
  // checked with uniform arguments here and again at each call.
  std::vector<Level> parameters(info.parameter_types.size(), Level::Uniform);
  Divergence(*this, info, parameters, true).run();
}

DivergenceSummary Checker::helper_divergence(uint32_t index, const std::vector<DivergenceLevel>& arguments) {
  std::string key = std::to_string(index);
  for (Level l : arguments) key += static_cast<char>('0' + static_cast<int>(l));
  if (auto it = divergence_summaries_.find(key); it != divergence_summaries_.end()) return it->second;
  // A recursive helper: what it reaches is not known yet (lowering rejects
  // recursion anyway); its result varies.
  DivergenceSummary pending;
  pending.result = Level::Lane;
  divergence_summaries_[key] = pending;
  DivergenceSummary summary = Divergence(*this, out_.functions[index], arguments, false).run();
  divergence_summaries_[key] = summary;
  return summary;
}

}  // namespace tessera::sema
