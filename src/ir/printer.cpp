#include "ir/printer.hpp"

#include <charconv>
#include <span>

#include <fmt/format.h>

namespace tack::ir {
namespace {

// Appends to one string: the printed kernel is the disk cache's key, made at every new process's
// first call, and a string per node (each expression returned its own, then copied into its
// parent's) was most of the printing's work.
class Printer {
 public:
  Printer(const Kernel& k, PrintOptions options, std::string& out)
      : k_(k), options_(options), out_(out) {}

  template <typename... Args>
  void format(fmt::format_string<Args...> spec, Args&&... args) const {
    fmt::format_to(std::back_inserter(out_), spec, std::forward<Args>(args)...);
  }

  void integer(int64_t v) const {
    char digits[24];
    out_.append(digits, std::to_chars(digits, digits + sizeof digits, v).ptr);
  }

  // "(name:type operand operand...)", appended piece by piece: the commonest node, where
  // formatting with fmt parsed its format string each time.
  void node(std::string_view name, const Type& type, std::span<const ExprPtr> operands) const {
    out_ += '(';
    out_ += name;
    out_ += ':';
    out_ += to_string(type);
    operand_list(operands);
    out_ += ')';
  }

  // "%name": with local_ids, "%name#id", since inlining gives several locals one name.
  void local(int id) const {
    out_ += '%';
    out_ += k_.locals[static_cast<size_t>(id)].name;
    if (options_.local_ids) {
      out_ += '#';
      integer(id);
    }
  }

  // " operand operand..."
  void operand_list(std::span<const ExprPtr> operands) const {
    for (const auto& o : operands) {
      out_ += ' ';
      expr(*o);
    }
  }

  void expr(const Expr& e) const {
    switch (e.op) {
      case Op::Const:
        if (e.type.is_float())
          format("{}:{}", e.float_value, to_string(e.type));
        else if (e.type.is_bool())
          out_ += e.int_bits ? "True" : "False";
        else if (is_unsigned(e.type.dtype))
          format("{}:{}", e.int_bits, to_string(e.type));
        else {
          integer(static_cast<int64_t>(e.int_bits));
          out_ += ':';
          out_ += to_string(e.type);
        }
        return;
      case Op::Local:
        local(e.index);
        return;
      case Op::Param:
        out_ += '$';
        out_ += k_.params[e.index].name;
        return;
      case Op::ArrayDim:
        format("{}.shape[{}]", k_.params[e.index].name, e.dim);
        return;
      case Op::Load:
        access(e.index, e.operands, e.checked, e.loc);
        return;
      case Op::Atomic: {
        const std::span<const ExprPtr> operands = e.operands;
        const size_t rank = k_.params[e.index].type.rank;
        format("(atomic_{}:{} ", atomic_name(e.atomic), to_string(e.type));
        access(e.index, operands.first(rank), e.checked, e.loc);
        operand_list(operands.subspan(rank));
        out_ += ')';
        return;
      }
      case Op::TextureSample:
        format("(sample:f32 {}", k_.params[e.index].name);
        operand_list(e.operands);
        out_ += ')';
        return;
      case Op::Collective:
        format("(block_{}:{} ", collective_name(e.collective), to_string(e.type));
        expr(*e.operands[0]);
        out_ += ')';
        return;
      case Op::Call:
        node(builtin_name(e.callee), e.type, e.operands);
        return;
      default:
        node(op_name(e.op), e.type, e.operands);
        return;
    }
  }

  void access(int array, std::span<const ExprPtr> indices, bool checked, SourceLoc loc) const {
    out_ += k_.params[array].name;
    out_ += '[';
    for (size_t i = 0; i < indices.size(); ++i) {
      if (i) out_ += ", ";
      expr(*indices[i]);
    }
    out_ += ']';
    if (!checked) return;
    out_ += '!';
    if (!options_.locations) return;
    integer(loc.line);
    out_ += ':';
    integer(loc.col);
  }

  void block(const Block& b, int depth) const {
    for (const auto& s : b) stmt(*s, depth);
  }

