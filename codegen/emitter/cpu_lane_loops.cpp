// The CPU target's group function (cpu_lane_loops.h): a kernel's lanes as
// loops between synchronisation points, following its LanePlan.
#include "codegen/emitter/cpu_lane_loops.h"

#include <llvm/Analysis/ValueTracking.h>

#include "support/diagnostics/internal_error.h"

namespace tessera::codegen::emitter {

namespace {

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

// --- the function ------------------------------------------------------------------------

uint64_t LaneLoops::emit(llvm::Function* function) {
  function_ = function;
  e_.current_function_ = function;
  e_.current_ir_function_ = kernel_;
  e_.values_.clear();
  e_.subprogram_ = nullptr;
  shape_ = kernel_->attr("group_shape").int_array();
  shape_.resize(3, 1);
  lanes_ = shape_[0] * shape_[1] * shape_[2];
  auto* entry = llvm::BasicBlock::Create(context_, "entry", function);
  b_.SetInsertPoint(entry);
  b_.SetCurrentDebugLocation(llvm::DebugLoc());
  cpu_.launch_context_ = function->getArg(0);
  cpu_.lane_ = nullptr;
  cpu_.local_ids_ = {};
  cpu_.shared_bytes_ = 0;
  scratch_ = function->getArg(1);
  // The kernel's parameters, as Emitter::define binds them.
  ir::Block& body = kernel_->region(0).front();
  unsigned next = 2;
  for (ir::Value* arg : body.arguments()) {
    Type t = arg->type();
    if (!t.is(TypeKind::MemRef)) {
      e_.set(arg, function->getArg(next++));
      continue;
    }
    auto m = std::make_shared<MemRef>();
    m->base = function->getArg(next++);
    for (size_t i = 0; i < t.rank(); ++i) m->origin.push_back(b_.getInt64(0));
    for (size_t i = 0; i < t.rank(); ++i) {
      llvm::Value* size = function->getArg(next++);
      m->sizes.push_back(t.shape()[i] == ir::kDynamic ? size : b_.getInt64(static_cast<uint64_t>(t.shape()[i])));
    }
    for (size_t i = 0; i < t.rank(); ++i) m->strides.push_back(function->getArg(next++));
    m->root = t;
    e_.values_[arg] = Lowered{nullptr, m};
  }
  // Slot addresses are computed here, in the entry block, before the body.
  auto* start = llvm::BasicBlock::Create(context_, "group", function);
  slot_insert_point_ = b_.CreateBr(start);
  b_.SetInsertPoint(start);
  emit_block(body, Mask{}, TailCopy{});
  b_.CreateRetVoid();
  return (scratch_bytes_ + static_cast<uint64_t>(lanes_) - 1) / static_cast<uint64_t>(lanes_);
}

// --- slots ----------------------------------------------------------------------------------

LaneLoops::SlotRef LaneLoops::new_slot(ir::Type type, Operation* op) {
  auto slot = std::make_shared<Slot>();
  slot->types = e_.part_types(type, op);
  const llvm::DataLayout& layout = e_.module_->getDataLayout();
  llvm::IRBuilder<> at(slot_insert_point_);
  for (llvm::Type* t : slot->types) {
    scratch_bytes_ = align_up(scratch_bytes_, 64);
    slot->bases.push_back(at.CreateConstInBoundsGEP1_64(at.getInt8Ty(), scratch_, scratch_bytes_));
    scratch_bytes_ += layout.getTypeAllocSize(t) * static_cast<uint64_t>(lanes_);
  }
  return slot;
}

LaneLoops::SlotRef LaneLoops::new_flag_slot() {
  auto slot = std::make_shared<Slot>();
  slot->types = {b_.getInt8Ty()};
  llvm::IRBuilder<> at(slot_insert_point_);
  scratch_bytes_ = align_up(scratch_bytes_, 64);
  slot->bases.push_back(at.CreateConstInBoundsGEP1_64(at.getInt8Ty(), scratch_, scratch_bytes_));
  scratch_bytes_ += static_cast<uint64_t>(lanes_);
  return slot;
}

LaneLoops::SlotRef LaneLoops::slot_of(ir::Value* v) {
  auto it = slots_.find(v);
  if (it != slots_.end()) return it->second;
  Operation* owner = v->defining_op() ? v->defining_op() : kernel_;
  return slots_[v] = new_slot(v->type(), owner);
}

llvm::Value* LaneLoops::slot_address(const Slot& slot, size_t part, llvm::Value* lane) {
  return b_.CreateInBoundsGEP(slot.types[part], slot.bases[part], lane);
}

void LaneLoops::store_to_slot(const Slot& slot, ir::Value* v, llvm::Value* lane) {
  std::vector<llvm::Value*> parts = e_.flatten(v);
  for (size_t p = 0; p < parts.size(); ++p) b_.CreateStore(parts[p], slot_address(slot, p, lane));
  if (v->type().is(TypeKind::MemRef) && !slot.root) const_cast<Slot&>(slot).root = e_.root_of(v);
}

void LaneLoops::load_from_slot(const Slot& slot, ir::Value* v, llvm::Value* lane) {
  std::vector<llvm::Value*> parts;
  for (size_t p = 0; p < slot.types.size(); ++p) parts.push_back(b_.CreateLoad(slot.types[p], slot_address(slot, p, lane)));
  e_.bind(v, parts, slot.root);
}

// --- lane loops --------------------------------------------------------------------------------

// A nest of loops over the group's axes (x innermost: local ids are the
// loops' counters, so addresses are affine in them), their memory accesses
// marked parallel: lanes are independent between synchronisations (a race
// between lanes is undefined, as on the GPU), so the vectoriser needs no
// dependence checks. Allocas are left out: a lane's tile.alloc_local array
// used only in its loop is one array that the lanes take in turn.
llvm::Value* LaneLoops::lane_loop(const Mask& mask, const std::function<void()>& body, const Guard& guard,
                                  bool want_any) {
  internal_check(!in_lane_loop_, "codegen", "lane loops nested in lane loops");
  in_lane_loop_ = true;
  auto saved_values = e_.values_;
  size_t first_block = function_->size();
  llvm::MDNode* access_group = llvm::MDNode::getDistinct(context_, {});
  std::array<llvm::Value*, 3> ids{b_.getInt64(0), b_.getInt64(0), b_.getInt64(0)};
  std::vector<int> axes;
  for (int a = 2; a >= 0; --a)
    if (shape_[static_cast<size_t>(a)] > 1 || a == 0) axes.push_back(a);
  std::function<llvm::Value*(size_t, llvm::Value*)> level = [&](size_t depth, llvm::Value* any_in) -> llvm::Value* {
    int axis = axes[depth];
    llvm::BasicBlock* preheader = b_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(context_, "lanes", function_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* iv = b_.CreatePHI(b_.getInt64Ty(), 2, "lane");
    iv->addIncoming(b_.getInt64(0), preheader);
    llvm::PHINode* any = nullptr;
    if (want_any) {
      any = b_.CreatePHI(b_.getInt1Ty(), 2, "any");
      any->addIncoming(any_in, preheader);
    }
    ids[static_cast<size_t>(axis)] = iv;
    llvm::Value* any_out = any;
    if (depth + 1 < axes.size()) {
      any_out = level(depth + 1, any);
    } else {
      llvm::Value* lane = b_.CreateAdd(
          ids[0], b_.CreateMul(b_.getInt64(static_cast<uint64_t>(shape_[0])),
                               b_.CreateAdd(ids[1], b_.CreateMul(b_.getInt64(static_cast<uint64_t>(shape_[1])), ids[2]))));
      cpu_.lane_ = lane;
      cpu_.local_ids_ = ids;
      llvm::Value* active = lane_active(mask);
      if (guard) active = b_.CreateAnd(active, guard());
      if (want_any) any_out = b_.CreateOr(any, active);
      auto* constant = llvm::dyn_cast<llvm::ConstantInt>(active);
      if (constant && constant->isOne()) {
        body();
      } else {
        auto* work = llvm::BasicBlock::Create(context_, "lane.active", function_);
        auto* done = llvm::BasicBlock::Create(context_, "lane.next", function_);
        b_.CreateCondBr(active, work, done);
        b_.SetInsertPoint(work);
        body();
        b_.CreateBr(done);
        b_.SetInsertPoint(done);
      }
    }
    llvm::BasicBlock* latch = b_.GetInsertBlock();
    llvm::Value* next = b_.CreateAdd(iv, b_.getInt64(1));
    iv->addIncoming(next, latch);
    if (any) any->addIncoming(any_out, latch);
    auto* exit = llvm::BasicBlock::Create(context_, "lanes.end", function_);
    llvm::Instruction* branch = b_.CreateCondBr(
        b_.CreateICmpULT(next, b_.getInt64(static_cast<uint64_t>(shape_[static_cast<size_t>(axis)]))), header, exit);
    std::vector<llvm::Metadata*> parts = {
        nullptr, llvm::MDNode::get(context_, {llvm::MDString::get(context_, "llvm.loop.parallel_accesses"), access_group})};
    // The innermost loop is the one to vectorise: LLVM's full unrolling,
    // which runs first, would otherwise unroll a short x loop (16 lanes)
    // and leave the vectoriser the y loop, whose lanes are strided.
    if (depth + 1 == axes.size() && axes.size() > 1)
      parts.push_back(llvm::MDNode::get(context_, {llvm::MDString::get(context_, "llvm.loop.unroll.disable")}));
    llvm::MDNode* loop = llvm::MDNode::getDistinct(context_, parts);
    loop->replaceOperandWith(0, loop);
    branch->setMetadata(llvm::LLVMContext::MD_loop, loop);
    b_.SetInsertPoint(exit);
    return any_out;
  };
  llvm::Value* any = level(0, b_.getFalse());
  for (auto block = std::next(function_->begin(), static_cast<std::ptrdiff_t>(first_block)); block != function_->end();
       ++block)
    for (llvm::Instruction& instruction : *block) {
      llvm::Value* pointer = nullptr;
      if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&instruction); load && !load->isAtomic())
        pointer = load->getPointerOperand();
      if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&instruction); store && !store->isAtomic())
        pointer = store->getPointerOperand();
      if (pointer && !llvm::isa<llvm::AllocaInst>(llvm::getUnderlyingObject(pointer)))
        instruction.setMetadata(llvm::LLVMContext::MD_access_group, access_group);
    }
  cpu_.lane_ = nullptr;
  cpu_.local_ids_ = {};
  e_.values_ = std::move(saved_values);
  in_lane_loop_ = false;
  return want_any ? any : nullptr;
}

