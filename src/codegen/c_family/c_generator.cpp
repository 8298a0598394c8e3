// The C-family printer: a kernel's entries, statements and expressions, in the spellings of a
// dialect (c_dialect.hpp). Every operation's meaning follows the CPU generator
// (codegen/llvm/llvm_codegen.cpp): integers wrap (arithmetic is done in the unsigned type of at
// least 32 bits, so C's signed overflow never happens), floor division and modulo follow Python
// (the helpers of c_prelude.cpp), x // 0 is 0, shifts past the width shift everything out,
// float-to-int casts saturate, min and max propagate NaN, round is round-half-even, and bools are
// bytes in memory.
#include "codegen/c_family/c_generator.hpp"

#include <fmt/format.h>

#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <memory>

#include "codegen/c_family/c_text.hpp"
#include "ir/builder.hpp"
#include "tack/error.hpp"

namespace tack::codegen {
namespace {

using ir::Op;

bool is_small_int(DType t) {
  return is_integer(t) && dtype_bits(t) < 32;
}

template <typename F>
bool any_expr(const ir::Expr& e, const F& f) {
  if (f(e)) return true;
  for (const auto& o : e.operands)
    if (any_expr(*o, f)) return true;
  return false;
}

template <typename F>
bool any_expr(const ir::Block& b, const F& f, bool in_print = true) {
  for (const auto& s : b) {
    if (s->kind == ir::Stmt::Kind::Print && !in_print) continue;
    for (const ir::Expr* e :
         {s->value.get(), s->cond.get(), s->start.get(), s->stop.get(), s->step.get()})
      if (e && any_expr(*e, f)) return true;
    for (const auto& i : s->indices)
      if (any_expr(*i, f)) return true;
    if (any_expr(s->body, f, in_print) || any_expr(s->orelse, f, in_print)) return true;
  }
  return false;
}

// C and C++ keywords, and names every C-family target defines: a local or parameter with one
// of these names is renamed.
bool common_reserved(std::string_view n) {
  static const std::set<std::string_view> words = {
      // C and C++ (CUDA, HIP and Metal are C++ dialects).
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
      "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
      "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
      "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
      "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
      "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
      "reinterpret_cast", "requires", "restrict", "return", "short", "signed", "sizeof", "static",
      "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
      "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
      "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq", "main", "NULL",
      // Types and qualifiers of the GPU dialects, reserved everywhere so that a kernel's names
      // read the same on every target.
      "kernel", "global", "local", "constant", "device", "thread", "threadgroup", "half", "uchar",
      "ushort", "uint", "ulong", "size_t", "ptrdiff_t", "intptr_t", "uintptr_t", "read_only",
      "write_only", "read_write", "sampler_t", "event_t", "metal", "std", "INFINITY", "NAN",
      // Math functions the generated code calls (a local would hide them).
      "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
      "exp", "exp2", "log", "log2", "log10", "floor", "ceil", "trunc", "rint", "round", "fabs",
      "abs", "fma", "pow", "fmod", "copysign", "signbit", "isnan", "isinf", "min", "max", "fmin",
      "fmax", "sqrtf", "sinf", "cosf", "tanf", "asinf", "acosf", "atanf", "atan2f", "sinhf",
      "coshf", "tanhf", "expf", "exp2f", "logf", "log2f", "log10f", "floorf", "ceilf", "truncf",
      "rintf", "fabsf", "fmaf", "powf", "fmodf", "copysignf"};
  if (words.count(n)) return true;
  // Vector types: float4, uint2, double3...
  for (std::string_view base : {"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                                "float", "double", "half", "bool"}) {
    if (n.size() <= base.size() || n.substr(0, base.size()) != base) continue;
    std::string_view lanes = n.substr(base.size());
    if (lanes == "2" || lanes == "3" || lanes == "4" || lanes == "8" || lanes == "16") return true;
  }
  return false;
}

}  // namespace

bool uses_dtype(const ir::Kernel& k, DType t, bool in_print) {
  for (const ir::Param& p : k.params)
    if (p.type.dtype == t) return true;
  for (const ir::Local& l : k.locals)
    if (l.type.dtype == t) return true;
  auto f = [t](const ir::Expr& e) { return !e.type.is_void() && e.type.dtype == t; };
  if (any_expr(k.prelude, f, in_print) || any_expr(k.body, f, in_print) ||
      any_expr(k.epilogue, f, in_print))
    return true;
  return k.result && any_expr(*k.result, f);
}

// ---- the dialect's spellings ----

std::string_view TypeNames::of(DType t) const {
  switch (t) {
    case DType::Bool:
      return bool_.value;
    case DType::I8:
      return i8.value;
    case DType::U8:
      return u8.value;
    case DType::I16:
      return i16.value;
    case DType::U16:
      return u16.value;
    case DType::I32:
      return i32.value;
    case DType::U32:
      return u32.value;
    case DType::I64:
      return i64.value;
    case DType::U64:
      return u64.value;
    case DType::F32:
      return f32.value;
    case DType::F64:
      return f64.value;
  }
  return "?";
}

bool CFamilyGenerator::is_reserved(std::string_view name) const {
  for (std::string_view w : d_.reserved.value)
    if (w == name) return true;
  return common_reserved(name);
}

std::string CFamilyGenerator::long_suffix(bool is_unsigned) const {
  return is_unsigned ? d_.u64_suffix.str() : d_.i64_suffix.str();
}

std::string CFamilyGenerator::math(std::string_view name, DType t) const {
  bool overloaded = name == "signbit" || name == "isnan" || name == "isinf";
  return d_.math_prefix.str() + std::string(name) +
         (t == DType::F32 && !overloaded ? d_.f32_math_suffix.str() : "");
}

std::string CFamilyGenerator::float_bits(DType f, bool to_float, const std::string& v) const {
  const Spelling& s = f == DType::F32 ? (to_float ? d_.f32_from_bits : d_.f32_to_bits)
                                      : (to_float ? d_.f64_from_bits : d_.f64_to_bits);
  if (s.value.empty())
    throw Error(fmt::format("internal error: {} has no {}", d_.label, dtype_name(f)));
  return fmt::format(fmt::runtime(s.value), v);
}

std::string CFamilyGenerator::float_from_bits(DType t, uint64_t bits) const {
  return float_bits(t, true,
                    fmt::format("{:#x}{}", bits, t == DType::F32 ? "U" : long_suffix(true)));
}

std::string CFamilyGenerator::claim_record(const std::string& hit, const std::string& won) const {
  return fmt::format(fmt::runtime(d_.claim_record.value), fmt::arg("hit", hit),
                     fmt::arg("won", won));
}

std::string CFamilyGenerator::scalar_param(const std::string& type) const {
  return fmt::format(fmt::runtime(d_.scalar_param.value), type);
}

// ---- names ----

std::string CFamilyGenerator::fresh(std::string_view base, bool user) {
  std::string n;
  for (char c : base) n += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  // C++ reserves every identifier that contains "__".
  for (size_t at; (at = n.find("__")) != std::string::npos;) n.replace(at, 2, "_x_");
  if (user) {
    // Names that C reserves (a leading digit, "__", "_X"), and names in the generator's own
    // namespace (tack_...), get a prefix; keywords of the target get a suffix.
    if (n.empty() || std::isdigit(static_cast<unsigned char>(n[0])) ||
        (n.size() > 1 && n[0] == '_' && std::isupper(static_cast<unsigned char>(n[1]))) ||
        n.rfind("tack_", 0) == 0)
      n = "v" + n;
    if (is_reserved(n)) n += "_";
  }
  while (names_.count(n) || (user && is_reserved(n))) n += "_";
  names_.insert(n);
  return n;
}

// ---- types and literals ----

std::string CFamilyGenerator::mem_type(DType t) const {
  return type_name(t == DType::Bool ? DType::U8 : t);
}

std::string CFamilyGenerator::wrap_type(DType t) const {
  return type_name(dtype_bits(t) <= 32 ? DType::U32 : DType::U64);
}

// Float literals print the shortest decimal that reads back as the same value (so they
// round-trip exactly); infinities and NaNs are written as bit patterns.
std::string CFamilyGenerator::flit(DType t, double v) const {
  if (!std::isfinite(v)) {
    uint64_t bits = t == DType::F32 ? std::bit_cast<uint32_t>(static_cast<float>(v))
                                    : std::bit_cast<uint64_t>(v);
    return float_from_bits(t, bits);
  }
  char buf[64];
  auto r = t == DType::F32 ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v))
                           : std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  if (t == DType::F32) s += "f";
  return s[0] == '-' ? "(" + s + ")" : s;
}

