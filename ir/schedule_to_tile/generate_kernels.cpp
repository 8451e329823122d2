// generate-kernels: Schedule IR -> Tile IR. Each schedule.kernel becomes a
// generated kernel (a func.func {kernel, generated}) and, where it stood, the
// host code that runs it: graph.empty for its outputs and one graph.launch
// (docs/ir/schedule.md, "Generated kernels"). The strategies:
//
//   elementwise  one lane per element of the space, grid-stride over its
//                row-major numbering; each output's element computed from
//                the inputs' elements at the (broadcast) position.
//   rows         one group per row of the space [..., C] (grid-stride over
//                rows); each reduction over the row is one pass of the lanes
//                over its columns and a group reduction (a warp reduction and
//                shared memory), in program order; then one pass computes
//                and stores the outputs. A softmax reads its row three times
//                and writes it once.
//   reduce       a reduction over any axes: a group per output element when
//                the reduced extent is large or unknown, else a lane per
//                output element.
//   matmul       the stdlib GEMM (stdlib/gemm.tsr) on [BATCH, M, K] views.
//   attention    the stdlib flash attention (stdlib/attention.tsr) on
//                [B*H, S, D] views: flash_attention forward; for
//                attention_grad, flash_attention_bwd_prep, _bwd and
//                _bwd_dq, with the log-sum-exp of the forward that made
//                its o (the forward again when there is none).
//   sort         the stdlib row sort (stdlib/sort.tsr) on an [R, C] view
//                with the sorted axis last.
//
// The space's dimensions are the kernel's first scalar parameters when they
// are known only at run time, so every generated kernel knows its space.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "ir/core/builder.h"
#include "ir/core/graph_ops.h"
#include "ir/core/graph_shapes.h"
#include "ir/core/ir_text.h"
#include "ir/core/schedule_hints.h"
#include "ir/core/tile_attr_kinds.h"
#include "ir/graph/decompose.h"
#include "ir/passes/passes.h"
#include "ir/schedule_to_tile/element_code.h"
#include "ir/schedule_to_tile/kernel_builder.h"
#include "ir/schedule_to_tile/kernel_library.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::ir {

namespace {

constexpr int64_t kLanes = 256;
// Grid-stride loops cover any size; the grid itself stays under every
// device's limit on an axis (65535 for y and z on CUDA).
constexpr int64_t kMaxGroups = 65535;
// An elementwise kernel's grid-stride loop runs on at most this many groups
// of 256 lanes: 262,144 lanes fill an H100 (132 SMs x 2,048), and on the CPU
// each group has a fixed cost (a 4M-element chain took 4x as long with one
// group per 256 elements).
constexpr int64_t kElementwiseGroups = 1024;
// The stdlib GEMM's tile at its default point (stdlib/gemm.tsr's largest
// knobs; gemm_cpu's too), and the tensor-core GEMM's (BM_TC = BN_TC).
constexpr int64_t kGemmTile = 128;
constexpr int64_t kGemmTcTile = 64;
// The flash backward's groups, at most: each of the SPLIT groups of a head
// keeps its own partial sum of dq (stdlib/attention.tsr), so SPLIT is
// ceil(kAttentionGroups / BH), at most one group per key block.
constexpr int64_t kAttentionGroups = 64;

// A flash-attention forward generate-kernels launched, by the value that
// stands for its o: an attention_grad of the same q, k, v and o reuses its
// log-sum-exp instead of computing it again.
struct FlashForward {
  Value* q;
  Value* k;
  Value* v;
  double scale;
  bool causal;
  Value* lse;  // [BH, SQ] f32
};
using FlashForwards = std::unordered_map<Value*, FlashForward>;

// The kernel families generate-kernels made in this module (a kernel and
// its variants NAME$vI), by their text with the names left out: a group
// whose kernels come out the same as an earlier group's (each iteration of
// a training loop unrolled in the program, the same expression twice)
// launches those instead of a copy, so that code generation compiles each
// kernel once (docs/ir/schedule.md, "Generated kernels").
using GeneratedFamilies = std::map<std::string, std::string>;  // text -> the family's name

std::vector<int64_t> dims_of(Type t) {
  if (!t.is(TypeKind::Tensor)) return {};
  return {t.shape().begin(), t.shape().end()};
}

// The type a reduction accumulates in: f32 for floats narrower than f32.
Type accumulation_type(Context& context, ScalarType element) {
  if (is_float(element) && scalar_info(element).bits < 32) return context.f32_type();
  return context.scalar_type(element);
}

// The tile.warp_reduce that combines as `kind` does (a mean sums), if any.
std::optional<WarpReduceKind> warp_reduce_kind_of(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean: return WarpReduceKind::Sum;
    case ReduceKind::Max: return WarpReduceKind::Max;
    case ReduceKind::Min: return WarpReduceKind::Min;
    case ReduceKind::Prod: return std::nullopt;
  }
  return std::nullopt;
}

bool warp_reducible(ReduceKind kind, Type t) {
  if (!warp_reduce_kind_of(kind)) return false;
  ScalarType s = t.scalar();
  return s == ScalarType::F32 || s == ScalarType::F64 || s == ScalarType::I32 || s == ScalarType::I64;
}

class Generator {
 public:
  Generator(PassContext& pass, Operation* module, Operation* kernel, std::string name, FlashForwards& flash_forwards,
            GeneratedFamilies& families)
      : pass_(pass), context_(pass.context), module_(module), kernel_(kernel), name_(std::move(name)),
        flash_forwards_(flash_forwards), families_(families), host_(pass.context) {
    host_.set_insertion_point(kernel);
    host_.set_location(kernel->loc());
    body_ = &kernel->region(0).front();
    for (Operation* op : *body_)
      if (!op->is(OpKind::ScheduleYield)) ops_.push_back(op);
    yield_ = body_->back();
  }

  // False after a diagnostic.
  bool run() {
    switch (kernel_strategy(*kernel_)) {
      case KernelStrategy::Matmul: return matmul();
      case KernelStrategy::Attention: return attention();
      case KernelStrategy::Sort: return sort();
      case KernelStrategy::Elementwise: generate_points(&Generator::elementwise, "elementwise"); return true;
      case KernelStrategy::Rows: generate_points(&Generator::rows, "rows"); return true;
      case KernelStrategy::Reduce: generate_points(&Generator::reduce, "reduce"); return true;
    }
    internal_error("generate-kernels", "an unknown strategy");
  }

 private:
  // ---------------------------------------------------------------- knobs

  // A free choice of a generated kernel's builder (docs/autotuning.md,
  // "Generated kernels"): the values the tuner may pick from, and the
  // default point's value (the choice made without tuning).
  struct Knob {
    std::string name;
    std::vector<int64_t> values;
    int64_t fallback;
    std::string pinned_by;  // the directive that fixes it, if any
  };

  std::vector<Knob> knobs_of(void (Generator::*build)()) {
    if (build == &Generator::elementwise) {
      // VEC: elements per lane per step of the grid-stride loop
      // (schedule.vectorize pins it); GROUPS: the most groups of the grid.
      Knob vec{"VEC", {1, 4}, 1, ""};
      if (int64_t pinned = kernel_->int_attr("vectorize", 0); pinned >= 1)
        vec = {"VEC", {pinned}, pinned, fmt::format("schedule.vectorize({})", pinned)};
      return {vec, {"GROUPS", {64, kElementwiseGroups}, kElementwiseGroups, ""}};
    }
    if (build == &Generator::rows) {
      // LANES: the lanes of a row's group. Without tuning one warp per row
      // up to 1024 columns (and for rows known only at run time): the
      // reductions are then warp reductions, no shared memory or barrier.
      Value* space_value = rows_space();
      int64_t columns = space_value->type().shape()[space_value->type().rank() - 1];
      return {pinned_lanes({"LANES", {32, 128, 256}, columns == kDynamic || columns <= 1024 ? 32 : kLanes, ""},
                           "rows")};
    }
    if (build == &Generator::reduce) return {pinned_lanes({"LANES", {64, 128, kLanes}, kLanes, ""}, "reduce")};
    return {};
  }

  // A rows or reduce kernel's LANES as schedule.lanes(N) pins it: N when it
  // is one of the knob's values, else the knob as it is, with a warning.
  Knob pinned_lanes(Knob lanes, const char* strategy) {
    int64_t pinned = kernel_->int_attr("lanes", 0);
    if (pinned == 0) return lanes;
    if (std::find(lanes.values.begin(), lanes.values.end(), pinned) == lanes.values.end()) {
      ignore_hint("lanes", fmt::format("a generated {} kernel's groups have {} lanes", strategy,
                                       fmt::join(lanes.values, ", ")));
      return lanes;
    }
    return {lanes.name, {pinned}, pinned, fmt::format("schedule.lanes({})", pinned)};
  }

  int64_t knob(std::string_view name) const {
    auto it = point_.find(std::string(name));
    internal_check(it != point_.end(), "generate-kernels", "a knob the point does not have");
    return it->second;
  }