llvm::Value* LaneLoops::lane_active(const Mask& mask) {
  if (!mask.flags) return b_.getTrue();
  llvm::Value* flag = b_.CreateLoad(b_.getInt8Ty(), slot_address(*mask.flags, 0, cpu_.lane_));
  return b_.CreateICmpNE(flag, b_.getInt8(0));
}

// Gives `v` its LLVM value in the current lane loop.
void LaneLoops::materialize(ir::Value* v) {
  if (e_.values_.count(v)) return;
  switch (plan_.home(v)) {
    case Home::None: e_.values_[v] = Lowered{}; return;
    case Home::Storage: load_from_slot(*slot_of(v), v, cpu_.lane_); return;
    case Home::Remat: {
      Operation* def = v->defining_op();
      if (def->is(OpKind::AllocLocal)) return emit_lane_local(def);
      for (ir::Value* operand : def->operands()) materialize(operand);
      e_.emit(def);
      return;
    }
    case Home::LoopIv: {
      auto [count, step] = loop_ivs_.at(v);
      Operation* loop = v->owner_block()->parent_op();
      materialize(loop->operand(0));
      e_.set(v, b_.CreateAdd(e_.get(loop->operand(0)), b_.CreateMul(count, step)));
      return;
    }
    case Home::Scalar: internal_error("codegen", "a group value used before it was computed");
    case Home::Local: internal_error("codegen", "a lane value used outside its lane loop");
  }
}