std::string CFamilyGenerator::ilit(DType t, uint64_t bits) const {
  int w = dtype_bits(t);
  uint64_t u = w < 64 ? bits & ((uint64_t{1} << w) - 1) : bits;
  int64_t s = static_cast<int64_t>(bits);
  if (w < 64 && is_signed(t)) s = static_cast<int64_t>(u << (64 - w)) >> (64 - w);
  switch (t) {
    case DType::Bool:
      return u ? "true" : "false";
    case DType::I8:
    case DType::I16:
      return fmt::format("(({}){})", type_name(t), s);
    case DType::U8:
    case DType::U16:
      return fmt::format("(({}){})", type_name(t), u);
    case DType::I32:
      if (s == std::numeric_limits<int32_t>::min()) return "(-2147483647 - 1)";
      return s < 0 ? fmt::format("({})", s) : fmt::format("{}", s);
    case DType::U32:
      return fmt::format("{}U", u);
    case DType::I64:
      if (s == std::numeric_limits<int64_t>::min())
        return fmt::format("(-9223372036854775807{} - 1)", long_suffix(false));
      return s < 0 ? fmt::format("({}{})", s, long_suffix(false))
                   : fmt::format("{}{}", s, long_suffix(false));
    case DType::U64:
      return fmt::format("{}{}", u, long_suffix(true));
    case DType::F32:
    case DType::F64:
      break;
  }
  throw Error("internal error: an integer literal of a float type");
}