  // Builds the kernel once per point of its knobs' space (the default
  // point alone without tuning, PassContext::tune_stdlib), then one launch:
  // a tuned launch of every variant, each on its own grid, when there are
  // several (docs/ir/graph.md, "graph.launch"). The default variant keeps
  // the kernel's name; the others are NAME$vI, I the point's index.
  void generate_points(void (Generator::*build)(), const char* strategy) {
    std::vector<Knob> knobs = knobs_of(build);
    std::vector<std::vector<int64_t>> points{{}};
    for (const Knob& k : knobs) {
      std::vector<std::vector<int64_t>> next;
      for (const std::vector<int64_t>& p : points)
        for (int64_t v : k.values) {
          next.push_back(p);
          next.back().push_back(v);
        }
      points = std::move(next);
    }
    std::vector<int64_t> fallback;
    for (const Knob& k : knobs) fallback.push_back(k.fallback);
    auto found = std::find(points.begin(), points.end(), fallback);
    internal_check(found != points.end(), "generate-kernels", "a default point outside the space");
    auto default_point = static_cast<size_t>(found - points.begin());
    bool tune = pass_.tune_stdlib && points.size() > 1;
    std::vector<std::string> texts;
    for (const std::vector<int64_t>& p : points) {
      std::string text;
      for (size_t i = 0; i < knobs.size(); ++i) text += fmt::format("{}{}={}", i ? ", " : "", knobs[i].name, p[i]);
      texts.push_back(text);
    }
    // Points the driver found spilling (never all of them): not compiled;
    // when the default point is one, the first kept point is the default.
    std::vector<std::string> pruned(points.size());
    if (tune && pass_.pruned_points)
      if (auto it = pass_.pruned_points->find(name_); it != pass_.pruned_points->end())
        for (size_t p = 0; p < points.size(); ++p)
          if (auto reason = it->second.find(texts[p]); reason != it->second.end()) pruned[p] = reason->second;
    if (!pruned[default_point].empty())
      for (size_t p = 0; p < points.size(); ++p)
        if (pruned[p].empty()) {
          default_point = p;
          break;
        }
    std::vector<size_t> built;
    for (size_t p = 0; p < points.size(); ++p) {
      if ((!tune && p != default_point) || !pruned[p].empty()) continue;
      point_.clear();
      for (size_t i = 0; i < knobs.size(); ++i) point_[knobs[i].name] = points[p][i];
      variant_name_ = !tune || p == default_point ? name_ : name_ + "$v" + std::to_string(p);
      (this->*build)();
      first_variant_ = false;
      built.push_back(p);
    }
    bool duplicate = reuse_identical_family();
    // The launch: every variant's grid, then the arguments.
    std::vector<Value*> operands;
    std::vector<Attribute> variants, point_texts;
    int64_t tune_default = 0;
    for (size_t i = 0; i < made_.size(); ++i) {
      operands.insert(operands.end(), made_[i].grid.begin(), made_[i].grid.end());
      variants.push_back(context_.symbol_attr(made_[i].name));
      point_texts.push_back(context_.string_attr(texts[built[i]]));
      if (built[i] == default_point) tune_default = static_cast<int64_t>(i);
    }
    operands.insert(operands.end(), host_args_.begin(), host_args_.end());
    std::vector<int64_t> mut = mut_operands_;
    for (int64_t& m : mut) m += static_cast<int64_t>(3 * (made_.size() - 1));
    std::vector<NamedAttribute> attributes{{"kernel", context_.symbol_attr(name_)},
                                           {"mut_operands", context_.int_array_attr(mut)}};
    if (made_.size() > 1) {
      attributes.push_back({"variants", context_.array_attr(variants)});
      attributes.push_back({"points", context_.array_attr(point_texts)});
      attributes.push_back({"tune_of", context_.string_attr(name_)});
      attributes.push_back({"tune_default", context_.int_attr(tune_default)});
    }
    std::vector<Type> types;
    for (Value* v : yield_->operands()) types.push_back(v->type());
    Operation* launch = host_.create(OpKind::GraphLaunch, std::span<Value* const>(operands), std::span<const Type>(types),
                                     std::move(attributes));
    for (unsigned i = 0; i < kernel_->num_results(); ++i) kernel_->result(i)->replace_all_uses_with(launch->result(i));
    kernel_->erase();
    if (knobs.empty() || !pass_.generated_tuning || duplicate) return;  // a duplicate's space is recorded
    GeneratedTuning record{name_, strategy, {}, points, {}, {}, default_point, ""};
    for (const Knob& k : knobs) {
      record.knobs.push_back(k.name);
      if (!k.pinned_by.empty())
        record.fixed += fmt::format("{}{}={} by {}", record.fixed.empty() ? "" : "; ", k.name, k.values[0], k.pinned_by);
    }
    if (!pass_.tune_stdlib) record.fixed += std::string(record.fixed.empty() ? "" : "; ") + "TESSERA_AUTOTUNE=0";
    for (size_t p = 0; p < points.size(); ++p) {
      auto at = std::find(built.begin(), built.end(), p);
      record.variants.push_back(at == built.end() ? "" : made_[static_cast<size_t>(at - built.begin())].name);
      record.pruned.push_back(!pruned[p].empty()   ? pruned[p]
                              : at == built.end() ? "not compiled: TESSERA_AUTOTUNE=0, the default point alone"
                                                  : "");
    }
    pass_.generated_tuning->push_back(std::move(record));
  }

  // The variants just made, when an earlier group made the same ones
  // (GeneratedFamilies): erased, and made_ and name_ name the earlier ones.
  bool reuse_identical_family() {
    std::string text;
    for (const MadeVariant& m : made_) {
      std::string printed = print_operation(lookup_function(module_, m.name));
      std::string own = "@" + m.name + "(";
      if (size_t at = printed.find(own); at != std::string::npos) printed.replace(at, own.size(), "@(");
      text += m.name.substr(name_.size()) + "\n" + printed;  // the variant's suffix, its text
    }
    auto [it, added] = families_.emplace(std::move(text), name_);
    if (added) return false;
    for (MadeVariant& m : made_) {
      lookup_function(module_, m.name)->erase();
      m.name = it->second + m.name.substr(name_.size());
    }
    name_ = it->second;
    return true;
  }

  // ---------------------------------------------------------------- host side

  Value* host_index(int64_t v) { return host_.constant_index(v); }
  Value* host_op(OpKind kind, std::vector<Value*> operands, Type result, std::vector<NamedAttribute> attributes = {}) {
    return host_.create(kind, std::span<Value* const>(operands), std::span<const Type>(&result, 1), std::move(attributes))
        ->result();
  }
  Value* host_mul(Value* a, Value* b) { return host_op(OpKind::MulI, {a, b}, context_.index_type()); }
  Value* host_max(Value* a, Value* b) { return host_op(OpKind::MaxSI, {a, b}, context_.index_type()); }
  Value* host_min(Value* a, Value* b) { return host_op(OpKind::MinSI, {a, b}, context_.index_type()); }
  Value* host_ceil_div(Value* a, int64_t b) {
    Value* sum = host_op(OpKind::AddI, {a, host_index(b - 1)}, context_.index_type());
    return host_op(OpKind::DivSI, {sum, host_index(b)}, context_.index_type());
  }
  // A grid size: at least 1, at most `most`.
  Value* host_groups(Value* wanted, int64_t most = kMaxGroups) {
    return host_max(host_min(wanted, host_index(most)), host_index(1));
  }

  // The host value a value of the region stands for: a block argument is the
  // kernel operation's operand.
  Value* outer(Value* inner) {
    if (inner->owner_block() == body_ && !inner->defining_op())
      return kernel_->operand(inner->index());
    Operation* def = inner->defining_op();
    if (def && def->is(OpKind::Constant)) {
      Operation* copy = def->clone();
      host_.insert(copy);
      return copy->result();
    }
    internal_error("generate-kernels", "a size computed inside a schedule.kernel");
  }

  // Dimension `axis` of a value of the region, as a host index value.
  // The first parameter axis of the host function with the same symbolic
  // size as `value`'s `axis` (arg_dims), or `value`, `axis` themselves.
  std::pair<Value*, int64_t> symbol_source(Value* value, int64_t axis) {
    Block* entry = value->owner_block();
    Operation* function = entry ? entry->parent_op() : nullptr;
    Attribute dims = function ? function->attr("arg_dims") : Attribute{};
    if (!dims || !function->is(OpKind::Func) || &function->region(0).front() != entry) return {value, axis};
    auto symbol_at = [&](size_t argument, size_t a) -> std::string_view {
      if (argument >= dims.size() || a >= dims[argument].size()) return {};
      Attribute d = dims[argument][a];
      return d.is(AttributeKind::String) && d.string_value() != "?" ? d.string_value() : std::string_view{};
    };
    std::string_view symbol = symbol_at(value->index(), static_cast<size_t>(axis));
    if (symbol.empty()) return {value, axis};
    for (unsigned j = 0; j < entry->num_arguments(); ++j) {
      Value* argument = entry->argument(j);
      if (!argument->type().is(TypeKind::Tensor)) continue;
      for (size_t a = 0; a < argument->type().rank(); ++a)
        if (symbol_at(j, a) == symbol && argument->type().shape()[a] == kDynamic)
          return {argument, static_cast<int64_t>(a)};
    }
    return {value, axis};
  }

  // host.check that `inner`'s size at `axis` is 1 or `space_size`.
  void check_broadcast(Value* inner, int64_t axis, Value* space_size) {
    if (!space_size || !checked_broadcasts_.insert({inner, axis}).second) return;
    Value* size = host_dim(inner, axis);
    Value* is_one = host_op(OpKind::CmpI, {size, host_index(1)}, context_.bool_type(),
                            {{"predicate", context_.string_attr("eq")}});
    Value* is_space = host_op(OpKind::CmpI, {size, space_size}, context_.bool_type(),
                              {{"predicate", context_.string_attr("eq")}});
    Value* fits = host_op(OpKind::OrI, {is_one, is_space}, context_.bool_type());
    std::string where(kernel_->loc().str());
    std::erase(where, '"');
    host_.create(OpKind::HostCheck, std::span<Value* const>(&fits, 1), std::span<const Type>{},
                 {{"message", context_.string_attr(where + ": operands whose sizes differ at axis " +
                                                   std::to_string(axis) + " and neither is 1 do not broadcast")}});
  }

