// Strings in graph code and programs (docs/language/graph.md, "Strings"). A
// string is a Text: text known when compiling, with values in between that
// are formatted when the program runs, as print shows them. Literals,
// f-strings, '%' formatting, str(x), `+` and `*` build one; print shows
// it, and ts.save's path is one (formatted when the program runs).
#include <functional>

#include "lower/lowering.h"
#include "support/format_spec.h"
#include "support/percent_format.h"

namespace tessera::ir {

using SemaKind = sema::TypeKind;

void Text::append(const Text& more) {
  pieces.back() += more.pieces[0];
  for (size_t i = 0; i < more.values.size(); ++i) {
    values.push_back(more.values[i]);
    formats.push_back(more.formats[i]);
    pieces.push_back(more.pieces[i + 1]);
  }
}

bool Lowering::is_string_node(NodeId node) const {
  sema::TypeId t = node_type(node);
  return t.valid() && typed_.types.kind(t) == SemaKind::String;
}

Text Lowering::lower_text(NodeId e) {
  Text text;
  switch (ast_.kind(e)) {
    case NodeKind::StringLiteral: text.append(values_.strings[ast_.node(e).payload]); return text;
    case NodeKind::FString:
      // f"loss {l:.4f} at {i}": its text, and each field as print shows it
      // (conversions !r, !s, !a show the value's str).
      for (NodeId part : ast_.children(e)) {
        if (ast_.kind(part) == NodeKind::FStringText) {
          text.append(values_.strings[ast_.node(part).payload]);
          continue;
        }
        uint32_t spec = ast_.node(part).payload;
        append_shown(text, ast_.child(part, 0),
                     spec == UINT32_MAX ? std::string_view{} : std::string_view(values_.strings[spec]));
      }
      return text;
    case NodeKind::Name: {
      uint32_t name = ast_.node(e).payload;
      if (auto it = env_.find(name); it != env_.end() && it->second.text) return *it->second.text;
      if (!env_.count(name)) {
        if (auto it = program_strings_.find(name); it != program_strings_.end()) {
          text.append(it->second);
          return text;
        }
        // A module constant (`MODE = "train"`) read by a @jit function.
        for (NodeId statement : ast_.children(ast_.root())) {
          if (ast_.kind(statement) != NodeKind::Assign || ast_.children(statement).size() != 2) continue;
          NodeId target = ast_.child(statement, 0), value = ast_.child(statement, 1);
          if (ast_.kind(target) == NodeKind::Name && ast_.node(target).payload == name &&
              ast_.kind(value) == NodeKind::StringLiteral) {
            text.append(values_.strings[ast_.node(value).payload]);
            return text;
          }
        }
      }
      break;
    }
    case NodeKind::BinaryOp: {
      auto op = static_cast<BinaryOperator>(ast_.node(e).op);
      NodeId lhs = ast_.child(e, 0), rhs = ast_.child(e, 1);
      if (op == BinaryOperator::Add) {
        text = lower_text(lhs);
        text.append(lower_text(rhs));
        return text;
      }
      // `"-" * 40`, `3 * "ab"`: the count must be known when compiling.
      if (op == BinaryOperator::Mul) {
        bool string_left = is_string_node(lhs);
        NodeId count_node = string_left ? rhs : lhs;
        std::optional<int64_t> count = constant_of(count_node);
        if (!count) count = folded_int(value(count_node));
        if (!count) unsupported(count_node, "repeating a string a number of times known only at run time");
        Text once = lower_text(string_left ? lhs : rhs);
        for (int64_t i = 0; i < *count; ++i) text.append(once);
        return text;
      }
      // `"%d of %s" % (i, n)`: the text around the conversions, each value
      // shown by its conversion's format spec.
      if (op == BinaryOperator::Mod) {
        std::optional<PercentFormat> format =
            ast_.kind(lhs) == NodeKind::StringLiteral
                ? parse_percent_format(values_.strings[ast_.node(lhs).payload], nullptr)
                : std::nullopt;
        if (!format) unsupported(e, "this '%' format");  // sema reported it
        std::vector<NodeId> value_nodes;
        Bound values;
        if (ast_.kind(rhs) == NodeKind::Tuple) {
          value_nodes.assign(ast_.children(rhs).begin(), ast_.children(rhs).end());
        } else if (typed_.types.kind(node_type(rhs)) == SemaKind::Tuple) {
          values = lower(rhs);  // a tuple value: `"%d x %d" % x.shape`
        } else {
          value_nodes.push_back(rhs);
        }
        for (size_t i = 0; i < format->conversions.size(); ++i) {
          text.append(format->text[i]);
          const PercentConversion& c = format->conversions[i];
          if (!value_nodes.empty()) {
            append_shown(text, value_nodes[i], c.spec, c.conversion, c.repr);
            continue;
          }
          Bound element = i < values.size() ? values.element(i) : Bound{};
          if (!element.is_value()) unsupported(rhs, "this value of a '%' format");
          text.put(c.spec.empty() ? element.value : formatted_number(element.value, c.conversion), c.spec);
        }
        text.append(format->text.back());
        return text;
      }
      break;
    }
    case NodeKind::Call: {
      // str(x): x as print shows it.
      NodeId callee = ast_.child(e, 0);
      if (ast_.kind(callee) == NodeKind::Name && name_of(ast_.node(callee).payload) == "str" &&
          ast_.children(e).size() == 2) {
        append_shown(text, ast_.child(e, 1));
        return text;
      }
      if (ast_.kind(callee) == NodeKind::Name && name_of(ast_.node(callee).payload) == "str" &&
          ast_.children(e).size() == 1)
        return text;  // str(): ""
      break;
    }
    case NodeKind::IfExp: {
      // `"on" if FLAG else "off"`: a condition known when compiling.
      std::optional<int64_t> condition;
      if (std::optional<bool> decided = graph_ ? sema_decision(ast_.child(e, 0)) : std::nullopt) condition = *decided;
      if (!condition) condition = constant_condition(ast_.child(e, 0));
      if (!condition) condition = folded_int(value(ast_.child(e, 0)));
      if (!condition) unsupported(e, "choosing a string by a condition known only at run time");
      return lower_text(ast_.child(e, *condition ? 1 : 2));
    }
    default: break;
  }
  unsupported(e, "this string");
}

// A number (or a 0-d tensor, read back to the host; sema checked it is one)
// that a format spec formats; `%d` (conversion 'd') of a float truncates it
// toward zero first, as Python's int() does.
Value* Lowering::formatted_number(Value* v, char conversion) {
  if (v->type().is(TypeKind::Tensor)) v = convert(v, context_.scalar_type(v->type().scalar()));
  if (conversion == 'd' && v->type().is_scalar() && is_float(v->type().scalar()))
    v = convert(v, context_.scalar_type(ScalarType::I64));
  return v;
}

void Lowering::append_shown(Text& text, NodeId a, std::string_view spec, char conversion, bool repr) {
  // Text known when compiling (a string, a dtype, None): quoted by `%r`,
  // padded by a width (sema allows one on text).
  auto append_known = [&](std::string shown, bool quote) {
    if (quote) shown = "'" + shown + "'";
    if (auto parsed = parse_format_spec(spec, nullptr); parsed && parsed->width > static_cast<int>(shown.size())) {
      std::string pad(static_cast<size_t>(parsed->width) - shown.size(), parsed->fill);
      // Python's format() left-aligns text unless told otherwise ('%8s'
      // says '>').
      if (parsed->align == '>') shown = pad + shown;
      else if (parsed->align == '^') shown = pad.substr(0, pad.size() / 2) + shown + pad.substr(pad.size() / 2);
      else shown += pad;
    }
    text.append(shown);
  };
  if (is_string_node(a)) {
    Text shown = lower_text(a);
    if (shown.known()) return append_known(shown.pieces[0], repr);
    if (repr || !spec.empty()) unsupported(a, "quoting or padding a string formatted when the program runs");
    return text.append(shown);
  }
  // A dtype (`x.dtype`, `ts.f32`) shows as Tessera spells it: `f32`,
  // `bf16 @accum(f32)`.
  if (sema::TypeId t = node_type(a); t.valid() && typed_.types.kind(t) == SemaKind::Dtype)
    return append_known(typed_.types.to_string(sema::TypeId{typed_.types.info(t).payload}), false);
  if (ast_.kind(a) == NodeKind::NoneLiteral) return append_known("None", false);

  auto put = [&](Value* v, std::string_view format, NodeId where) {
    if (!v->type().is(TypeKind::Tensor) && !v->type().is_scalar() && !v->type().is_index())
      unsupported(where, "printing this value");
    text.put(v, format);
  };
  // A tuple shows as Python shows one: `(1, 4)`, `(2,)`, nested; a list
  // (sema's type says which) as `[0.5, 0.25]`, `[[0, 1], [2, 3]]` (a tensor
  // element in NumPy's layout, where Python would show `array(...)`).
  std::function<void(const Bound&, sema::TypeId, NodeId)> put_bound = [&](const Bound& b, sema::TypeId type,
                                                                           NodeId where) {
    if (b.is_value()) return put(b.value, "", where);
    bool tuple = type.valid() && typed_.types.kind(type) == SemaKind::Tuple;
    // (A list of values of several types is a tuple to sema; built as a
    // list, it shows as one: `[W1, b1]`, a comprehension's result.)
    bool list = (type.valid() && typed_.types.kind(type) == SemaKind::List) || (tuple && b.list_block);
    size_t n = b.size();
    text.append(list ? "[" : "(");
    for (size_t i = 0; i < n; ++i) {
      if (i) text.append(", ");
      sema::TypeId element = !tuple && list ? sema::TypeId{typed_.types.info(type).payload}
                             : tuple && i < typed_.types.tuple_elements(type).size() ? typed_.types.tuple_elements(type)[i]
                                                                                     : sema::TypeId{};
      put_bound(b.element(i), element, where);
    }
    text.append(list ? "]" : n == 1 ? ",)" : ")");
  };
  Bound b = lower(a);
  if (!spec.empty()) {
    if (!b.value) unsupported(a, "formatting this value");
    return put(formatted_number(b.value, conversion), spec, a);
  }
  if (b.is_value()) return put(global_view(b.value, a), "", a);
  put_bound(b, node_type(a), a);
}

// Python's str of an integer or bool constant, formatted by `format`.
static std::optional<std::string> constant_shown(int64_t v, bool is_bool, std::string_view format) {
  std::string plain = is_bool ? (v ? "True" : "False") : std::to_string(v);
  if (format.empty()) return plain;
  std::optional<FormatSpec> spec = parse_format_spec(format, nullptr);
  if (!spec) return std::nullopt;
  return format_number(*spec, false, 0.0, v, static_cast<uint64_t>(v), false, plain);
}

std::optional<bool> Lowering::compare_texts(NodeId compare) {
  NodeId lhs = ast_.child(compare, 0), rhs = ast_.child(compare, 1);
  if (!is_string_node(lhs) || !is_string_node(rhs) || (ast_.node(compare).flags & 1)) return std::nullopt;
  auto op = static_cast<CompareOperator>(ast_.node(compare).op);
  std::optional<std::string> a = folded_text(lower_text(lhs)), b = folded_text(lower_text(rhs));
  if (!a || !b) unsupported(compare, "comparing a string formatted when the program runs");
  bool equal = *a == *b;
  return op == CompareOperator::Ne ? !equal : equal;
}

std::optional<std::string> Lowering::folded_text(const Text& text) const {
  std::string known = text.pieces[0];
  for (size_t i = 0; i < text.values.size(); ++i) {
    Value* v = text.values[i];
    bool is_bool = v->type().is_scalar() && v->type().scalar() == ScalarType::Bool;
    bool integer = v->type().is_index() || (v->type().is_scalar() && !is_float(v->type().scalar()) &&
                                            !is_unsigned(v->type()));
    std::optional<int64_t> c = integer ? folded_int(v) : std::nullopt;
    std::optional<std::string> shown = c ? constant_shown(*c, is_bool, text.formats[i]) : std::nullopt;
    if (!shown) return std::nullopt;
    known += *shown + text.pieces[i + 1];
  }
  return known;
}

std::vector<NamedAttribute> Lowering::text_attributes(const Text& text, std::string_view name) {
  std::vector<Attribute> pieces, formats;
  bool any_format = false;
  for (const std::string& piece : text.pieces) pieces.push_back(context_.string_attr(piece));
  for (const std::string& format : text.formats) {
    formats.push_back(context_.string_attr(format));
    any_format = any_format || !format.empty();
  }
  std::vector<NamedAttribute> attributes{{std::string(name), context_.array_attr(pieces)}};
  if (any_format) attributes.push_back({"formats", context_.array_attr(formats)});
  return attributes;
}

// print(a, "text", t, ...): graph.print with its text pieces around the
// values, separated by spaces as Python's print does.
Value* Lowering::lower_print(NodeId call) {
  Text text;
  bool first = true;
  for (NodeId a : ast_.children(call).subspan(1)) {
    if (!first) text.append(" ");
    first = false;
    append_shown(text, a);
  }
  builder_.create(OpKind::GraphPrint, std::span<Value* const>(text.values), std::span<const Type>{},
                  text_attributes(text, "text"));
  return nullptr;
}

}  // namespace tessera::ir
