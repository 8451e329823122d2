// bufferize: the host code of @jit functions and programs from tensors to
// buffers (docs/ir/host.md). After generate-kernels a host-level function
// holds only host work on tensors: graph.empty outputs, graph.launch,
// views (transpose, slice, reshape), concat, dims, I/O. Here every tensor
// becomes a memref in global memory and:
//
//   graph.empty            host.alloc (contiguous, row-major)
//   graph.launch           host.launch; a `mut` argument is the buffer the
//                          kernel writes. Tensors are values, so a kernel
//                          writes in place only into a buffer made in the
//                          same block that nothing reads later; any other
//                          buffer is copied first (copy-on-write).
//   graph.transpose/slice  host.view of the same memory (strides permuted,
//                          offset and stepped strides)
//   graph.reshape          a view when the buffer is contiguous (checked at
//                          run time unless only size-1 dims change), else a
//                          copy then a view
//   graph.concat           host.alloc and one copy kernel per part into a view
//   graph.dim              tile.dim
//   graph.load/save/print  host.load/save/print
//   func.return            a result is a buffer the function made, or a
//                          reshape of one (ownership passes to the caller),
//                          else a copy of it
//
// then host.free after the last use of each buffer that does not leave its
// block (the runtime frees what a call made and did not return).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "ir/core/builder.h"
#include "ir/passes/passes.h"
#include "ir/schedule_to_tile/buffer_uses.h"
#include "ir/schedule_to_tile/kernel_builder.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::ir {

namespace {

constexpr int64_t kLanes = 256;
constexpr int64_t kMaxGroups = 65535;

class Bufferizer {
 public:
  Bufferizer(PassContext& pass, Operation* module) : pass_(pass), context_(pass.context), module_(module), b_(pass.context) {}

  bool run(Operation* func) {
    func_ = func;
    retype(func->region(0));
    std::vector<Operation*> ops;
    func->walk([&](Operation* op) {
      if (op != func) ops.push_back(op);
    });
    for (Operation* op : ops)
      if (!rewrite(op)) return false;
    Type fn = func->attr("function_type").type();
    std::vector<Type> inputs, results;
    for (size_t i = 0; i < fn.num_inputs(); ++i) inputs.push_back(buffer_type(fn.input(i)));
    for (size_t i = 0; i < fn.num_results(); ++i) results.push_back(buffer_type(fn.result(i)));
    func->set_attr("function_type", context_.type_attr(context_.function_type(inputs, results)));
    insert_frees(func->region(0));
    return true;
  }

 private:
  Type buffer_type(Type t) {
    if (!t.is(TypeKind::Tensor)) return t;
    return context_.memref_type(t.shape(), t.scalar(), MemorySpace::Global);
  }

  void retype(Region& region) {
    for (size_t b = 0; b < region.num_blocks(); ++b) {
      Block& block = region.block(b);
      for (Value* a : block.arguments()) a->set_type(buffer_type(a->type()));
      for (Operation* op : block) {
        for (Value* r : op->results()) r->set_type(buffer_type(r->type()));
        for (unsigned i = 0; i < op->num_regions(); ++i) retype(op->region(i));
      }
    }
  }

  // ------------------------------------------------------------ host helpers

  Value* index(int64_t v) { return b_.constant_index(v); }
  Value* op(OpKind kind, std::vector<Value*> operands, Type result, std::vector<NamedAttribute> attributes = {}) {
    return b_.create(kind, std::span<Value* const>(operands), std::span<const Type>(&result, 1), std::move(attributes))
        ->result();
  }
  void op0(OpKind kind, std::vector<Value*> operands, std::vector<NamedAttribute> attributes = {}) {
    b_.create(kind, std::span<Value* const>(operands), std::span<const Type>{}, std::move(attributes));
  }
  Value* add(Value* a, Value* c) { return op(OpKind::AddI, {a, c}, context_.index_type()); }
  Value* mul(Value* a, Value* c) { return op(OpKind::MulI, {a, c}, context_.index_type()); }
  Value* sub(Value* a, Value* c) { return op(OpKind::SubI, {a, c}, context_.index_type()); }
  Value* div(Value* a, Value* c) { return op(OpKind::DivSI, {a, c}, context_.index_type()); }
  Value* eq(Value* a, Value* c) {
    return op(OpKind::CmpI, {a, c}, context_.bool_type(), {{"predicate", context_.string_attr("eq")}});
  }

