// Kernel signatures from the IR (kernel_signature.h).
#include "codegen/kernel_signature.h"

#include <algorithm>
#include <climits>

#include "codegen/mesh_description.h"
#include "support/diagnostics/internal_error.h"
#include "tessera/tessera_runtime.h"

namespace tessera::codegen {

// A tessDtype is the line of support/scalar_type.def, as ScalarType is.
static_assert(static_cast<int>(ScalarType::F32) == TESS_F32 && static_cast<int>(ScalarType::FP4E2M1) == TESS_FP4_E2M1 &&
              kScalarTypeCount == TESS_DTYPE_COUNT);

namespace {

// The element type of an argument: a memref's element or the scalar itself.
ScalarType argument_scalar(ir::Type t, ir::Operation* kernel) {
  if (!t.is(ir::TypeKind::MemRef) && !t.is_scalar())
    internal_error("signature", "kernel '" + std::string(kernel->symbol_name()) + "' has an argument of type " +
                                    std::string(t.str()) + ", which the kernel ABI cannot pass");
  return t.scalar();
}

}  // namespace

AotKernel kernel_signature(ir::Operation* f) {
  AotKernel k;
  k.name = std::string(f->symbol_name());
  k.generated = f->has_attr("generated");
  if (f->has_attr("autotune_of")) {
    k.autotune_of = std::string(f->string_attr("autotune_of"));
    if (ir::Attribute knobs = f->attr("autotune_knobs"))
      for (size_t i = 0; i < knobs.size(); ++i) k.knobs.emplace_back(knobs[i].string_value());
    if (ir::Attribute values = f->attr("autotune_values")) k.knob_values = values.int_array();
    if (ir::Attribute index = f->attr("autotune_index")) k.point_index = index.int_value();
    k.autotune_default = f->has_attr("autotune_default");
    // A variant other than the default is not part of the API (the AOT
    // header has no launcher of its own for it; the tuner launches it).
    if (!k.autotune_default) k.generated = true;
    if (ir::Attribute key = f->attr("autotune_key"))
      for (size_t i = 0; i < key.size(); ++i) k.autotune_key.emplace_back(key[i].string_value());
  }
  std::vector<int64_t> group = f->attr("group_shape") ? f->attr("group_shape").int_array() : std::vector<int64_t>{};
  for (size_t axis = 0; axis < group.size() && axis < 3; ++axis) k.group[axis] = static_cast<uint32_t>(group[axis]);
  k.group_rank = static_cast<uint32_t>(std::clamp<size_t>(group.size(), 1, 3));
  if (ir::Attribute bytes = f->attr("shared_bytes")) k.static_shared_bytes = static_cast<uint64_t>(bytes.int_value());
  ir::Type fn = f->attr("function_type").type();
  ir::Attribute names = f->attr("arg_names"), dims = f->attr("arg_dims"), policies = f->attr("arg_policies");
  std::vector<int64_t> mut = f->attr("mut_args") ? f->attr("mut_args").int_array() : std::vector<int64_t>{};
  for (size_t i = 0; i < fn.num_inputs(); ++i) {
    ir::Type t = fn.input(i);
    AotParameter p;
    p.name = names && i < names.size() ? std::string(names[i].string_value()) : "arg" + std::to_string(i);
    p.tensor = t.is(ir::TypeKind::MemRef);
    p.mut = p.tensor && std::find(mut.begin(), mut.end(), static_cast<int64_t>(i)) != mut.end();
    ScalarType scalar = argument_scalar(t, f);
    p.dtype = std::string(scalar_info(scalar).name);
    p.dtype_code = static_cast<uint32_t>(scalar);
    if (p.tensor) {
      for (size_t d = 0; d < t.rank(); ++d) {
        ir::Attribute extent = dims && i < dims.size() && d < dims[i].size() ? dims[i][d] : ir::Attribute{};
        if (extent && extent.is(ir::AttributeKind::Integer)) {
          p.dims.push_back(extent.int_value());
        } else if (extent && extent.is(ir::AttributeKind::String) && extent.string_value() != "?") {
          std::string symbol(extent.string_value());
          auto it = std::find(k.symbols.begin(), k.symbols.end(), symbol);
          if (it == k.symbols.end()) it = k.symbols.insert(k.symbols.end(), symbol);
          p.dims.push_back(-1 - static_cast<int64_t>(it - k.symbols.begin()));
        } else {
          int64_t size = t.shape()[d];
          p.dims.push_back(size == ir::kDynamic || extent ? INT64_MIN : size);
        }
      }
    }
    if (policies && i < policies.size()) p.policy = std::string(policies[i].string_value());
    k.parameters.push_back(std::move(p));
  }
  // A @jit function's results: "result", or "result.0", "result.1", ...
  for (size_t i = 0; i < fn.num_results(); ++i) {
    ir::Type t = fn.result(i);
    AotParameter r;
    r.name = fn.num_results() == 1 ? "result" : "result." + std::to_string(i);
    r.tensor = t.is(ir::TypeKind::MemRef);
    ScalarType scalar = argument_scalar(t, f);
    r.dtype = std::string(scalar_info(scalar).name);
    r.dtype_code = static_cast<uint32_t>(scalar);
    if (r.tensor)
      for (size_t d = 0; d < t.rank(); ++d) r.dims.push_back(t.shape()[d] == ir::kDynamic ? INT64_MIN : t.shape()[d]);
    k.results.push_back(std::move(r));
  }
  std::string text = k.name + "(";
  for (size_t i = 0; i < k.parameters.size(); ++i) text += (i ? ", " : "") + describe_parameter(k, k.parameters[i]);
  k.signature = text + ")";
  if (!k.results.empty()) {
    text = " -> ";
    if (k.results.size() > 1) text += "(";
    for (size_t i = 0; i < k.results.size(); ++i) {
      std::string r = describe_parameter(k, k.results[i]);
      text += (i ? ", " : "") + r.substr(r.find(": ") + 2);
    }
    if (k.results.size() > 1) text += ")";
    k.signature += text;
  }
  return k;
}

std::vector<AotKernel> jit_function_signatures(ir::Operation* module) {
  std::vector<AotKernel> functions;
  for (ir::Operation* f : ir::module_functions(module))
    if (f->has_attr("jit") && f->has_attr("entry")) {
      functions.push_back(kernel_signature(f));
      functions.back().mesh = function_mesh_description(f);
    }
  return functions;
}

std::vector<AotKernel> kernel_signatures(ir::Operation* module) {
  std::vector<AotKernel> kernels;
  for (ir::Operation* f : ir::module_functions(module))
    if (f->has_attr("kernel")) kernels.push_back(kernel_signature(f));
  return kernels;
}

std::string describe_parameter(const AotKernel& kernel, const AotParameter& p) {
  std::string text = p.name + ": " + (p.mut ? "mut " : "") + p.dtype;
  if (!p.tensor) return text;
  text += "[";
  for (size_t i = 0; i < p.dims.size(); ++i) {
    if (i) text += ", ";
    int64_t d = p.dims[i];
    text += d >= 0 ? std::to_string(d) : d == INT64_MIN ? "?" : kernel.symbols[static_cast<size_t>(-1 - d)];
  }
  return text + "]" + (p.policy.empty() ? "" : " @" + p.policy);
}

}  // namespace tessera::codegen
