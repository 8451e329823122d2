// Sema: math builtins and casts, on scalars in kernels and on tensors in graph-level code (builtins.def).
#include "sema/builtin_call.h"
#include "sema/checker.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::sema {

Value Checker::check_math_builtin(BuiltinCall& bc) {
  switch (bc.info.signature) {
    case Signature::UnaryFloat:
    case Signature::UnaryNumeric: {
      auto bound = bc.bind({"x"}, 1);
      if (bound.empty()) return Value{types_.error()};
      Value x = bc.value_of(bound[0]);
      const TypeInfo& t = types_.info(x.type);
      if (t.kind == TypeKind::Error || t.kind == TypeKind::Dynamic) return Value{x.type};
      if (t.kind == TypeKind::Tensor && !in_device()) {
        // Elementwise, typed as on one element: a storage float computes in
        // its compute type (ts.exp of bf16 is f32, as bf16 * bf16 is), an
        // integer in f32 for the float functions (NumPy: exp of an int array
        // is float); bool is not a number.
        std::optional<ScalarType> element = graph_element(x.type);
        if (!element || *element == ScalarType::Bool) {
          diags_.emit<diag::SemaArgumentType>(ast_.range(bound[0]), "x", bc.name, "a tensor of numbers",
                                              types_.to_string(x.type));
          return Value{types_.error()};
        }
        if (bc.info.signature == Signature::UnaryFloat && !is_float(*element)) element = ScalarType::F32;
        std::vector<DimId> dims(types_.dims(x.type).begin(), types_.dims(x.type).end());
        return Value{graph_tensor(*element, dims)};
      }
      // bool is not a number here either (arithmetic on bool is an error).
      if (!types_.is_numeric_scalar(x.type) || (t.kind == TypeKind::Scalar && t.scalar == ScalarType::Bool)) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[0]), "x", bc.name, "a number", types_.to_string(x.type));
        return Value{types_.error()};
      }
      TypeId result = t.kind == TypeKind::Scalar ? compute_type(x.type) : default_type(x.type);
      if (bc.info.signature == Signature::UnaryFloat && !is_float(types_.info(result).scalar)) {
        result = types_.scalar(ScalarType::F32);
      }
      return Value{result};
    }
    case Signature::MinMax: {
      // ts.maximum(x1, x2) / ts.minimum: NumPy's, always elementwise.
      bool numpy_pair = bc.id == BuiltinId::Maximum || bc.id == BuiltinId::Minimum;
      // max(x) / min(x) of one tensor (with axis= and keepdims=): a reduction.
      if (!numpy_pair && (bc.args.positional.size() == 1 || bc.method) && !in_device()) return check_graph_builtin(bc);
      // min(a, b, c, ...), three or more arguments (Python's builtin of
      // numbers): min(min(a, b), c)..., elementwise as min(a, b) is.
      if (!numpy_pair && !bc.method && bc.args.positional.size() > 2 && bc.args.keywords.empty()) {
        TypeId result{};
        for (NodeId argument : bc.args.positional) {
          TypeId t = bc.value_of(argument).type;
          result = result.valid() ? binary_result(bc.call, BinaryUse::builtin(bc.name), result, t) : t;
          if (types_.kind(result) == TypeKind::Error) return Value{result};
        }
        out_.call_arguments[bc.call.index] = bc.args.positional;
        return Value{result};
      }
      auto bound = numpy_pair ? bc.bind({"x1", "x2"}, 2) : bc.bind({"a", "b"}, 2);
      if (bound.empty()) return Value{types_.error()};
      Value a = bc.value_of(bound[0]), c = bc.value_of(bound[1]);
      return Value{binary_result(bc.call, BinaryUse::builtin(bc.name), a.type, c.type)};
    }
    case Signature::BinaryNumeric: {
      auto bound = bc.bind({"x", "y"}, 2);
      if (bound.empty()) return Value{types_.error()};
      Value a = bc.value_of(bound[0]), c = bc.value_of(bound[1]);
      TypeId result = binary_result(bc.call, BinaryUse::builtin(bc.name), a.type, c.type);
      if (types_.kind(result) == TypeKind::Scalar && !is_float(types_.info(result).scalar)) {
        result = types_.scalar(ScalarType::F32);
      }
      return Value{result};
    }
    case Signature::CastArgs: {
      auto bound = bc.bind({"x", "dtype"}, 2);
      if (bound.empty()) return Value{types_.error()};
      Value x = bc.value_of(bound[0]);
      auto dtype = bc.require_dtype(bound[1], "dtype");
      if (!dtype) return Value{types_.error()};
      const TypeInfo& t = types_.info(x.type);
      if (t.kind == TypeKind::Tensor) {
        std::vector<DimId> dims(types_.dims(x.type).begin(), types_.dims(x.type).end());
        // The result keeps the dtype's @loss_scale (its elements read as the
        // stored value divided by k, docs/numerics.md "Policies") and its
        // @accum (arithmetic and products on the result compute in it, as on
        // a parameter of that type: dropping it would compute a
        // `fp8_e4m3 @accum(bf16)` product in f32); the rounding policies are
        // applied by the cast.
        PolicyId policy;
        TypeId dtype_type{types_.info(bc.value_of(bound[1]).type).payload};
        const Policy& wanted = types_.policy(types_.info(dtype_type).policy);
        if (wanted.loss_scale != 0.0 || wanted.accum) {
          Policy kept;
          kept.loss_scale = wanted.loss_scale;
          kept.accum = wanted.accum;
          policy = types_.intern_policy(kept);
        }
        return Value{types_.tensor(*dtype, policy, dims, value_space(), false, false)};
      }
      if (t.kind == TypeKind::Dynamic) return Value{types_.dynamic()};
      if (t.kind == TypeKind::Error) return Value{types_.error()};  // reported already: no errors that follow from it
      return Value{types_.scalar(*dtype)};
    }
    default: break;
  }
  internal_error("sema", "check_math_builtin called for another family's builtin");
}

}  // namespace tessera::sema