  Value* dim(Value* buffer, size_t axis) {
    int64_t d = buffer->type().shape()[axis];
    if (d != kDynamic) return index(d);
    return op(OpKind::Dim, {buffer}, context_.index_type(), {{"axis", context_.int_attr(static_cast<int64_t>(axis))}});
  }
  std::vector<Value*> dims(Value* buffer) {
    std::vector<Value*> out;
    for (size_t a = 0; a < buffer->type().rank(); ++a) out.push_back(dim(buffer, a));
    return out;
  }
  Value* stride(Value* buffer, size_t axis) {
    return op(OpKind::HostStride, {buffer}, context_.index_type(), {{"axis", context_.int_attr(static_cast<int64_t>(axis))}});
  }

  Attribute mesh_of(Operation* o) {
    std::vector<Attribute> parts{o->attr("shape"), o->attr("axes"), o->attr("devices")};
    return context_.array_attr(parts);
  }


  // The sizes of a collective's result: its static sizes, and a size known
  // only at run time from the operand's, times the mesh axis's size for the
  // dimension all_gather concatenates along, divided by it for the one
  // reduce_scatter splits (graph_shapes.cpp).
  std::vector<Value*> collective_dims(Operation* o, Value* src) {
    return collective_dims_of(o,
                              o->is(OpKind::GraphAllGather)       ? "all_gather"
                              : o->is(OpKind::GraphReduceScatter) ? "reduce_scatter"
                                                                  : "",
                              src);
  }
  std::vector<Value*> collective_dims_of(Operation* o, std::string_view kind, Value* src) {
    Type t = o->result()->type();
    std::vector<Value*> sizes;
    int64_t axis_size = 1;
    if (Attribute mesh = o->attr("mesh"); mesh && mesh.size() == 3) {
      std::vector<int64_t> shape = mesh[0].int_array();
      for (size_t a = 0; a < mesh[1].size() && a < shape.size(); ++a)
        if (o->attr("axis") && mesh[1][a].string_value() == o->attr("axis").string_value()) axis_size = shape[a];
    }
    bool gathers = kind == "all_gather", scatters = kind == "reduce_scatter";
    for (size_t a = 0; a < t.rank(); ++a) {
      if (t.shape()[a] != kDynamic) {
        sizes.push_back(index(t.shape()[a]));
        continue;
      }
      Value* size = dim(src, a);
      bool along = (gathers || scatters) && o->attr("dim") && static_cast<size_t>(o->int_attr("dim")) == a;
      if (along) size = gathers ? mul(size, index(axis_size)) : div(size, index(axis_size));
      sizes.push_back(size);
    }
    return sizes;
  }

  // A new contiguous buffer of type `t` with sizes `sizes` (one per dim).
  Value* alloc(Type t, const std::vector<Value*>& sizes) {
    std::vector<Value*> dynamic;
    for (size_t a = 0; a < t.rank(); ++a)
      if (t.shape()[a] == kDynamic) dynamic.push_back(sizes[a]);
    return op(OpKind::HostAlloc, dynamic, t);
  }

  // Row-major strides of `sizes`.
  std::vector<Value*> contiguous_strides(const std::vector<Value*>& sizes) {
    std::vector<Value*> strides(sizes.size());
    Value* s = index(1);
    for (size_t a = sizes.size(); a-- > 0;) {
      strides[a] = s;
      if (a) s = mul(s, sizes[a]);
    }
    return strides;
  }

  Value* view(Value* buffer, Type t, Value* offset, const std::vector<Value*>& sizes, const std::vector<Value*>& strides) {
    std::vector<Value*> operands{buffer, offset};
    operands.insert(operands.end(), sizes.begin(), sizes.end());
    operands.insert(operands.end(), strides.begin(), strides.end());
    return op(OpKind::HostView, operands, t);
  }

