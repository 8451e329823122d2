// The rules of the host operations: the code around kernels in @jit
// functions and programs after bufferization (verifier_rules.h;
// docs/ir/host.md). Buffers are memrefs in global memory.
#include <fmt/format.h>

#include "ir/core/verifier_rules.h"

namespace tessera::ir::verification {

namespace {

bool is_buffer(Type t) { return t.is(TypeKind::MemRef) && t.space() == MemorySpace::Global; }

size_t dynamic_dims(Type t) {
  size_t n = 0;
  for (int64_t d : t.shape()) n += d == kDynamic ? 1 : 0;
  return n;
}

}  // namespace

// 'host.alloc': a new contiguous row-major buffer; one index operand per `?`.
void Verifier::verify_host_alloc(Operation* op) {
  if (!results(op, 1)) return;
  Type t = op->result()->type();
  if (!is_buffer(t)) return void(error(op, "result must be a memref in global memory"));
  if (op->num_operands() != dynamic_dims(t))
    return void(error(op, fmt::format("takes one index operand per '?' of its result ({}), got {}", dynamic_dims(t),
                                      op->num_operands())));
  for (Value* v : op->operands())
    if (!v->type().is_index()) return void(error(op, "its operands must be index values"));
}

// 'host.free': gives a buffer of host.alloc back.
void Verifier::verify_host_free(Operation* op) {
  if (!shape(op, 1, 0)) return;
  if (!is_buffer(op->operand(0)->type())) error(op, "operand must be a memref in global memory");
}

// 'host.view %m, %offset, %sizes..., %strides...': a view of %m's memory
// starting `offset` elements after its first element, with these sizes and
// strides (in elements); the result's static dims must equal the sizes given.
void Verifier::verify_host_view(Operation* op) {
  if (!results(op, 1) || !min_operands(op, 2)) return;
  Type source = op->operand(0)->type(), t = op->result()->type();
  if (!is_buffer(source) || !is_buffer(t)) return void(error(op, "views a memref in global memory as another"));
  if (source.scalar() != t.scalar()) return void(error(op, "cannot change the element type"));
  if (op->num_operands() != 2 + 2 * t.rank())
    return void(error(op, fmt::format("takes the memref, an offset, then {} sizes and {} strides", t.rank(), t.rank())));
  for (unsigned i = 1; i < op->num_operands(); ++i)
    if (!op->operand(i)->type().is_index()) return void(error(op, "its offset, sizes and strides must be index values"));
}

// 'host.arena_buffer %arena {offset = N}': a contiguous buffer of its
// result's static shape N bytes into %arena, an i8 buffer of static size
// (buffer-plan); the buffer must lie inside the arena.
void Verifier::verify_host_arena_buffer(Operation* op) {
  if (!shape(op, 1, 1)) return;
  Type arena = op->operand(0)->type(), t = op->result()->type();
  if (!is_buffer(arena) || arena.scalar() != ScalarType::I8 || arena.rank() != 1 || arena.shape()[0] == kDynamic)
    return void(error(op, "operand must be an arena: a memref of i8 in global memory with a static size"));
  if (!is_buffer(t) || dynamic_dims(t) != 0) return void(error(op, "result must be a memref in global memory with a static shape"));
  Attribute offset = attr(op, "offset", AttributeKind::Integer);
  if (!offset) return;
  int64_t count = 1;
  for (int64_t d : t.shape()) count *= d;
  int64_t bytes = (count * scalar_info(t.scalar()).storage_bits + 7) / 8;
  if (offset.int_value() < 0 || offset.int_value() + bytes > arena.shape()[0])
    error(op, fmt::format("bytes [{}, {}) are outside the arena of {} bytes", offset.int_value(),
                          offset.int_value() + bytes, arena.shape()[0]));
}

// 'host.stride': a memref's stride along `axis`, in elements.
void Verifier::verify_host_stride(Operation* op) {
  if (!shape(op, 1, 1)) return;
  if (!op->operand(0)->type().is(TypeKind::MemRef)) return void(error(op, "operand must be a memref"));
  axis_attr(op, static_cast<int64_t>(op->operand(0)->type().rank()));
  if (!op->result()->type().is_index()) error(op, "result must be index");
}

// 'host.launch %g0, %g1, %g2, args... {kernel = @k}': runs kernel @k over
// the grid with the arguments in its parameter order.
void Verifier::verify_host_launch(Operation* op) {
  unsigned grids = launch_grid_operand_count(op);
  if (!results(op, 0) || !min_operands(op, grids)) return;
  for (unsigned i = 0; i < grids; ++i)
    if (!op->operand(i)->type().is_index()) return void(error(op, "the grid sizes must be index values"));
  if (op->has_attr("variants") && !verify_tuned_launch(op)) return;
  Attribute kernel = attr(op, "kernel", AttributeKind::Symbol);
  if (!kernel) return;
  Operation* module = op->enclosing(OpKind::Module);
  Operation* callee = module ? lookup_function(module, kernel.string_value()) : nullptr;
  if (!module) return;
  if (!callee || !callee->has_attr("kernel"))
    return void(error(op, fmt::format("launches '@{}', which is not a kernel of the module", kernel.string_value())));
  Type fn = callee->attr("function_type").type();
  if (fn.num_inputs() != op->num_operands() - grids)
    return void(error(op, fmt::format("passes {} arguments to '@{}', which takes {}", op->num_operands() - grids,
                                      kernel.string_value(), fn.num_inputs())));
  for (unsigned i = 0; i < fn.num_inputs(); ++i) {
    Type want = fn.input(i), got = op->operand(grids + i)->type();
    bool ok = want.is(TypeKind::MemRef) ? got.is(TypeKind::MemRef) && got.scalar() == want.scalar() &&
                                              got.rank() == want.rank()
                                        : got == want;
    if (!ok)
      return void(error(op, fmt::format("argument #{} of '@{}' is {}, expected {}", i, kernel.string_value(),
                                        got.str(), want.str())));
  }
}

// A tuned launch (docs/ir/host.md): `variants` (kernels of the module with
// the same signature), `points` (one string each), `tune_of` (the tuner's
// kernel name), `tune_default` (the index of the variant `kernel` names).
bool Verifier::verify_tuned_launch(Operation* op) {
  Attribute variants = attr(op, "variants", AttributeKind::Array);
  Attribute points = attr(op, "points", AttributeKind::Array);
  Attribute of = attr(op, "tune_of", AttributeKind::String);
  Attribute fallback = attr(op, "tune_default", AttributeKind::Integer);
  if (!variants || !points || !of || !fallback) return false;
  if (variants.size() == 0 || points.size() != variants.size())
    return error(op, "needs one 'points' string per variant, and a variant");
  auto d = fallback.int_value();
  if (d < 0 || static_cast<size_t>(d) >= variants.size() ||
      variants[static_cast<size_t>(d)].string_value() != op->attr("kernel").string_value())
    return error(op, "'tune_default' must be the index of the variant 'kernel' names");
  Operation* module = op->enclosing(OpKind::Module);
  for (size_t v = 0; module && v < variants.size(); ++v) {
    Operation* callee = lookup_function(module, variants[v].string_value());
    if (!callee || !callee->has_attr("kernel"))
      return error(op, fmt::format("variant '@{}' is not a kernel of the module", variants[v].string_value()));
  }
  return true;
}

// Text with values between its pieces (host.print, a run-time path of
// host.save and graph.save): the array attribute `name` holds `text[0]`,
// operand `first`, `text[1]`, ...; `formats` (optional) one format spec per
// such operand, "" for none, a spec only on scalars. The operands are
// scalars, and tensors in graph code, buffers in host code.
bool Verifier::verify_text(Operation* op, std::string_view name, unsigned first) {
  bool graph = op->is(OpKind::GraphSave) || op->is(OpKind::GraphPrint);
  unsigned values = op->num_operands() - first;
  Attribute text = attr(op, name, AttributeKind::Array);
  if (!text) return false;
  if (text.size() != values + 1)
    return error(op, fmt::format("needs {} '{}' strings around its {} values", values + 1, name, values));
  for (unsigned i = first; i < op->num_operands(); ++i) {
    Type t = op->operand(i)->type();
    if (!(graph ? t.is(TypeKind::Tensor) : is_buffer(t)) && !t.is_scalar() && !t.is_index())
      return error(op, fmt::format("prints {} and scalars, not {}", graph ? "tensors" : "buffers", t.str()));
  }
  if (!op->has_attr("formats")) return true;
  Attribute formats = attr(op, "formats", AttributeKind::Array);
  if (!formats) return false;
  if (formats.size() != values) return error(op, fmt::format("needs {} 'formats' strings, one per value", values));
  for (unsigned i = 0; i < values; ++i) {
    Type t = op->operand(first + i)->type();
    if (!formats[i].string_value().empty() && !t.is_scalar() && !t.is_index())
      return error(op, fmt::format("formats operand #{} with a spec, which needs a scalar", first + i));
  }
  return true;
}

// 'host.print': writes `text[0]`, operand 0, `text[1]`, ..., then a newline.
void Verifier::verify_host_print(Operation* op) {
  if (!results(op, 0)) return;
  verify_text(op, "text", 0);
}

// The path of host.save and graph.save: `path`, a string, or `path_text`
// around operands 1, 2, ... (formatted when the program runs).
bool Verifier::verify_save_path(Operation* op) {
  if (!results(op, 0)) return false;
  if (op->num_operands() < 1) return error(op, "needs the tensor to save as operand 0");
  if (op->has_attr("path_text")) return verify_text(op, "path_text", 1);
  if (op->num_operands() != 1) return error(op, "has values for its path but no 'path_text' around them");
  return static_cast<bool>(attr(op, "path", AttributeKind::String));
}

// 'host.save': writes a buffer to a .npy file.
void Verifier::verify_host_save(Operation* op) {
  if (!verify_save_path(op)) return;
  if (!is_buffer(op->operand(0)->type())) error(op, "operand 0 must be a memref in global memory");
}

// 'host.load': a new buffer with a .npy file's contents, checked against the
// result's element type and static dims.
void Verifier::verify_host_load(Operation* op) {
  if (!shape(op, 0, 1)) return;
  attr(op, "path", AttributeKind::String);
  if (!is_buffer(op->result()->type())) error(op, "result must be a memref in global memory");
}

// 'host.check %condition {message}': fails the program with `message` when
// the condition is false (shapes known only at run time).
void Verifier::verify_host_check(Operation* op) {
  if (!shape(op, 1, 0)) return;
  attr(op, "message", AttributeKind::String);
  if (!op->operand(0)->type().is_bool()) error(op, "operand must be a bool");
}

// 'host.read %buffer : T': the value of a 0-d buffer of T, copied to the
// host once the launches before it finished.
void Verifier::verify_host_read(Operation* op) {
  if (!shape(op, 1, 1)) return;
  Type t = op->operand(0)->type();
  if (!is_buffer(t) || t.rank() != 0) return void(error(op, "operand must be a 0-d memref in global memory"));
  Type r = op->result()->type();
  if (!r.is_scalar() || r.scalar() != t.scalar())
    error(op, fmt::format("result must be the buffer's element type {}", scalar_info(t.scalar()).name));
}

// 'host.mesh': creates (once per process) the mesh its `mesh` attribute
// describes, checking it against the job (docs/ir/host.md).
void Verifier::verify_host_mesh(Operation* op) {
  if (!shape(op, 0, 0)) return;
  attr(op, "mesh", AttributeKind::Array);
}

// 'host.collective %src, %dst {kind, mesh, ...}': a collective (or shard /
// unshard) from buffer src into buffer dst on this rank.
void Verifier::verify_host_collective(Operation* op) {
  if (!shape(op, 2, 0)) return;
  string_choice(op, "kind",
                {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "shard", "unshard", "send", "recv",
                 "sendrecv"});
  attr(op, "mesh", AttributeKind::Array);
  for (Value* v : op->operands())
    if (!is_buffer(v->type())) return void(error(op, "operands must be memrefs in global memory"));
}

// 'host.collective_start %src, %dst {kind, ...} : index': host.collective
// started; the result is the runtime's request, waited for by one
// host.collective_wait.
void Verifier::verify_host_collective_start(Operation* op) {
  if (!shape(op, 2, 1)) return;
  string_choice(op, "kind", {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "send", "recv", "sendrecv"});
  attr(op, "mesh", AttributeKind::Array);
  for (Value* v : op->operands())
    if (!is_buffer(v->type())) return void(error(op, "operands must be memrefs in global memory"));
  if (!op->result()->type().is_index()) error(op, "the result (the request) must be index");
}

// 'host.collective_wait %request, %src, %dst': waits for the request; src and
// dst are the start's buffers, named so that they live (and stay unwritten)
// until here.
void Verifier::verify_host_collective_wait(Operation* op) {
  if (!shape(op, 3, 0)) return;
  Operation* start = op->operand(0)->defining_op();
  if (!start || !start->is(OpKind::HostCollectiveStart))
    return void(error(op, "the first operand must be the request of a host.collective_start"));
  for (unsigned i = 1; i < 3; ++i)
    if (!is_buffer(op->operand(i)->type())) return void(error(op, "operands 2 and 3 must be memrefs in global memory"));
}

}  // namespace tessera::ir::verification