// ---- helpers (defined in c_prelude.cpp and c_atomics.cpp) ----

std::string CFamilyGenerator::use_helper(const std::string& name, const std::string& definition) {
  if (helper_names_.insert(name).second) helpers_ += definition + "\n";
  return name;
}

// The address space of array parameter `array`: local arrays live in the thread's private
// memory, a different address space on some targets.
std::string CFamilyGenerator::space_of(int array) const {
  const ir::Param& p = k_->params[array];
  if (p.is_shared_array()) return d_.shared_space.str();
  return p.is_local_array() ? d_.private_space.str() : d_.global_space.str();
}

// ---- expressions ----

std::string CFamilyGenerator::flat_index(int array, const std::vector<std::string>& idx) const {
  if (idx.empty()) return "0";
  std::string flat = idx[0];
  for (size_t d = 1; d < idx.size(); ++d)
    flat = fmt::format("({} * {} + {})", flat, extent_names_[array][d], idx[d]);
  return flat;
}

std::string CFamilyGenerator::load(const ir::Expr& e) {
  DType dt = k_->params[e.index].type.dtype;
  std::vector<std::string> idx;
  for (const auto& i : e.operands) idx.push_back(expr(*i));
  std::string v;
  if (!e.checked) {
    v = fmt::format("{}[{}]", param_names_[e.index], strip_parens(flat_index(e.index, idx)));
  } else {
    DType mem = dt == DType::Bool ? DType::U8 : dt;
    std::vector<std::string> args = {param_names_[e.index]};
    args.insert(args.end(), extent_names_[e.index].begin(), extent_names_[e.index].end());
    args.insert(args.end(), idx.begin(), idx.end());
    args.push_back(record_name_);
    args.push_back(fmt::format("{}, {}, {}", e.index, e.loc.line, e.loc.col));
    v = fmt::format("{}({})",
                    helper_checked_load(mem, static_cast<int>(idx.size()), space_of(e.index)),
                    join(args, ", "));
  }
  return dt == DType::Bool ? "(" + v + " != 0)" : v;
}

std::string CFamilyGenerator::cast(const ir::Expr& e) {
  DType from = e.operands[0]->type.dtype, to = e.type.dtype;
  std::string a = expr(*e.operands[0]);
  if (from == to) return a;
  if (to == DType::Bool)
    return fmt::format("({} != {})", a, is_float(from) ? flit(from, 0) : std::string("0"));
  if (is_float(from) && is_integer(to))
    return fmt::format("{}({})", helper_float_to_int(from, to), a);
  return fmt::format("(({})({}))", type_name(to), a);
}

std::string CFamilyGenerator::call(const ir::Expr& e) {
  using ir::Builtin;
  DType t = e.operands[0]->type.dtype;
  std::vector<std::string> a;
  for (const auto& o : e.operands) a.push_back(expr(*o));
  auto fn = [&](std::string_view name) {
    return fmt::format("{}({})", math(name, t), join(a, ", "));
  };
  switch (e.callee) {
    case Builtin::Sqrt:
      return fn("sqrt");
    case Builtin::Rsqrt:  // correctly rounded: a division by the square root, not rsqrt
      return fmt::format("({} / {}({}))", flit(t, 1), math("sqrt", t), a[0]);
    case Builtin::Sin:
      return fn("sin");
    case Builtin::Cos:
      return fn("cos");
    case Builtin::Tan:
      return fn("tan");
    case Builtin::Asin:
      return fn("asin");
    case Builtin::Acos:
      return fn("acos");
    case Builtin::Atan:
      return fn("atan");
    case Builtin::Atan2:
      return fn("atan2");
    case Builtin::Sinh:
      return fn("sinh");
    case Builtin::Cosh:
      return fn("cosh");
    case Builtin::Tanh:
      return fn("tanh");
    case Builtin::Exp:
      return fn("exp");
    case Builtin::Exp2:
      return fn("exp2");
    case Builtin::Log:
      return fn("log");
    case Builtin::Log2:
      return fn("log2");
    case Builtin::Log10:
      return fn("log10");
    case Builtin::Floor:
      return fn("floor");
    case Builtin::Ceil:
      return fn("ceil");
    case Builtin::Trunc:
      return fn("trunc");
    case Builtin::Round:  // half to even
      return fn("rint");
    case Builtin::Abs:
      if (is_float(t)) return fn("fabs");
      return fmt::format("{}({})", helper_abs(t), a[0]);
    case Builtin::Fma:
      return fn("fma");
    case Builtin::IsNan:
      return fmt::format("({} != 0)", fn("isnan"));
    case Builtin::IsInf:
      return fmt::format("({} != 0)", fn("isinf"));
  }
  throw Error(fmt::format("internal error: no {} code for builtin '{}'", d_.label.str(),
                          ir::builtin_name(e.callee)));
}