  Value* host_dim(Value* inner, int64_t axis) {
    Type t = inner->type();
    int64_t d = t.shape()[static_cast<size_t>(axis)];
    if (d != kDynamic) return host_index(d);
    auto key = std::make_pair(inner, axis);
    if (auto it = dims_.find(key); it != dims_.end()) return it->second;
    Value* result = nullptr;
    Operation* def = inner->defining_op();
    if (!def) {
      // A function parameter's size named by a symbol is the symbol's one
      // value (the entry's callers check that parameters agree): the same
      // host value for every parameter of that size, so equal sizes are
      // seen equal (no run-time broadcast test between x: f32[N] and y: f32[N]).
      auto [source, source_axis] = symbol_source(outer(inner), axis);
      auto param_key = std::make_pair(source, source_axis);
      if (auto it = param_dims_.find(param_key); it != param_dims_.end()) {
        result = it->second;
      } else {
        result = host_op(OpKind::GraphDim, {source}, context_.index_type(), {{"axis", context_.int_attr(source_axis)}});
        param_dims_[param_key] = result;
      }
    } else if (def->is(OpKind::GraphConstant) || def->is(OpKind::GraphRandom) || def->is(OpKind::GraphIota)) {
      // The size operands, one per `?`, after the random's seed.
      unsigned first = def->is(OpKind::GraphRandom) ? 1 : 0, at = first;
      for (int64_t a = 0; a < axis; ++a) at += t.shape()[static_cast<size_t>(a)] == kDynamic ? 1 : 0;
      result = outer(def->operand(at));
    } else if (def->is(OpKind::GraphReduce)) {
      std::vector<int64_t> axes = def->attr("axes").int_array();
      int64_t source = axis;
      if (!def->has_attr("keepdims")) {
        // The result's axes are the input's kept axes, in order.
        int64_t kept = -1;
        for (int64_t a = 0; a < static_cast<int64_t>(def->operand(0)->type().rank()); ++a) {
          if (std::find(axes.begin(), axes.end(), a) != axes.end()) continue;
          if (++kept == axis) {
            source = a;
            break;
          }
        }
      }
      result = host_dim(def->operand(0), source);
    } else if (def->is(OpKind::GraphMatmul) && axis + 2 >= static_cast<int64_t>(t.rank())) {
      // M from A, N from B (the batch dimensions broadcast, below).
      bool rows = axis + 2 == static_cast<int64_t>(t.rank());
      Value* from = def->operand(rows ? 0 : 1);
      result = host_dim(from, static_cast<int64_t>(from->type().rank()) - (rows ? 2 : 1));
    } else {
      // Broadcasting (NumPy's rule): the first of the operands' sizes at
      // this axis that is not 1, else 1 (for a matmul, of their batch
      // dimensions). Not the largest: 0 against 1 is 0; the others are
      // checked to be 1 or this size before the launch (check_broadcast).
      size_t rank = t.rank();
      bool matmul = def->is(OpKind::GraphMatmul);
      for (Value* operand : def->operands()) {
        Type ot = operand->type();
        if (!ot.is(TypeKind::Tensor)) continue;
        int64_t aligned = axis - static_cast<int64_t>(matmul ? rank - ot.rank() : rank - ot.rank());
        if (aligned < 0 || ot.shape()[static_cast<size_t>(aligned)] == 1) continue;
        Value* size = host_dim(operand, aligned);
        if (!result || result == size) {
          result = size;
          continue;
        }
        Value* is_one = host_op(OpKind::CmpI, {result, host_index(1)}, context_.bool_type(),
                                {{"predicate", context_.string_attr("eq")}});
        result = host_op(OpKind::Select, {is_one, size, result}, context_.index_type());
      }
      if (!result) result = host_index(1);
    }
    dims_[key] = result;
    return result;
  }

  // ---------------------------------------------------------------- kernel side

  // Parameters: the space's dimensions known at run time (i64), then the
  // inputs (tensors and scalars; constants are copied in), then the outputs.
  void begin_kernel(std::vector<int64_t> group_shape, Value* space_value, size_t space_rank) {
    // The host's arguments are made with the first variant; the others
    // have the same parameters.
    const bool host = first_variant_;
    kb_ = std::make_unique<KernelBuilder>(context_, module_, variant_name_, std::move(group_shape), kernel_->loc());
    space_.assign(space_rank, nullptr);
    params_.clear();
    outputs_.clear();
    std::vector<std::pair<size_t, Value*>> dynamic;
    for (size_t a = 0; a < space_rank; ++a) {
      int64_t d = space_value ? space_value->type().shape()[a] : kDynamic;
      if (d != kDynamic) continue;
      Value* param = kb_->scalar_parameter(fmt::format("n{}", a), context_.i64_type());
      if (host) host_args_.push_back(host_op(OpKind::IndexCast, {space_host_[a]}, context_.i64_type()));
      dynamic.push_back({a, param});
    }
    for (Value* arg : body_->arguments()) {
      Type t = arg->type();
      if (!arg->has_uses()) continue;
      Value* from = kernel_->operand(arg->index());
      if (t.is(TypeKind::Tensor)) {
        params_[arg] = kb_->tensor_parameter(fmt::format("in{}", arg->index()), t.scalar(), dims_of(t), false);
        if (host) host_args_.push_back(from);
      } else if (t.is_index()) {
        continue;  // sizes of constants and random numbers: the space has them
      } else if (Operation* def = from->defining_op(); def && def->is(OpKind::Constant)) {
        Operation* copy = def->clone();
        kb_->builder().insert(copy);
        params_[arg] = copy->result();
      } else {
        params_[arg] = kb_->scalar_parameter(fmt::format("in{}", arg->index()), t);
        if (host) host_args_.push_back(from);
      }
    }
    for (size_t i = 0; i < yield_->num_operands(); ++i) {
      Value* v = yield_->operand(static_cast<unsigned>(i));
      Type t = v->type();
      outputs_.push_back(kb_->tensor_parameter(fmt::format("out{}", i), t.scalar(), dims_of(t), true));
      if (!host) continue;
      std::vector<Value*> sizes;
      for (size_t a = 0; a < t.rank(); ++a)
        if (t.shape()[a] == kDynamic) sizes.push_back(host_dim(v, static_cast<int64_t>(a)));
      Value* empty = host_.create(OpKind::GraphEmpty, std::span<Value* const>(sizes), std::span<const Type>(&t, 1))->result();
      mut_operands_.push_back(static_cast<int64_t>(3 + host_args_.size()));
      host_args_.push_back(empty);
    }
    // The space's sizes inside the kernel.
    for (size_t a = 0; a < space_rank; ++a) {
      int64_t d = space_value ? space_value->type().shape()[a] : kDynamic;
      if (d != kDynamic) space_[a] = kb_->index(d);
    }
    for (auto& [a, param] : dynamic) space_[a] = kb_->convert(param, context_.index_type());
  }

  // The variant is built; generate_points launches it on this grid.
  void end_kernel(Value* gx, Value* gy, Value* gz) {
    kb_->finish();
    made_.push_back({variant_name_, {gx, gy, gz}});
  }

  // Records the host sizes of the space (before begin_kernel).
  void set_space(Value* space_value) {
    space_host_.clear();
    for (size_t a = 0; a < space_value->type().rank(); ++a)
      space_host_.push_back(host_dim(space_value, static_cast<int64_t>(a)));
  }

  Value* host_product(size_t from, size_t to) {
    Value* n = host_index(1);
    for (size_t a = from; a < to; ++a) n = host_mul(n, space_host_[a]);
    return n;
  }

  Value* product(const std::vector<Value*>& sizes, size_t from, size_t to) {
    Value* n = kb_->index(1);
    for (size_t a = from; a < to; ++a) n = kb_->mul(n, sizes[a]);
    return n;
  }

  // The row-major position `linear` in `sizes[from, to)` as indices.
  std::vector<Value*> unravel(Value* linear, const std::vector<Value*>& sizes, size_t from, size_t to) {
    std::vector<Value*> indices(to - from);
    for (size_t a = to; a-- > from;) {
      if (a == from) {
        indices[a - from] = linear;
        break;
      }
      indices[a - from] = kb_->rem(linear, sizes[a]);
      linear = kb_->div(linear, sizes[a]);
    }
    return indices;
  }

  // The position, in a value of type `t`, of the space's position `at`:
  // trailing dimensions aligned; a static size 1 is index 0.
  std::vector<Value*> position_in(Type t, const std::vector<Value*>& at) {
    std::vector<Value*> indices;
    size_t rank = t.rank();
    for (size_t j = 0; j < rank; ++j) {
      Value* i = at[at.size() - rank + j];
      indices.push_back(t.shape()[j] == 1 ? kb_->index(0) : i);
    }
    return indices;
  }

  struct Scope {
    Scope* parent = nullptr;
    std::unordered_map<Value*, Value*> values;
    Value* find(Value* v) {
      for (Scope* s = this; s; s = s->parent)
        if (auto it = s->values.find(v); it != s->values.end()) return it->second;
      return nullptr;
    }
  };

  // The element of region value `v` at the space's position `at`.
  Value* element(Value* v, const std::vector<Value*>& at, Scope& scope) {
    if (Value* known = scope.find(v)) return known;
    Value* result;
    Operation* def = v->defining_op();
    if (!def) {
      Value* param = params_.at(v);
      Type t = v->type();
      if (!t.is(TypeKind::Tensor)) {
        result = param;
      } else {
        std::vector<Value*> indices;
        size_t rank = t.rank();
        for (size_t j = 0; j < rank; ++j) {
          Value* i = at[at.size() - rank + j];
          int64_t d = t.shape()[j];
          if (d == 1) {
            i = kb_->index(0);
          } else if (d == kDynamic && host_dim(v, static_cast<int64_t>(j)) != space_host_[at.size() - rank + j]) {
            // A size known at run time may be 1 and broadcast (unless it is
            // the space's own size); any other size must be the space's,
            // checked before the launch (NumPy's rule; never a read past
            // the operand).
            check_broadcast(v, static_cast<int64_t>(j), space_host_[at.size() - rank + j]);
            Value* size = kb_->dim(param, static_cast<int64_t>(j));
            Value* one = kb_->op(OpKind::CmpI, {size, kb_->index(1)}, context_.bool_type(),
                                 {{"predicate", context_.string_attr("eq")}});
            i = kb_->select(one, kb_->index(0), i);
          }
          indices.push_back(i);
        }
        result = kb_->load(param, indices);
      }
    } else if (def->is(OpKind::Constant)) {
      Operation* copy = def->clone();
      kb_->builder().insert(copy);
      result = copy->result();
    } else if (def->is(OpKind::GraphReduce)) {
      internal_error("generate-kernels", "a reduction's result used before it is computed");
    } else {
      std::vector<Value*> operands;
      for (Value* operand : def->operands()) {
        if (operand->type().is_index()) continue;  // sizes
        operands.push_back(element(operand, at, scope));
      }
      ElementPosition position;
      Type t = v->type();
      position.indices = position_in(t, at);
      position.linear_index = [&, t]() {
        Value* linear = kb_->index(0);
        size_t rank = t.rank();
        for (size_t j = 0; j < rank; ++j) {
          Value* size = t.shape()[j] == 1 ? kb_->index(1) : space_[space_.size() - rank + j];
          linear = kb_->add(kb_->mul(linear, size), position.indices[j]);
        }
        return linear;
      };
      result = emit_element(*kb_, def, operands, position);
    }
    scope.values[v] = result;
    return result;
  }

  void store_output(size_t i, const std::vector<Value*>& at, Scope& scope) {
    Value* v = yield_->operand(static_cast<unsigned>(i));
    kb_->store(element(v, at, scope), outputs_[i], position_in(v->type(), at));
  }