  // The kernel that copies a view of rank `rank` into another of the same sizes.
  Operation* copy_kernel(ScalarType element, size_t rank) {
    auto key = std::make_pair(element, rank);
    if (auto it = copy_kernels_.find(key); it != copy_kernels_.end()) return it->second;
    std::string name = fmt::format("__tessera_copy_{}_{}d", scalar_info(element).name, rank);
    if (Operation* existing = lookup_function(module_, name)) return copy_kernels_[key] = existing;
    KernelBuilder kb(context_, module_, name, {kLanes}, func_->loc());
    std::vector<int64_t> shape(rank, kDynamic);
    Value* src = kb.tensor_parameter("src", element, shape, false);
    Value* dst = kb.tensor_parameter("dst", element, shape, true);
    std::vector<Value*> sizes;
    for (size_t a = 0; a < rank; ++a) sizes.push_back(kb.dim(dst, static_cast<int64_t>(a)));
    Value* total = kb.index(1);
    for (Value* s : sizes) total = kb.mul(total, s);
    Value* first = kb.add(kb.mul(kb.id(OpKind::GroupId, 0), kb.index(kLanes)), kb.id(OpKind::LocalId, 0));
    Value* step = kb.mul(kb.id(OpKind::NumGroups, 0), kb.index(kLanes));
    kb.for_loop(first, total, step, [&](Value* linear) {
      std::vector<Value*> at(rank);
      for (size_t a = rank; a-- > 0;) {
        if (a == 0) {
          at[a] = linear;
          break;
        }
        at[a] = kb.rem(linear, sizes[a]);
        linear = kb.div(linear, sizes[a]);
      }
      kb.store(kb.load(src, at), dst, at);
    });
    return copy_kernels_[key] = kb.finish();
  }

  // Copies `src` into `dst` (same sizes) with the copy kernel.
  void copy_into(Value* src, Value* dst) {
    size_t rank = src->type().rank();
    Operation* kernel = copy_kernel(src->type().scalar(), rank);
    Value* total = index(1);
    for (Value* s : dims(dst)) total = mul(total, s);
    Value* wanted = op(OpKind::DivSI, {add(total, index(kLanes - 1)), index(kLanes)}, context_.index_type());
    Value* groups = op(OpKind::MaxSI, {op(OpKind::MinSI, {wanted, index(kMaxGroups)}, context_.index_type()), index(1)},
                       context_.index_type());
    op0(OpKind::HostLaunch, {groups, index(1), index(1), src, dst}, {{"kernel", context_.symbol_attr(kernel->symbol_name())}});
  }

  // A fresh contiguous copy of `src`.
  Value* copy(Value* src) {
    std::vector<Value*> sizes = dims(src);
    Type t = context_.memref_type(src->type().shape(), src->type().scalar(), MemorySpace::Global);
    Value* dst = alloc(t, sizes);
    copy_into(src, dst);
    return dst;
  }

  // `src` if its elements are contiguous in row-major order, else a copy.
  Value* contiguous(Value* src) {
    Operation* def = src->defining_op();
    if (def && def->is(OpKind::HostAlloc)) return src;
    size_t rank = src->type().rank();
    std::vector<Value*> sizes = dims(src);
    Value* expected = index(1);
    Value* ok = b_.constant_bool(true);
    for (size_t a = rank; a-- > 0;) {
      Value* matches = op(OpKind::OrI, {eq(sizes[a], index(1)), eq(stride(src, a), expected)}, context_.bool_type());
      ok = op(OpKind::AndI, {ok, matches}, context_.bool_type());
      expected = mul(expected, sizes[a]);
    }
    Type t = src->type();
    Value* condition[] = {ok};
    Operation* branch = b_.create(OpKind::If, std::span<Value* const>(condition), std::span<const Type>(&t, 1), {}, 2);
    Block* saved_block = b_.insertion_block();
    Operation* saved_point = b_.insertion_point();
    for (unsigned r = 0; r < 2; ++r) {
      b_.set_insertion_point_to_end(branch->region(r).add_block());
      Value* v = r == 0 ? src : copy(src);
      Value* yielded[] = {v};
      b_.create(OpKind::Yield, std::span<Value* const>(yielded), std::span<const Type>{});
    }
    if (saved_point) b_.set_insertion_point(saved_point);
    else b_.set_insertion_point_to_end(saved_block);
    return branch->result();
  }