std::string CFamilyGenerator::expr(const ir::Expr& e) {
  DType t = e.type.dtype;
  std::string T = e.type.is_void() ? "" : type_name(t);
  // Small integers promote to int in C: results are converted back to their type.
  auto narrow = [&](const std::string& s) {
    return is_small_int(t) ? fmt::format("(({})({}))", T, s) : "(" + s + ")";
  };
  switch (e.op) {
    case Op::Const:
      return e.type.is_float() ? flit(t, e.float_value) : ilit(t, e.int_bits);
    case Op::Local:
      return local_names_[e.index];
    case Op::Param:
      return t == DType::Bool ? "(" + param_names_[e.index] + " != 0)" : param_names_[e.index];
    case Op::ArrayDim:
      return extent_names_[e.index][e.dim];
    case Op::Load:
      return load(e);
    case Op::Atomic:
      return atomic(e);
    case Op::Collective:
      return collective(e);
    case Op::TextureSample: {
      const TextureSpelling& ts = d_.textures;
      std::vector<std::string> c;
      for (const auto& o : e.operands) c.push_back(strip_parens(expr(*o)));
      c.resize(3);
      return fmt::format(
          fmt::runtime(e.operands.size() == 2 ? ts.sample2d.value : ts.sample3d.value),
          fmt::arg("t", param_names_[e.index]), fmt::arg("u", c[0]), fmt::arg("v", c[1]),
          fmt::arg("w", c[2]));
    }
    case Op::ThreadId:
      return d_.lane_index.str();
    case Op::GroupId:
      return d_.group_index.str();
    case Op::GroupSize:
      return d_.group_size.str();
    case Op::Call:
      return call(e);
    case Op::Cast:
      return cast(e);
    case Op::Select:
      return narrow(fmt::format("{} ? {} : {}", expr(*e.operands[0]), expr(*e.operands[1]),
                                expr(*e.operands[2])));
    case Op::LogicalAnd:
      return fmt::format("({} && {})", expr(*e.operands[0]), expr(*e.operands[1]));
    case Op::LogicalOr:
      return fmt::format("({} || {})", expr(*e.operands[0]), expr(*e.operands[1]));
    case Op::Not:
      return fmt::format("(!{})", expr(*e.operands[0]));
    case Op::Neg:
      if (is_float(t)) return fmt::format("(-{})", expr(*e.operands[0]));
      return fmt::format("(({})(-({}){}))", T, wrap_type(t), expr(*e.operands[0]));
    case Op::BitNot:
      return fmt::format("(({})(~{}))", T, expr(*e.operands[0]));
    default:
      break;
  }
  std::string a = expr(*e.operands[0]);
  std::string b = expr(*e.operands[1]);
  auto infix = [&](const char* op) { return fmt::format("({} {} {})", a, op, b); };
  // Integer + - * wrap: computed in the unsigned type of at least 32 bits, converted back.
  auto wrapped = [&](const char* op) {
    DType u = dtype_bits(t) <= 32 ? DType::U32 : DType::U64;
    std::string U = type_name(u);
    auto operand = [&](const ir::Expr& o, const std::string& text) {
      return ir::is_const(o) ? ilit(u, o.int_bits) : fmt::format("({}){}", U, text);
    };
    return fmt::format("(({})({} {} {}))", T, operand(*e.operands[0], a), op,
                       operand(*e.operands[1], b));
  };
  switch (e.op) {
    case Op::Lt:
      return infix("<");
    case Op::Le:
      return infix("<=");
    case Op::Gt:
      return infix(">");
    case Op::Ge:
      return infix(">=");
    case Op::Eq:
      return infix("==");
    case Op::Ne:
      return infix("!=");
    case Op::Add:
      return is_float(t) ? infix("+") : wrapped("+");
    case Op::Sub:
      return is_float(t) ? infix("-") : wrapped("-");
    case Op::Mul:
      return is_float(t) ? infix("*") : wrapped("*");
    case Op::Div:
      return infix("/");
    case Op::FloorDiv:
    case Op::Mod:
      return fmt::format("{}({}, {})",
                         is_float(t) ? helper_float_div(e.op, t) : helper_int_div(e.op, t), a, b);
    case Op::Pow:
      if (is_float(t)) return fmt::format("{}({}, {})", math("pow", t), a, b);
      return fmt::format("{}({}, {})", helper_int_pow(t), a, b);
    case Op::Shl:
    case Op::Shr:
      // Converting to unsigned 64-bit sign-extends a signed amount first (LLVM's intcast).
      return fmt::format("{}({}, ({}){})", helper_shift(e.op, t), a, type_name(DType::U64), b);
    case Op::BitAnd:
      return fmt::format("(({})({} & {}))", T, a, b);
    case Op::BitOr:
      return fmt::format("(({})({} | {}))", T, a, b);
    case Op::BitXor:
      return fmt::format("(({})({} ^ {}))", T, a, b);
    case Op::Min:
    case Op::Max:
      return fmt::format("{}({}, {})", helper_min_max(e.op, t), a, b);
    default:
      break;
  }
  throw Error(fmt::format("internal error: no {} code for IR operation '{}'", d_.label.str(),
                          ir::op_name(e.op)));
}