  void stmt(const Stmt& s, int depth) const {
    out_.append(depth * 2, ' ');
    switch (s.kind) {
      case Stmt::Kind::Assign:
        local(s.index);
        out_ += " = ";
        expr(*s.value);
        out_ += '\n';
        break;
      case Stmt::Kind::Store:
        access(s.index, s.indices, s.checked, s.loc);
        out_ += " = ";
        expr(*s.value);
        out_ += '\n';
        break;
      case Stmt::Kind::If:
        out_ += "if ";
        expr(*s.cond);
        out_ += ":\n";
        block(s.body, depth + 1);
        if (!s.orelse.empty()) {
          out_.append(depth * 2, ' ');
          out_ += "else:\n";
          block(s.orelse, depth + 1);
        }
        break;
      case Stmt::Kind::While:
        out_ += "while ";
        expr(*s.cond);
        out_ += ":\n";
        block(s.body, depth + 1);
        break;
      case Stmt::Kind::For:
        out_ += "for ";
        local(s.index);
        out_ += " in ";
        range(*s.start, *s.stop, *s.step);
        out_ += ":\n";
        block(s.body, depth + 1);
        break;
      case Stmt::Kind::Break:
        out_ += "break\n";
        break;
      case Stmt::Kind::Continue:
        out_ += "continue\n";
        break;
      case Stmt::Kind::Barrier:
        out_ += "barrier\n";
        break;
      case Stmt::Kind::Print:
        out_ += "print";
        for (size_t i = 0; i < s.labels.size(); ++i) {
          format(" {:?}", s.labels[i]);
          if (i < s.indices.size()) {
            out_ += ' ';
            expr(*s.indices[i]);
          }
        }
        out_ += '\n';
        break;
    }
  }

  // "range(start, stop, step)"
  void range(const Expr& start, const Expr& stop, const Expr& step) const {
    out_ += "range(";
    expr(start);
    out_ += ", ";
    expr(stop);
    out_ += ", ";
    expr(step);
    out_ += ')';
  }

  void kernel() const {
    format("kernel {}(", k_.name);
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      if (p.is_local_array()) continue;  // listed below as locals
      format("{}{}: {}{}{}", i ? ", " : "", p.name, to_string(p.type), p.written ? " out" : "",
             p.partials ? " partials" : "");
    }
    out_ += ')';
    if (k_.result) format(" -> {}", to_string(k_.result->type));
    if (k_.workgroup_size > 0)
      format(" workgroup {}{}", k_.workgroup_size, k_.collectives ? " collectives" : "");
    out_ += k_.debug ? " debug\n" : "\n";
    for (const Param& p : k_.params)
      if (p.is_local_array())
        format("  {} %{}: {}[{}]\n", p.shared ? "shared" : "local", p.name,
               dtype_name(p.type.dtype), p.local_size);
    for (size_t i = 0; i < k_.locals.size(); ++i) {
      out_ += "  local ";
      local(static_cast<int>(i));
      format(": {}\n", to_string(k_.locals[i].type));
    }
    block(k_.prelude, 1);
    out_ += "  parallel for";
    for (size_t d = 0; d < k_.dims.size(); ++d) {
      const LoopDim& dim = k_.dims[d];
      out_ += d ? ", " : " ";
      local(dim.var);
      out_ += " in ";
      range(*dim.start, *dim.stop, *dim.step);
    }
    out_ += ":\n";
    block(k_.body, 2);
    for (const Reduction& r : k_.reductions) {
      format("  reduce {} ", op_name(r.op));
      local(r.acc);
      out_ += " from ";
      expr(*r.identity);
      out_ += " into ";
      local(r.init);
      format(" through {}\n", k_.params[r.partials].name);
    }
    block(k_.epilogue, 1);
    if (k_.result) {
      out_ += "  return ";
      expr(*k_.result);
      out_ += '\n';
    }
  }

 private:
  const Kernel& k_;
  PrintOptions options_;
  std::string& out_;
};

}  // namespace

std::string print(const Kernel& k, PrintOptions options) {
  std::string out;
  Printer(k, options, out).kernel();
  return out;
}
std::string print(const Expr& e, const Kernel& k) {
  std::string out;
  Printer(k, {}, out).expr(e);
  return out;
}

}  // namespace tack::ir