  // Whether a kernel may write `buffer` in place at `at`: a buffer made in
  // at's block that nothing uses after `at`.
  bool writable_in_place(Value* buffer, Operation* at) {
    Operation* def = buffer->defining_op();
    if (!def || !(def->is(OpKind::HostAlloc) || def->is(OpKind::HostLoad)) || def->block() != at->block()) return false;
    for (OpOperand* use : buffer->uses()) {
      Operation* user = use->owner();
      while (user && user->block() != at->block()) user = user->parent_op();
      if (!user) return false;
      if (user != at && !user->is_before_in_block(at)) return false;
    }
    return true;
  }

  // ------------------------------------------------------------ rewriting

  bool rewrite(Operation* o) {
    b_.set_insertion_point(o);
    b_.set_location(o->loc());
    switch (o->kind()) {
      case OpKind::GraphEmpty: {
        std::vector<Value*> sizes = o->operands();
        std::vector<Type> types = o->result_types();
        Operation* a = b_.create(OpKind::HostAlloc, std::span<Value* const>(sizes), std::span<const Type>(types));
        return replace(o, {a->result()});
      }
      case OpKind::GraphDim:
        return replace(o, {dim(o->operand(0), static_cast<size_t>(o->int_attr("axis")))});
      case OpKind::GraphItem: {
        Type t = o->result()->type();
        Value* buffer = o->operand(0);
        Operation* read = b_.create(OpKind::HostRead, std::span<Value* const>(&buffer, 1), std::span<const Type>(&t, 1));
        return replace(o, {read->result()});
      }
      case OpKind::GraphLaunch: {
        std::vector<int64_t> mut = o->attr("mut_operands").int_array();
        std::vector<Value*> operands = o->operands();
        std::vector<Value*> results;
        for (int64_t at : mut) {
          Value* buffer = operands[static_cast<size_t>(at)];
          if (!writable_in_place(buffer, o)) buffer = copy(buffer);
          operands[static_cast<size_t>(at)] = buffer;
          results.push_back(buffer);
        }
        // A tuned launch keeps its variants (docs/ir/host.md).
        std::vector<NamedAttribute> attributes{{"kernel", o->attr("kernel")}};
        for (std::string_view name : {"variants", "points", "tune_of", "tune_default"})
          if (Attribute a = o->attr(name)) attributes.push_back({std::string(name), a});
        b_.create(OpKind::HostLaunch, std::span<Value* const>(operands), std::span<const Type>{},
                  std::move(attributes));
        return replace(o, results);
      }
      case OpKind::GraphTranspose: {
        Value* src = o->operand(0);
        std::vector<int64_t> perm = o->attr("perm").int_array();
        std::vector<Value*> sizes, strides;
        for (int64_t p : perm) {
          sizes.push_back(dim(src, static_cast<size_t>(p)));
          strides.push_back(stride(src, static_cast<size_t>(p)));
        }
        return replace(o, {view(src, o->result()->type(), index(0), sizes, strides)});
      }
      case OpKind::GraphSlice: {
        Value* src = o->operand(0);
        std::vector<int64_t> starts = o->attr("starts").int_array(), limits = o->attr("limits").int_array(),
                             steps = o->attr("steps").int_array();
        unsigned next = 1;  // the next dynamic start or limit
        Value* offset = index(0);
        std::vector<Value*> sizes, strides;
        for (size_t a = 0; a < starts.size(); ++a) {
          Value* s = stride(src, a);
          Value* start = starts[a] == kDynamic ? o->operand(next++) : nullptr;
          Value* limit = limits[a] == kDynamic ? o->operand(next++) : nullptr;
          if (start) offset = add(offset, mul(start, s));
          else if (starts[a] != 0) offset = add(offset, mul(index(starts[a]), s));
          if (o->result()->type().shape()[a] != kDynamic) {
            sizes.push_back(index(o->result()->type().shape()[a]));
          } else if (steps[a] < 0) {
            // (start - limit + |step| - 1) / |step|, start >= limit.
            if (!start) start = index(starts[a]);
            if (!limit) limit = index(limits[a]);
            Value* span = sub(start, limit);
            sizes.push_back(steps[a] == -1 ? span : div(add(span, index(-steps[a] - 1)), index(-steps[a])));
          } else if (!start && !limit && limits[a] != -1) {
            sizes.push_back(index((limits[a] - starts[a] + steps[a] - 1) / steps[a]));
          } else {
            // (limit - start + step - 1) / step, all non-negative.
            if (!start) start = index(starts[a]);
            if (!limit) limit = dim(src, a);
            Value* span = sub(limit, start);
            sizes.push_back(steps[a] == 1 ? span : div(add(span, index(steps[a] - 1)), index(steps[a])));
          }
          strides.push_back(steps[a] == 1 ? s : mul(s, index(steps[a])));
        }
        Value* sliced = view(src, o->result()->type(), offset, sizes, strides);
        // A negative step (`x[::-1]`) is a view with negative strides only
        // long enough to copy it: buffers the runtime sees (prints, saves,
        // launches, results) have non-negative strides.
        bool reversed = std::any_of(steps.begin(), steps.end(), [](int64_t step) { return step < 0; });
        return replace(o, {reversed ? copy(sliced) : sliced});
      }
      case OpKind::GraphReshape: return reshape(o);
      case OpKind::GraphConcat: {
        Type t = o->result()->type();
        int64_t axis = o->int_attr("axis");
        std::vector<Value*> sizes = dims(o->operand(0));
        Value* total = index(0);
        for (Value* part : o->operands()) total = add(total, dim(part, static_cast<size_t>(axis)));
        sizes[static_cast<size_t>(axis)] = total;
        Value* result = alloc(t, sizes);
        std::vector<Value*> strides = contiguous_strides(sizes);
        Value* start = index(0);
        for (Value* part : o->operands()) {
          std::vector<Value*> part_sizes = sizes;
          part_sizes[static_cast<size_t>(axis)] = dim(part, static_cast<size_t>(axis));
          Type part_type = context_.memref_type(part->type().shape(), t.scalar(), MemorySpace::Global);
          Value* target = view(result, part_type, mul(start, strides[static_cast<size_t>(axis)]), part_sizes, strides);
          copy_into(part, target);
          start = add(start, part_sizes[static_cast<size_t>(axis)]);
        }
        return replace(o, {result});
      }
      case OpKind::GraphLoad: {
        std::vector<Type> types = o->result_types();
        Operation* load = b_.create(OpKind::HostLoad, std::span<Value* const>{}, std::span<const Type>(types),
                                    {{"path", o->attr("path")}});
        return replace(o, {load->result()});
      }
      case OpKind::GraphMesh:
        op0(OpKind::HostMesh, {}, {{"mesh", mesh_of(o)}});
        if (!o->result()->uses().empty()) {
          report_at<DiagnosticKind::IrGraphUnsupported>(pass_, o, "a mesh value used by an operation",
                                                        "operations name their mesh in an attribute");
          return false;
        }
        o->erase();
        return true;
      case OpKind::GraphAllReduce:
      case OpKind::GraphAllGather:
      case OpKind::GraphReduceScatter:
      case OpKind::GraphBroadcast:
      case OpKind::GraphShard:
      case OpKind::GraphUnshard: {
        // The runtime reads and writes whole contiguous buffers.
        Value* src = contiguous(o->operand(0));
        Value* dst = alloc(o->result()->type(), collective_dims(o, src));
        std::string_view kind = o->is(OpKind::GraphAllReduce)       ? "all_reduce"
                                : o->is(OpKind::GraphAllGather)     ? "all_gather"
                                : o->is(OpKind::GraphReduceScatter) ? "reduce_scatter"
                                : o->is(OpKind::GraphBroadcast)     ? "broadcast"
                                : o->is(OpKind::GraphShard)         ? "shard"
                                                                    : "unshard";
        std::vector<NamedAttribute> attributes = o->attributes();
        attributes.push_back({"kind", context_.string_attr(kind)});
        op0(OpKind::HostCollective, {src, dst}, std::move(attributes));
        return replace(o, {dst});
      }
      case OpKind::GraphSend: {
        // The buffer goes out as it is: src and dst are the same buffer.
        Value* src = contiguous(o->operand(0));
        std::vector<NamedAttribute> attributes = o->attributes();
        attributes.push_back({"kind", context_.string_attr("send")});
        op0(OpKind::HostCollective, {src, src}, std::move(attributes));
        o->erase();
        return true;
      }
      case OpKind::GraphRecv:
      case OpKind::GraphSendRecv: {
        Value* src = contiguous(o->operand(0));
        Value* dst = alloc(o->result()->type(), collective_dims(o, src));
        std::vector<NamedAttribute> attributes = o->attributes();
        attributes.push_back({"kind", context_.string_attr(o->is(OpKind::GraphRecv) ? "recv" : "sendrecv")});
        op0(OpKind::HostCollective, {src, dst}, std::move(attributes));
        return replace(o, {dst});
      }
      case OpKind::ScheduleCollectiveStart: {
        // overlap-collectives' split: the buffers as for host.collective,
        // the start returns the runtime's request, and the wait names both
        // buffers so that they live, and nothing writes them, until then.
        std::string kind(o->string_attr("collective"));
        bool sends = kind == "send";
        Value* src = contiguous(o->operand(0));
        Value* dst = sends ? src : alloc(o->result()->type(), collective_dims_of(o, kind, src));
        std::vector<NamedAttribute> attributes;
        for (const NamedAttribute& a : o->attributes())
          if (a.name != "collective") attributes.push_back(a);
        attributes.push_back({"kind", context_.string_attr(kind)});
        Value* request = op(OpKind::HostCollectiveStart, {src, dst}, context_.index_type(), std::move(attributes));
        in_flight_.emplace(dst, InFlight{request, src});
        return replace(o, {dst});
      }
      case OpKind::ScheduleCollectiveWait: {
        Value* dst = o->operand(0);
        auto it = in_flight_.find(dst);
        if (it == in_flight_.end()) internal_error("bufferize", "a schedule.collective_wait without its start");
        op0(OpKind::HostCollectiveWait, {it->second.request, it->second.src, dst});
        in_flight_.erase(it);
        if (o->num_results() == 0) {
          o->erase();
          return true;
        }
        return replace(o, {dst});
      }
      case OpKind::GraphSave: {
        std::vector<NamedAttribute> attributes;
        for (const char* name : {"path", "path_text", "formats"})
          if (o->has_attr(name)) attributes.push_back({name, o->attr(name)});
        std::vector<Value*> operands = o->operands();
        b_.create(OpKind::HostSave, std::span<Value* const>(operands), std::span<const Type>{}, std::move(attributes));
        o->erase();
        return true;
      }
      case OpKind::GraphPrint: {
        std::vector<Value*> printed = o->operands();
        std::vector<NamedAttribute> attributes{{"text", o->attr("text")}};
        if (o->has_attr("formats")) attributes.push_back({"formats", o->attr("formats")});
        b_.create(OpKind::HostPrint, std::span<Value* const>(printed), std::span<const Type>{}, std::move(attributes));
        o->erase();
        return true;
      }
      case OpKind::Return: {
        if (o->parent_op() != func_) return true;
        std::vector<Value*> results = o->operands();
        std::set<Value*> returned;
        bool changed = false;
        for (Value*& v : results) {
          if (!v->type().is(TypeKind::MemRef)) continue;
          // A buffer made here, or a reshape of one: its memory passes to
          // the caller (the view starts at the buffer's first element, so
          // the runtime's keep and the caller's free find the allocation).
          Value* buffer = whole_buffer(v);
          Operation* def = buffer->defining_op();
          bool owned = def && (def->is(OpKind::HostAlloc) || def->is(OpKind::HostLoad)) && def->block() == o->block();
          if (!owned || !returned.insert(buffer).second) {
            v = copy(v);
            changed = true;
          }
        }
        if (changed)
          for (unsigned i = 0; i < o->num_operands(); ++i) o->set_operand(i, results[i]);
        return true;
      }
      default: break;
    }
    std::string_view name = o->name();
    if (name.starts_with("graph.") || name.starts_with("schedule.")) {
      report_at<DiagnosticKind::IrGraphUnsupported>(pass_, o, "'" + std::string(name) + "'",
                                                    "no host code exists for it");
      return false;
    }
    return true;
  }

