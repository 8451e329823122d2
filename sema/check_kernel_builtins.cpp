// Sema: the kernel builtins of ids, loops, synchronisation, atomics, warps and mma (builtins.def).
#include "sema/builtin_call.h"
#include "sema/checker.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::sema {

// range(start, stop, 0) raises in Python ("arg 3 must not be zero").
void Checker::range_step_not_zero(BuiltinCall& bc, const std::vector<NodeId>& bound) {
  if (bound.size() < 3 || !bound[2].valid()) return;
  if (std::optional<int64_t> step = constant_int_of(bound[2]); step && *step == 0)
    diags_.emit<diag::SemaRangeStepZero>(ast_.range(bound[2]), std::string(bc.name));
}

Value Checker::check_kernel_builtin(BuiltinCall& bc) {
  switch (bc.info.signature) {
    case Signature::LaneIndex:
    case Signature::WarpIndex:
      bc.bind({}, 0);
      return Value{bc.i32, std::nullopt, bc.id == BuiltinId::TileLinearId};
    case Signature::LaneIndexAxis:
    case Signature::GroupIndexAxis: {
      auto bound = bc.bind({"axis"}, 0);
      bc.axis_argument(bound);
      return Value{bc.i32};
    }
    case Signature::RangeArgs: {
      auto bound = bc.bind({"start", "stop", "step"}, 1);
      for (size_t i = 0; i < bound.size(); ++i) {
        if (bound[i].valid()) bc.require_integer(bound[i], i == 0 ? "start" : i == 1 ? "stop" : "step");
      }
      range_step_not_zero(bc, bound);
      return Value{types_.range()};
    }
    case Signature::TileRangeArgs: {
      auto bound = bc.bind({"start", "stop", "step", "prefetch"}, 1);
      const char* names[] = {"start", "stop", "step", "prefetch"};
      for (size_t i = 0; i < bound.size(); ++i) {
        if (!bound[i].valid()) continue;
        if (i == 3) {
          bc.require_constant_integer(bound[i], names[i]);
        } else {
          bc.require_integer(bound[i], names[i]);
        }
      }
      range_step_not_zero(bc, bound);
      return Value{types_.range()};
    }
    case Signature::Barrier:
    case Signature::NoArgs:
      bc.bind({}, 0);
      return Value{types_.none()};
    case Signature::WaitGroupArgs: {
      auto bound = bc.bind({"n"}, 1);
      if (!bound.empty()) bc.require_constant_integer(bound[0], "n");
      return Value{types_.none()};
    }
    case Signature::AtomicArgs:
    case Signature::AtomicCasArgs: {
      bool cas = bc.info.signature == Signature::AtomicCasArgs;
      auto bound = cas ? bc.bind({"ref", "compare", "value"}, 3) : bc.bind({"ref", "value"}, 2);
      if (bound.empty()) return Value{types_.error()};
      NodeId ref = bound[0];
      Value slot = bc.value_of(ref);
      for (size_t i = 1; i < bound.size(); ++i) bc.value_of(bound[i]);
      if (ast_.kind(ref) != NodeKind::Subscript || types_.kind(slot.type) != TypeKind::Scalar) {
        if (!types_.is_error(slot.type)) {
          diags_.emit<diag::SemaArgumentType>(ast_.range(ref), "ref", bc.name, "one tensor element such as out[i]",
                                              types_.to_string(slot.type));
        }
        return Value{types_.error()};
      }
      NodeId root = ref;
      while (ast_.kind(root) == NodeKind::Subscript) root = ast_.child(root, 0);
      TypeId object = out_.node_types[ast_.child(ref, 0).index];
      if (object.valid() && types_.kind(object) == TypeKind::Tensor) write_tensor_element(ref, object, root);
      bool bitwise = bc.info.id == BuiltinId::TileAtomicAnd || bc.info.id == BuiltinId::TileAtomicOr || bc.info.id == BuiltinId::TileAtomicXor;
      // A bool element is not a number (arithmetic on bool is an error), and
      // no atomic works on one: a flag that lanes set together is an i32 or
      // u8 element.
      if (!bitwise && types_.info(slot.type).scalar == ScalarType::Bool) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(ref), "ref", bc.name,
                                            "a numeric tensor element (keep a flag that lanes update atomically in an i32 or u8 tensor)",
                                            types_.to_string(slot.type));
        return Value{types_.error()};
      }
      if (bitwise && !is_integer(types_.info(slot.type).scalar)) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(ref), "ref", bc.name, "an integer tensor element",
                                            types_.to_string(slot.type));
        return Value{types_.error()};
      }
      // The operands are stored into the element: no silent narrowing (a
      // float added to an integer element), constants that fit its type.
      for (size_t i = 1; i < bound.size(); ++i) check_store(ref, slot.type, bc.value_of(bound[i]), bound[i]);
      return Value{slot.type};
    }
    case Signature::ShuffleArgs:
    case Signature::ShuffleIdxArgs: {
      bool idx = bc.info.signature == Signature::ShuffleIdxArgs;
      auto bound = bc.bind({"value", idx ? "lane" : "offset"}, 2);
      if (bound.empty()) return Value{types_.error()};
      // The warp exchanges one register per lane: a vector (a
      // tile.load_vector result) is shuffled element by element.
      Value v = bc.value_of(bound[0]);
      bool scalar = bc.require_scalar(v, bound[0], "value", "a scalar (shuffle a vector's elements one by one: v[0], v[1], ...)");
      bc.require_integer(bound[1], idx ? "lane" : "offset");
      if (!scalar) return Value{types_.error()};
      return Value{default_type(v)};
    }
    case Signature::WarpReduceArgs: {
      auto bound = bc.bind({"value"}, 1);
      if (bound.empty()) return Value{types_.error()};
      Value v = bc.value_of(bound[0]);
      if (!bc.require_scalar(v, bound[0], "value", "a scalar (reduce a vector's elements one by one: v[0], v[1], ...)"))
        return Value{types_.error()};
      // Arithmetic on bool is an error: a sum of bools would wrap in one bit.
      if (types_.info(default_type(v.type)).kind == TypeKind::Scalar &&
          types_.info(default_type(v.type)).scalar == ScalarType::Bool) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[0]), "value", bc.name,
                                            "a number (count true lanes with cast(flag, i32))", types_.to_string(v.type));
        return Value{types_.error()};
      }
      // A storage float reduces in its accumulation type (default f32).
      return Value{compute_type(default_type(v))};
    }
    case Signature::MmaArgs: {
      auto bound = bc.bind({"a", "b", "accum"}, 2);
      if (bound.empty()) return Value{types_.error()};
      SliceUse use(*this, "tile.mma");
      auto a = bc.require_tensor(bound[0], "a", false);
      auto c = bc.require_tensor(bound[1], "b", false);
      if (!a || !c) return Value{types_.error()};
      // The tensor cores read shared memory (or register tiles). In a helper
      // a parameter may be given shared memory: the lowering checks it.
      if (function_ && function_->kind == FunctionKind::Kernel) {
        bool bad = false;
        for (auto [operand, name] : {std::pair{bound[0], "a"}, std::pair{bound[1], "b"}}) {
          TypeId t = operand == bound[0] ? *a : *c;
          AddressSpace space = types_.info(t).space;
          if (space != AddressSpace::Shared && space != AddressSpace::Register) {
            diags_.emit<diag::SemaArgumentType>(ast_.range(operand), name, bc.name,
                                                "a tile in shared memory (copy it there with tile.cp_async) or a register tile",
                                                types_.to_string(t));
            bad = true;
          }
        }
        if (bad) return Value{types_.error()};
      }
      // The accumulation type: `accum=`, else the operands' @accum (a's
      // first), else f32.
      ScalarType accum = types_.policy(types_.info(*a).policy)
                             .accum.value_or(types_.policy(types_.info(*c).policy).accum.value_or(ScalarType::F32));
      if (bound[2].valid()) accum = bc.require_dtype(bound[2], "accum").value_or(ScalarType::F32);
      // a and b have one element type, which the accumulator holds exactly:
      // a float of at least its width (fp8/fp6/fp4 compute in f32), or for
      // integer tiles (int8 x int8 into i32) a wider signed integer or a float.
      ScalarType ea = types_.info(*a).scalar, eb = types_.info(*c).scalar;
      if (ea != eb) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[1]), "b", bc.name,
                                            "a tile of a's element type '" + std::string(scalar_info(ea).name) + "'",
                                            types_.to_string(*c));
        return Value{types_.error()};
      }
      // What accumulates products of `from` elements: a float at least as
      // wide (narrow formats decode to f32), or for integer tiles a float or
      // a signed integer of twice their width or more (i8 x i8 into i32).
      auto holds = [](ScalarType from, ScalarType to) {
        const ScalarInfo &f = scalar_info(from), &t = scalar_info(to);
        if (is_integer(from)) return is_float(to) || (t.category == ScalarCategory::SignedInt && t.bits >= 2 * f.bits);
        if (!is_float(from) || !is_float(to)) return false;
        if (from == to && f.bits >= 16) return true;  // f16 x f16 into f16 too
        if (f.bits <= 16) return to == ScalarType::F32 || to == ScalarType::F64;
        return to == ScalarType::F64;
      };
      if (!holds(ea, accum)) {
        const ScalarInfo& e = scalar_info(ea);
        std::string choices = is_integer(ea)                     ? "a signed integer of twice their width or more, f32 or f64"
                              : e.bits == 16                     ? "'" + std::string(e.name) + "', f32 or f64"
                              : e.bits < 16 || ea == ScalarType::F32 ? "f32 or f64"
                                                                 : "f64";
        diags_.emit<diag::SemaArgumentType>(bound[2].valid() ? ast_.range(bound[2]) : bc.where, "accum", bc.name,
                                            "an accumulator for products of '" + std::string(e.name) + "' elements (" +
                                                choices + ")",
                                            std::string(scalar_info(accum).name));
        return Value{types_.error()};
      }
      auto da = types_.dims(*a), db = types_.dims(*c);
      if (da.size() != 2 || db.size() != 2) {
        diags_.emit<diag::SemaArgumentType>(bc.where, "a", bc.name, "two 2-D tiles", types_.to_string(*a));
        return Value{types_.error()};
      }
      if (da[1] != db[0] && types_.constant_value(da[1]) && types_.constant_value(db[0])) {
        diags_.emit<diag::SemaMatmulInnerDim>(bc.where, source_text(bound[0]), types_.dim_to_string(da[1]),
                                              source_text(bound[1]), types_.dim_to_string(db[0]));
        return Value{types_.error()};
      }
      DimId dims[] = {da[0], db[1]};
      return Value{types_.tensor(accum, {}, dims, AddressSpace::Register, true, false)};
    }
    default: break;
  }
  internal_error("sema", "check_kernel_builtin called for another family's builtin");
}

}  // namespace tessera::sema