  // Every lane's `value` combined over the group of `lanes` lanes; the
  // result is the same in every lane.
  Value* group_reduce(Value* value, ReduceKind kind, int64_t lanes) {
    Type t = value->type();
    ReduceKind combine = kind == ReduceKind::Mean ? ReduceKind::Sum : kind;
    if (warp_reducible(kind, t)) {
      Value* warp_total = kb_->warp_reduce(value, *warp_reduce_kind_of(kind));
      if (lanes == 32) return warp_total;
      Value* partials = kb_->alloc_shared({lanes / 32}, t.scalar());
      Value* lane = kb_->id(OpKind::LocalId, 0);
      Value* first = kb_->op(OpKind::CmpI, {kb_->lane(), kb_->index(0)}, context_.bool_type(),
                             {{"predicate", context_.string_attr("eq")}});
      (void)lane;
      kb_->if_then(first, [&] { kb_->store(warp_total, partials, {kb_->warp()}); });
      kb_->barrier();
      Value* total = reduction_identity(*kb_, combine, t);
      for (int64_t w = 0; w < lanes / 32; ++w)
        total = reduction_combine(*kb_, combine, total, kb_->load(partials, {kb_->index(w)}));
      kb_->barrier();
      return total;
    }
    // A tree in shared memory (any kind and type).
    Value* slots = kb_->alloc_shared({lanes}, t.scalar());
    Value* lane = kb_->id(OpKind::LocalId, 0);
    kb_->store(value, slots, {lane});
    kb_->barrier();
    for (int64_t half = lanes / 2; half >= 1; half /= 2) {
      kb_->if_then(kb_->less(lane, kb_->index(half)), [&] {
        Value* mine = kb_->load(slots, {lane});
        Value* other = kb_->load(slots, {kb_->add(lane, kb_->index(half))});
        kb_->store(reduction_combine(*kb_, combine, mine, other), slots, {lane});
      });
      kb_->barrier();
    }
    Value* total = kb_->load(slots, {kb_->index(0)});
    kb_->barrier();
    return total;
  }

  // The mean's division by the reduced count.
  Value* finish_reduction(Value* total, ReduceKind kind, Value* count) {
    if (kind != ReduceKind::Mean) return total;
    Type t = total->type();
    if (t.is_float()) return kb_->op(OpKind::DivF, {total, kb_->convert(count, t)}, t);
    return kb_->op(OpKind::FloorDivSI, {total, kb_->convert(count, t)}, t);
  }

  // A schedule hint of this kernel that it cannot honour: a warning saying
  // why (the kernel is built as without it).
  void ignore_hint(std::string_view name, const std::string& why) {
    Attribute value = kernel_->attr(name);
    std::optional<ScheduleHint> hint = schedule_hint_by_name(name);
    internal_check(hint.has_value(), "generate-kernels", "ignore_hint of an attribute that is no schedule hint");
    std::string directive;
    switch (*hint) {
      case ScheduleHint::Tile: {
        std::vector<int64_t> sizes = value.int_array();
        directive = fmt::format("schedule.tile(({}))", fmt::join(sizes, ", "));
        break;
      }
      case ScheduleHint::Stages:
        directive = fmt::format("schedule.pipeline_stages({})", kernel_->int_attr(name));
        break;
      case ScheduleHint::AsyncCopy: directive = "schedule.async_copy(True)"; break;
      case ScheduleHint::SharedMemory: directive = "schedule.use_shared_memory(False)"; break;
      case ScheduleHint::SharedPadding:
        directive = fmt::format("schedule.use_shared_memory(padding={})", kernel_->int_attr(name));
        break;
      case ScheduleHint::Vectorize: directive = fmt::format("schedule.vectorize({})", kernel_->int_attr(name)); break;
      case ScheduleHint::Lanes: directive = fmt::format("schedule.lanes({})", kernel_->int_attr(name)); break;
    }
    report_at<DiagnosticKind::IrScheduleIgnored>(pass_, kernel_, directive, why);
  }

  // Each point of a stdlib kernel's space as --emit=tuning names it
  // ("BM=64, BN=64, BK=16").
  static std::vector<std::string> point_texts(const std::vector<std::string>& knob_names,
                                              const std::vector<std::vector<int64_t>>& points) {
    std::vector<std::string> texts;
    for (const std::vector<int64_t>& point : points) {
      std::string text;
      for (size_t i = 0; i < point.size(); ++i)
        text += fmt::format("{}{}={}", i ? ", " : "", i < knob_names.size() ? knob_names[i] : "K" + std::to_string(i),
                            point[i]);
      texts.push_back(text);
    }
    return texts;
  }

  // Per point, why the driver pruned it (its registers spill:
  // PassContext::pruned_points); empty for a point kept.
  std::vector<std::string> pruned_point_reasons(const std::string& tune_of, const std::vector<std::string>& texts) {
    std::vector<std::string> pruned(texts.size());
    if (pass_.pruned_points)
      if (auto it = pass_.pruned_points->find(tune_of); it != pass_.pruned_points->end())
        for (size_t p = 0; p < texts.size(); ++p)
          if (auto reason = it->second.find(texts[p]); reason != it->second.end()) pruned[p] = reason->second;
    return pruned;
  }

  // The default point, or the first kept one when the default was pruned.
  static size_t kept_default_point(const std::vector<std::string>& pruned, size_t default_point) {
    if (pruned[default_point].empty()) return default_point;
    auto first = static_cast<size_t>(std::find(pruned.begin(), pruned.end(), "") - pruned.begin());
    return first < pruned.size() ? first : default_point;
  }

  // A stdlib kernel launched through the tuner (docs/autotuning.md, "Stdlib
  // kernels"): every point of its space but those the driver found spilling
  // (PassContext::pruned_points; when the default point is one, the first
  // kept point is the default), each copied in as its own kernel and
  // launched on the grid `grid_of` gives for its knob values. Appends the
  // grids to `operands` and the variants to `attributes`, records the space
  // for --emit=tuning and returns the default point's kernel; null, with
  // nothing appended, when a point is not in the library.
  Operation* tuned_stdlib_variants(const KernelInstance& instance, const char* strategy,
                                   const std::vector<std::string>& knob_names,
                                   const std::vector<std::vector<int64_t>>& points, size_t default_point,
                                   const std::function<std::array<Value*, 3>(const std::vector<int64_t>&)>& grid_of,
                                   std::vector<Value*>& operands, std::vector<NamedAttribute>& attributes) {
    std::string tune_of = instance.symbol();
    std::vector<std::string> texts = point_texts(knob_names, points);
    std::vector<std::string> pruned = pruned_point_reasons(tune_of, texts);
    default_point = kept_default_point(pruned, default_point);
    Operation* default_kernel = nullptr;
    std::vector<Value*> grids;
    std::vector<Attribute> variants, point_texts;
    std::vector<std::string> variant_names(points.size());
    int64_t tune_default = 0;
    for (size_t p = 0; p < points.size(); ++p) {
      if (!pruned[p].empty()) continue;
      KernelInstance point = instance;
      point.knobs = points[p];
      std::string error;
      Operation* variant = pass_.library->instantiate(context_, module_, point, error);
      if (!variant) return nullptr;
      if (p == default_point) {
        tune_default = static_cast<int64_t>(variants.size());
        default_kernel = variant;
      }
      variant_names[p] = std::string(variant->symbol_name());
      variants.push_back(context_.symbol_attr(variant->symbol_name()));
      point_texts.push_back(context_.string_attr(texts[p]));
      std::array<Value*, 3> grid = grid_of(points[p]);
      grids.insert(grids.end(), grid.begin(), grid.end());
    }
    if (!default_kernel) return nullptr;
    operands.insert(operands.end(), grids.begin(), grids.end());
    attributes.push_back({"variants", context_.array_attr(variants)});
    attributes.push_back({"points", context_.array_attr(point_texts)});
    attributes.push_back({"tune_of", context_.string_attr(tune_of)});
    attributes.push_back({"tune_default", context_.int_attr(tune_default)});
    if (pass_.generated_tuning)
      pass_.generated_tuning->push_back(
          GeneratedTuning{tune_of, strategy, knob_names, points, variant_names, pruned, default_point, ""});
    return default_kernel;
  }

  // ---------------------------------------------------------------- strategies

  void elementwise() {
    Value* space_value = yield_->operand(0);
    size_t rank = space_value->type().rank();
    set_space(space_value);
    // VEC (schedule.vectorize(N)): each lane computes N consecutive
    // elements of the row-major numbering per step of the grid-stride loop;
    // at most GROUPS groups.
    int64_t width = knob("VEC");
    Value* total_host = host_product(0, rank);
    Value* groups = host_groups(host_ceil_div(total_host, kLanes * width), knob("GROUPS"));
    begin_kernel({kLanes}, space_value, rank);
    Value* total = product(space_, 0, rank);
    Value* lane = kb_->add(kb_->mul(kb_->id(OpKind::GroupId, 0), kb_->index(kLanes)), kb_->id(OpKind::LocalId, 0));
    Value* lanes = kb_->mul(kb_->id(OpKind::NumGroups, 0), kb_->index(kLanes));
    auto element = [&](Value* linear) {
      std::vector<Value*> at = unravel(linear, space_, 0, rank);
      Scope scope;
      for (size_t i = 0; i < outputs_.size(); ++i) store_output(i, at, scope);
    };
    if (width == 1) {
      kb_->for_loop(lane, total, lanes, element);
    } else {
      Value* first = kb_->mul(lane, kb_->index(width));
      Value* stride = kb_->mul(lanes, kb_->index(width));
      kb_->for_loop(first, total, stride, [&](Value* base) {
        for (int64_t j = 0; j < width; ++j) {
          Value* linear = j == 0 ? base : kb_->add(base, kb_->index(j));
          if (j == 0) element(linear);
          else kb_->if_then(kb_->less(linear, total), [&] { element(linear); });
        }
      });
    }
    end_kernel(groups, host_index(1), host_index(1));
  }

  // The space of a rows kernel: its first reduction's operand.
  Value* rows_space() {
    for (Operation* op : ops_)
      if (op->is(OpKind::GraphReduce)) return op->operand(0);
    internal_error("generate-kernels", "a rows kernel without a reduction");
  }