// ---- statements ----

void CFamilyGenerator::line(int depth, const std::string& text) {
  out_ += std::string(2 * depth, ' ') + text + "\n";
}

void CFamilyGenerator::store(const ir::Stmt& s, int depth) {
  DType dt = k_->params[s.index].type.dtype;
  const std::string& p = param_names_[s.index];
  std::vector<std::string> idx;
  for (const auto& i : s.indices) idx.push_back(expr(*i));
  std::string v = expr(*s.value);
  if (dt == DType::Bool) v = fmt::format("(({})({}))", mem_type(dt), v);
  if (!s.checked) {
    line(depth,
         fmt::format("{}[{}] = {};", p, strip_parens(flat_index(s.index, idx)), strip_parens(v)));
    return;
  }
  // Indices, then the value, are evaluated once; the store happens only within bounds.
  int rank = static_cast<int>(idx.size());
  std::string report = helper_report(rank);
  std::string I64 = type_name(DType::I64), U64 = type_name(DType::U64);
  line(depth, "{");
  std::vector<std::string> tmp, conds;
  for (int d = 0; d < rank; ++d) {
    tmp.push_back(fresh("tack_i"));
    line(depth + 1, fmt::format("{} {} = {};", I64, tmp[d], strip_parens(idx[d])));
    conds.push_back(fmt::format("({}){} < ({}){}", U64, tmp[d], U64, extent_names_[s.index][d]));
  }
  std::string value = fresh("tack_v");
  line(depth + 1, fmt::format("{} {} = {};", mem_type(dt), value, strip_parens(v)));
  line(depth + 1, fmt::format("if ({}) {}[{}] = {};", conds.empty() ? "1" : join(conds, " && "), p,
                              strip_parens(flat_index(s.index, tmp)), value));
  line(depth + 1, fmt::format("else {}({}, {}, {}, {}, 1{});", report, record_name_, s.index,
                              s.loc.line, s.loc.col, tmp.empty() ? "" : ", " + join(tmp, ", ")));
  line(depth, "}");
}

// range(start, stop, step): start, stop and step are evaluated once, in that order; the trip
// count is computed as on the CPU and the variable is start + k * step at the loop's type.
void CFamilyGenerator::for_loop(const ir::Stmt& s, int depth) {
  DType t = s.start->type.dtype;
  std::string T = type_name(t), U = wrap_type(t);
  std::string I64 = type_name(DType::I64), U64 = type_name(DType::U64);
  std::string lo = fresh("tack_lo"), hi = fresh("tack_hi"), st = fresh("tack_st"),
              n = fresh("tack_n"), kk = fresh("tack_k");
  std::string W = is_signed(t) ? I64 : U64;
  line(depth, "{");
  line(depth + 1, fmt::format("{} {} = {};", T, lo, strip_parens(expr(*s.start))));
  line(depth + 1, fmt::format("{} {} = {};", T, hi, strip_parens(expr(*s.stop))));
  line(depth + 1, fmt::format("{} {} = {};", T, st, strip_parens(expr(*s.step))));
  line(depth + 1, fmt::format("{} {} = {}(({}){}, ({}){}, ({}){});", U64, n,
                              helper_trips(is_signed(t)), W, lo, W, hi, W, st));
  line(depth + 1, fmt::format("for ({} {} = 0; {} < {}; ++{}) {{", U64, kk, kk, n, kk));
  line(depth + 2, fmt::format("{} = ({})(({}){} + ({}){} * ({}){});", local_names_[s.index], T, U,
                              lo, U, kk, U, st));
  block(s.body, depth + 2);
  line(depth + 1, "}");
  line(depth, "}");
}

