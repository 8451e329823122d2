// Sema: the graph-level (@jit) builtins on whole tensors (builtins.def).
#include "sema/builtin_call.h"
#include "sema/checker.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::sema {

Value Checker::check_graph_builtin(BuiltinCall& bc) {
  switch (bc.info.signature) {
    case Signature::GraphOp: {
      for (NodeId argument : bc.children.subspan(1)) bc.value_of(argument);
      if ((bc.id == BuiltinId::Matmul) && bc.args.positional.size() == 2) {
        Value a = bc.value_of(bc.args.positional[0]), c = bc.value_of(bc.args.positional[1]);
        if (types_.kind(a.type) == TypeKind::Tensor && types_.kind(c.type) == TypeKind::Tensor) {
          auto da = types_.dims(a.type), db = types_.dims(c.type);
          if (da.size() == 2 && db.size() == 2) {
            bool mismatch = da[1] != db[0] &&
                            ((types_.constant_value(da[1]) && types_.constant_value(db[0])) ||
                             (types_.dim(da[1]).kind == DimKind::Symbol && types_.dim(db[0]).kind == DimKind::Symbol));
            if (mismatch) {
              diags_.emit<diag::SemaMatmulInnerDim>(bc.where, source_text(bc.args.positional[0]), types_.dim_to_string(da[1]),
                                                    source_text(bc.args.positional[1]), types_.dim_to_string(db[0]));
              return Value{types_.error()};
            }
            ScalarType element = types_.info(compute_type(types_.element_type(a.type))).scalar;
            DimId dims[] = {da[0], db[1]};
            return Value{types_.tensor(element, {}, dims, value_space(), false, false)};
          }
        }
      }
      return Value{types_.dynamic()};
    }
    default: break;
  }
  internal_error("sema", "check_graph_builtin called for another family's builtin");
}

}  // namespace tessera::sema