  void rows() {
    std::vector<Operation*> reductions;
    for (Operation* op : ops_)
      if (op->is(OpKind::GraphReduce)) reductions.push_back(op);
    Value* space_value = rows_space();
    Type space_type = space_value->type();
    size_t rank = space_type.rank();
    int64_t lanes = knob("LANES");
    set_space(space_value);
    Value* row_count_host = host_product(0, rank - 1);
    Value* groups = host_groups(row_count_host);
    begin_kernel({lanes}, space_value, rank);
    Value* row_count = product(space_, 0, rank - 1);
    Value* columns = space_[rank - 1];
    Value* lane = kb_->id(OpKind::LocalId, 0);
    Value* step = kb_->index(lanes);
    kb_->for_loop(kb_->id(OpKind::GroupId, 0), row_count, kb_->id(OpKind::NumGroups, 0), [&](Value* row) {
      std::vector<Value*> row_at = unravel(row, space_, 0, rank - 1);
      Scope row_scope;
      for (Operation* r : reductions) {
        ReduceKind kind = reduce_kind(r);
        Type acc_type = accumulation_type(context_, r->result()->type().scalar());
        ReduceKind combine = kind == ReduceKind::Mean ? ReduceKind::Sum : kind;
        Value* identity = reduction_identity(*kb_, combine, acc_type);
        std::vector<Value*> partial = kb_->for_loop(kb_->index(0), columns, step, {identity},
                                                    [&](Value* start, std::vector<Value*> carried) {
          Value* column = kb_->add(start, lane);
          return kb_->if_else(kb_->less(column, columns), {acc_type}, [&] {
            std::vector<Value*> at = row_at;
            at.push_back(column);
            Scope scope{&row_scope, {}};
            Value* x = kb_->convert(element(r->operand(0), at, scope), acc_type);
            return std::vector<Value*>{reduction_combine(*kb_, combine, carried[0], x)};
          }, [&] { return carried; });
        });
        Value* total = finish_reduction(group_reduce(partial[0], kind, lanes), kind, columns);
        row_scope.values[r->result()] = kb_->convert(total, context_.scalar_type(r->result()->type().scalar()));
      }
      // Outputs over the whole row, then those with one value per row.
      std::vector<size_t> full, per_row;
      for (size_t i = 0; i < outputs_.size(); ++i) {
        Type t = yield_->operand(static_cast<unsigned>(i))->type();
        bool whole = t.rank() == rank && t.shape()[rank - 1] != 1;
        (whole ? full : per_row).push_back(i);
      }
      if (!full.empty())
        kb_->for_loop(kb_->index(0), columns, step, [&](Value* start) {
          Value* column = kb_->add(start, lane);
          kb_->if_then(kb_->less(column, columns), [&] {
            std::vector<Value*> at = row_at;
            at.push_back(column);
            Scope scope{&row_scope, {}};
            for (size_t i : full) store_output(i, at, scope);
          });
        });
      if (!per_row.empty()) {
        Value* first = kb_->op(OpKind::CmpI, {lane, kb_->index(0)}, context_.bool_type(),
                               {{"predicate", context_.string_attr("eq")}});
        kb_->if_then(first, [&] {
          std::vector<Value*> at = row_at;
          at.push_back(kb_->index(0));
          Scope scope{&row_scope, {}};
          for (size_t i : per_row) store_output(i, at, scope);
        });
      }
    });
    end_kernel(groups, host_index(1), host_index(1));
  }

  void reduce() {
    Operation* r = ops_.back();
    internal_check(ops_.size() == 1 && r->is(OpKind::GraphReduce), "generate-kernels", "a reduce group of one reduction");
    Value* x = r->operand(0);
    Type xt = x->type();
    size_t rank = xt.rank();
    std::vector<int64_t> axes = r->attr("axes").int_array();
    std::vector<size_t> kept, reduced;
    for (size_t a = 0; a < rank; ++a)
      (std::find(axes.begin(), axes.end(), static_cast<int64_t>(a)) != axes.end() ? reduced : kept).push_back(a);
    // Space: the kept axes, then the reduced ones (a permutation of x's).
    set_space(x);
    std::vector<Value*> host_sizes = space_host_;
    Value* out_count_host = host_index(1);
    for (size_t a : kept) out_count_host = host_mul(out_count_host, host_sizes[a]);
    int64_t reduced_static = 1;
    for (size_t a : reduced) {
      int64_t d = xt.shape()[a];
      reduced_static = reduced_static == kDynamic || d == kDynamic ? kDynamic : reduced_static * d;
    }
    bool cooperative = reduced_static == kDynamic || reduced_static >= kLanes;
    int64_t lanes = knob("LANES");
    Value* groups = host_groups(cooperative ? out_count_host : host_ceil_div(out_count_host, lanes));
    begin_kernel({lanes}, x, rank);
    std::vector<Value*> kept_sizes, reduced_sizes;
    for (size_t a : kept) kept_sizes.push_back(space_[a]);
    for (size_t a : reduced) reduced_sizes.push_back(space_[a]);
    Value* out_count = product(kept_sizes, 0, kept_sizes.size());
    Value* reduced_count = product(reduced_sizes, 0, reduced_sizes.size());
    ReduceKind kind = reduce_kind(r);
    ReduceKind combine = kind == ReduceKind::Mean ? ReduceKind::Sum : kind;
    Type acc_type = accumulation_type(context_, r->result()->type().scalar());
    Type result_type = context_.scalar_type(r->result()->type().scalar());
    bool keepdims = r->has_attr("keepdims");
    auto full_position = [&](const std::vector<Value*>& k, const std::vector<Value*>& red) {
      std::vector<Value*> at(rank);
      for (size_t i = 0; i < kept.size(); ++i) at[kept[i]] = k[i];
      for (size_t i = 0; i < reduced.size(); ++i) at[reduced[i]] = red[i];
      return at;
    };
    auto out_position = [&](const std::vector<Value*>& k) {
      if (!keepdims) return k;
      std::vector<Value*> zeros(reduced.size(), kb_->index(0));
      return full_position(k, zeros);
    };
    auto accumulate = [&](Value* lo, Value* step, const std::vector<Value*>& k) {
      Value* identity = reduction_identity(*kb_, combine, acc_type);
      return kb_->for_loop(lo, reduced_count, step, {identity}, [&](Value* linear, std::vector<Value*> carried) {
        std::vector<Value*> red = unravel(linear, reduced_sizes, 0, reduced_sizes.size());
        Scope scope;
        Value* e = kb_->convert(element(x, full_position(k, red), scope), acc_type);
        return std::vector<Value*>{reduction_combine(*kb_, combine, carried[0], e)};
      })[0];
    };
    Value* lane = kb_->id(OpKind::LocalId, 0);
    if (cooperative) {
      kb_->for_loop(kb_->id(OpKind::GroupId, 0), out_count, kb_->id(OpKind::NumGroups, 0), [&](Value* o) {
        std::vector<Value*> k = unravel(o, kept_sizes, 0, kept_sizes.size());
        Value* partial = accumulate(lane, kb_->index(lanes), k);
        Value* total = finish_reduction(group_reduce(partial, kind, lanes), kind, reduced_count);
        Value* first = kb_->op(OpKind::CmpI, {lane, kb_->index(0)}, context_.bool_type(),
                               {{"predicate", context_.string_attr("eq")}});
        kb_->if_then(first, [&] { kb_->store(kb_->convert(total, result_type), outputs_[0], out_position(k)); });
      });
    } else {
      Value* first = kb_->add(kb_->mul(kb_->id(OpKind::GroupId, 0), kb_->index(lanes)), lane);
      Value* stride = kb_->mul(kb_->id(OpKind::NumGroups, 0), kb_->index(lanes));
      kb_->for_loop(first, out_count, stride, [&](Value* o) {
        std::vector<Value*> k = unravel(o, kept_sizes, 0, kept_sizes.size());
        Value* total = finish_reduction(accumulate(kb_->index(0), kb_->index(1), k), kind, reduced_count);
        kb_->store(kb_->convert(total, result_type), outputs_[0], out_position(k));
      });
    }
    end_kernel(groups, host_index(1), host_index(1));
  }

