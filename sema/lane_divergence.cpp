// Lane divergence: which values differ between the lanes of a group, and
// whether every `tile.barrier()` is reached by all lanes.
//
// A value is lane-varying when it derives from a lane id (tile.linear_id,
// local_id, lane_id, warp_id), an atomic, a warp shuffle or reduction, or a
// variable assigned a lane-varying value or assigned under lane-varying
// control flow. The analysis iterates to a fixpoint over the function body
// (flow-insensitive per variable, which is conservative). A barrier is
// diagnosed when it sits under a lane-varying condition, in a loop that some
// lanes may leave early, or after a lane-varying `return`.
#include <unordered_set>

#include "sema/checker.h"

namespace tessera::sema {

namespace {

class Uniformity {
 public:
  explicit Uniformity(Checker& checker) : c_(checker), ast_(checker.ast_) {}

  void run(NodeId body) {
    bool changed = true;
    while (changed) {
      changed = false;
      propagate_block(body, false, changed);
    }
    bool exited = false;
    check_block(body, NodeId{}, exited, false);
  }

 private:
  std::optional<BuiltinId> builtin_callee(NodeId call) const {
    NodeId callee = ast_.child(call, 0);
    TypeId type = c_.out_.node_types[callee.index];
    if (!type.valid() || c_.types_.kind(type) != TypeKind::Builtin) return std::nullopt;
    return static_cast<BuiltinId>(c_.types_.info(type).payload);
  }

  bool varies(NodeId node) const {
    if (!node.valid()) return false;
    const Node& n = ast_.node(node);
    if (n.kind == NodeKind::Name) return varying_.count(n.payload) > 0;
    if (n.kind == NodeKind::Call) {
      if (auto builtin = builtin_callee(node)) {
        switch (*builtin) {
          case BuiltinId::TileLinearId:
          case BuiltinId::TileLocalId:
          case BuiltinId::TileLaneId:
          case BuiltinId::TileWarpId:
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
          case BuiltinId::TileShuffleIdx:
          case BuiltinId::TileWarpReduceSum:
          case BuiltinId::TileWarpReduceMax:
          case BuiltinId::TileWarpReduceMin:
            return true;
          default:
            break;
        }
      }
    }
    if (n.kind == NodeKind::Lambda) return false;
    for (NodeId child : ast_.children(node)) {
      if (varies(child)) return true;
    }
    return false;
  }

  void mark_targets(NodeId target, bool& changed) {
    const Node& n = ast_.node(target);
    if (n.kind == NodeKind::Name) {
      changed |= varying_.insert(n.payload).second;
    } else if (n.kind == NodeKind::Tuple || n.kind == NodeKind::List) {
      for (NodeId child : ast_.children(target)) mark_targets(child, changed);
    }
  }

  void propagate_block(NodeId suite, bool divergent, bool& changed) {
    for (NodeId statement : ast_.children(suite)) propagate(statement, divergent, changed);
  }

  void propagate(NodeId statement, bool divergent, bool& changed) {
    const Node& n = ast_.node(statement);
    auto children = ast_.children(statement);
    switch (n.kind) {
      case NodeKind::Assign: {
        bool v = divergent || varies(children.back());
        if (v) {
          for (NodeId target : children.first(children.size() - 1)) mark_targets(target, changed);
        }
        break;
      }
      case NodeKind::AugAssign:
        if (divergent || varies(children[1])) mark_targets(children[0], changed);
        break;
      case NodeKind::AnnAssign:
        if (children[2].valid() && (divergent || varies(children[2]))) mark_targets(children[0], changed);
        break;
      case NodeKind::If: {
        bool d = divergent || varies(children[0]);
        propagate_block(children[1], d, changed);
        if (children[2].valid()) {
          if (ast_.kind(children[2]) == NodeKind::If) {
            propagate(children[2], d, changed);
          } else {
            propagate_block(children[2], d, changed);
          }
        }
        break;
      }
      case NodeKind::While: {
        bool d = divergent || varies(children[0]) || has_divergent_exit(children[1]);
        propagate_block(children[1], d, changed);
        break;
      }
      case NodeKind::For: {
        bool d = divergent || varies(children[1]) || has_divergent_exit(children[2]);
        if (d) mark_targets(children[0], changed);
        propagate_block(children[2], d, changed);
        break;
      }
      case NodeKind::With:
        propagate_block(children.back(), divergent, changed);
        break;
      default:
        break;
    }
  }