// print(...): one printf per call, so that lines from different threads do not interleave;
// the formats are the CPU's (bools as True/False, %.7g for f32, %.15g for f64).
void CFamilyGenerator::print(const ir::Stmt& s, int depth) {
  if (!d_.print.value) {
    line(depth, fmt::format("// print(...) is ignored on {}", d_.label.str()));
    return;
  }
  auto escaped = [](const std::string& text) {
    std::string out;
    for (unsigned char c : text) {
      if (c == '%')
        out += "%%";
      else if (c == '"' || c == '\\')
        out += std::string("\\") + static_cast<char>(c);
      else if (c == '\n')
        out += "\\n";
      else if (c < 0x20 || c >= 0x7f)
        out += fmt::format("\\{:03o}", c);
      else
        out += static_cast<char>(c);
    }
    return out;
  };
  std::string format;
  std::vector<std::string> args;
  for (size_t i = 0; i < s.labels.size(); ++i) {
    format += escaped(s.labels[i]);
    if (i == s.indices.size()) break;
    DType t = s.indices[i]->type.dtype;
    std::string v = expr(*s.indices[i]);
    if (t == DType::Bool) {
      format += "%s";
      args.push_back(fmt::format("({} ? \"True\" : \"False\")", v));
    } else if (is_float(t)) {
      format += t == DType::F32 ? "%.7g" : "%.15g";
      args.push_back((t == DType::F32 ? d_.print.value->f32_cast.str() : "") + v);
    } else {
      format += is_signed(t) ? d_.print.value->i64.value : d_.print.value->u64.value;
      args.push_back(
          fmt::format("(({})({}))", type_name(is_signed(t) ? DType::I64 : DType::U64), v));
    }
  }
  line(depth,
       fmt::format("printf(\"{}\"{});", format, args.empty() ? "" : ", " + join(args, ", ")));
}

void CFamilyGenerator::stmt(const ir::Stmt& s, int depth) {
  using K = ir::Stmt::Kind;
  switch (s.kind) {
    case K::Assign:
      line(depth, fmt::format("{} = {};", local_names_[s.index], strip_parens(expr(*s.value))));
      return;
    case K::Store:
      return store(s, depth);
    case K::If:
      line(depth, fmt::format("if ({}) {{", strip_parens(expr(*s.cond))));
      block(s.body, depth + 1);
      if (!s.orelse.empty()) {
        line(depth, "} else {");
        block(s.orelse, depth + 1);
      }
      line(depth, "}");
      return;
    case K::While:
      line(depth, fmt::format("while ({}) {{", strip_parens(expr(*s.cond))));
      block(s.body, depth + 1);
      line(depth, "}");
      return;
    case K::For:
      return for_loop(s, depth);
    case K::Break:
      return line(depth, "break;");
    case K::Continue:
      return line(depth, "continue;");
    case K::Print:
      return print(s, depth);
    case K::Barrier:
      return line(depth, d_.barrier_global.str());
    default:
      break;
  }
  throw Error(fmt::format("kernel '{}': the {} generator has no code for this statement yet",
                          k_->name, d_.label.str()));
}

void CFamilyGenerator::block(const ir::Block& b, int depth) {
  for (const auto& s : b) stmt(*s, depth);
}

// ---- the kernel ----

std::string CFamilyGenerator::signature(const std::string& entry_name, bool result_entry) {
  std::vector<std::string> params;
  // Buffers and textures are numbered apart (Metal's [[buffer(n)]] and [[texture(n)]]).
  int buffers = 0, textures = 0;
  auto add = [&](const std::string& decl) {
    params.push_back(decl + fmt::format(fmt::runtime(d_.param_attribute.value), buffers++));
  };
  std::string I64 = type_name(DType::I64);
  for (const ir::Param& p : k_->params) {
    std::string name = fresh(p.name, true);
    param_names_.push_back(name);
    extent_names_.emplace_back();
    if (p.is_local_array()) {
      // Per-thread scratch or a shared array, declared in the body; no launch passes it.
      extent_names_.back().push_back(ilit(DType::I64, static_cast<uint64_t>(p.local_size)));
    } else if (p.texture) {
      const TextureSpelling& t = d_.textures;
      params.push_back(
          fmt::format("{} {}", p.type.rank == 2 ? t.type2d.str() : t.type3d.str(), name) +
          fmt::format(fmt::runtime(t.param_attribute.value), textures++));
    } else if (p.type.is_array()) {
      add(fmt::format("{}{}{}* {}", d_.global_space.str(), p.written ? "" : "const ",
                      mem_type(p.type.dtype), name));
      for (int d = 0; d < p.type.rank; ++d) {
        extent_names_.back().push_back(fresh(fmt::format("{}_shape{}", p.name, d), true));
        add(scalar_param(I64) + " " + extent_names_.back().back());
      }
    } else {
      add(scalar_param(mem_type(p.type.dtype)) + " " + name);
    }
  }
  for (size_t d = 0; d < k_->dims.size(); ++d) {
    start_names_.push_back(fresh(fmt::format("tack_start{}", d)));
    step_names_.push_back(fresh(fmt::format("tack_step{}", d)));
    count_names_.push_back(fresh(fmt::format("tack_count{}", d)));
    add(scalar_param(I64) + " " + start_names_.back());
    add(scalar_param(I64) + " " + step_names_.back());
    add(scalar_param(I64) + " " + count_names_.back());
  }
  record_name_ = fresh("tack_debug");
  add(fmt::format("{}{}* {}", d_.global_space.str(), type_name(DType::I32), record_name_));
  if (result_entry) {
    result_name_ = fresh("tack_result");
    add(fmt::format("{}{}* {}", d_.global_space.str(), mem_type(k_->result->type.dtype),
                    result_name_));
  }
  if (!d_.thread_position_param.value.empty()) params.push_back(d_.thread_position_param.str());
  if (k_->workgroup_size > 0)
    for (std::string_view p : d_.workgroup_params.value) params.emplace_back(p);
  return fmt::format("{} {}(\n    {})", d_.kernel_qualifier.str(), entry_name,
                     join(params, ",\n    "));
}

