// Kernel signatures from sema (signature.h).
#include "tools/tesserac/signature.h"

#include <algorithm>
#include <climits>

#include "support/diagnostics/internal_error.h"
#include "tessera/tessera_runtime.h"

namespace tessera {

namespace {

// The runtime's tessDtype of a sema scalar type, by name (every scalar type a
// parameter can have is one).
uint32_t dtype_code(const std::string& name) {
  tessDtype code = TESS_F32;
  if (tessDtypeFromName(name.c_str(), &code) != TESS_SUCCESS)
    internal_error("signature", "the scalar type '" + name + "' has no runtime dtype");
  return static_cast<uint32_t>(code);
}

}  // namespace

std::vector<codegen::AotKernel> kernel_signatures(const sema::TypedModule& typed, const Ast& ast, const ValueStores& values) {
  std::vector<codegen::AotKernel> kernels;
  for (const sema::FunctionInfo& f : typed.functions) {
    if (f.kind != sema::FunctionKind::Kernel) continue;
    codegen::AotKernel k;
    k.name = std::string(values.identifiers.name(f.name));
    for (size_t axis = 0; axis < f.group_shape.size() && axis < 3; ++axis) k.group[axis] = static_cast<uint32_t>(f.group_shape[axis]);
    k.static_shared_bytes = f.shared_bytes;
    NodeId parameters = ast.child(f.def, 1);
    for (size_t i = 0; i < f.parameter_types.size(); ++i) {
      codegen::AotParameter p;
      p.name = std::string(values.identifiers.name(IdentifierId{ast.node(ast.children(parameters)[i]).payload}));
      sema::TypeInfo info = typed.types.info(f.parameter_types[i]);
      p.dtype = std::string(sema::scalar_info(info.scalar).name);
      p.dtype_code = dtype_code(p.dtype);
      p.mut = info.mut;
      p.tensor = info.kind == sema::TypeKind::Tensor;
      if (p.tensor)
        for (sema::DimId d : typed.types.dims(f.parameter_types[i])) {
          sema::Dim dim = typed.types.dim(d);
          if (dim.kind == sema::DimKind::Constant) {
            p.dims.push_back(dim.value);
          } else if (dim.kind == sema::DimKind::Symbol) {
            std::string symbol(values.identifiers.name(dim.symbol));
            auto it = std::find(k.symbols.begin(), k.symbols.end(), symbol);
            if (it == k.symbols.end()) it = k.symbols.insert(k.symbols.end(), symbol);
            p.dims.push_back(-1 - static_cast<int64_t>(it - k.symbols.begin()));
          } else {
            p.dims.push_back(INT64_MIN);  // `?` or derived from other dimensions: not checked
          }
        }
      // A tensor of a @precision_policy class: its per-tensor scale is the
      // next parameter, `NAME.scale` (docs/abi.md, docs/numerics.md).
      sema::Policy policy = typed.types.policy(info.policy);
      const sema::PolicyClass* custom =
          p.tensor && policy.custom.valid() ? typed.policy_class(policy.custom) : nullptr;
      if (custom) p.policy = std::string(values.identifiers.name(policy.custom));
      std::string tensor_name = p.name;
      k.parameters.push_back(std::move(p));
      if (custom) {
        codegen::AotParameter scale;
        scale.name = tensor_name + ".scale";
        scale.dtype = std::string(sema::scalar_info(custom->scale).name);
        scale.dtype_code = dtype_code(scale.dtype);
        k.parameters.push_back(std::move(scale));
      }
    }
    std::string text = k.name + "(";
    for (size_t i = 0; i < k.parameters.size(); ++i) text += (i ? ", " : "") + describe_parameter(k, k.parameters[i]);
    k.signature = text + ")";
    kernels.push_back(std::move(k));
  }
  return kernels;
}

std::string describe_parameter(const codegen::AotKernel& kernel, const codegen::AotParameter& p) {
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

}  // namespace tessera