  bool reshape(Operation* o) {
    Value* src = o->operand(0);
    Type t = o->result()->type();
    std::vector<Value*> sizes;
    unsigned next = 1;
    for (size_t a = 0; a < t.rank(); ++a)
      sizes.push_back(t.shape()[a] == kDynamic ? o->operand(next++) : index(t.shape()[a]));
    // Only size-1 dims added or removed (both shapes static): the strides
    // of the other dims carry over.
    auto non_unit = [](Type x, bool& known) {
      std::vector<size_t> axes;
      for (size_t a = 0; a < x.rank(); ++a) {
        if (x.shape()[a] == kDynamic) known = false;
        if (x.shape()[a] != 1) axes.push_back(a);
      }
      return axes;
    };
    bool known = true;
    std::vector<size_t> from = non_unit(src->type(), known), to = non_unit(t, known);
    if (known && from.size() == to.size()) {
      bool same = true;
      for (size_t i = 0; i < from.size(); ++i) same = same && src->type().shape()[from[i]] == t.shape()[to[i]];
      if (same) {
        std::vector<Value*> strides(t.rank(), index(1));
        for (size_t i = 0; i < from.size(); ++i) strides[to[i]] = stride(src, from[i]);
        return replace(o, {whole_view(view(src, t, index(0), sizes, strides))});
      }
    }
    Value* dense = contiguous(src);
    return replace(o, {whole_view(view(dense, t, index(0), sizes, contiguous_strides(sizes)))});
  }