  // C[BATCH, M, N] = A[BATCH, M, K] @ B[BATCH, K, N] with the stdlib GEMM;
  // graph-decompose made the batch dimensions equal and the operands' types
  // ones it has an instance for. Other products (f64, integers), and any
  // product when no library is given, get a generated kernel.
  bool matmul() {
    Operation* mm = ops_.back();
    Type at = mm->operand(0)->type(), bt = mm->operand(1)->type(), ct = mm->result()->type();
    ScalarType storage = at.scalar(), acc = ct.scalar();
    bool stdlib_form = acc == ScalarType::F32 && bt.scalar() == storage &&
                       (storage == ScalarType::F32 || storage == ScalarType::F16 || storage == ScalarType::BF16 ||
                        storage == ScalarType::FP8E4M3 || storage == ScalarType::FP8E5M2);
    if (!stdlib_form || !pass_.library) {
      for (std::string_view name : schedule_hint_names())
        if (kernel_->has_attr(name))
          ignore_hint(name, stdlib_form ? "no stdlib library was given, so the product is a generated kernel with one "
                                          "lane per element of the result"
                                        : "a product of " + std::string(scalar_info(storage).name) + " into " +
                                              std::string(scalar_info(acc).name) +
                                              " is a generated kernel with one lane per element of the result (the "
                                              "stdlib GEMM takes float operands with f32 accumulation)");
      generate_points(&Generator::simple_matmul, "matmul");
      return true;
    }
    // Schedule hints (ir/core/schedule_hints.h): a pipelined product runs on
    // the tensor cores (gemm_tc: async copies into double-buffered shared
    // tiles, f16/bf16 operands); a tile picks the point of the GEMM that
    // runs (BM, BN, BK of the SIMT one, BM_TC, BN_TC, BK_TC of gemm_tc).
    std::vector<int64_t> tile = kernel_->has_attr("tile") ? kernel_->attr("tile").int_array() : std::vector<int64_t>{};
    int64_t stages = kernel_->int_attr("stages", 0);
    bool pipelined = stages >= 2 || (kernel_->has_attr("async_copy") && kernel_->attr("async_copy").bool_value());
    bool sixteen_bit = storage == ScalarType::F16 || storage == ScalarType::BF16;
    bool tensor_cores = pipelined && sixteen_bit;
    if (pipelined && !sixteen_bit)
      ignore_hint(stages >= 2 ? "stages" : "async_copy",
                  "the stdlib's pipelined GEMM (gemm_tc) takes f16 or bf16 operands and these are " +
                      std::string(scalar_info(storage).name) + "; the SIMT GEMM runs");
    if (tensor_cores && stages > 2)
      ignore_hint("stages", "the stdlib's pipelined GEMM (gemm_tc) has 2 stages (double-buffered shared tiles)");
    if (kernel_->has_attr("shared_memory") && !kernel_->attr("shared_memory").bool_value())
      ignore_hint("shared_memory", "the stdlib GEMM always stages its operand tiles in shared memory");
    if (kernel_->has_attr("shared_padding")) {
      int64_t padding = kernel_->int_attr("shared_padding");
      if (tensor_cores && padding != 0)
        ignore_hint("shared_padding", "the tensor-core GEMM's shared tiles are XOR-swizzled, not padded");
      else if (!tensor_cores && padding != 1)
        ignore_hint("shared_padding", "the SIMT GEMM pads its shared tile of A by one element per row");
    }
    // Code for the CPU alone takes the SIMT GEMM's CPU form (stdlib/
    // gemm_cpu.tsr: no staging in shared memory, the same bits, the default
    // point's grid) unless a tile directive picks a point of `gemm`.
    bool cpu_form = pass_.cpu_only && !tensor_cores && tile.empty() &&
                    (storage == ScalarType::F32 || sixteen_bit);
    std::string file = cpu_form ? "gemm_cpu" : "gemm";
    KernelInstance instance{file, tensor_cores ? "gemm_tc" : file,
                            {{"T", std::string(scalar_info(storage).name)}, {"ACC", std::string(scalar_info(acc).name)}}};
    instance.knobs = tile;
    // Without a schedule.tile, the GEMM (SIMT or gemm_tc) is launched through the tuner:
    // every point of its space, each on its own grid (docs/autotuning.md,
    // "Stdlib kernels"); the default point's kernel is the launch's `kernel`.
    // The CPU form has no knobs: it is faster on the CPU than every point.
    std::vector<std::string> knob_names;
    size_t default_point = 0;
    std::vector<std::vector<int64_t>> points;
    if (pass_.tune_stdlib && !cpu_form && tile.empty())
      points = pass_.library->autotune_points(context_, instance, knob_names, default_point);
    // (The default's kernel gives the tile of C; a point the driver pruned
    // must not be in the module at all.)
    if (points.size() > 1) {
      default_point =
          kept_default_point(pruned_point_reasons(instance.symbol(), point_texts(knob_names, points)), default_point);
      instance.knobs = points[default_point];
    }
    std::string error;
    Operation* gemm = pass_.library->instantiate(context_, module_, instance, error);
    if (!gemm && !instance.knobs.empty()) {
      if (!tile.empty()) ignore_hint("tile", error);
      instance.knobs.clear();
      points.clear();
      gemm = pass_.library->instantiate(context_, module_, instance, error);
    }
    if (!gemm) {
      report_at<DiagnosticKind::IrStdlibUnavailable>(pass_, mm, error);
      return false;
    }
    // The tile of C one group computes.
    int64_t tile_m = tensor_cores ? kGemmTcTile : kGemmTile, tile_n = tile_m;
    if (Attribute point = gemm->attr("stdlib_point")) {
      std::vector<int64_t> values = point.int_array();
      tile_m = values.at(0);
      tile_n = values.at(1);
    }
    Value* a = outer(mm->operand(0));
    Value* b = outer(mm->operand(1));
    size_t rank = ct.rank();
    // Sizes: batch (the product of the leading dimensions), M, K, N.
    Value* batch = host_index(1);
    int64_t batch_static = 1;
    for (size_t d = 0; d + 2 < rank; ++d) {
      batch = host_mul(batch, host_dim(mm->result(), static_cast<int64_t>(d)));
      int64_t s = ct.shape()[d];
      batch_static = batch_static == kDynamic || s == kDynamic ? kDynamic : batch_static * s;
    }
    Value* m = host_dim(mm->result(), static_cast<int64_t>(rank - 2));
    Value* n = host_dim(mm->result(), static_cast<int64_t>(rank - 1));
    Value* k = host_dim(mm->operand(0), static_cast<int64_t>(at.rank() - 1));
    int64_t m_s = ct.shape()[rank - 2], n_s = ct.shape()[rank - 1], k_s = at.shape()[at.rank() - 1];
    auto as3 = [&](Value* v, Type t, Value* rows, int64_t rows_s, Value* cols, int64_t cols_s) -> Value* {
      if (t.rank() == 3) return v;
      std::vector<int64_t> dims{batch_static, rows_s, cols_s};
      std::vector<Value*> sizes;
      if (batch_static == kDynamic) sizes.push_back(batch);
      if (rows_s == kDynamic) sizes.push_back(rows);
      if (cols_s == kDynamic) sizes.push_back(cols);
      std::vector<Value*> operands{v};
      operands.insert(operands.end(), sizes.begin(), sizes.end());
      return host_op(OpKind::GraphReshape, operands, context_.tensor_type(dims, t.scalar()));
    };
    Value* a3 = as3(a, at, m, m_s, k, k_s);
    Value* b3 = as3(b, bt, k, k_s, n, n_s);
    std::vector<int64_t> c_dims{batch_static, m_s, n_s};
    std::vector<Value*> c_sizes;
    if (batch_static == kDynamic) c_sizes.push_back(batch);
    if (m_s == kDynamic) c_sizes.push_back(m);
    if (n_s == kDynamic) c_sizes.push_back(n);
    Type c_type = context_.tensor_type(c_dims, acc);
    Value* c = host_.create(OpKind::GraphEmpty, std::span<Value* const>(c_sizes), std::span<const Type>(&c_type, 1))
                   ->result();
    Type acc_scalar = context_.scalar_type(acc);
    Value* alpha = host_.constant_float(1.0, acc_scalar);
    Value* beta = host_.constant_float(0.0, acc_scalar);
    // gemm: groups over (N, M) tiles; gemm_tc: over (M, N) tiles.
    std::vector<Value*> operands;
    std::vector<NamedAttribute> attributes;
    auto knob = [&](std::string_view name, size_t otherwise) {
      auto it = std::find(knob_names.begin(), knob_names.end(), name);
      return it == knob_names.end() ? otherwise : static_cast<size_t>(it - knob_names.begin());
    };
    size_t bm = knob(tensor_cores ? "BM_TC" : "BM", 0), bn = knob(tensor_cores ? "BN_TC" : "BN", 1);
    bool knobs_known = std::all_of(points.begin(), points.end(),
                                   [&](const std::vector<int64_t>& p) { return p.size() > std::max(bm, bn); });
    Operation* tuned = nullptr;
    if (points.size() > 1 && knobs_known)
      tuned = tuned_stdlib_variants(instance, "matmul", knob_names, points, default_point,
                                    [&](const std::vector<int64_t>& point) {
                                      Value* m_groups = host_ceil_div(m, point[bm]);
                                      Value* n_groups = host_ceil_div(n, point[bn]);
                                      return tensor_cores ? std::array<Value*, 3>{m_groups, n_groups, batch}
                                                          : std::array<Value*, 3>{n_groups, m_groups, batch};
                                    },
                                    operands, attributes);
    if (!tuned) {
      Value* m_groups = host_ceil_div(m, tile_m);
      Value* n_groups = host_ceil_div(n, tile_n);
      operands = {tensor_cores ? m_groups : n_groups, tensor_cores ? n_groups : m_groups, batch};
    }
    auto c_operand = static_cast<int64_t>(operands.size() + 2);
    for (Value* v : {a3, b3, c, alpha, beta}) operands.push_back(v);
    attributes.push_back({"kernel", context_.symbol_attr((tuned ? tuned : gemm)->symbol_name())});
    attributes.push_back({"mut_operands", context_.int_array_attr(std::vector<int64_t>{c_operand})});
    Operation* launch = host_.create(OpKind::GraphLaunch, std::span<Value* const>(operands),
                                     std::span<const Type>(&c_type, 1), std::move(attributes));
    Value* result = launch->result();
    if (rank != 3) {
      std::vector<Value*> reshape{result};
      for (size_t d = 0; d < rank; ++d)
        if (ct.shape()[d] == kDynamic) reshape.push_back(host_dim(mm->result(), static_cast<int64_t>(d)));
      result = host_op(OpKind::GraphReshape, reshape, ct);
    }
    kernel_->result(0)->replace_all_uses_with(result);
    kernel_->erase();
    return true;
  }

