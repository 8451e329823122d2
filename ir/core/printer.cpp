#include <fmt/format.h>

#include <unordered_map>

#include "ir/core/ir_text.h"

namespace tessera::ir {
namespace {

class Printer {
 public:
  explicit Printer(const PrintOptions& options) : options_(options) {}

  void print_top(Operation* op) {
    number(op);
    print(op, 0);
  }
  std::string take() { return std::move(out_); }

 private:
  // Names every value and block under an isolated operation, in print order.
  void number(Operation* isolated) {
    unsigned next_value = 0, next_block = 0, next_arg = 0;
    bool is_func = isolated->is(OpKind::Func);
    if (is_func && isolated->num_regions() == 1 && !isolated->region(0).empty())
      for (Value* a : isolated->region(0).front().arguments()) names_[a] = fmt::format("%arg{}", next_arg++);
    std::function<void(Operation*)> visit = [&](Operation* op) {
      for (unsigned r = 0; r < op->num_regions(); ++r) {
        Region& region = op->region(r);
        for (size_t b = 0; b < region.num_blocks(); ++b) {
          Block& block = region.block(b);
          block_names_[&block] = fmt::format("^bb{}", next_block++);
          if (!(op == isolated && is_func && b == 0))
            for (Value* a : block.arguments()) names_[a] = fmt::format("%{}", next_value++);
          for (Operation* nested : block) {
            // Functions are numbered when printed; other isolated regions
            // (schedule.kernel) continue their function's numbering.
            if (nested->is(OpKind::Func)) continue;
            for (Value* res : nested->results()) names_[res] = fmt::format("%{}", next_value++);
            visit(nested);
          }
        }
      }
    };
    for (Value* res : isolated->results()) names_[res] = fmt::format("%{}", next_value++);
    visit(isolated);
  }

  std::string name(Value* v) const {
    auto it = names_.find(v);
    return it == names_.end() ? "%<undefined>" : it->second;
  }

  void indent(unsigned n) { out_.append(n, ' '); }

  void print_attr_dict(const std::vector<NamedAttribute>& attrs, std::initializer_list<std::string_view> skip = {}) {
    bool first = true;
    for (const auto& a : attrs) {
      bool skipped = false;
      for (auto s : skip) skipped |= a.name == s;
      if (skipped) continue;
      out_ += first ? "{" : ", ";
      first = false;
      out_ += a.name;
      if (!a.value.is(AttributeKind::Unit)) {
        out_ += " = ";
        out_ += a.value.str();
      }
    }
    if (!first) out_ += "}";
  }

  void print_loc(Operation* op) {
    if (options_.locations && op->loc().known()) out_ += fmt::format(" loc({})", op->loc().str());
  }

  void print_block(Block& block, bool print_header, unsigned depth) {
    if (print_header) {
      indent(depth);
      out_ += block_names_[&block];
      if (block.num_arguments() > 0) {
        out_ += "(";
        for (unsigned i = 0; i < block.num_arguments(); ++i)
          out_ += fmt::format("{}{}: {}", i ? ", " : "", name(block.argument(i)), block.argument(i)->type().str());
        out_ += ")";
      }
      out_ += ":\n";
    }
    for (Operation* op : block) print(op, depth + 2);
  }

  void print_region(Region& region, unsigned depth, bool omit_entry_header) {
    out_ += "{";
    if (region.empty()) {
      out_ += "}";
      return;
    }
    out_ += "\n";
    for (size_t b = 0; b < region.num_blocks(); ++b) {
      Block& block = region.block(b);
      bool header = region.num_blocks() > 1 || block.num_arguments() > 0 || block.empty();
      if (b == 0 && omit_entry_header) header = region.num_blocks() > 1;
      print_block(block, header, depth);
    }
    indent(depth);
    out_ += "}";
  }

  void print_module(Operation* op, unsigned depth) {
    out_ += "module";
    if (!op->attributes().empty()) {
      out_ += " attributes ";
      print_attr_dict(op->attributes());
    }
    out_ += " {\n";
    if (op->num_regions() == 1 && !op->region(0).empty())
      for (Operation* nested : op->region(0).front()) {
        if (nested->has_trait(trait::IsolatedFromAbove)) number(nested);
        print(nested, depth + 2);
      }
    indent(depth);
    out_ += "}";
    print_loc(op);
    out_ += "\n";
  }

  void print_func(Operation* op, unsigned depth) {
    out_ += fmt::format("func.func @{}(", op->symbol_name());
    Attribute signature = op->attr("function_type");
    Type fn = signature && signature.is(AttributeKind::Type) ? signature.type() : Type();
    bool has_body = op->num_regions() == 1 && !op->region(0).empty();
    size_t inputs = fn && fn.is(TypeKind::Function) ? fn.num_inputs() : 0;
    for (size_t i = 0; i < inputs; ++i) {
      if (i) out_ += ", ";
      if (has_body && i < op->region(0).front().num_arguments())
        out_ += name(op->region(0).front().argument(static_cast<unsigned>(i))) + ": ";
      out_ += fn.input(i).str();
    }
    out_ += ")";
    if (fn && fn.is(TypeKind::Function) && fn.num_results() > 0) {
      out_ += " -> ";
      if (fn.num_results() == 1) {
        out_ += fn.result(0).str();
      } else {
        out_ += "(";
        for (size_t i = 0; i < fn.num_results(); ++i) out_ += fmt::format("{}{}", i ? ", " : "", fn.result(i).str());
        out_ += ")";
      }
    }
    bool extra = false;
    for (const auto& a : op->attributes()) extra |= a.name != "sym_name" && a.name != "function_type";
    if (extra) {
      out_ += " attributes ";
      print_attr_dict(op->attributes(), {"sym_name", "function_type"});
    }
    if (has_body) {
      out_ += " ";
      print_region(op->region(0), depth, /*omit_entry_header=*/true);
    }
    print_loc(op);
    out_ += "\n";
  }

  void print(Operation* op, unsigned depth) {
    indent(depth);
    if (op->is(OpKind::Module)) return print_module(op, depth);
    if (op->is(OpKind::Func)) return print_func(op, depth);
    if (op->num_results() > 0) {
      for (unsigned i = 0; i < op->num_results(); ++i) out_ += (i ? ", " : "") + name(op->result(i));
      out_ += " = ";
    }
    out_ += op->name();
    for (unsigned i = 0; i < op->num_operands(); ++i) out_ += (i ? ", " : " ") + name(op->operand(i));
    if (!op->attributes().empty()) {
      out_ += " ";
      print_attr_dict(op->attributes());
    }
    if (op->num_results() > 0) {
      out_ += " :";
      for (unsigned i = 0; i < op->num_results(); ++i)
        out_ += fmt::format("{} {}", i ? "," : "", op->result(i)->type().str());
    }
    if (op->num_regions() > 0) {
      out_ += " (";
      for (unsigned r = 0; r < op->num_regions(); ++r) {
        if (r) out_ += ", ";
        print_region(op->region(r), depth, false);
      }
      out_ += ")";
    }
    print_loc(op);
    out_ += "\n";
  }

  const PrintOptions& options_;
  std::string out_;
  std::unordered_map<const Value*, std::string> names_;
  std::unordered_map<const Block*, std::string> block_names_;
};

}  // namespace

std::string print_operation(Operation* op, const PrintOptions& options) {
  Printer printer(options);
  printer.print_top(op);
  return printer.take();
}

}  // namespace tessera::ir