// Local arrays, shared arrays, the collectives' scratch and the locals.
void CFamilyGenerator::declare_storage() {
  // Local arrays (tack.local_array): sema zeroes them where the kernel declares them. Shared
  // arrays are not initialized (one per group; lanes write them before a barrier).
  for (size_t p = 0; p < k_->params.size(); ++p)
    if (k_->params[p].is_local_array())
      line(1, fmt::format("{}{} {}[{}];", k_->params[p].shared ? d_.shared_decl.str() : "",
                          mem_type(k_->params[p].type.dtype), param_names_[p],
                          k_->params[p].local_size));
  for (DType t : scratch_dtypes_)
    line(1, fmt::format("{}{} tack_scratch_{}[{}];", d_.shared_decl.str(), type_name(t), tag(t),
                        k_->workgroup_size));
  // Locals live for the whole thread, zeroed so that a path that skips an assignment reads 0.
  for (const ir::Local& l : k_->locals) {
    local_names_.push_back(fresh(l.name, true));
    DType t = l.type.dtype;
    std::string zero = is_float(t) ? flit(t, 0) : ilit(t, 0);
    line(1, fmt::format("{} {} = {};", type_name(t), local_names_.back(), zero));
  }
}

std::string CFamilyGenerator::body() {
  std::string I64 = type_name(DType::I64), U64 = type_name(DType::U64);
  declare_storage();
  // One thread per iteration: gid in [0, count0 * count1 * ...), row-major.
  std::string gid = fresh("tack_gid");
  line(1, fmt::format("{} {} = {};", I64, gid, strip_parens(d_.global_index.str())));
  if (!k_->reductions.empty()) return reduction_body(gid);
  line(1, fmt::format("if ({} >= {}) return;", gid, join(count_names_, " * ")));
  block(k_->prelude, 1);
  iteration(gid, 1);
  return out_;
}

// The loop variables of iteration `g` (row-major), then the body.
void CFamilyGenerator::iteration(const std::string& g, int depth) {
  std::string I64 = type_name(DType::I64), U64 = type_name(DType::U64);
  size_t n = k_->dims.size();
  std::vector<std::string> idx(n);
  if (n == 1) {
    idx[0] = g;
  } else {
    std::string rem = fresh("tack_rem");
    line(depth, fmt::format("{} {} = {};", I64, rem, g));
    for (size_t d = n; d-- > 1;) {
      idx[d] = fresh(fmt::format("tack_idx{}", d));
      line(depth, fmt::format("{} {} = {} % {};", I64, idx[d], rem, count_names_[d]));
      line(depth, fmt::format("{} = {} / {};", rem, rem, count_names_[d]));
    }
    idx[0] = rem;
  }
  for (size_t d = 0; d < n; ++d)
    line(depth, fmt::format("{} = ({})(({}){} + ({}){} * ({}){});", local_names_[k_->dims[d].var],
                            I64, U64, start_names_[d], U64, idx[d], U64, step_names_[d]));
  block(k_->body, depth);
}

// A kernel with reductions: thread `gid` is lane gid % 16 of block gid / 16 in the order of
// ir::Reduction. It runs that lane's iterations in turn, updating its copies of the reduced
// locals, and stores them to the partials; the result entry's epilogue combines them.
std::string CFamilyGenerator::reduction_body(const std::string& gid) {
  std::string I64 = type_name(DType::I64);
  const ir::Reduction& first = k_->reductions.front();
  line(1, fmt::format("if ({} >= {}) return;", gid, extent_names_[first.partials][0]));
  block(k_->prelude, 1);
  std::string total = fresh("tack_total"), m = fresh("tack_m"), g = fresh("tack_g");
  line(1, fmt::format("{} {} = {};", I64, total, join(count_names_, " * ")));
  for (const ir::Reduction& r : k_->reductions)
    line(1, fmt::format("{} = {};", local_names_[r.acc], strip_parens(expr(*r.identity))));
  line(1, fmt::format("for ({} {} = 0; {} < {}; ++{}) {{", I64, m, m,
                      ir::kReductionBlock / ir::kReductionLanes, m));
  line(2, fmt::format("{} {} = {} / {} * {} + {} % {} + {} * {};", I64, g, gid, ir::kReductionLanes,
                      ir::kReductionBlock, gid, ir::kReductionLanes, m, ir::kReductionLanes));
  line(2, fmt::format("if ({} >= {}) break;", g, total));
  iteration(g, 2);
  line(1, "}");
  for (const ir::Reduction& r : k_->reductions)
    line(1, fmt::format("{}[{}] = ({}){};", param_names_[r.partials], gid,
                        mem_type(k_->locals[r.acc].type.dtype), local_names_[r.acc]));
  return out_;
}