  // graph.attention or graph.attention_grad in the flash kernels' form
  // (graph-decompose left only those whole, and only with a library):
  // stdlib/attention.tsr's kernels on [BH, S, D] views, BH the product of
  // the batch dimensions. The backward takes the rows' log-sum-exp from the
  // forward launched for its o (the usual case: grad of a function that
  // calls attention) or else runs the forward again for it.
  bool attention() {
    Operation* op = ops_.back();
    if (!pass_.library || !flash_attention_form(op))
      internal_error("generate-kernels", "an attention kernel without the flash kernels' form or a stdlib");
    Type qt = op->operand(0)->type();
    size_t rank = qt.rank();
    int64_t head = qt.shape()[rank - 1];
    ScalarType element = qt.scalar();
    // The forward's tiles are its knobs (BQ query rows per group, BKV keys
    // per block): schedule.tile((BQ, BKV)) pins them; the other hints have
    // nothing to set in these kernels.
    std::vector<int64_t> tile = kernel_->has_attr("tile") ? kernel_->attr("tile").int_array() : std::vector<int64_t>{};
    for (std::string_view name : schedule_hint_names())
      if (kernel_->has_attr(name) && name != "tile")
        ignore_hint(name, "attention runs the stdlib's flash-attention kernels on the SIMT cores, whose only knobs "
                          "are the forward's tiles (schedule.tile((BQ, BKV)))");
    bool grad = op->is(OpKind::GraphAttentionGrad);
    std::vector<std::pair<std::string, std::string>> params{{"T", std::string(scalar_info(element).name)},
                                                            {"HEAD_DIM", std::to_string(head)}};
    auto instance = [&](const char* kernel) -> Operation* {
      KernelInstance wanted{"attention", kernel, params};
      std::string error;
      Operation* f = pass_.library->instantiate(context_, module_, wanted, error);
      if (!f) report_at<DiagnosticKind::IrStdlibUnavailable>(pass_, op, error);
      return f;
    };

    int64_t bh = 1;
    for (size_t a = 0; a + 2 < rank; ++a) bh *= qt.shape()[a];
    Value* sq = host_dim(op->operand(0), static_cast<int64_t>(rank - 2));
    Value* sk = host_dim(op->operand(1), static_cast<int64_t>(rank - 2));
    int64_t sq_s = qt.shape()[rank - 2], sk_s = op->operand(1)->type().shape()[rank - 2];
    auto view = [&](Value* v, Value* s, int64_t s_static, ScalarType t) -> Value* {
      if (rank == 3) return v;  // [BH, S, D] already
      std::vector<Value*> operands{v};
      if (s_static == kDynamic) operands.push_back(s);
      return host_op(OpKind::GraphReshape, operands, context_.tensor_type(std::vector<int64_t>{bh, s_static, head}, t));
    };
    auto empty = [&](std::vector<int64_t> dims, Value* s, ScalarType t) -> Value* {
      std::vector<Value*> sizes;
      if (dims[1] == kDynamic) sizes.push_back(s);
      Type type = context_.tensor_type(dims, t);
      return host_.create(OpKind::GraphEmpty, std::span<Value* const>(sizes), std::span<const Type>(&type, 1))->result();
    };
    // A launch on the grid (groups, BH); `grids` and `attributes` are a
    // tuned launch's (tuned_stdlib_variants: a grid per variant), else the
    // one grid.
    auto launch = [&](Operation* kernel, Value* groups, std::vector<Value*> args, std::vector<int64_t> mut,
                      std::vector<Value*> grids = {}, std::vector<NamedAttribute> attributes = {}) {
      std::vector<Value*> operands = grids.empty() ? std::vector<Value*>{groups, host_index(bh), host_index(1)} : grids;
      auto first_arg = static_cast<int64_t>(operands.size());
      operands.insert(operands.end(), args.begin(), args.end());
      std::vector<Type> types;
      for (int64_t& m : mut) {
        m += first_arg;
        types.push_back(operands[static_cast<size_t>(m)]->type());
      }
      attributes.push_back({"kernel", context_.symbol_attr(kernel->symbol_name())});
      attributes.push_back({"mut_operands", context_.int_array_attr(mut)});
      return host_.create(OpKind::GraphLaunch, std::span<Value* const>(operands), std::span<const Type>(types),
                          std::move(attributes));
    };
    // The backward's kernels have knobs: flash_attention_bwd's BQ_KV
    // (queries per block) leaves its grid (SPLIT, BH) as it is;
    // _bwd_prep's and _bwd_dq's ROWS (query rows per group) makes theirs
    // (ceil(SQ / ROWS), BH). `grid_of` gives a point's grid from the knob
    // names and its values. Every point is launched through the tuner unless
    // tuning is off (the default point alone, on its grid).
    using PointGrid =
        std::function<std::array<Value*, 3>(const std::vector<std::string>&, const std::vector<int64_t>&)>;
    auto launch_tuned = [&](const char* name, const PointGrid& grid_of, std::vector<Value*> args,
                            std::vector<int64_t> mut) -> Operation* {
      KernelInstance wanted{"attention", name, params};
      std::vector<std::string> knob_names;
      size_t default_point = 0;
      std::vector<std::vector<int64_t>> points =
          pass_.library->autotune_points(context_, wanted, knob_names, default_point);
      std::vector<Value*> grids;
      std::vector<NamedAttribute> attributes;
      Operation* kernel = nullptr;
      if (pass_.tune_stdlib && points.size() > 1)
        kernel = tuned_stdlib_variants(
            wanted, "attention", knob_names, points, default_point,
            [&](const std::vector<int64_t>& point) { return grid_of(knob_names, point); }, grids, attributes);
      if (!kernel) {  // (tuned_stdlib_variants appended nothing)
        kernel = instance(name);
        if (!kernel) return nullptr;
        if (points.empty())
          internal_error("generate-kernels", std::string("the stdlib kernel '") + name + "' has no autotune space");
        std::vector<int64_t> point =
            kernel->attr("stdlib_point") ? kernel->attr("stdlib_point").int_array() : points[default_point];
        std::array<Value*, 3> grid = grid_of(knob_names, point);
        grids.assign(grid.begin(), grid.end());
      }
      return launch(kernel, nullptr, std::move(args), std::move(mut), std::move(grids), std::move(attributes));
    };
    auto split_grid = [&](Value* split) -> PointGrid {
      return [this, split, bh](const std::vector<std::string>&, const std::vector<int64_t>&) {
        return std::array<Value*, 3>{split, host_index(bh), host_index(1)};
      };
    };
    Value* q_outer = outer(op->operand(0));
    Value* k_outer = outer(op->operand(1));
    Value* v_outer = outer(op->operand(2));
    Value* q = view(q_outer, sq, sq_s, element);
    Value* k = view(k_outer, sk, sk_s, element);
    Value* v = view(v_outer, sk, sk_s, element);
    double scale_value = op->has_attr("scale") ? op->attr("scale").float_value() : 1.0 / std::sqrt(static_cast<double>(head));
    bool is_causal = op->has_attr("causal");
    Value* scale = host_.constant_float(scale_value, context_.f32_type());
    Value* causal = host_.constant_bool(is_causal);
    // flash_attention_bwd's key rows per group: stdlib/attention.tsr's KR.
    int64_t key_rows = 128 / (head / 16);
    // The forward: o and the rows' log-sum-exp, launched through the tuner
    // (every point, each on its grid (ceil(SQ / BQ), BH)) unless a tile
    // directive pins a point or tuning is off (the default point alone).
    auto run_forward = [&]() -> Operation* {
      KernelInstance forward{"attention", "flash_attention", params};
      std::vector<std::string> knob_names;
      size_t default_point = 0;
      std::vector<std::vector<int64_t>> points =
          pass_.library->autotune_points(context_, forward, knob_names, default_point);
      auto bq_at = std::find(knob_names.begin(), knob_names.end(), "BQ");
      if (points.empty() || bq_at == knob_names.end()) {
        std::string error;
        if (pass_.library->instantiate(context_, module_, forward, error))
          error = "the stdlib kernel '" + forward.key() + ".flash_attention' has no knob BQ (rebuild tesserac)";
        report_at<DiagnosticKind::IrStdlibUnavailable>(pass_, op, error);
        return nullptr;
      }
      auto bq = static_cast<size_t>(bq_at - knob_names.begin());
      Operation* kernel = nullptr;
      if (!tile.empty()) {
        forward.knobs = tile;
        std::string error;
        kernel = pass_.library->instantiate(context_, module_, forward, error);
        if (!kernel) {
          ignore_hint("tile", error);
          forward.knobs.clear();
        }
      }
      std::vector<Value*> operands;
      std::vector<NamedAttribute> attributes;
      if (!kernel && pass_.tune_stdlib && points.size() > 1)
        kernel = tuned_stdlib_variants(forward, "attention", knob_names, points, default_point,
                                       [&](const std::vector<int64_t>& point) {
                                         return std::array<Value*, 3>{host_ceil_div(sq, point[bq]), host_index(bh),
                                                                      host_index(1)};
                                       },
                                       operands, attributes);
      if (!kernel) {
        std::string error;
        kernel = pass_.library->instantiate(context_, module_, forward, error);
        if (!kernel) {
          report_at<DiagnosticKind::IrStdlibUnavailable>(pass_, op, error);
          return nullptr;
        }
      }
      if (operands.empty()) {
        int64_t point_bq = kernel->attr("stdlib_point") ? kernel->attr("stdlib_point").int_array().at(bq)
                                                        : points[default_point][bq];
        operands = {host_ceil_div(sq, point_bq), host_index(bh), host_index(1)};
      }
      Value* o = empty({bh, sq_s, head}, sq, element);
      Value* lse = empty({bh, sq_s}, sq, ScalarType::F32);
      auto first_arg = static_cast<int64_t>(operands.size());
      for (Value* arg : {q, k, v, o, lse, scale, causal}) operands.push_back(arg);
      std::vector<Type> types{o->type(), lse->type()};
      attributes.push_back({"kernel", context_.symbol_attr(kernel->symbol_name())});
      attributes.push_back({"mut_operands", context_.int_array_attr(std::vector<int64_t>{first_arg + 3, first_arg + 4})});
      return host_.create(OpKind::GraphLaunch, std::span<Value* const>(operands), std::span<const Type>(types),
                          std::move(attributes));
    };
    // The results as the operation's types, by result number.
    std::vector<Value*> results;
    // Only the sequence length (axis rank - 2) may be known at run time.
    auto as_type_of = [&](Value* v3, Value* like_inner, Value* s) {
      Type t = like_inner->type();
      if (rank == 3) return v3;
      std::vector<Value*> operands{v3};
      if (t.shape()[rank - 2] == kDynamic) operands.push_back(s);
      return host_op(OpKind::GraphReshape, operands, t);
    };
    if (!grad) {
      Operation* run = run_forward();
      if (!run) return false;
      results.push_back(as_type_of(run->result(0), op->result(), sq));
      flash_forwards_[results.back()] = {q_outer, k_outer, v_outer, scale_value, is_causal, run->result(1)};
    } else {
      Value* o_outer = outer(op->operand(3));
      Value* lse = nullptr;
      if (auto it = flash_forwards_.find(o_outer); it != flash_forwards_.end()) {
        const FlashForward& f = it->second;
        if (f.q == q_outer && f.k == k_outer && f.v == v_outer && f.scale == scale_value && f.causal == is_causal)
          lse = f.lse;
      }
      if (!lse) {
        Operation* run = run_forward();
        if (!run) return false;
        lse = run->result(1);
      }
      Value* o = view(o_outer, sq, sq_s, element);
      Value* d_out = view(outer(op->operand(4)), sq, sq_s, element);
      // SPLIT groups per head, each with its partial sum of dq.
      int64_t split_wanted = std::max<int64_t>(1, (kAttentionGroups + bh - 1) / bh);
      int64_t split_s = sk_s == kDynamic ? kDynamic : std::clamp<int64_t>((sk_s + key_rows - 1) / key_rows, 1, split_wanted);
      Value* split = split_s != kDynamic
                         ? host_index(split_s)
                         : host_max(host_min(host_ceil_div(sk, key_rows), host_index(split_wanted)), host_index(1));
      std::vector<Value*> acc_sizes;
      if (split_s == kDynamic) acc_sizes.push_back(split);
      if (sq_s == kDynamic) acc_sizes.push_back(sq);
      Type acc_type = context_.tensor_type(std::vector<int64_t>{split_s, bh, sq_s, head}, ScalarType::F32);
      Value* dq_acc = host_.create(OpKind::GraphEmpty, std::span<Value* const>(acc_sizes),
                                   std::span<const Type>(&acc_type, 1))->result();
      Value* delta = empty({bh, sq_s}, sq, ScalarType::F32);
      // _bwd_prep and _bwd_dq: a group per ROWS query rows.
      PointGrid rows_grid = [&](const std::vector<std::string>& knob_names, const std::vector<int64_t>& point) {
        auto at = std::find(knob_names.begin(), knob_names.end(), "ROWS");
        if (at == knob_names.end()) internal_error("generate-kernels", "a flash backward kernel without the knob ROWS");
        return std::array<Value*, 3>{host_ceil_div(sq, point.at(static_cast<size_t>(at - knob_names.begin()))),
                                     host_index(bh), host_index(1)};
      };
      Operation* prep = launch_tuned("flash_attention_bwd_prep", rows_grid, {o, d_out, delta, dq_acc}, {2, 3});
      if (!prep) return false;
      Value* dk = empty({bh, sk_s, head}, sk, element);
      Value* dv = empty({bh, sk_s, head}, sk, element);
      Operation* backward =
          launch_tuned("flash_attention_bwd", split_grid(split),
                       {q, k, v, d_out, lse, prep->result(0), dk, dv, prep->result(1), scale, causal}, {6, 7, 8});
      if (!backward) return false;
      Value* dq = empty({bh, sq_s, head}, sq, element);
      Operation* sum = launch_tuned("flash_attention_bwd_dq", rows_grid, {backward->result(2), dq}, {1});
      if (!sum) return false;
      results.push_back(as_type_of(sum->result(0), op->result(0), sq));
      results.push_back(as_type_of(backward->result(0), op->result(1), sk));
      results.push_back(as_type_of(backward->result(1), op->result(2), sk));
    }
    for (unsigned i = 0; i < kernel_->num_results(); ++i) {
      Value* yielded = yield_->operand(i);
      internal_check(yielded->defining_op() == op, "generate-kernels", "an attention kernel yields another value");
      kernel_->result(i)->replace_all_uses_with(results.at(yielded->index()));
    }
    kernel_->erase();
    return true;
  }

