// Structured control flow (emitter.h): scf.if, scf.for and scf.while become
// basic blocks with phis; memrefs cross them as their flattened parts.
#include "codegen/emitter/emitter.h"

namespace tessera::codegen::emitter {

void Emitter::emit_if(Operation* op) {
  llvm::Value* c = get(op->operand(0));
  auto* then_block = llvm::BasicBlock::Create(context_, "if.then", current_function_);
  auto* else_block = llvm::BasicBlock::Create(context_, "if.else", current_function_);
  auto* merge = llvm::BasicBlock::Create(context_, "if.end", current_function_);
  builder_.CreateCondBr(c, then_block, else_block);
  std::vector<std::vector<std::vector<llvm::Value*>>> yielded(2);
  std::vector<llvm::BasicBlock*> ends(2);
  for (unsigned r = 0; r < 2; ++r) {
    builder_.SetInsertPoint(r == 0 ? then_block : else_block);
    yielded[r] = emit_region(op->region(r));
    ends[r] = builder_.GetInsertBlock();
    builder_.CreateBr(merge);
  }
  builder_.SetInsertPoint(merge);
  for (unsigned i = 0; i < op->num_results(); ++i) {
    std::vector<llvm::Value*> parts;
    for (size_t p = 0; p < yielded[0][i].size(); ++p) {
      llvm::PHINode* phi = builder_.CreatePHI(yielded[0][i][p]->getType(), 2);
      phi->addIncoming(yielded[0][i][p], ends[0]);
      phi->addIncoming(yielded[1][i][p], ends[1]);
      parts.push_back(phi);
    }
    Type root = op->region(0).front().terminator() ? root_of(op->region(0).front().terminator()->operand(i)) : Type{};
    bind(op->result(i), parts, root);
  }
}

void Emitter::emit_for(Operation* op) {
  llvm::Value* lower = get(op->operand(0));
  llvm::Value* upper = get(op->operand(1));
  llvm::Value* step = get(op->operand(2));
  ir::Block& body = op->region(0).front();
  llvm::BasicBlock* preheader = builder_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(context_, "for.header", current_function_);
  auto* body_block = llvm::BasicBlock::Create(context_, "for.body", current_function_);
  auto* exit = llvm::BasicBlock::Create(context_, "for.end", current_function_);
  builder_.CreateBr(header);
  builder_.SetInsertPoint(header);
  llvm::PHINode* iv = builder_.CreatePHI(lower->getType(), 2);
  iv->addIncoming(lower, preheader);
  set(body.argument(0), iv);
  std::vector<std::vector<llvm::PHINode*>> phis;
  for (unsigned i = 3; i < op->num_operands(); ++i) {
    std::vector<llvm::Value*> init = flatten(op->operand(i));
    std::vector<llvm::PHINode*> list;
    std::vector<llvm::Value*> parts;
    for (llvm::Value* part : init) {
      llvm::PHINode* phi = builder_.CreatePHI(part->getType(), 2);
      phi->addIncoming(part, preheader);
      list.push_back(phi);
      parts.push_back(phi);
    }
    phis.push_back(list);
    bind(body.argument(i - 2), parts, root_of(op->operand(i)));
  }
  builder_.CreateCondBr(builder_.CreateICmpSLT(iv, upper), body_block, exit);
  builder_.SetInsertPoint(body_block);
  auto yielded = emit_region(op->region(0));
  llvm::Value* next = builder_.CreateAdd(iv, step);
  llvm::BasicBlock* latch = builder_.GetInsertBlock();
  builder_.CreateBr(header);
  iv->addIncoming(next, latch);
  for (size_t i = 0; i < phis.size(); ++i)
    for (size_t p = 0; p < phis[i].size(); ++p) phis[i][p]->addIncoming(yielded[i][p], latch);
  builder_.SetInsertPoint(exit);
  for (unsigned i = 0; i < op->num_results(); ++i) {
    std::vector<llvm::Value*> parts(phis[i].begin(), phis[i].end());
    bind(op->result(i), parts, root_of(op->operand(i + 3)));
  }
}

void Emitter::emit_while(Operation* op) {
  ir::Block& before = op->region(0).front();
  ir::Block& after = op->region(1).front();
  llvm::BasicBlock* preheader = builder_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(context_, "while.cond", current_function_);
  auto* body_block = llvm::BasicBlock::Create(context_, "while.body", current_function_);
  auto* exit = llvm::BasicBlock::Create(context_, "while.end", current_function_);
  builder_.CreateBr(header);
  builder_.SetInsertPoint(header);
  std::vector<std::vector<llvm::PHINode*>> phis;
  for (unsigned i = 0; i < op->num_operands(); ++i) {
    std::vector<llvm::PHINode*> list;
    std::vector<llvm::Value*> parts;
    for (llvm::Value* part : flatten(op->operand(i))) {
      llvm::PHINode* phi = builder_.CreatePHI(part->getType(), 2);
      phi->addIncoming(part, preheader);
      list.push_back(phi);
      parts.push_back(phi);
    }
    phis.push_back(list);
    bind(before.argument(i), parts, root_of(op->operand(i)));
  }
  auto forwarded = emit_region(op->region(0));  // [condition, values...]
  llvm::Value* c = forwarded.at(0).at(0);
  builder_.CreateCondBr(c, body_block, exit);
  for (unsigned i = 0; i < after.num_arguments(); ++i) {
    Type root = root_of(before.terminator()->operand(i + 1));
    bind(after.argument(i), forwarded.at(i + 1), root);
    bind(op->result(i), forwarded.at(i + 1), root);
  }
  builder_.SetInsertPoint(body_block);
  auto yielded = emit_region(op->region(1));
  llvm::BasicBlock* latch = builder_.GetInsertBlock();
  builder_.CreateBr(header);
  for (size_t i = 0; i < phis.size(); ++i)
    for (size_t p = 0; p < phis[i].size(); ++p) phis[i][p]->addIncoming(yielded[i][p], latch);
  builder_.SetInsertPoint(exit);
}

}  // namespace tessera::codegen::emitter
