// Parses the textual IR (grammar in ir_text.h). Hand-written recursive
// descent over characters: the IR's lexical structure is small, and shapes
// such as `4x?xf32` are easier to read from characters than from tokens.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <unordered_map>

#include "ir/core/ir_text.h"

namespace tessera::ir {
namespace {

struct ParseFailure {};

constexpr int64_t kMaxDimension = int64_t{1} << 40;

class IRParser {
 public:
  IRParser(Context& context, const SourceManager& sources, FileId file, DiagnosticEngine& diags)
      : ctx_(context),
        diags_(diags),
        file_name_(sources.file_name(file)),
        text_(sources.contents(file)),
        base_(sources.file_begin(file)),
        sources_(sources),
        file_(file) {
    placeholders_block_ = std::make_unique<Block>();
  }

  OwningModule parse() {
    try {
      skip_space();
      OwningModule module;
      if (peek_word("module")) {
        size_t start = pos_;
        expect_word("module");
        module = create_module(location_at(start));
        if (consume_word("attributes")) {
          for (auto& a : parse_attr_dict()) module->set_attr(a.name, a.value);
        }
        expect('{');
        parse_top_level(module.get(), '}');
        expect('}');
        parse_optional_loc(module.get());
      } else {
        module = create_module(location_at(pos_));
        parse_top_level(module.get(), '\0');
      }
      skip_space();
      if (pos_ < text_.size()) fail(pos_, "expected the end of the file after the module");
      return module;
    } catch (const ParseFailure&) {
      return nullptr;
    }
  }