// The values `op` (and what it contains) uses that come from outside the
// span, or that are recomputed per lane.
void LaneLoops::collect_inputs(Operation* op, const std::unordered_set<Operation*>& span,
                               std::vector<ir::Value*>& out, std::unordered_set<ir::Value*>& seen) {
  auto defined_in_span = [&](ir::Value* v) {
    Operation* def = v->defining_op() ? v->defining_op() : v->owner_block()->parent_op();
    for (; def && def != kernel_; def = def->parent_op())
      if (span.count(def)) return true;
    return false;
  };
  op->walk([&](Operation* inner) {
    for (ir::Value* v : inner->operands()) {
      if (!seen.insert(v).second) continue;
      Home h = plan_.home(v);
      if (h == Home::Scalar) continue;
      if (h == Home::Remat || h == Home::LoopIv || h == Home::None) {
        out.push_back(v);
        continue;
      }
      if (h == Home::Storage && !defined_in_span(v)) out.push_back(v);
    }
  });
}

// The first active lane's value of a group-uniform `v`, at group level;
// `any_active` (when asked) says whether any lane is active.
llvm::Value* LaneLoops::group_value(ir::Value* v, const Mask& mask, llvm::Value** any_active) {
  if (any_active) *any_active = b_.getTrue();
  if (plan_.home(v) == Home::Scalar) return e_.get(v);
  llvm::Value* lane = b_.getInt64(0);
  if (mask.flags) {
    // The first lane whose flag is set, or `lanes` when none is.
    llvm::BasicBlock* preheader = b_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(context_, "first.active", function_);
    auto* exit = llvm::BasicBlock::Create(context_, "first.active.end", function_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode* l = b_.CreatePHI(b_.getInt64Ty(), 2);
    l->addIncoming(b_.getInt64(0), preheader);
    llvm::Value* flag = b_.CreateLoad(b_.getInt8Ty(), slot_address(*mask.flags, 0, l));
    llvm::Value* next = b_.CreateAdd(l, b_.getInt64(1));
    l->addIncoming(next, header);
    llvm::Value* stop = b_.CreateOr(b_.CreateICmpNE(flag, b_.getInt8(0)),
                                    b_.CreateICmpEQ(next, b_.getInt64(static_cast<uint64_t>(lanes_))));
    b_.CreateCondBr(stop, exit, header);
    b_.SetInsertPoint(exit);
    llvm::Value* found = b_.CreateICmpNE(b_.CreateLoad(b_.getInt8Ty(), slot_address(*mask.flags, 0, l)), b_.getInt8(0));
    if (any_active) *any_active = found;
    lane = b_.CreateSelect(found, l, b_.getInt64(0));
  }
  return value_at_lane(v, lane);
}

// `v` as lane `lane` has it: its slot, or its recomputation with that lane's ids.
llvm::Value* LaneLoops::value_at_lane(ir::Value* v, llvm::Value* lane) {
  Home h = plan_.home(v);
  if (h == Home::Scalar) return e_.get(v);
  auto saved_values = e_.values_;
  llvm::Value* saved_lane = cpu_.lane_;
  auto saved_ids = cpu_.local_ids_;
  cpu_.lane_ = lane;
  cpu_.local_ids_ = {};
  if (h == Home::Storage) {
    e_.values_.erase(v);
    load_from_slot(*slot_of(v), v, lane);
  } else if (h == Home::Remat) {
    // Only group values and recomputed values feed a recomputation.
    std::function<void(ir::Value*)> drop = [&](ir::Value* x) {
      if (plan_.home(x) != Home::Remat) return;
      e_.values_.erase(x);
      for (ir::Value* operand : x->defining_op()->operands()) drop(operand);
    };
    drop(v);
    materialize(v);
  } else {
    internal_error("codegen", "a value needed from another lane has no slot");
  }
  llvm::Value* result = e_.get(v);
  e_.values_ = std::move(saved_values);
  cpu_.lane_ = saved_lane;
  cpu_.local_ids_ = saved_ids;
  return result;
}

// --- blocks ----------------------------------------------------------------------------------------

// The block's operations, span by span; `tail` is copied at the end of the
// last span (or in a loop of its own after a group-level operation).
void LaneLoops::emit_block(ir::Block& block, const Mask& mask, const TailCopy& tail) {
  std::vector<Operation*> span;
  for (Operation* op : block) {
    if (op == block.terminator()) break;
    if (plan_.group_level(op)) {
      emit_span(span, mask, nullptr);
      span.clear();
      emit_group_op(op, mask);
    } else {
      span.push_back(op);
    }
  }
  emit_span(span, mask, &tail);
}

void LaneLoops::emit_span(const std::vector<Operation*>& ops, const Mask& mask, const TailCopy* tail) {
  std::vector<Operation*> lane_ops;
  for (Operation* op : ops) {
    bool scalar = op->num_results() > 0, remat = op->num_results() > 0;
    for (ir::Value* r : op->results()) {
      scalar = scalar && plan_.home(r) == Home::Scalar;
      remat = remat && plan_.home(r) == Home::Remat;
    }
    if (scalar) {
      e_.set_debug_location(op);
      e_.emit(op);
    } else if (!remat) {
      lane_ops.push_back(op);
    }
  }
  if (lane_ops.empty() && (!tail || tail->copies.empty())) return;
  std::unordered_set<Operation*> span(ops.begin(), ops.end());
  lane_loop(mask, [&] { span_body(lane_ops, span, tail); });
}

void LaneLoops::span_body(const std::vector<Operation*>& lane_ops, const std::unordered_set<Operation*>& span,
                          const TailCopy* tail) {
  std::vector<ir::Value*> inputs;
  std::unordered_set<ir::Value*> seen;
  for (Operation* op : lane_ops) collect_inputs(op, span, inputs, seen);
  for (ir::Value* v : inputs) materialize(v);
  for (Operation* op : lane_ops) {
    e_.set_debug_location(op);
    e_.emit(op);
    for (ir::Value* r : op->results())
      if (plan_.home(r) == Home::Storage) store_to_slot(*slot_of(r), r, cpu_.lane_);
  }
  if (tail) tail_copy(*tail);
}

// Copies the tail's values into their slots: every value is read before
// any slot is written (`a, b = b, a` swaps).
void LaneLoops::tail_copy(const TailCopy& tail) {
  for (auto& [value, slot] : tail.copies) materialize(value);
  std::vector<std::vector<llvm::Value*>> parts;
  for (auto& [value, slot] : tail.copies) parts.push_back(e_.flatten(value));
  for (size_t i = 0; i < tail.copies.size(); ++i) {
    Slot& slot = *tail.copies[i].second;
    for (size_t p = 0; p < parts[i].size(); ++p) b_.CreateStore(parts[i][p], slot_address(slot, p, cpu_.lane_));
    if (!slot.root && tail.copies[i].first->type().is(TypeKind::MemRef)) slot.root = e_.root_of(tail.copies[i].first);
  }
}

// A lane's tile.alloc_local array that lives past its lane loop: one array
// per lane in the scratch block (the lanes' arrays one after another, each
// 64-byte aligned), its view recomputed in each lane loop from the lane.
void LaneLoops::emit_lane_local(Operation* op) {
  Type m = op->result()->type();
  int64_t count = 1;
  for (int64_t extent : m.shape()) count *= extent;
  const llvm::DataLayout& layout = e_.module_->getDataLayout();
  uint64_t bytes = align_up(layout.getTypeAllocSize(e_.element_type(m, op)) * static_cast<uint64_t>(count), 64);
  llvm::Value*& arrays = lane_arrays_[op];
  if (!arrays) {
    scratch_bytes_ = align_up(scratch_bytes_, 64);
    llvm::IRBuilder<> at(slot_insert_point_);
    arrays = at.CreateConstInBoundsGEP1_64(at.getInt8Ty(), scratch_, scratch_bytes_);
    scratch_bytes_ += bytes * static_cast<uint64_t>(lanes_);
  }
  auto desc = std::make_shared<MemRef>();
  desc->base = b_.CreateInBoundsGEP(b_.getInt8Ty(), arrays, b_.CreateMul(cpu_.lane_, b_.getInt64(bytes)));
  e_.describe_static_buffer(*desc, m, m.rank() ? m.shape().back() : 1);
  e_.values_[op->result()] = Lowered{nullptr, desc};
}

// --- group-level operations ---------------------------------------------------------------------------

void LaneLoops::emit_group_op(Operation* op, const Mask& mask) {
  switch (op->kind()) {
    case OpKind::Barrier: return;  // the lane loop before it ran every lane up to it
    case OpKind::Shuffle: return emit_shuffle(op, mask);
    case OpKind::WarpReduce: return emit_warp_reduce(op, mask);
    case OpKind::If: return emit_if(op, mask);
    case OpKind::For: return plan_.lifted_varying(op) ? emit_lifted_varying_for(op, mask) : emit_for(op, mask);
    case OpKind::While: return emit_while(op, mask);
    default: internal_error("codegen", "'" + std::string(op->name()) + "' at group level");
  }
}

namespace {

std::vector<llvm::PHINode*> phis_for(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& parts,
                                     llvm::BasicBlock* from) {
  std::vector<llvm::PHINode*> phis;
  for (llvm::Value* part : parts) {
    llvm::PHINode* phi = b.CreatePHI(part->getType(), 2);
    phi->addIncoming(part, from);
    phis.push_back(phi);
  }
  return phis;
}

std::vector<llvm::Value*> as_values(const std::vector<llvm::PHINode*>& phis) {
  return std::vector<llvm::Value*>(phis.begin(), phis.end());
}

ir::Value* yielded(ir::Region& region, unsigned i) {
  if (region.empty() || !region.front().terminator()) return nullptr;
  return region.front().terminator()->operand(i);
}

}  // namespace

void LaneLoops::emit_if(Operation* op, const Mask& mask) {
  // Result slots first: the branches' tails write them.
  std::vector<TailCopy> tails(2);
  for (unsigned i = 0; i < op->num_results(); ++i) {
    if (plan_.home(op->result(i)) != Home::Storage) continue;
    SlotRef slot = slot_of(op->result(i));
    for (unsigned r = 0; r < 2; ++r)
      if (ir::Value* y = yielded(op->region(r), i)) tails[r].copies.push_back({y, slot});
  }
  ir::Value* condition = op->operand(0);
  if (plan_.uniformity().decision(op) != ir::Uniformity::Uniform) {
    // Lanes of the group disagree (whole warps, around warp operations):
    // each branch runs for the lanes that take it.
    std::array<SlotRef, 2> flags{new_flag_slot(), new_flag_slot()};
    lane_loop(Mask{}, [&] {
      llvm::Value* active = lane_active(mask);
      for (const SlotRef& f : flags) b_.CreateStore(b_.getInt8(0), slot_address(*f, 0, cpu_.lane_));
      auto* take = llvm::BasicBlock::Create(context_, "mask.active", function_);
      auto* done = llvm::BasicBlock::Create(context_, "mask.done", function_);
      b_.CreateCondBr(active, take, done);
      b_.SetInsertPoint(take);
      materialize(condition);
      llvm::Value* c = e_.get(condition);
      b_.CreateStore(b_.CreateZExt(c, b_.getInt8Ty()), slot_address(*flags[0], 0, cpu_.lane_));
      b_.CreateStore(b_.CreateZExt(b_.CreateNot(c), b_.getInt8Ty()), slot_address(*flags[1], 0, cpu_.lane_));
      b_.CreateBr(done);
      b_.SetInsertPoint(done);
    });
    for (unsigned r = 0; r < 2; ++r)
      if (!op->region(r).empty()) emit_block(op->region(r).front(), Mask{flags[r]}, tails[r]);
    for (unsigned i = 0; i < op->num_results(); ++i)
      if (plan_.home(op->result(i)) == Home::None) e_.values_[op->result(i)] = Lowered{};
    return;
  }
  llvm::Value* c = group_value(condition, mask);
  auto* then_block = llvm::BasicBlock::Create(context_, "group.then", function_);
  auto* else_block = llvm::BasicBlock::Create(context_, "group.else", function_);
  auto* merge = llvm::BasicBlock::Create(context_, "group.endif", function_);
  b_.CreateCondBr(c, then_block, else_block);
  std::array<std::vector<std::vector<llvm::Value*>>, 2> scalars;
  std::array<llvm::BasicBlock*, 2> ends{};
  for (unsigned r = 0; r < 2; ++r) {
    b_.SetInsertPoint(r == 0 ? then_block : else_block);
    if (!op->region(r).empty()) emit_block(op->region(r).front(), mask, tails[r]);
    for (unsigned i = 0; i < op->num_results(); ++i)
      if (plan_.home(op->result(i)) == Home::Scalar) scalars[r].push_back(e_.flatten(yielded(op->region(r), i)));
    ends[r] = b_.GetInsertBlock();
    b_.CreateBr(merge);
  }
  b_.SetInsertPoint(merge);
  size_t k = 0;
  for (unsigned i = 0; i < op->num_results(); ++i) {
    ir::Value* result = op->result(i);
    if (plan_.home(result) == Home::None) e_.values_[result] = Lowered{};
    if (plan_.home(result) != Home::Scalar) continue;
    std::vector<llvm::Value*> parts;
    for (size_t p = 0; p < scalars[0][k].size(); ++p) {
      llvm::PHINode* phi = b_.CreatePHI(scalars[0][k][p]->getType(), 2);
      phi->addIncoming(scalars[0][k][p], ends[0]);
      phi->addIncoming(scalars[1][k][p], ends[1]);
      parts.push_back(phi);
    }
    e_.bind(result, parts, e_.root_of(yielded(op->region(0), i)));
    ++k;
  }
}

// A loop at group level: its trip count is the group's; loop-carried values
// are group values or slots per lane.
void LaneLoops::emit_for(Operation* op, const Mask& mask) {
  ir::Block& body = op->region(0).front();
  llvm::Value *any_lower = nullptr, *any_upper = nullptr, *any_step = nullptr;
  llvm::Value* lower = group_value(op->operand(0), mask, &any_lower);
  llvm::Value* upper = group_value(op->operand(1), mask, &any_upper);
  llvm::Value* step = group_value(op->operand(2), mask, &any_step);
  unsigned carried = op->num_results();
  // Slots of the loop-carried values, given their initial values.
  TailCopy init;
  for (unsigned i = 0; i < carried; ++i) {
    ir::Value* arg = body.argument(i + 1);
    if (plan_.home(arg) != Home::Storage) continue;
    SlotRef slot = slot_of(arg);
    slots_[op->result(i)] = slot;
    init.copies.push_back({op->operand(3 + i), slot});
  }
  if (!init.copies.empty()) lane_loop(mask, [&] { tail_copy(init); });
  llvm::BasicBlock* preheader = b_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(context_, "group.for", function_);
  auto* body_block = llvm::BasicBlock::Create(context_, "group.for.body", function_);
  auto* exit = llvm::BasicBlock::Create(context_, "group.for.end", function_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* iv = b_.CreatePHI(lower->getType(), 2);
  iv->addIncoming(lower, preheader);
  std::vector<std::vector<llvm::PHINode*>> phis(carried);
  for (unsigned i = 0; i < carried; ++i) {
    ir::Value* arg = body.argument(i + 1);
    if (plan_.home(arg) == Home::None) e_.values_[arg] = e_.values_[op->result(i)] = Lowered{};
    if (plan_.home(arg) != Home::Scalar) continue;
    phis[i] = phis_for(b_, e_.flatten(op->operand(3 + i)), preheader);
    e_.bind(arg, as_values(phis[i]), e_.root_of(op->operand(3 + i)));
  }
  llvm::Value* go = b_.CreateICmpSLT(iv, upper);
  go = b_.CreateAnd(go, b_.CreateAnd(any_lower, b_.CreateAnd(any_upper, any_step)));
  b_.CreateCondBr(go, body_block, exit);
  b_.SetInsertPoint(body_block);
  e_.set(body.argument(0), iv);
  TailCopy tail;
  Operation* yield = body.terminator();
  for (unsigned i = 0; i < carried; ++i)
    if (plan_.home(body.argument(i + 1)) == Home::Storage) tail.copies.push_back({yield->operand(i), slots_.at(body.argument(i + 1))});
  emit_block(body, mask, tail);
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  for (unsigned i = 0; i < carried; ++i) {
    if (phis[i].empty()) continue;
    std::vector<llvm::Value*> parts = e_.flatten(yield->operand(i));
    for (size_t p = 0; p < parts.size(); ++p) phis[i][p]->addIncoming(parts[p], latch);
  }
  iv->addIncoming(b_.CreateAdd(iv, step), latch);
  b_.CreateBr(header);
  b_.SetInsertPoint(exit);
  for (unsigned i = 0; i < carried; ++i)
    if (!phis[i].empty()) e_.bind(op->result(i), as_values(phis[i]), e_.root_of(op->operand(3 + i)));
}

// A lifted loop whose start differs between lanes (a grid-stride loop):
// iteration t of lane l has the induction variable start(l) + t * step and
// runs while every iteration before it did (a flag per lane); the loop over
// t goes on while any lane runs.
void LaneLoops::emit_lifted_varying_for(Operation* op, const Mask& mask) {
  ir::Block& body = op->region(0).front();
  ir::Value* iv_value = body.argument(0);
  llvm::Value* upper = group_value(op->operand(1), mask);
  llvm::Value* step = group_value(op->operand(2), mask);
  SlotRef running = new_flag_slot();
  unsigned carried = op->num_results();
  TailCopy init;
  for (unsigned i = 0; i < carried; ++i) {
    SlotRef slot = slot_of(body.argument(i + 1));
    slots_[op->result(i)] = slot;
    init.copies.push_back({op->operand(3 + i), slot});
  }
  lane_loop(Mask{}, [&] {
    llvm::Value* active = lane_active(mask);
    b_.CreateStore(b_.CreateZExt(active, b_.getInt8Ty()), slot_address(*running, 0, cpu_.lane_));
    auto* take = llvm::BasicBlock::Create(context_, "init.active", function_);
    auto* done = llvm::BasicBlock::Create(context_, "init.done", function_);
    b_.CreateCondBr(active, take, done);
    b_.SetInsertPoint(take);
    tail_copy(init);
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  });
  llvm::BasicBlock* preheader = b_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(context_, "group.iterations", function_);
  auto* exit = llvm::BasicBlock::Create(context_, "group.iterations.end", function_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* count = b_.CreatePHI(upper->getType(), 2, "iteration");
  count->addIncoming(llvm::ConstantInt::get(upper->getType(), 0), preheader);
  loop_ivs_[iv_value] = {count, step};
  // The body's group values, then its one span.
  std::vector<Operation*> ops;
  for (Operation* inner : body)
    if (inner != body.terminator()) ops.push_back(inner);
  std::vector<Operation*> lane_ops;
  for (Operation* inner : ops) {
    bool scalar = inner->num_results() > 0, remat = inner->num_results() > 0;
    for (ir::Value* r : inner->results()) {
      scalar = scalar && plan_.home(r) == Home::Scalar;
      remat = remat && plan_.home(r) == Home::Remat;
    }
    if (scalar)
      e_.emit(inner);
    else if (!remat)
      lane_ops.push_back(inner);
  }
  std::unordered_set<Operation*> span(ops.begin(), ops.end());
  TailCopy tail;
  for (unsigned i = 0; i < carried; ++i) tail.copies.push_back({body.terminator()->operand(i), slots_.at(body.argument(i + 1))});
  Guard guard = [&] {
    materialize(iv_value);
    llvm::Value* flag = slot_address(*running, 0, cpu_.lane_);
    llvm::Value* was = b_.CreateICmpNE(b_.CreateLoad(b_.getInt8Ty(), flag), b_.getInt8(0));
    llvm::Value* runs = b_.CreateAnd(was, b_.CreateICmpSLT(e_.get(iv_value), upper));
    b_.CreateStore(b_.CreateZExt(runs, b_.getInt8Ty()), flag);
    return runs;
  };
  llvm::Value* any = lane_loop(Mask{}, [&] { span_body(lane_ops, span, &tail); }, guard, true);
  count->addIncoming(b_.CreateAdd(count, llvm::ConstantInt::get(count->getType(), 1)), b_.GetInsertBlock());
  b_.CreateCondBr(any, header, exit);
  b_.SetInsertPoint(exit);
  loop_ivs_.erase(iv_value);
}

void LaneLoops::emit_while(Operation* op, const Mask& mask) {
  ir::Block& before = op->region(0).front();
  ir::Block& after = op->region(1).front();
  Operation* condition = before.terminator();
  Operation* yield = after.terminator();
  unsigned carried = before.num_arguments();
  TailCopy init;
  for (unsigned i = 0; i < carried; ++i)
    if (plan_.home(before.argument(i)) == Home::Storage) init.copies.push_back({op->operand(i), slot_of(before.argument(i))});
  for (unsigned i = 0; i < after.num_arguments(); ++i)
    if (plan_.home(after.argument(i)) == Home::Storage) slots_[op->result(i)] = slot_of(after.argument(i));
  if (!init.copies.empty()) lane_loop(mask, [&] { tail_copy(init); });
  llvm::BasicBlock* preheader = b_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(context_, "group.while", function_);
  auto* body_block = llvm::BasicBlock::Create(context_, "group.while.body", function_);
  auto* exit = llvm::BasicBlock::Create(context_, "group.while.end", function_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  std::vector<std::vector<llvm::PHINode*>> phis(carried);
  for (unsigned i = 0; i < carried; ++i) {
    ir::Value* arg = before.argument(i);
    if (plan_.home(arg) == Home::None) e_.values_[arg] = Lowered{};
    if (plan_.home(arg) != Home::Scalar) continue;
    phis[i] = phis_for(b_, e_.flatten(op->operand(i)), preheader);
    e_.bind(arg, as_values(phis[i]), e_.root_of(op->operand(i)));
  }
  TailCopy forward;
  for (unsigned i = 0; i < after.num_arguments(); ++i)
    if (plan_.home(after.argument(i)) == Home::Storage) forward.copies.push_back({condition->operand(i + 1), slots_.at(after.argument(i))});
  emit_block(before, mask, forward);
  llvm::Value* any = nullptr;
  llvm::Value* go = group_value(condition->operand(0), mask, &any);
  go = b_.CreateAnd(go, any);
  for (unsigned i = 0; i < after.num_arguments(); ++i) {
    ir::Value* arg = after.argument(i);
    if (plan_.home(arg) == Home::None) e_.values_[arg] = e_.values_[op->result(i)] = Lowered{};
    if (plan_.home(arg) != Home::Scalar) continue;
    ir::Value* forwarded = condition->operand(i + 1);
    e_.bind(arg, e_.flatten(forwarded), e_.root_of(forwarded));
    e_.bind(op->result(i), e_.flatten(forwarded), e_.root_of(forwarded));
  }
  b_.CreateCondBr(go, body_block, exit);
  b_.SetInsertPoint(body_block);
  TailCopy back;
  for (unsigned i = 0; i < carried; ++i)
    if (plan_.home(before.argument(i)) == Home::Storage) back.copies.push_back({yield->operand(i), slots_.at(before.argument(i))});
  emit_block(after, mask, back);
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  for (unsigned i = 0; i < carried; ++i) {
    if (phis[i].empty()) continue;
    std::vector<llvm::Value*> parts = e_.flatten(yield->operand(i));
    for (size_t p = 0; p < parts.size(); ++p) phis[i][p]->addIncoming(parts[p], latch);
  }
  b_.CreateBr(header);
  b_.SetInsertPoint(exit);
}

// A warp shuffle across the lanes' slots: lane l reads the source lane's
// value by PTX's rules (Emitter::shuffle_source); a source outside the
// group (a partial warp) gives the lane's own value.
void LaneLoops::emit_shuffle(Operation* op, const Mask& mask) {
  ir::Value* value = op->operand(0);
  if (plan_.home(op->result()) == Home::Scalar) {
    e_.values_[op->result()] = e_.values_.at(value);
    return;
  }
  SlotRef result = slot_of(op->result());
  lane_loop(mask, [&] {
    materialize(op->operand(1));
    llvm::Value* lane = cpu_.lane_;
    llvm::Value* source =
        e_.shuffle_source(b_.CreateAnd(lane, b_.getInt64(31)), e_.get(op->operand(1)), ir::shuffle_mode(*op));
    llvm::Value* global = b_.CreateOr(b_.CreateAnd(lane, b_.getInt64(~uint64_t{31})), source);
    global = b_.CreateSelect(b_.CreateICmpULT(global, b_.getInt64(static_cast<uint64_t>(lanes_))), global, lane);
    llvm::Value* v = value_at_lane(value, global);
    b_.CreateStore(v, slot_address(*result, 0, lane));
  });
}

// A warp reduction across the lanes' slots. Full warps: the GPU's butterfly
// (five xor exchanges, combine(own, other)), so results are the same bits.
// The last warp of a group whose lane count is not a multiple of 32: the
// tree of the GPU's partial-warp reduction (Emitter::emit_warp_reduce):
// lane j adds lane j + offset for offsets 16, 8, 4, 2, 1 while that lane
// exists, and every lane takes lane 0's result.
void LaneLoops::emit_warp_reduce(Operation* op, const Mask& mask) {
  e_.reject_narrow_codes(op);
  ir::WarpReduceKind kind = ir::warp_reduce_kind(*op);
  ir::Value* operand = op->operand(0);
  Type t = operand->type();
  SlotRef input = new_slot(t, op);
  SlotRef a = input;
  lane_loop(mask, [&] {
    materialize(operand);
    b_.CreateStore(e_.get(operand), slot_address(*input, 0, cpu_.lane_));
  });
  int64_t full_lanes = lanes_ / 32 * 32;
  for (int offset = 16; offset > 0 && full_lanes > 0; offset /= 2) {
    SlotRef next = new_slot(t, op);
    lane_loop(mask, [&] {
      llvm::Value* lane = cpu_.lane_;
      llvm::Value* partner = b_.CreateXor(lane, b_.getInt64(static_cast<uint64_t>(offset)));
      partner = b_.CreateSelect(b_.CreateICmpULT(partner, b_.getInt64(static_cast<uint64_t>(lanes_))), partner, lane);
      llvm::Value* own = b_.CreateLoad(a->types[0], slot_address(*a, 0, lane));
      llvm::Value* other = b_.CreateLoad(a->types[0], slot_address(*a, 0, partner));
      b_.CreateStore(e_.combine(kind, own, other, t), slot_address(*next, 0, lane));
    });
    a = next;
  }
  slots_[op->result()] = a;
  int64_t partial = lanes_ % 32;
  if (partial == 0) return;
  // The partial warp, at group level: its lanes' values, the tree, the result for each.
  llvm::Value* base = b_.getInt64(static_cast<uint64_t>(full_lanes));
  auto* run = llvm::BasicBlock::Create(context_, "partial.warp", function_);
  auto* done = llvm::BasicBlock::Create(context_, "partial.warp.end", function_);
  llvm::Value* active = b_.getTrue();
  if (mask.flags) active = b_.CreateICmpNE(b_.CreateLoad(b_.getInt8Ty(), slot_address(*mask.flags, 0, base)), b_.getInt8(0));
  b_.CreateCondBr(active, run, done);
  b_.SetInsertPoint(run);
  std::vector<llvm::Value*> v;
  for (int64_t j = 0; j < partial; ++j)
    v.push_back(b_.CreateLoad(input->types[0], slot_address(*input, 0, b_.getInt64(static_cast<uint64_t>(full_lanes + j)))));
  for (int64_t offset = 16; offset > 0; offset /= 2)
    for (int64_t j = 0; j + offset < partial; ++j)
      v[static_cast<size_t>(j)] = e_.combine(kind, v[static_cast<size_t>(j)], v[static_cast<size_t>(j + offset)], t);
  for (int64_t j = 0; j < partial; ++j)
    b_.CreateStore(v[0], slot_address(*a, 0, b_.getInt64(static_cast<uint64_t>(full_lanes + j))));
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

}  // namespace tessera::codegen::emitter
