#include "tools/tesserac/grid_expression.h"

#include <cctype>

namespace tessera {

namespace {

// A recursive-descent evaluator over int64, every step checked for overflow.
class Evaluator {
 public:
  Evaluator(const std::string& text, const std::map<std::string, int64_t>& names) : text_(text), names_(names) {}

  std::optional<int64_t> run(std::string& error) {
    std::optional<int64_t> v = sum();
    skip_spaces();
    if (v && at_ < text_.size()) fail("unexpected '" + text_.substr(at_, 1) + "'");
    if (!error_.empty()) {
      error = error_;
      return std::nullopt;
    }
    return v;
  }

 private:
  void skip_spaces() {
    while (at_ < text_.size() && text_[at_] == ' ') ++at_;
  }
  bool eat(const char* token) {
    skip_spaces();
    std::string t(token);
    if (text_.compare(at_, t.size(), t) != 0) return false;
    at_ += t.size();
    return true;
  }
  std::optional<int64_t> fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return std::nullopt;
  }
  // a OP b, or an error when it overflows 64 bits.
  std::optional<int64_t> add(int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) return fail("a value overflows 64 bits");
    return r;
  }
  std::optional<int64_t> subtract(int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_sub_overflow(a, b, &r)) return fail("a value overflows 64 bits");
    return r;
  }
  std::optional<int64_t> multiply(int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) return fail("a value overflows 64 bits");
    return r;
  }

  std::optional<int64_t> sum() {
    std::optional<int64_t> v = product();
    while (v) {
      if (eat("+")) {
        std::optional<int64_t> r = product();
        if (!r) return std::nullopt;
        v = add(*v, *r);
      } else if (eat("-")) {
        std::optional<int64_t> r = product();
        if (!r) return std::nullopt;
        v = subtract(*v, *r);
      } else {
        break;
      }
    }
    return v;
  }

  std::optional<int64_t> product() {
    std::optional<int64_t> v = unary();
    while (v) {
      bool times = eat("*");
      bool divide = !times && eat("//");
      bool modulo = !times && !divide && eat("%");
      if (!times && !divide && !modulo) break;
      std::optional<int64_t> r = unary();
      if (!r) return std::nullopt;
      if (times) {
        v = multiply(*v, *r);
      } else if (*r == 0) {
        return fail("division by zero");
      } else if (*v == INT64_MIN && *r == -1) {
        return fail("a value overflows 64 bits");
      } else {
        // Python's floor division and modulo.
        int64_t q = *v / *r, m = *v % *r;
        if (m != 0 && ((m < 0) != (*r < 0))) {
          --q;
          m += *r;
        }
        v = divide ? q : m;
      }
    }
    return v;
  }

  std::optional<int64_t> unary() {
    if (eat("-")) {
      std::optional<int64_t> v = unary();
      if (!v) return std::nullopt;
      return subtract(0, *v);
    }
    if (eat("+")) return unary();
    return primary();
  }

  std::optional<int64_t> primary() {
    skip_spaces();
    if (eat("(")) {
      std::optional<int64_t> v = sum();
      if (v && !eat(")")) return fail("a ')' is missing");
      return v;
    }
    if (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) {
      int64_t v = 0;
      while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) {
        std::optional<int64_t> next = multiply(v, 10);
        if (next) next = add(*next, text_[at_++] - '0');
        if (!next) return std::nullopt;
        v = *next;
      }
      return v;
    }
    size_t start = at_;
    while (at_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_')) ++at_;
    std::string name = text_.substr(start, at_ - start);
    if (name.empty())
      return fail(at_ < text_.size() ? "unexpected '" + text_.substr(at_, 1) + "'" : "an operand is missing");
    if (name == "cdiv" || name == "min" || name == "max") {
      if (!eat("(")) return fail("'" + name + "' takes (a, b)");
      std::optional<int64_t> a = sum();
      if (!a) return std::nullopt;
      if (!eat(",")) return fail("'" + name + "' takes (a, b)");
      std::optional<int64_t> b = sum();
      if (!b) return std::nullopt;
      if (!eat(")")) return fail("a ')' is missing");
      if (name == "min") return std::min(*a, *b);
      if (name == "max") return std::max(*a, *b);
      if (*b <= 0) return fail("cdiv(a, b) needs b > 0");
      // ceil(a / b) without overflow: floor division, plus one for a remainder.
      int64_t q = *a / *b, m = *a % *b;
      if (m < 0) {
        --q;
        m += *b;
      }
      return m != 0 ? add(q, 1) : q;
    }
    auto it = names_.find(name);
    if (it == names_.end()) {
      std::string known;
      for (const auto& [n, v] : names_) known += (known.empty() ? "" : ", ") + n;
      return fail("unknown name '" + name + "' (the grid may use " + (known.empty() ? "numbers only" : known) + ")");
    }
    return it->second;
  }

  const std::string& text_;
  const std::map<std::string, int64_t>& names_;
  size_t at_ = 0;
  std::string error_;
};

}  // namespace

std::optional<std::vector<std::string>> split_grid_axes(const std::string& text, std::string& error) {
  std::vector<std::string> axes;
  bool plain = !text.empty() && text.find_first_not_of("0123456789x") == std::string::npos;
  char separator = plain ? 'x' : ',';
  int depth = 0;
  std::string current;
  for (char c : text) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == separator && depth == 0) {
      axes.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  axes.push_back(current);
  for (const std::string& axis : axes)
    if (axis.find_first_not_of(' ') == std::string::npos) {
      error = "an axis is empty";
      return std::nullopt;
    }
  if (axes.size() > 3) {
    error = "a grid has 1 to 3 axes";
    return std::nullopt;
  }
  return axes;
}

std::optional<int64_t> evaluate_grid_axis(const std::string& expression, const std::map<std::string, int64_t>& names,
                                          std::string& error) {
  std::optional<int64_t> v = Evaluator(expression, names).run(error);
  if (v && (*v < 1 || *v > INT32_MAX)) {
    error = "'" + expression + "' is " + std::to_string(*v) + "; an axis has 1 to 2147483647 groups";
    return std::nullopt;
  }
  return v;
}

}  // namespace tessera
