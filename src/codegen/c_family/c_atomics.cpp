// Atomics (tack.atomic_*) and block collectives in C-family code: a native atomic where the
// dialect has one, else a compare-and-swap loop over the value's bits; collectives over a
// workgroup's scratch array in the fixed order of ir::Collective.
#include <fmt/format.h>

#include "codegen/c_family/c_generator.hpp"
#include "codegen/c_family/c_text.hpp"
#include "tack/error.hpp"

namespace tack::codegen {

using ir::Op;

// ---- atomics ----

std::string CFamilyGenerator::native_atomic(ir::AtomicOp op, DType t, const std::string& space,
                                            const std::string& p, const std::string& v) const {
  using A = ir::AtomicOp;
  if (t == DType::I32 || t == DType::U32) {
    const AtomicNames& n = d_.atomic_names;
    const Spelling* fn = nullptr;
    switch (op) {
      case A::Add:
        fn = &n.add;
        break;
      case A::Sub:
        fn = &n.sub;
        break;
      case A::Min:
        fn = &n.min;
        break;
      case A::Max:
        fn = &n.max;
        break;
      case A::And:
        fn = &n.and_;
        break;
      case A::Or:
        fn = &n.or_;
        break;
      case A::Xor:
        fn = &n.xor_;
        break;
      case A::Exchange:
        fn = &n.exchange;
        break;
      case A::Cas:
        return "";
    }
    return fmt::format(fmt::runtime(d_.atomic_call.value), fmt::arg("fn", *fn), fmt::arg("p", p),
                       fmt::arg("v", v), fmt::arg("space", space),
                       fmt::arg("atomic", t == DType::I32 ? "atomic_int" : "atomic_uint"));
  }
  if (op != A::Add) return "";
  const NativeAdds& adds = d_.native_adds;
  const Spelling* add = t == DType::I64   ? &adds.i64
                        : t == DType::U64 ? &adds.u64
                        : t == DType::F32 ? &adds.f32
                        : t == DType::F64 ? &adds.f64
                                          : nullptr;
  if (!add) return "";
  return fmt::format(fmt::runtime(add->value), fmt::arg("p", p), fmt::arg("v", v));
}

std::string CFamilyGenerator::cas_body(DType u, const std::string& space) const {
  const Spelling& body = u == DType::U64 ? d_.cas64_body : d_.cas32_body;
  if (body.value.empty())
    throw Error(
        fmt::format("internal error: {} has no {} compare-and-swap", d_.label, dtype_name(u)));
  return fmt::format(fmt::runtime(body.value), fmt::arg("space", space));
}

// The combining operation of an atomic or a collective, with the CPU's meaning: integers wrap,
// float min and max of the collectives propagate NaN as tack's min and max do.
std::string CFamilyGenerator::combine(Op op, DType t, const std::string& a, const std::string& b) {
  switch (op) {
    case Op::Add:
    case Op::Sub:
      if (is_float(t)) return fmt::format("({} {} {})", a, op == Op::Add ? "+" : "-", b);
      return fmt::format("(({})(({}){} {} ({}){}))", type_name(t), wrap_type(t), a,
                         op == Op::Add ? "+" : "-", wrap_type(t), b);
    case Op::Min:
    case Op::Max:
      return fmt::format("{}({}, {})", helper_min_max(op, t), a, b);
    case Op::BitAnd:
      return fmt::format("(({})({} & {}))", type_name(t), a, b);
    case Op::BitOr:
      return fmt::format("(({})({} | {}))", type_name(t), a, b);
    case Op::BitXor:
      return fmt::format("(({})({} ^ {}))", type_name(t), a, b);
    default:
      break;
  }
  throw Error("internal error: no combining operation");
}

std::string CFamilyGenerator::helper_cas(DType u, const std::string& space) {
  std::string sp = space == d_.global_space.str() ? "" : "_shared";
  std::string name = fmt::format("tack_cas_{}{}", tag(u), sp);
  if (helper_names_.count(name)) return name;
  std::string U = type_name(u);
  return use_helper(
      name, fmt::format("{} {} {}({}{}* p, {} e, {} d) {{\n{}}}\n", d_.helper_qualifier.str(), U,
                        name, space, U, U, U, cas_body(u, space)));
}

// `T tack_atomic_OP_T(SPACE T* p, T v)` (compare-and-swap: `(p, expected, desired)`), returning
// the old value: a native atomic where the target has one, else a compare-and-swap loop over the
// value's bits. On private memory (a local array) it is a plain read-modify-write.
std::string CFamilyGenerator::helper_atomic(ir::AtomicOp op, DType t, int array) {
  const ir::Param& param = k_->params[array];
  std::string space = space_of(array);
  bool priv = param.is_local_array() && !param.shared;
  std::string sp = priv ? "_local" : param.shared ? "_shared" : "";
  std::string name = fmt::format("tack_atomic_{}_{}{}", ir::atomic_name(op), tag(t), sp);
  if (helper_names_.count(name)) return name;
  std::string T = type_name(t), H = d_.helper_qualifier.str();
  bool cas = op == ir::AtomicOp::Cas;
  std::string params = cas ? fmt::format("{}{}* p, {} e, {} d", space, T, T, T)
                           : fmt::format("{}{}* p, {} v", space, T, T);
  DType u = dtype_bits(t) == 64 ? DType::U64 : DType::U32;
  std::string U = type_name(u);
  auto bits = [&](const std::string& x) {
    return is_float(t) ? float_bits(t, false, x) : fmt::format("(({}){})", U, x);
  };
  auto value = [&](const std::string& x) {
    return is_float(t) ? float_bits(t, true, x) : fmt::format("(({}){})", T, x);
  };
  std::string next;  // the new value from the old `o`
  switch (op) {
    case ir::AtomicOp::Add:
      next = combine(Op::Add, t, "o", "v");
      break;
    case ir::AtomicOp::Sub:
      next = combine(Op::Sub, t, "o", "v");
      break;
    case ir::AtomicOp::Min:  // floats: LLVM's atomicrmw fmin (minnum: a NaN operand is ignored)
      next = is_float(t) ? fmt::format("{}(o, v)", math("fmin", t)) : "(o < v ? o : v)";
      break;
    case ir::AtomicOp::Max:
      next = is_float(t) ? fmt::format("{}(o, v)", math("fmax", t)) : "(o > v ? o : v)";
      break;
    case ir::AtomicOp::And:
      next = combine(Op::BitAnd, t, "o", "v");
      break;
    case ir::AtomicOp::Or:
      next = combine(Op::BitOr, t, "o", "v");
      break;
    case ir::AtomicOp::Xor:
      next = combine(Op::BitXor, t, "o", "v");
      break;
    case ir::AtomicOp::Exchange:
      next = "v";
      break;
    case ir::AtomicOp::Cas:
      break;
  }
  std::string def;
  if (priv) {
    def = cas ? fmt::format(
                    "{H} {T} {N}({P}) {{\n  {T} o = *p;\n  if ({B} == {E}) *p = d;\n  return "
                    "o;\n}}\n",
                    fmt::arg("H", H), fmt::arg("T", T), fmt::arg("N", name), fmt::arg("P", params),
                    fmt::arg("B", bits("o")), fmt::arg("E", bits("e")))
              : fmt::format("{H} {T} {N}({P}) {{\n  {T} o = *p;\n  *p = {X};\n  return o;\n}}\n",
                            fmt::arg("H", H), fmt::arg("T", T), fmt::arg("N", name),
                            fmt::arg("P", params), fmt::arg("X", next));
    return use_helper(name, def);
  }
  std::string native = cas ? "" : native_atomic(op, t, space, "p", "v");
  if (!native.empty()) {
    def = fmt::format("{} {} {}({}) {{ return {}; }}\n", H, T, name, params, native);
    return use_helper(name, def);
  }
  std::string casf = helper_cas(u, space);
  if (cas) {
    def = fmt::format("{H} {T} {N}({P}) {{\n  return {V};\n}}\n", fmt::arg("H", H),
                      fmt::arg("T", T), fmt::arg("N", name), fmt::arg("P", params),
                      fmt::arg("V", value(fmt::format("{}(({}{}*)p, {}, {})", casf, space, U,
                                                      bits("e"), bits("d")))));
    return use_helper(name, def);
  }
  def = fmt::format(
      "{H} {T} {N}({P}) {{\n"
      "  {U} old = *({S}{U}*)p;\n"
      "  for (;;) {{\n"
      "    {T} o = {O};\n"
      "    {U} seen = {C}(({S}{U}*)p, old, {X});\n"
      "    if (seen == old) return o;\n"
      "    old = seen;\n"
      "  }}\n"
      "}}\n",
      fmt::arg("H", H), fmt::arg("T", T), fmt::arg("N", name), fmt::arg("P", params),
      fmt::arg("U", U), fmt::arg("S", space), fmt::arg("O", value("old")), fmt::arg("C", casf),
      fmt::arg("X", bits(next)));
  return use_helper(name, def);
}

std::string CFamilyGenerator::atomic(const ir::Expr& e) {
  const ir::Param& p = k_->params[e.index];
  DType t = p.type.dtype;
  size_t rank = p.type.rank;
  std::vector<std::string> idx, vals;
  for (size_t i = 0; i < e.operands.size(); ++i)
    (i < rank ? idx : vals).push_back(expr(*e.operands[i]));
  std::string fn = helper_atomic(e.atomic, t, e.index);
  const std::string& name = param_names_[e.index];
  if (!e.checked)
    return fmt::format("{}(&{}[{}], {})", fn, name, strip_parens(flat_index(e.index, idx)),
                       join(vals, ", "));
  // Debug mode: indices and values are evaluated once; out of bounds, the atomic is skipped,
  // reported, and gives 0.
  std::string checked = fmt::format("{}_checked{}", fn, rank);
  if (!helper_names_.count(checked)) {
    std::string report = helper_report(static_cast<int>(rank));
    std::string T = type_name(t), I32 = type_name(DType::I32), I64 = type_name(DType::I64),
                U64 = type_name(DType::U64);
    std::vector<std::string> params = {fmt::format("{}{}* p", space_of(e.index), T)};
    std::vector<std::string> conds, pass, values;
    for (size_t d = 0; d < rank; ++d) params.push_back(fmt::format("{} e{}", I64, d));
    for (size_t d = 0; d < rank; ++d) {
      params.push_back(fmt::format("{} i{}", I64, d));
      conds.push_back(fmt::format("({})i{} < ({})e{}", U64, d, U64, d));
      pass.push_back(fmt::format("i{}", d));
    }
    for (size_t v = 0; v < vals.size(); ++v) {
      params.push_back(fmt::format("{} v{}", T, v));
      values.push_back(fmt::format("v{}", v));
    }
    params.push_back(fmt::format("{}{}* rec", d_.global_space.str(), I32));
    params.push_back(fmt::format("{} which, {} line, {} col", I32, I32, I32));
    std::string flat = rank ? "i0" : "0";
    for (size_t d = 1; d < rank; ++d) flat = fmt::format("({} * e{} + i{})", flat, d, d);
    use_helper(checked, fmt::format("{H} {T} {N}({P}) {{\n"
                                    "  if ({C}) return {F}(&p[{X}], {V});\n"
                                    "  {R}(rec, which, line, col, 1{A});\n"
                                    "  return 0;\n"
                                    "}}\n",
                                    fmt::arg("H", d_.helper_qualifier.str()), fmt::arg("T", T),
                                    fmt::arg("N", checked), fmt::arg("P", join(params, ", ")),
                                    fmt::arg("C", conds.empty() ? "1" : join(conds, " && ")),
                                    fmt::arg("F", fn), fmt::arg("X", flat),
                                    fmt::arg("V", join(values, ", ")), fmt::arg("R", report),
                                    fmt::arg("A", pass.empty() ? "" : ", " + join(pass, ", "))));
  }
  std::vector<std::string> args = {name};
  args.insert(args.end(), extent_names_[e.index].begin(), extent_names_[e.index].end());
  args.insert(args.end(), idx.begin(), idx.end());
  args.insert(args.end(), vals.begin(), vals.end());
  args.push_back(record_name_);
  args.push_back(fmt::format("{}, {}, {}", e.index, e.loc.line, e.loc.col));
  return fmt::format("{}({})", checked, join(args, ", "));
}

// ---- block collectives ----

// `T tack_block_OP_T(SHARED T* s, int lane, T v)`: the fixed combining order of ir::Collective.
std::string CFamilyGenerator::helper_collective(ir::Collective c, DType t) {
  std::string name = fmt::format("tack_block_{}_{}", ir::collective_name(c), tag(t));
  if (helper_names_.count(name)) return name;
  std::string T = type_name(t), B = d_.barrier_shared.str();
  int n = k_->workgroup_size;
  std::string def;
  if (c == ir::Collective::Scan) {
    def = fmt::format(
        "{H} {T} {N}({S}{T}* s, int lane, {T} v) {{\n"
        "  s[lane] = v;\n"
        "  {B}\n"
        "  for (int d = 1; d < {n}; d <<= 1) {{\n"
        "    {T} x = lane >= d ? s[lane - d] : s[lane];\n"
        "    {B}\n"
        "    if (lane >= d) s[lane] = {X};\n"
        "    {B}\n"
        "  }}\n"
        "  {T} r = s[lane];\n"
        "  {B}\n"
        "  return r;\n"
        "}}\n",
        fmt::arg("H", d_.helper_qualifier.str()), fmt::arg("T", T), fmt::arg("N", name),
        fmt::arg("S", d_.shared_space.str()), fmt::arg("B", B), fmt::arg("n", n),
        fmt::arg("X", combine(Op::Add, t, "x", "s[lane]")));
  } else {
    Op op = c == ir::Collective::Sum ? Op::Add : c == ir::Collective::Min ? Op::Min : Op::Max;
    def = fmt::format(
        "{H} {T} {N}({S}{T}* s, int lane, {T} v) {{\n"
        "  s[lane] = v;\n"
        "  {B}\n"
        "  for (int h = {half}; h > 0; h >>= 1) {{\n"
        "    if (lane < h) s[lane] = {X};\n"
        "    {B}\n"
        "  }}\n"
        "  {T} r = s[0];\n"
        "  {B}\n"
        "  return r;\n"
        "}}\n",
        fmt::arg("H", d_.helper_qualifier.str()), fmt::arg("T", T), fmt::arg("N", name),
        fmt::arg("S", d_.shared_space.str()), fmt::arg("B", B), fmt::arg("half", n / 2),
        fmt::arg("X", combine(op, t, "s[lane]", "s[lane + h]")));
  }
  return use_helper(name, def);
}

std::string CFamilyGenerator::collective(const ir::Expr& e) {
  DType t = e.type.dtype;
  std::string v = expr(*e.operands[0]);
  return fmt::format("{}(tack_scratch_{}, {}, {})", helper_collective(e.collective, t), tag(t),
                     d_.lane_index.str(), strip_parens(v));
}

}  // namespace tack::codegen
