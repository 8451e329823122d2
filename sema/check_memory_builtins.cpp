// Sema: the kernel builtins that allocate and move memory: shared and local buffers, loads and stores, vectors, async copies (builtins.def).
#include "sema/builtin_call.h"
#include "sema/checker.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::sema {

// A vector of `width` elements starts at its slice: a slice whose last
// axis is known to be shorter would read or write past its end.
void Checker::check_vector_span(NodeId slice, TypeId type, int64_t width, std::string_view builtin,
                                const char* parameter) {
  if (types_.kind(type) != TypeKind::Tensor || types_.dims(type).empty()) return;
  std::optional<int64_t> length = types_.constant_value(types_.dims(type).back());
  if (!length || *length >= width) return;
  diags_.emit<diag::SemaArgumentType>(ast_.range(slice), parameter, std::string(builtin),
                                      "a slice of at least " + std::to_string(width) +
                                          " elements along its last axis (the vector's width)",
                                      types_.to_string(type));
}

// An extent of an allocation's shape: a constant, and positive (a zero or
// negative one was reported as a size not known at compile time).
std::optional<int64_t> Checker::positive_extent(BuiltinCall& bc, NodeId extent) {
  std::optional<int64_t> value = bc.require_constant_integer(extent, "shape");
  if (value && *value <= 0) {
    diags_.emit<diag::SemaArgumentType>(ast_.range(extent), "shape", std::string(bc.name), "positive sizes",
                                        std::to_string(*value));
    return std::nullopt;
  }
  return value;
}

