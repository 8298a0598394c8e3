#include "ir/printer.hpp"

#include <fmt/format.h>

namespace tack::ir {
namespace {

class Printer {
 public:
  Printer(const Kernel& k, PrintOptions options) : k_(k), options_(options) {}

  std::string expr(const Expr& e) const {
    switch (e.op) {
      case Op::Const:
        if (e.type.is_float()) return fmt::format("{}:{}", e.float_value, to_string(e.type));
        if (e.type.is_bool()) return e.int_bits ? "True" : "False";
        if (is_unsigned(e.type.dtype)) return fmt::format("{}:{}", e.int_bits, to_string(e.type));
        return fmt::format("{}:{}", static_cast<int64_t>(e.int_bits), to_string(e.type));
      case Op::Local:
        return "%" + k_.locals[e.index].name;
      case Op::Param:
        return "$" + k_.params[e.index].name;
      case Op::ArrayDim:
        return fmt::format("{}.shape[{}]", k_.params[e.index].name, e.dim);
      case Op::Load:
        return access(e.index, e.operands, e.checked, e.loc);
      case Op::Atomic: {
        size_t rank = k_.params[e.index].type.rank;
        std::vector<ExprPtr> idx;
        for (size_t i = 0; i < rank; ++i) idx.push_back(e.operands[i]->clone());
        std::string s = fmt::format("(atomic_{}:{} {}", atomic_name(e.atomic), to_string(e.type),
                                    access(e.index, idx, e.checked, e.loc));
        for (size_t i = rank; i < e.operands.size(); ++i) {
          s += " ";
          s += expr(*e.operands[i]);
        }
        return s + ")";
      }
      case Op::TextureSample: {
        std::string s = fmt::format("(sample:f32 {}", k_.params[e.index].name);
        for (const auto& o : e.operands) {
          s += " ";
          s += expr(*o);
        }
        return s + ")";
      }
      case Op::Collective:
        return fmt::format("(block_{}:{} {})", collective_name(e.collective), to_string(e.type),
                           expr(*e.operands[0]));
      case Op::Call: {
        std::string s = fmt::format("({}:{}", builtin_name(e.callee), to_string(e.type));
        for (const auto& o : e.operands) {
          s += " ";
          s += expr(*o);
        }
        return s + ")";
      }
      default: {
        std::string s = fmt::format("({}:{}", op_name(e.op), to_string(e.type));
        for (const auto& o : e.operands) {
          s += " ";
          s += expr(*o);
        }
        return s + ")";
      }
    }
  }

  std::string access(int array, const std::vector<ExprPtr>& indices, bool checked,
                     SourceLoc loc) const {
    std::string s = k_.params[array].name + "[";
    for (size_t i = 0; i < indices.size(); ++i) s += (i ? ", " : "") + expr(*indices[i]);
    s += "]";
    if (checked) s += options_.locations ? fmt::format("!{}:{}", loc.line, loc.col) : "!";
    return s;
  }

  void block(const Block& b, int depth, std::string& out) const {
    for (const auto& s : b) stmt(*s, depth, out);
  }

  void stmt(const Stmt& s, int depth, std::string& out) const {
    std::string pad(depth * 2, ' ');
    switch (s.kind) {
      case Stmt::Kind::Assign:
        out += fmt::format("{}%{} = {}\n", pad, k_.locals[s.index].name, expr(*s.value));
        break;
      case Stmt::Kind::Store:
        out += fmt::format("{}{} = {}\n", pad, access(s.index, s.indices, s.checked, s.loc),
                           expr(*s.value));
        break;
      case Stmt::Kind::If:
        out += fmt::format("{}if {}:\n", pad, expr(*s.cond));
        block(s.body, depth + 1, out);
        if (!s.orelse.empty()) {
          out += pad + "else:\n";
          block(s.orelse, depth + 1, out);
        }
        break;
      case Stmt::Kind::While:
        out += fmt::format("{}while {}:\n", pad, expr(*s.cond));
        block(s.body, depth + 1, out);
        break;
      case Stmt::Kind::For:
        out += fmt::format("{}for %{} in range({}, {}, {}):\n", pad, k_.locals[s.index].name,
                           expr(*s.start), expr(*s.stop), expr(*s.step));
        block(s.body, depth + 1, out);
        break;
      case Stmt::Kind::Break:
        out += pad + "break\n";
        break;
      case Stmt::Kind::Continue:
        out += pad + "continue\n";
        break;
      case Stmt::Kind::Barrier:
        out += pad + "barrier\n";
        break;
      case Stmt::Kind::Print:
        out += pad + "print";
        for (size_t i = 0; i < s.labels.size(); ++i) {
          out += fmt::format(" {:?}", s.labels[i]);
          if (i < s.indices.size()) out += fmt::format(" {}", expr(*s.indices[i]));
        }
        out += "\n";
        break;
    }
  }

  std::string kernel() const {
    std::string out = fmt::format("kernel {}(", k_.name);
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const Param& p = k_.params[i];
      if (p.is_local_array()) continue;  // listed below as locals
      out += fmt::format("{}{}: {}{}{}", i ? ", " : "", p.name, to_string(p.type),
                         p.written ? " out" : "", p.partials ? " partials" : "");
    }
    out += ")";
    if (k_.result) out += " -> " + to_string(k_.result->type);
    if (k_.workgroup_size > 0)
      out +=
          fmt::format(" workgroup {}{}", k_.workgroup_size, k_.collectives ? " collectives" : "");
    out += k_.debug ? " debug\n" : "\n";
    for (const Param& p : k_.params)
      if (p.is_local_array())
        out += fmt::format("  {} %{}: {}[{}]\n", p.shared ? "shared" : "local", p.name,
                           dtype_name(p.type.dtype), p.local_size);
    for (const Local& l : k_.locals)
      out += fmt::format("  local %{}: {}\n", l.name, to_string(l.type));
    block(k_.prelude, 1, out);
    out += "  parallel for";
    for (size_t d = 0; d < k_.dims.size(); ++d) {
      const LoopDim& dim = k_.dims[d];
      out += fmt::format("{} %{} in range({}, {}, {})", d ? "," : "", k_.locals[dim.var].name,
                         expr(*dim.start), expr(*dim.stop), expr(*dim.step));
    }
    out += ":\n";
    block(k_.body, 2, out);
    for (const Reduction& r : k_.reductions)
      out += fmt::format("  reduce {} %{} from {} into %{} through {}\n", op_name(r.op),
                         k_.locals[r.acc].name, expr(*r.identity), k_.locals[r.init].name,
                         k_.params[r.partials].name);
    block(k_.epilogue, 1, out);
    if (k_.result) out += fmt::format("  return {}\n", expr(*k_.result));
    return out;
  }

 private:
  const Kernel& k_;
  PrintOptions options_;
};

}  // namespace

std::string print(const Kernel& k, PrintOptions options) {
  return Printer(k, options).kernel();
}
std::string print(const Expr& e, const Kernel& k) {
  return Printer(k, {}).expr(e);
}

}  // namespace tack::ir