  // Marks a view that holds every element of its source from the first on
  // (a reshape's): returning it returns its buffer, with no copy.
  Value* whole_view(Value* v) {
    v->defining_op()->set_attr("whole", context_.bool_attr(true));
    return v;
  }

  // The buffer `v` is, or holds whole through views marked `whole`.
  Value* whole_buffer(Value* v) {
    while (Operation* def = v->defining_op()) {
      if (!def->is(OpKind::HostView) || !def->has_attr("whole")) break;
      v = def->operand(0);
    }
    return v;
  }

  bool replace(Operation* o, std::vector<Value*> values) {
    for (unsigned i = 0; i < o->num_results(); ++i) o->result(i)->replace_all_uses_with(values[i]);
    o->erase();
    return true;
  }

  // ------------------------------------------------------------ freeing

  // The buffers a value's memory belongs to: itself for host.alloc, the
  // source of a view.
  Value* root(Value* v) {
    while (Operation* def = v->defining_op()) {
      if (!def->is(OpKind::HostView)) break;
      v = def->operand(0);
    }
    return v;
  }

  void insert_frees(Region& region) {
    for (size_t bi = 0; bi < region.num_blocks(); ++bi) {
      Block& block = region.block(bi);
      std::vector<Operation*> allocs;
      for (Operation* op : block) {
        if (op->is(OpKind::HostAlloc) || op->is(OpKind::HostLoad)) allocs.push_back(op);
        for (unsigned r = 0; r < op->num_regions(); ++r) insert_frees(op->region(r));
      }
      for (Operation* a : allocs) {
        Operation* last = nullptr;
        if (!last_use_in_block(a->result(), block, last)) continue;
        b_.set_location(a->loc());
        if (last) b_.set_insertion_point_after(last);
        else b_.set_insertion_point_after(a);
        op0(OpKind::HostFree, {a->result()});
      }
    }
  }