Value Checker::check_memory_builtin(BuiltinCall& bc) {
  switch (bc.info.signature) {
    case Signature::AllocShared: {
      // Two spellings: tile.alloc_shared(shape, dtype, swizzle=, alignment=, padding=)
      // and tshared.alloc[dtype](dim, dim, ..., swizzle=...).
      std::optional<ScalarType> element;
      std::vector<NodeId> dim_nodes;
      NodeId callee = bc.children[0];
      std::vector<std::pair<std::string, NodeId>> options;
      for (auto& [keyword, value] : bc.args.keywords) {
        if (keyword == "swizzle" || keyword == "alignment" || keyword == "padding" ||
            (keyword == "dtype" && ast_.kind(callee) != NodeKind::Subscript) ||
            (keyword == "shape" && ast_.kind(callee) != NodeKind::Subscript)) {
          options.emplace_back(keyword, value);
        } else {
          diags_.emit<diag::SemaUnknownKeyword>(ast_.range(value), bc.name, keyword);
        }
      }
      auto option = [&](std::string_view key) {
        for (auto& [k, v] : options) {
          if (k == key) return v;
        }
        return NodeId{};
      };
      if (ast_.kind(callee) == NodeKind::Subscript) {
        set_type(callee, types_.dynamic());
        element = resolve_dtype_name(ast_.child(callee, 1), true);
        if (!element)
          diags_.emit<diag::SemaNotAType>(ast_.range(ast_.child(callee, 1)), source_text(ast_.child(callee, 1)));
        dim_nodes = bc.args.positional;
      } else {
        NodeId shape = bc.args.positional.size() > 0 ? bc.args.positional[0] : option("shape");
        NodeId dtype = bc.args.positional.size() > 1 ? bc.args.positional[1] : option("dtype");
        if (!shape.valid() || !dtype.valid() || bc.args.positional.size() > 2) {
          diags_.emit<diag::SemaArgumentCount>(bc.where, bc.name, std::string("a shape and a dtype"),
                                               static_cast<unsigned>(bc.args.positional.size()));
          return Value{types_.error()};
        }
        element = bc.require_dtype(dtype, "dtype");
        dim_nodes = bc.shape_extents(shape);
      }
      std::vector<DimId> dims;
      uint64_t count = 1;
      bool constant = true;
      for (NodeId d : dim_nodes) {
        auto extent = positive_extent(bc, d);
        if (!extent) {
          constant = false;
          dims.push_back(types_.dynamic_dim());
          continue;
        }
        dims.push_back(types_.constant_dim(*extent));
        count *= static_cast<uint64_t>(*extent);
      }
      // A negative padding would overlap the rows; the IR takes only
      // alignments that are powers of two (anything else reached its
      // verifier as an internal error).
      int64_t padding = 0, alignment = 16;
      if (NodeId p = option("padding"); p.valid()) {
        padding = bc.require_constant_integer(p, "padding").value_or(0);
        if (padding < 0) {
          diags_.emit<diag::SemaArgumentType>(ast_.range(p), "padding", std::string(bc.name), "0 or more elements",
                                              std::to_string(padding));
          padding = 0;
        }
      }
      if (NodeId a = option("alignment"); a.valid()) {
        alignment = bc.require_constant_integer(a, "alignment").value_or(16);
        if (alignment <= 0 || (alignment & (alignment - 1)) != 0) {
          diags_.emit<diag::SemaArgumentType>(ast_.range(a), "alignment", std::string(bc.name),
                                              "a positive power of two (bytes)", std::to_string(alignment));
          alignment = 16;
        }
      }
      if (NodeId s = option("swizzle"); s.valid()) bc.value_of(s);
      if (!element) return Value{types_.error()};
      if (constant && !dims.empty() && padding > 0) {
        // Padding widens every row of the innermost dimension.
        uint64_t rows = count / static_cast<uint64_t>(*types_.constant_value(dims.back()));
        count += rows * static_cast<uint64_t>(padding);
      }
      uint64_t bytes = (count * scalar_info(*element).bits + 7) / 8;
      if (alignment > 0)
        bytes = (bytes + static_cast<uint64_t>(alignment) - 1) / static_cast<uint64_t>(alignment) *
                static_cast<uint64_t>(alignment);
      if (constant && function_) function_->shared_bytes += bytes;
      return Value{types_.tensor(*element, {}, dims, AddressSpace::Shared, true, false)};
    }
    case Signature::AllocLocal: {
      // tile.alloc_local(shape, dtype): a private array of each lane, of a
      // shape known at compile time (an int or a tuple of ints).
      auto bound = bc.bind({"shape", "dtype"}, 2);
      if (bound.empty()) return Value{types_.error()};
      auto element = bc.require_dtype(bound[1], "dtype");
      std::vector<DimId> dims;
      for (NodeId d : bc.shape_extents(bound[0])) {
        auto extent = positive_extent(bc, d);
        dims.push_back(extent ? types_.constant_dim(*extent) : types_.dynamic_dim());
      }
      if (!element) return Value{types_.error()};
      return Value{types_.tensor(*element, {}, dims, AddressSpace::Local, true, false)};
    }
    case Signature::AllocRegister: {
      auto bound = bc.bind({"dtype"}, 1);
      if (bound.empty()) return Value{types_.error()};
      auto dtype = bc.require_dtype(bound[0], "dtype");
      return Value{dtype ? types_.scalar(*dtype) : types_.error()};
    }
    case Signature::LoadArgs: {
      auto bound = bc.bind({"tensor", "index"}, 2);
      if (bound.empty()) return Value{types_.error()};
      auto tensor = bc.require_tensor(bound[0], "tensor", false);
      bc.require_integer(bound[1], "index");
      return Value{tensor ? types_.element_type(*tensor) : types_.error()};
    }
    case Signature::StoreArgs: {
      auto bound = bc.bind({"tensor", "index", "value"}, 3);
      if (bound.empty()) return Value{types_.none()};
      auto tensor = bc.require_tensor(bound[0], "tensor", false);
      bc.require_integer(bound[1], "index");
      Value v = bc.value_of(bound[2]);
      if (tensor) {
        write_tensor_element(bc.call, *tensor, bound[0]);
        // As for `t[i] = v`: no silent narrowing, constants that fit.
        check_store(bound[0], element_value_type(*tensor), v, bound[2]);
      }
      return Value{types_.none()};
    }
    case Signature::LoadVectorArgs: {
      auto bound = bc.bind({"source", "width"}, 1);
      if (bound.empty()) return Value{types_.error()};
      allow_runtime_length(bound[0]);  // the vector starts there
      Value source = bc.value_of(bound[0]);
      int64_t width = 4;
      if (bound[1].valid()) width = bc.require_constant_integer(bound[1], "width").value_or(4);
      // One vector access: 1, 2, 4, 8 or 16 elements (a power of two, so
      // that the access can be aligned to its size).
      if (width < 1 || width > 16 || (width & (width - 1)) != 0) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[1]), "width", bc.name, "1, 2, 4, 8 or 16",
                                            std::to_string(width));
        return Value{types_.error()};
      }
      const TypeInfo& t = types_.info(source.type);
      if (t.kind == TypeKind::Error) return Value{types_.error()};
      check_vector_span(bound[0], source.type, width, bc.name, "source");
      ScalarType element = t.kind == TypeKind::Tensor || t.kind == TypeKind::Scalar ? t.scalar : ScalarType::F32;
      DimId dims[] = {types_.constant_dim(width)};
      return Value{types_.tensor(element, t.policy, dims, AddressSpace::Register, false, false)};
    }
    case Signature::StoreVectorArgs: {
      auto bound = bc.bind({"destination", "value"}, 2);
      if (bound.empty()) return Value{types_.none()};
      allow_runtime_length(bound[0]);  // the vector is stored from there
      Value destination = bc.value_of(bound[0]);
      Value stored = bc.value_of(bound[1]);
      if (types_.kind(stored.type) == TypeKind::Tensor && types_.dims(stored.type).size() == 1)
        if (auto width = types_.constant_value(types_.dims(stored.type)[0]))
          check_vector_span(bound[0], destination.type, *width, bc.name, "destination");
      // The vector's elements are stored as they are (one vector store):
      // its element type is the destination's.
      if (types_.kind(stored.type) == TypeKind::Tensor && types_.kind(destination.type) == TypeKind::Tensor &&
          types_.info(stored.type).scalar != types_.info(destination.type).scalar)
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[1]), "value", bc.name,
                                            "a vector of the destination's element type, " +
                                                types_.to_string(types_.element_type(destination.type)),
                                            types_.to_string(stored.type));
      NodeId root = bound[0];
      while (ast_.kind(root) == NodeKind::Subscript) root = ast_.child(root, 0);
      TypeId object = ast_.kind(bound[0]) == NodeKind::Subscript ? out_.node_types[ast_.child(bound[0], 0).index]
                                                                 : destination.type;
      if (object.valid() && types_.kind(object) == TypeKind::Tensor) write_tensor_element(bc.call, object, root);
      return Value{types_.none()};
    }
    case Signature::CpAsyncArgs: {
      auto bound = bc.bind({"destination", "source"}, 2);
      if (bound.empty()) return Value{types_.none()};
      SliceUse use(*this, "tile.cp_async");
      Value source = bc.value_of(bound[1]);
      NodeId destination = bound[0];
      // The first copy into a bare `tshared.alloc` fixes its element type.
      if (ast_.kind(destination) == NodeKind::Name && types_.kind(source.type) == TypeKind::Tensor) {
        finalize_bare_shared(IdentifierId{ast_.node(destination).payload}, types_.element_type(source.type));
      }
      std::optional<TypeId> target = bc.require_tensor(destination, "destination", true);
      if (types_.kind(source.type) != TypeKind::Tensor && !types_.is_error(source.type) &&
          types_.kind(source.type) != TypeKind::Dynamic) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[1]), "source", bc.name, "a tensor slice",
                                            types_.to_string(source.type));
      } else if (types_.kind(source.type) == TypeKind::Tensor) {
        // The copy moves elements as they are, from global memory, block
        // onto block: one element type and one rank.
        TypeInfo from = types_.info(source.type);
        std::string wanted;
        if (from.space != AddressSpace::Global) {
          wanted = "a slice of a tensor in global memory";
        } else if (target && types_.info(*target).scalar != from.scalar) {
          wanted = "a tensor slice of the destination's element type, " +
                   types_.to_string(types_.element_type(*target));
        } else if (target && types_.dims(*target).size() != types_.dims(source.type).size()) {
          wanted = "a tensor slice of the destination's rank, " + std::to_string(types_.dims(*target).size());
        }
        if (!wanted.empty())
          diags_.emit<diag::SemaArgumentType>(ast_.range(bound[1]), "source", bc.name, wanted,
                                              types_.to_string(source.type));
      }
      return Value{types_.none()};
    }
    default: break;
  }
  internal_error("sema", "check_memory_builtin called for another family's builtin");
}

}  // namespace tessera::sema