  // graph.sort: the stdlib's sort_rows (stdlib/sort.tsr) on an [R, C] view
  // of the operand with the sorted axis last (a transposed view when it is
  // not; the reshape copies when the view is not contiguous), R the product
  // of the other axes, grid-stride over rows; its values, or with `indices`
  // its columns (np.argsort's), viewed back in the operand's axis order.
  bool sort() {
    Operation* op = ops_.back();
    Type xt = op->operand(0)->type();
    size_t rank = xt.rank();
    auto axis = static_cast<size_t>(op->int_attr("axis"));
    ScalarType element = xt.scalar();
    KernelInstance instance{"sort", "sort_rows", {{"T", std::string(scalar_info(element).name)}}};
    std::string error;
    Operation* kernel = pass_.library ? pass_.library->instantiate(context_, module_, instance, error) : nullptr;
    if (!kernel) {
      report_at<DiagnosticKind::IrStdlibUnavailable>(pass_, op, pass_.library ? error : "no stdlib library");
      return false;
    }
    // The axes with the sorted one last.
    std::vector<int64_t> perm, moved_dims;
    for (size_t a = 0; a < rank; ++a)
      if (a != axis) perm.push_back(static_cast<int64_t>(a));
    perm.push_back(static_cast<int64_t>(axis));
    std::vector<Value*> moved_sizes;
    for (int64_t a : perm) {
      moved_dims.push_back(xt.shape()[static_cast<size_t>(a)]);
      moved_sizes.push_back(host_dim(op->operand(0), a));
    }
    auto reshape = [&](Value* v, const std::vector<int64_t>& dims, const std::vector<Value*>& sizes, ScalarType t) {
      std::vector<Value*> operands{v};
      for (size_t a = 0; a < dims.size(); ++a)
        if (dims[a] == kDynamic) operands.push_back(sizes[a]);
      return host_op(OpKind::GraphReshape, operands, context_.tensor_type(dims, t));
    };
    Value* x = outer(op->operand(0));
    if (axis + 1 != rank)
      x = host_op(OpKind::GraphTranspose, {x}, context_.tensor_type(moved_dims, element),
                  {{"perm", context_.int_array_attr(perm)}});
    Value* rows = host_index(1);
    int64_t rows_s = 1;
    for (size_t a = 0; a + 1 < rank; ++a) {
      rows = host_mul(rows, moved_sizes[a]);
      rows_s = rows_s == kDynamic || moved_dims[a] == kDynamic ? kDynamic : rows_s * moved_dims[a];
    }
    std::vector<int64_t> dims2{rows_s, moved_dims.back()};
    std::vector<Value*> sizes2{rows, moved_sizes.back()};
    if (rank != 2) x = reshape(x, dims2, sizes2, element);
    auto empty = [&](ScalarType t) {
      std::vector<Value*> sizes;
      for (size_t a = 0; a < 2; ++a)
        if (dims2[a] == kDynamic) sizes.push_back(sizes2[a]);
      Type type = context_.tensor_type(dims2, t);
      return host_.create(OpKind::GraphEmpty, std::span<Value* const>(sizes), std::span<const Type>(&type, 1))
          ->result();
    };
    std::vector<Value*> operands{host_groups(rows), host_index(1), host_index(1), x, empty(element),
                                 empty(ScalarType::I64), empty(element), empty(ScalarType::I64)};
    std::vector<Type> types;
    for (size_t i = 4; i < 8; ++i) types.push_back(operands[i]->type());
    Operation* launch =
        host_.create(OpKind::GraphLaunch, std::span<Value* const>(operands), std::span<const Type>(types),
                     {{"kernel", context_.symbol_attr(kernel->symbol_name())},
                      {"mut_operands", context_.int_array_attr(std::vector<int64_t>{4, 5, 6, 7})}});
    bool indices = op->has_attr("indices");
    Value* result = launch->result(indices ? 1 : 0);
    ScalarType result_element = indices ? ScalarType::I64 : element;
    if (rank != 2) result = reshape(result, moved_dims, moved_sizes, result_element);
    if (axis + 1 != rank) {
      std::vector<int64_t> inverse(rank);
      for (size_t i = 0; i < rank; ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
      result = host_op(OpKind::GraphTranspose, {result}, op->result()->type(),
                       {{"perm", context_.int_array_attr(inverse)}});
    }
    kernel_->result(0)->replace_all_uses_with(result);
    kernel_->erase();
    return true;
  }

  // One lane per element of C: the dot product of A's row and B's column in
  // C's element type (f64, integers: what NumPy computes).
  void simple_matmul() {
    Operation* mm = ops_.back();
    Value* c_value = yield_->operand(0);
    Type ct = c_value->type();
    size_t rank = ct.rank();
    set_space(c_value);
    Value* total_host = host_product(0, rank);
    Value* groups = host_groups(host_ceil_div(total_host, kLanes));
    begin_kernel({kLanes}, c_value, rank);
    Value* a = params_.at(mm->operand(0));
    Value* b = params_.at(mm->operand(1));
    Type at = mm->operand(0)->type(), bt = mm->operand(1)->type();
    Value* k_size = kb_->dim(a, static_cast<int64_t>(at.rank() - 1));
    Type element = context_.scalar_type(ct.scalar());
    Value* total = product(space_, 0, rank);
    Value* first = kb_->add(kb_->mul(kb_->id(OpKind::GroupId, 0), kb_->index(kLanes)), kb_->id(OpKind::LocalId, 0));
    Value* stride = kb_->mul(kb_->id(OpKind::NumGroups, 0), kb_->index(kLanes));
    // An operand's index: its batch dims from C's (trailing-aligned, size 1
    // broadcast), then `row`, `column`.
    auto operand_index = [&](Value* memref, Type t, const std::vector<Value*>& at_c, Value* row, Value* column) {
      std::vector<Value*> indices;
      size_t batch = t.rank() - 2;
      for (size_t j = 0; j < batch; ++j) {
        Value* i = at_c[rank - 2 - batch + j];
        int64_t d = t.shape()[j];
        if (d == 1) {
          i = kb_->index(0);
        } else if (d == kDynamic) {
          Value* one = kb_->op(OpKind::CmpI, {kb_->dim(memref, static_cast<int64_t>(j)), kb_->index(1)},
                               context_.bool_type(), {{"predicate", context_.string_attr("eq")}});
          i = kb_->select(one, kb_->index(0), i);
        }
        indices.push_back(i);
      }
      indices.push_back(row);
      indices.push_back(column);
      return indices;
    };
    kb_->for_loop(first, total, stride, [&](Value* linear) {
      std::vector<Value*> at_c = unravel(linear, space_, 0, rank);
      Value* m = at_c[rank - 2];
      Value* n = at_c[rank - 1];
      Value* zero = kb_->constant(0.0, element);
      Value* sum = kb_->for_loop(kb_->index(0), k_size, kb_->index(1), {zero}, [&](Value* k, std::vector<Value*> carried) {
        Value* x = kb_->convert(kb_->load(a, operand_index(a, at, at_c, m, k)), element);
        Value* y = kb_->convert(kb_->load(b, operand_index(b, bt, at_c, k, n)), element);
        OpKind mul = element.is_float() ? OpKind::MulF : OpKind::MulI;
        OpKind add = element.is_float() ? OpKind::AddF : OpKind::AddI;
        if (element.is_bool()) mul = OpKind::AndI, add = OpKind::OrI;
        return std::vector<Value*>{kb_->op(add, {carried[0], kb_->op(mul, {x, y}, element)}, element)};
      })[0];
      kb_->store(sum, outputs_[0], at_c);
    });
    end_kernel(groups, host_index(1), host_index(1));
  }

  PassContext& pass_;
  Context& context_;
  Operation* module_;
  Operation* kernel_;
  std::string name_;
  FlashForwards& flash_forwards_;
  GeneratedFamilies& families_;
  Builder host_;
  Block* body_;
  std::vector<Operation*> ops_;
  Operation* yield_;
  std::map<std::pair<Value*, int64_t>, Value*> dims_;
  std::map<std::pair<Value*, int64_t>, Value*> param_dims_;
  std::set<std::pair<Value*, int64_t>> checked_broadcasts_;  // (parameter, axis) -> its graph.dim

  std::unique_ptr<KernelBuilder> kb_;
  std::vector<Value*> space_host_;  // the space's sizes on the host
  std::vector<Value*> space_;       // and in the kernel
  std::unordered_map<Value*, Value*> params_;
  std::vector<Value*> outputs_;
  std::vector<Value*> host_args_;
  std::vector<int64_t> mut_operands_;

  // The point being built and the variants made (generate_points).
  struct MadeVariant {
    std::string name;
    std::array<Value*, 3> grid;
  };
  std::map<std::string, int64_t> point_;
  std::string variant_name_;
  bool first_variant_ = true;
  std::vector<MadeVariant> made_;
};

}  // namespace

void run_generate_kernels_pass(Operation* module, PassContext& context) {
  std::vector<std::pair<Operation*, Operation*>> kernels;  // (schedule.kernel, its function)
  for (Operation* func : module_functions(module)) {
    if (!is_host_level_function(func)) continue;
    func->walk([&](Operation* op) {
      if (op->is(OpKind::ScheduleKernel)) kernels.push_back({op, func});
    });
  }
  std::map<std::string, int> used;
  FlashForwards flash_forwards;
  GeneratedFamilies families;
  for (auto [kernel, func] : kernels) {
    std::string base =
        std::string(func->symbol_name()) + "__" + std::string(kernel_strategy_name(kernel_strategy(*kernel)));
    std::string name = base + std::to_string(used[base]++);
    while (lookup_function(module, name)) name = base + std::to_string(used[base]++);
    if (!Generator(context, module, kernel, name, flash_forwards, families).run()) return;
  }
}

}  // namespace tessera::ir