  // The last operation of `block` that uses `buffer` or a view of it; false
  // when the memory leaves the block (buffer_uses.h: a loop's initial value
  // becomes its block argument and, yielded back or with no iteration, its
  // result).
  bool last_use_in_block(Value* buffer, Block& block, Operation*& last) {
    return visit_buffer_uses_in_block(buffer, block, [&](Value*, Operation*, Operation* in_block) {
      if (!last || last->is_before_in_block(in_block)) last = in_block;
      return true;
    });
  }

  PassContext& pass_;
  Context& context_;
  Operation* module_;
  Builder b_;
  Operation* func_ = nullptr;
  std::map<std::pair<ScalarType, size_t>, Operation*> copy_kernels_;
  // Started collectives not yet waited for: their destination buffer (the
  // value in flight) -> the request and the source buffer.
  struct InFlight {
    Value* request;
    Value* src;
  };
  // By the buffer the wait names: several sends of one buffer are in
  // flight at once under it (each wait takes one of them; any pairing waits
  // for every request before the buffer may change).
  std::multimap<Value*, InFlight> in_flight_;
};

}  // namespace

void run_bufferize_pass(Operation* module, PassContext& context) {
  Bufferizer bufferizer(context, module);
  for (Operation* func : module_functions(module)) {
    if (!is_host_level_function(func) || func->region(0).empty()) continue;
    if (!bufferizer.run(func)) return;
  }
}

}  // namespace tessera::ir