 private:
  // --- characters ------------------------------------------------------------
  void skip_space() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++pos_;
      } else {
        break;
      }
    }
  }
  // Skips spaces but not line ends: operand lists end at the end of the line.
  bool at_same_line(char c) {
    size_t p = pos_;
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t')) ++p;
    if (p < text_.size() && text_[p] == c) {
      pos_ = p;
      return true;
    }
    return false;
  }
  bool peek(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool consume(char c) {
    if (!peek(c)) return false;
    ++pos_;
    return true;
  }
  bool consume(std::string_view s) {
    skip_space();
    if (text_.substr(pos_, s.size()) != s) return false;
    pos_ += s.size();
    return true;
  }
  void expect(char c) {
    if (!consume(c)) fail(pos_, fmt::format("expected '{}'{}", c, found()));
  }
  static bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }
  bool peek_word(std::string_view word) {
    skip_space();
    return text_.substr(pos_, word.size()) == word &&
           (pos_ + word.size() >= text_.size() || !is_word_char(text_[pos_ + word.size()]));
  }
  bool consume_word(std::string_view word) {
    if (!peek_word(word)) return false;
    pos_ += word.size();
    return true;
  }
  void expect_word(std::string_view word) {
    if (!consume_word(word)) fail(pos_, fmt::format("expected '{}'{}", word, found()));
  }
  std::string found() {
    skip_space();
    if (pos_ >= text_.size()) return " at the end of the file";
    size_t end = pos_ + 1;
    while (end < text_.size() && is_word_char(text_[pos_]) && is_word_char(text_[end])) ++end;
    return fmt::format(", found '{}'", text_.substr(pos_, end - pos_));
  }
  std::string parse_word() {
    skip_space();
    size_t start = pos_;
    while (pos_ < text_.size() && is_word_char(text_[pos_])) ++pos_;
    if (start == pos_) fail(pos_, "expected a name" + found());
    return std::string(text_.substr(start, pos_ - start));
  }
  // `%name`, `^name`, `@name` (the sigil included).
  std::string parse_sigil_name(char sigil, std::string_view what) {
    skip_space();
    if (pos_ >= text_.size() || text_[pos_] != sigil) fail(pos_, fmt::format("expected {}{}", what, found()));
    size_t start = pos_++;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
                                   text_[pos_] == '.' || text_[pos_] == '$'))
      ++pos_;
    if (pos_ == start + 1) fail(start, fmt::format("expected {}", what));
    return std::string(text_.substr(start, pos_ - start));
  }
  int64_t parse_integer() {
    skip_space();
    size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    std::string digits(text_.substr(start, pos_ - start));
    if (digits.empty() || digits == "-") fail(start, "expected an integer" + found());
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(digits.c_str(), &end, 10);
    if (errno == ERANGE) fail(start, "integer '" + digits + "' does not fit in 64 bits");
    return v;
  }
  std::string parse_string() {
    skip_space();
    size_t start = pos_;
    if (!consume('"')) fail(pos_, "expected a string" + found());
    std::string s;
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n') fail(start, "unterminated string");
      char c = text_[pos_++];
      if (c == '"') break;
      if (c == '\\') {
        if (pos_ < text_.size() && (text_[pos_] == '"' || text_[pos_] == '\\')) {
          s += text_[pos_++];
        } else if (pos_ + 1 < text_.size() && std::isxdigit(static_cast<unsigned char>(text_[pos_])) &&
                   std::isxdigit(static_cast<unsigned char>(text_[pos_ + 1]))) {
          s += static_cast<char>(std::stoi(std::string(text_.substr(pos_, 2)), nullptr, 16));
          pos_ += 2;
        } else {
          fail(pos_ - 1, "invalid escape in string");
        }
      } else {
        s += c;
      }
    }
    return s;
  }

  [[noreturn]] void fail(size_t at, const std::string& message) {
    SourceOffset offset = base_ + static_cast<SourceOffset>(std::min(at, text_.size()));
    diags_.emit<diag::IrParseError>(SourceRange::at(offset), message);
    throw ParseFailure{};
  }
  template <DiagnosticKind K>
  [[noreturn]] void fail_kind(size_t at, size_t end, std::string arg) {
    diags_.emit<K>(SourceRange{base_ + static_cast<SourceOffset>(at), base_ + static_cast<SourceOffset>(end)},
                   std::move(arg));
    throw ParseFailure{};
  }

  Location location_at(size_t at) {
    PresumedLocation p = sources_.presumed(base_ + static_cast<SourceOffset>(at));
    return ctx_.file_location(file_name_, p.line, p.column);
  }

  // --- types -----------------------------------------------------------------
  std::optional<ScalarType> scalar_by_name(std::string_view name) {
#define TESSERA_SCALAR(Name, Spelling, Bits, Kind, Runtime, StorageBits) \
  if (name == Spelling) return ScalarType::Name;
#include "support/scalar_type.def"
    return std::nullopt;
  }

  ScalarType parse_scalar() {
    size_t start = (skip_space(), pos_);
    std::string word = parse_word();
    auto s = scalar_by_name(word);
    if (!s) fail(start, "expected an element type, found '" + word + "'");
    return *s;
  }

  // `4x?x` prefixes of shaped types, then the element type.
  std::vector<int64_t> parse_dims() {
    std::vector<int64_t> dims;
    skip_space();
    while (pos_ < text_.size()) {
      size_t save = pos_;
      int64_t d;
      if (text_[pos_] == '?') {
        ++pos_;
        d = kDynamic;
      } else if (std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        d = 0;
        while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
          d = d * 10 + (text_[pos_++] - '0');
          if (d > kMaxDimension) fail(save, "dimension is too large (the limit is 2^40)");
        }
      } else {
        break;
      }
      if (pos_ >= text_.size() || text_[pos_] != 'x') {
        pos_ = save;
        fail(pos_, "expected 'x' after a dimension");
      }
      ++pos_;
      dims.push_back(d);
    }
    return dims;
  }

  Type parse_type() {
    skip_space();
    size_t start = pos_;
    if (consume('(')) {
      std::vector<Type> inputs, results;
      if (!consume(')')) {
        do inputs.push_back(parse_type());
        while (consume(','));
        expect(')');
      }
      if (!consume("->")) fail(pos_, "expected '->' in a function type" + found());
      expect('(');
      if (!consume(')')) {
        do results.push_back(parse_type());
        while (consume(','));
        expect(')');
      }
      return ctx_.function_type(inputs, results);
    }
    std::string word = parse_word();
    if (word == "index") return ctx_.index_type();
    if (word == "token") return ctx_.token_type();
    if (auto s = scalar_by_name(word)) return ctx_.scalar_type(*s);
    if (word == "opaque") {
      expect('<');
      std::string name = parse_string();
      expect('>');
      return ctx_.opaque_type(name);
    }
    if (word == "tensor" || word == "memref" || word == "vector" || word == "tile") {
      expect('<');
      std::vector<int64_t> dims = parse_dims();
      ScalarType element = parse_scalar();
      Type t;
      if (word == "tensor") {
        t = ctx_.tensor_type(dims, element);
      } else if (word == "vector") {
        if (dims.size() != 1 || dims[0] == kDynamic || dims[0] <= 0)
          fail(start, "a vector type has one positive static width, as in vector<4xf32>");
        t = ctx_.vector_type(dims[0], element);
      } else if (word == "tile") {
        TileLayout layout = TileLayout::Generic;
        if (consume(',')) {
          std::string l = parse_word();
          if (l == "mma_a")
            layout = TileLayout::MmaA;
          else if (l == "mma_b")
            layout = TileLayout::MmaB;
          else if (l == "mma_acc")
            layout = TileLayout::MmaAccumulator;
          else
            fail(start, "unknown tile layout '" + l + "' (expected mma_a, mma_b or mma_acc)");
        }
        t = ctx_.tile_type(dims, element, layout);
      } else {
        expect(',');
        std::string space = parse_word();
        MemorySpace ms;
        if (space == "global")
          ms = MemorySpace::Global;
        else if (space == "shared")
          ms = MemorySpace::Shared;
        else if (space == "local")
          ms = MemorySpace::Local;
        else if (space == "constant")
          ms = MemorySpace::Constant;
        else
          fail(start, "unknown memory space '" + space + "' (expected global, shared, local or constant)");
        int64_t padding = 0;
        Swizzle swizzle = Swizzle::None;
        while (consume(',')) {
          std::string key = parse_word();
          if (key == "pad") {
            padding = parse_integer();
          } else if (key == "swizzle") {
            std::string kind = parse_word();
            if (kind != "xor") fail(start, "unknown swizzle '" + kind + "' (expected xor)");
            swizzle = Swizzle::Xor;
          } else {
            fail(start, "unknown memref layout '" + key + "' (expected pad N or swizzle xor)");
          }
        }
        t = ctx_.memref_type(dims, element, ms, padding, swizzle);
      }
      expect('>');
      return t;
    }
    fail(start, "expected a type, found '" + word + "'");
  }

  // --- attributes --------------------------------------------------------------
  Attribute parse_attribute() {
    skip_space();
    size_t start = pos_;
    if (pos_ >= text_.size()) fail(pos_, "expected an attribute at the end of the file");
    char c = text_[pos_];
    if (c == '"') return ctx_.string_attr(parse_string());
    if (c == '@') return ctx_.symbol_attr(parse_sigil_name('@', "a symbol").substr(1));
    if (c == '[') {
      ++pos_;
      std::vector<Attribute> elements;
      if (!consume(']')) {
        do {
          // `?`: an i64 element known only at run time (kDynamic), as the
          // printer writes it (Context::array_attr).
          if (consume('?')) elements.push_back(ctx_.int_attr(kDynamic));
          else elements.push_back(parse_attribute());
        } while (consume(','));
        expect(']');
      }
      return ctx_.array_attr(elements);
    }
    if (consume_word("true")) return ctx_.bool_attr(true);
    if (consume_word("false")) return ctx_.bool_attr(false);
    if (consume_word("unit")) return ctx_.unit_attr();
    bool negative = c == '-';
    size_t p = pos_ + (negative ? 1 : 0);
    if (text_.substr(p, 3) == "inf" || text_.substr(p, 3) == "nan") {
      double v = text_.substr(p, 3) == "inf" ? INFINITY : NAN;
      pos_ = p + 3;
      return float_with_type(negative ? -v : v);
    }
    if (p < text_.size() && std::isdigit(static_cast<unsigned char>(text_[p]))) {
      size_t end = p;
      bool is_float = false;
      while (end < text_.size() && std::isdigit(static_cast<unsigned char>(text_[end]))) ++end;
      if (end < text_.size() && text_[end] == '.') {
        is_float = true;
        ++end;
        while (end < text_.size() && std::isdigit(static_cast<unsigned char>(text_[end]))) ++end;
      }
      if (end < text_.size() && (text_[end] == 'e' || text_[end] == 'E')) {
        is_float = true;
        ++end;
        if (end < text_.size() && (text_[end] == '+' || text_[end] == '-')) ++end;
        while (end < text_.size() && std::isdigit(static_cast<unsigned char>(text_[end]))) ++end;
      }
      if (is_float) {
        std::string number(text_.substr(pos_, end - pos_));
        pos_ = end;
        return float_with_type(std::strtod(number.c_str(), nullptr));
      }
      int64_t v = parse_integer();
      if (consume(':')) {
        Type t = parse_type();
        if (t.is_float()) return ctx_.float_attr(static_cast<double>(v), t);
        if (!t.is_integer_like()) fail(start, "an integer attribute needs an integer or index type");
        return ctx_.int_attr(v, t);
      }
      return ctx_.int_attr(v);
    }
    return ctx_.type_attr(parse_type());
  }

  Attribute float_with_type(double v) {
    size_t at = pos_;
    if (consume(':')) {
      Type t = parse_type();
      if (!t.is_float()) fail(at, "a float attribute needs a float type");
      return ctx_.float_attr(v, t);
    }
    return ctx_.float_attr(v);
  }

  std::vector<NamedAttribute> parse_attr_dict() {
    std::vector<NamedAttribute> attrs;
    expect('{');
    if (consume('}')) return attrs;
    do {
      skip_space();
      size_t at = pos_;
      std::string name = parse_word();
      for (auto& a : attrs)
        if (a.name == name) fail(at, "attribute '" + name + "' appears twice");
      Attribute value = consume('=') ? parse_attribute() : ctx_.unit_attr();
      attrs.push_back({name, value});
    } while (consume(','));
    expect('}');
    return attrs;
  }

  void parse_optional_loc(Operation* op) {
    if (!at_same_line('l') || !consume("loc(")) return;
    op->set_loc(parse_location_body());
    expect(')');
  }

  Location parse_location_body() {
    if (consume_word("unknown")) return Location();
    if (consume("fused[")) {
      std::vector<Location> parts;
      do parts.push_back(parse_location_body());
      while (consume(','));
      expect(']');
      return ctx_.fused_location(parts);
    }
    std::string file = parse_string();
    expect(':');
    int64_t line = parse_integer();
    expect(':');
    int64_t column = parse_integer();
    return ctx_.file_location(file, static_cast<uint32_t>(line), static_cast<uint32_t>(column));
  }

  // --- values -----------------------------------------------------------------
  Value* use_value(size_t at, const std::string& name) {
    auto it = values_.find(name);
    if (it != values_.end()) return it->second;
    auto fwd = forward_.find(name);
    if (fwd != forward_.end()) return fwd->second.value;
    Value* placeholder = placeholders_block_->add_argument(Type());
    forward_[name] = {placeholder, at};
    return placeholder;
  }

  void define_value(size_t at, const std::string& name, Value* v) {
    if (values_.count(name)) fail_kind<diag::IrRedefinedValue>(at, at + name.size(), name);
    values_[name] = v;
    auto fwd = forward_.find(name);
    if (fwd != forward_.end()) {
      fwd->second.value->replace_all_uses_with(v);
      forward_.erase(fwd);
    }
  }

  // Called at the end of each isolated scope.
  void close_scope() {
    if (!forward_.empty()) {
      auto first = forward_.begin();
      for (auto it = forward_.begin(); it != forward_.end(); ++it)
        if (it->second.at < first->second.at) first = it;
      fail_kind<diag::IrUndefinedValue>(first->second.at, first->second.at + first->first.size(), first->first);
    }
    values_.clear();
  }

  // --- operations --------------------------------------------------------------
  void parse_top_level(Operation* module, char close) {
    Block& body = module->region(0).front();
    while (true) {
      skip_space();
      if (pos_ >= text_.size() || (close && text_[pos_] == close)) return;
      size_t start = pos_;
      std::string name = parse_word();
      if (name != "func.func") fail(start, "expected 'func.func' at module level, found '" + name + "'");
      parse_func(start, body);
    }
  }

  Operation* parse_func(size_t start, Block& parent) {
    std::string symbol = parse_sigil_name('@', "a function name after 'func.func'").substr(1);
    expect('(');
    std::vector<std::pair<std::string, size_t>> arg_names;
    std::vector<Type> inputs, results;
    if (!consume(')')) {
      do {
        skip_space();
        size_t at = pos_;
        if (peek('%')) {
          arg_names.push_back({parse_sigil_name('%', "an argument name"), at});
          expect(':');
        }
        inputs.push_back(parse_type());
      } while (consume(','));
      expect(')');
    }
    if (!arg_names.empty() && arg_names.size() != inputs.size())
      fail(start, "either every argument of a function is named or none is");
    if (consume("->")) {
      if (consume('(')) {
        if (!consume(')')) {
          do results.push_back(parse_type());
          while (consume(','));
          expect(')');
        }
      } else {
        results.push_back(parse_type());
      }
    }
    std::vector<NamedAttribute> attrs;
    if (consume_word("attributes")) attrs = parse_attr_dict();
    for (auto& a : attrs)
      if (a.name == "sym_name" || a.name == "function_type")
        fail(start, "'" + a.name + "' is written in the function header, not in its attributes");
    attrs.push_back({"sym_name", ctx_.string_attr(symbol)});
    attrs.push_back({"function_type", ctx_.type_attr(ctx_.function_type(inputs, results))});
    Operation* func = Operation::create(OpKind::Func, location_at(start), {}, {}, std::move(attrs), 1);
    parent.push_back(func);
    if (at_same_line('{')) {
      Block* entry = func->region(0).add_block();
      for (size_t i = 0; i < inputs.size(); ++i) {
        Value* a = entry->add_argument(inputs[i]);
        if (!arg_names.empty()) define_value(arg_names[i].second, arg_names[i].first, a);
      }
      expect('{');
      parse_blocks(func->region(0), entry);
      expect('}');
      close_scope();
    } else {
      if (!arg_names.empty()) fail(start, "a function declaration without a body takes unnamed arguments");
    }
    parse_optional_loc(func);
    return func;
  }

  // Blocks until the closing '}'. `entry`: a block already created (function
  // bodies), which an argument-less first label may name.
  void parse_blocks(Region& region, Block* entry) {
    Block* current = entry;
    bool first = true;
    while (true) {
      skip_space();
      if (pos_ >= text_.size()) fail(pos_, "expected '}' at the end of the file");
      if (text_[pos_] == '}') return;
      if (text_[pos_] == '^') {
        size_t at = pos_;
        parse_sigil_name('^', "a block label");
        if (first && entry) {
          if (peek('(')) fail(at, "the entry block of a function takes its arguments from the signature");
        } else {
          current = region.add_block();
          if (consume('(')) {
            if (!consume(')')) {
              do {
                skip_space();
                size_t name_at = pos_;
                std::string name = parse_sigil_name('%', "a block argument name");
                expect(':');
                define_value(name_at, name, current->add_argument(parse_type()));
              } while (consume(','));
              expect(')');
            }
          }
        }
        expect(':');
        first = false;
        continue;
      }
      if (!current) current = region.add_block();
      first = false;
      parse_operation(current);
    }
  }

  // Parses one operation and appends it to `block` at once, so that the module
  // owns everything built so far when a later error unwinds.
  Operation* parse_operation(Block* block) {
    skip_space();
    size_t start = pos_;
    std::vector<std::pair<std::string, size_t>> result_names;
    if (peek('%')) {
      do {
        skip_space();
        size_t at = pos_;
        result_names.push_back({parse_sigil_name('%', "a result name"), at});
      } while (consume(','));
      expect('=');
    }
    skip_space();
    size_t name_at = pos_;
    std::string name = parse_word();
    if (name == "func.func" || name == "module")
      fail(name_at, "'" + name + "' may only appear at the top level");
    auto kind = op_kind_by_name(name);
    if (!kind) fail_kind<diag::IrUnknownOperation>(name_at, pos_, name);
    std::vector<Value*> operands;
    if (at_same_line('%')) {
      do {
        skip_space();
        size_t at = pos_;
        operands.push_back(use_value(at, parse_sigil_name('%', "an operand")));
      } while (consume(','));
    }
    std::vector<NamedAttribute> attrs;
    if (at_same_line('{')) attrs = parse_attr_dict();
    std::vector<Type> types;
    if (at_same_line(':')) {
      ++pos_;
      do types.push_back(parse_type());
      while (consume(','));
    }
    if (types.size() != result_names.size())
      fail(start, fmt::format("'{}' names {} result{} but lists {} result type{}", name, result_names.size(),
                              result_names.size() == 1 ? "" : "s", types.size(), types.size() == 1 ? "" : "s"));
    Operation* op = Operation::create(*kind, location_at(start), operands, types, std::move(attrs));
    block->push_back(op);
    for (size_t i = 0; i < result_names.size(); ++i)
      define_value(result_names[i].second, result_names[i].first, op->result(static_cast<unsigned>(i)));
    if (at_same_line('(')) {
      ++pos_;
      do {
        Region* region = op->append_region();
        expect('{');
        parse_blocks(*region, nullptr);
        expect('}');
      } while (consume(','));
      expect(')');
    }
    parse_optional_loc(op);
    return op;
  }

  struct Forward {
    Value* value;
    size_t at;
  };

  Context& ctx_;
  DiagnosticEngine& diags_;
  std::string file_name_;
  std::string_view text_;
  SourceOffset base_;
  const SourceManager& sources_;
  FileId file_;
  size_t pos_ = 0;
  std::unordered_map<std::string, Value*> values_;
  std::unordered_map<std::string, Forward> forward_;
  std::unique_ptr<Block> placeholders_block_;
};

}  // namespace