// The result entry: one thread recomputes the prelude and stores the result expression.
std::string CFamilyGenerator::result_body() {
  declare_storage();
  line(1, fmt::format("if ({} != 0) return;", strip_parens(d_.global_index.str())));
  block(k_->prelude, 1);
  block(k_->epilogue, 1);
  std::string v = expr(*k_->result);
  DType t = k_->result->type.dtype;
  if (t == DType::Bool) v = fmt::format("(({})({}))", mem_type(t), v);
  line(1, fmt::format("{}[0] = {};", result_name_, strip_parens(v)));
  return out_;
}

void CFamilyGenerator::reset_entry() {
  names_.clear();
  param_names_.clear();
  extent_names_.clear();
  local_names_.clear();
  start_names_.clear();
  step_names_.clear();
  count_names_.clear();
  record_name_.clear();
  result_name_.clear();
  out_.clear();
}

std::string CFamilyGenerator::generate(const ir::Kernel& k, const std::string& entry_name) {
  check_kernel(k);
  std::set<DType> allowed(d_.atomic_dtypes.value.begin(), d_.atomic_dtypes.value.end());
  auto check_atomic = [&](const ir::Expr& e) {
    if (e.op != Op::Atomic) return false;
    DType t = k.params[e.index].type.dtype;
    if (!allowed.count(t) && !k.params[e.index].is_local_array())
      throw Error(fmt::format(
          "kernel '{}' (line {}): {} has no atomics on {} arrays; use an array of a dtype with "
          "atomics ({})",
          k.name, e.loc.line, d_.label.str(), dtype_name(t), [&] {
            std::string s;
            for (DType a : allowed) s += (s.empty() ? "" : ", ") + tag(a);
            return s;
          }()));
    return false;
  };
  any_expr(k.prelude, check_atomic);
  any_expr(k.body, check_atomic);
  k_ = &k;
  helper_names_.clear();
  helpers_.clear();
  scratch_dtypes_.clear();
  auto collect = [&](const ir::Expr& e) {
    if (e.op == Op::Collective) scratch_dtypes_.insert(e.type.dtype);
    return false;
  };
  any_expr(k.body, collect);
  std::string result_entry = entry_name + "_result";
  reset_entry();
  names_.insert(entry_name);
  names_.insert(result_entry);
  std::string sig = signature(entry_name, false);
  std::string code = body();
  std::string text = fmt::format("// Generated by Tack from kernel '{}'.\n", k.name);
  text += d_.preamble.str();
  if (uses_dtype(k, DType::F64)) text += d_.f64_preamble.str();
  {
    bool any = false, int64 = false;
    auto find = [&](const ir::Expr& e) {
      if (e.op == Op::Atomic && !k.params[e.index].is_local_array()) {
        any = true;
        int64 |= dtype_bits(k.params[e.index].type.dtype) == 64;
      }
      return false;
    };
    any_expr(k.prelude, find);
    any_expr(k.body, find);
    if (any && int64) text += d_.atomics64_preamble.str();
  }
  for (const ir::Param& p : k.params)
    if (p.texture) {
      text += d_.textures.sampler_decl.str();
      break;
    }
  std::string entries = sig + " {\n" + code + "}\n";
  if (k.result) {
    reset_entry();
    names_.insert(entry_name);
    names_.insert(result_entry);
    std::string rsig = signature(result_entry, true);
    std::string rcode = result_body();
    entries += "\n" + rsig + " {\n" + rcode + "}\n";
  }
  text += "\n" + helpers_;  // each helper ends with a blank line
  text += entries;
  k_ = nullptr;
  return text;
}

namespace {

// Each target's dialect; Metal (none here) has a generator of its own, with its own checks.
struct SourceTarget {
  std::string_view name;
  const CDialect& (*dialect)();
};
constexpr SourceTarget kSourceTargets[] = {
    {"cuda", cuda_dialect}, {"hip", hip_dialect},       {"level_zero", level_zero_dialect},
    {"metal", nullptr},     {"opencl", opencl_dialect},
};

}  // namespace

const std::vector<std::string>& source_targets() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const SourceTarget& t : kSourceTargets) out.emplace_back(t.name);
    return out;
  }();
  return names;
}

std::string generate_source(const ir::Kernel& k, const std::string& target,
                            const std::string& entry_name) {
  for (const SourceTarget& t : kSourceTargets) {
    if (t.name != target) continue;
    return t.dialect ? CFamilyGenerator(t.dialect()).generate(k, entry_name)
                     : MslGenerator().generate(k, entry_name);
  }
  throw Error(fmt::format("no C-family generator for '{}': expected one of {}", target,
                          fmt::join(source_targets(), ", ")));
}

}  // namespace tack::codegen