  // Does the loop body contain a `break`/`continue` under a lane-varying
  // condition (not counting nested loops)?
  bool has_divergent_exit(NodeId suite, bool divergent = false) const {
    for (NodeId statement : ast_.children(suite)) {
      const Node& n = ast_.node(statement);
      auto children = ast_.children(statement);
      if ((n.kind == NodeKind::Break || n.kind == NodeKind::Continue) && divergent) return true;
      if (n.kind == NodeKind::If) {
        bool d = divergent || varies(children[0]);
        if (has_divergent_exit(children[1], d)) return true;
        if (children[2].valid()) {
          if (ast_.kind(children[2]) == NodeKind::If) {
            // elif chain: wrap as a one-statement check
            if (has_divergent_exit_if(children[2], d)) return true;
          } else if (has_divergent_exit(children[2], d)) {
            return true;
          }
        }
      }
      if (n.kind == NodeKind::With && has_divergent_exit(children.back(), divergent)) return true;
    }
    return false;
  }
  bool has_divergent_exit_if(NodeId if_node, bool divergent) const {
    auto children = ast_.children(if_node);
    bool d = divergent || varies(children[0]);
    if (has_divergent_exit(children[1], d)) return true;
    if (!children[2].valid()) return false;
    if (ast_.kind(children[2]) == NodeKind::If) return has_divergent_exit_if(children[2], d);
    return has_divergent_exit(children[2], d);
  }

  void check_expression(NodeId node, NodeId condition, bool exited, bool loop_exit) {
    if (!node.valid()) return;
    const Node& n = ast_.node(node);
    if (n.kind == NodeKind::Call) {
      auto builtin = builtin_callee(node);
      if (builtin && *builtin == BuiltinId::TileBarrier && (condition.valid() || exited || loop_exit)) {
        std::string name = c_.source_text(ast_.child(node, 0)) + "()";
        if (condition.valid()) {
          c_.diags_
              .emit<diag::SemaBarrierDivergent>(n.range, name,
                                                std::string("it is inside control flow on a lane-dependent value"))
              .note<diag::NoteDivergentCondition>(ast_.range(condition));
        } else if (exited) {
          c_.diags_.emit<diag::SemaBarrierDivergent>(n.range, name,
                                                     std::string("some lanes may have returned before reaching it"));
        } else {
          c_.diags_.emit<diag::SemaBarrierDivergent>(
              n.range, name,
              std::string("some lanes may leave the loop early (break/continue on a lane-dependent "
                          "condition)"));
        }
      }
    }
    for (NodeId child : ast_.children(node)) check_expression(child, condition, exited, loop_exit);
  }

  // `exited` becomes true after a return under a lane-varying condition.
  void check_block(NodeId suite, NodeId condition, bool& exited, bool loop_exit) {
    for (NodeId statement : ast_.children(suite)) check_statement(statement, condition, exited, loop_exit);
  }

  void check_statement(NodeId statement, NodeId condition, bool& exited, bool loop_exit) {
    const Node& n = ast_.node(statement);
    auto children = ast_.children(statement);
    switch (n.kind) {
      case NodeKind::If: {
        NodeId c = condition.valid() ? condition : (varies(children[0]) ? children[0] : NodeId{});
        bool exited_then = exited, exited_else = exited;
        check_expression(children[0], condition, exited, loop_exit);
        check_block(children[1], c, exited_then, loop_exit);
        if (children[2].valid()) {
          if (ast_.kind(children[2]) == NodeKind::If) {
            check_statement(children[2], c, exited_else, loop_exit);
          } else {
            check_block(children[2], c, exited_else, loop_exit);
          }
        }
        exited = exited_then || exited_else;
        break;
      }
      case NodeKind::While: {
        NodeId c = condition.valid() ? condition : (varies(children[0]) ? children[0] : NodeId{});
        check_expression(children[0], condition, exited, loop_exit);
        check_block(children[1], c, exited, has_divergent_exit(children[1]));
        break;
      }
      case NodeKind::For: {
        NodeId c = condition.valid() ? condition : (varies(children[1]) ? children[1] : NodeId{});
        check_expression(children[1], condition, exited, loop_exit);
        check_block(children[2], c, exited, has_divergent_exit(children[2]));
        break;
      }
      case NodeKind::With:
        for (NodeId item : children.first(children.size() - 1)) check_expression(item, condition, exited, loop_exit);
        check_block(children.back(), condition, exited, loop_exit);
        break;
      case NodeKind::Return:
        if (condition.valid()) exited = true;
        break;
      default:
        for (NodeId child : children) check_expression(child, condition, exited, loop_exit);
        break;
    }
  }

  Checker& c_;
  const Ast& ast_;
  std::unordered_set<uint32_t> varying_;
};

}  // namespace

void Checker::check_uniformity(const FunctionInfo& info) {
  Uniformity(*this).run(ast_.child(info.def, 3));
}

}  // namespace tessera::sema