OwningModule parse_module(Context& context, const SourceManager& sources, FileId file, DiagnosticEngine& diags) {
  IRParser parser(context, sources, file, diags);
  return parser.parse();
}

std::string round_trip_mismatch(const std::string& printed, const PrintOptions& options) {
  Context context;
  SourceManager sources;
  CollectingDiagnosticConsumer collected;
  DiagnosticEngine diags(sources, collected);
  FileId file = sources.add_file("<round-trip>", printed);
  OwningModule module = parse_module(context, sources, file, diags);
  diags.flush();
  if (!module) {
    std::string why = collected.diagnostics.empty() ? "unknown error" : collected.diagnostics[0].message;
    PresumedLocation at = collected.diagnostics.empty() || !collected.diagnostics[0].has_location
                              ? PresumedLocation{}
                              : sources.presumed(collected.diagnostics[0].range.begin);
    return fmt::format("printed IR does not parse back: line {}: {}", at.line, why);
  }
  std::string again = print_operation(module.get(), options);
  if (again == printed) return "";
  size_t line = 1;
  for (size_t i = 0; i < std::min(again.size(), printed.size()); ++i) {
    if (again[i] != printed[i]) break;
    if (again[i] == '\n') ++line;
  }
  return fmt::format("printed IR prints differently after parsing it back (first difference on line {})", line);
}

bool round_trip_checks_enabled() {
  const char* value = std::getenv("TESSERA_CHECK_ROUND_TRIP");
  return value != nullptr && value[0] != '\0' && value[0] != '0';
}

SourceRange location_range(const SourceManager& sources, Location loc) {
  Location p = loc.primary();
  if (p.kind() != LocationKind::FileLineColumn) return {};
  for (uint32_t i = 0; i < sources.file_count(); ++i) {
    FileId f{i};
    if (sources.file_name(f) != p.file()) continue;
    if (p.line() == 0 || p.line() > sources.line_count(f)) return {};
    SourceOffset offset = sources.line_start(f, p.line()) + (p.column() > 0 ? p.column() - 1 : 0);
    return SourceRange::at(std::min(offset, sources.file_end(f)));
  }
  return {};
}

}  // namespace tessera::ir
