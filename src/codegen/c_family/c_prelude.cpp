// The prelude of C-family code: the helper functions that give operations Python's and the CPU
// generator's meaning in C (integer floor division and modulo, CPython's float ones, exact
// integer powers, shifts past the width, NaN-propagating min and max, saturating float-to-int
// casts, the trip count of range()) and debug mode's checked loads and reports. Each is printed
// once per kernel, when first used (use_helper).
#include <fmt/format.h>

#include <cmath>

#include "codegen/c_family/c_generator.hpp"
#include "codegen/c_family/c_text.hpp"
#include "codegen/debug_record.hpp"

namespace tack::codegen {

using ir::Op;

std::string CFamilyGenerator::helper_int_div(Op op, DType t) {
  std::string name = fmt::format("tack_{}_{}", op == Op::FloorDiv ? "floordiv" : "mod", tag(t));
  if (helper_names_.count(name)) return name;
  std::string T = type_name(t), U = wrap_type(t), H = d_.helper_qualifier.str();
  std::string def;
  if (!is_signed(t)) {
    def = fmt::format("{H} {T} {N}({T} a, {T} b) {{ return b == 0 ? ({T})0 : ({T})(a {O} b); }}\n",
                      fmt::arg("H", H), fmt::arg("T", T), fmt::arg("N", name),
                      fmt::arg("O", op == Op::FloorDiv ? "/" : "%"));
  } else if (op == Op::FloorDiv) {
    // x // 0 is 0 and MIN // -1 wraps to MIN: neither reaches the divider.
    def = fmt::format(
        "{H} {T} {N}({T} a, {T} b) {{\n"
        "  if (b == 0) return 0;\n"
        "  if (b == -1) return ({T})(-({U})a);\n"
        "  {T} q = ({T})(a / b);\n"
        "  {T} r = ({T})(a % b);\n"
        "  if (r != 0 && (r < 0) != (b < 0)) q = ({T})(q - 1);\n"
        "  return q;\n"
        "}}\n",
        fmt::arg("H", H), fmt::arg("T", T), fmt::arg("U", U), fmt::arg("N", name));
  } else {
    def = fmt::format(
        "{H} {T} {N}({T} a, {T} b) {{\n"
        "  if (b == 0 || b == -1) return 0;\n"
        "  {T} r = ({T})(a % b);\n"
        "  if (r != 0 && (r < 0) != (b < 0)) r = ({T})(r + b);\n"
        "  return r;\n"
        "}}\n",
        fmt::arg("H", H), fmt::arg("T", T), fmt::arg("N", name));
  }
  return use_helper(name, def);
}

// CPython's float floor division and modulo; x // 0.0 is x / 0.0 (inf or nan), as NumPy.
std::string CFamilyGenerator::helper_float_div(Op op, DType t) {
  std::string name = fmt::format("tack_{}_{}", op == Op::FloorDiv ? "floordiv" : "mod", tag(t));
  if (helper_names_.count(name)) return name;
  std::string F = type_name(t), zero = flit(t, 0), one = flit(t, 1), half = flit(t, 0.5);
  std::string fmod = math("fmod", t), floor = math("floor", t), copysign = math("copysign", t);
  std::string def;
  if (op == Op::Mod) {
    def = fmt::format(
        "{H} {F} {N}({F} a, {F} b) {{\n"
        "  {F} m = {fmod}(a, b);\n"
        "  if (m != {z}) {{\n"
        "    if ((b < {z}) != (m < {z})) m = m + b;\n"
        "    return m;\n"
        "  }}\n"
        "  return {copysign}({z}, b);\n"
        "}}\n",
        fmt::arg("H", d_.helper_qualifier.str()), fmt::arg("F", F), fmt::arg("N", name),
        fmt::arg("fmod", fmod), fmt::arg("z", zero), fmt::arg("copysign", copysign));
  } else {
    def = fmt::format(
        "{H} {F} {N}({F} a, {F} b) {{\n"
        "  if (b == {z}) return a / b;\n"
        "  {F} m = {fmod}(a, b);\n"
        "  {F} d = (a - m) / b;\n"
        "  if (m != {z} && (b < {z}) != (m < {z})) d = d - {one};\n"
        "  if (d != {z}) {{\n"
        "    {F} f = {floor}(d);\n"
        "    if (d - f > {half}) f = f + {one};\n"
        "    return f;\n"
        "  }}\n"
        "  return {copysign}({z}, a / b);\n"
        "}}\n",
        fmt::arg("H", d_.helper_qualifier.str()), fmt::arg("F", F), fmt::arg("N", name),
        fmt::arg("fmod", fmod), fmt::arg("z", zero), fmt::arg("one", one), fmt::arg("half", half),
        fmt::arg("floor", floor), fmt::arg("copysign", copysign));
  }
  return use_helper(name, def);
}

// Exact integer power by squaring, modulo 2^N. A negative exponent gives the truncated real
// result: 1 for base 1, +-1 for base -1, 0 otherwise.
std::string CFamilyGenerator::helper_int_pow(DType t) {
  std::string name = "tack_pow_" + tag(t);
  if (helper_names_.count(name)) return name;
  std::string T = type_name(t), U = wrap_type(t);
  std::string negative =
      is_signed(t) ? fmt::format(
                         "  if (n < 0) return a == 1 ? ({T})1 : a == -1 ? ((n & 1) != 0 ? "
                         "({T})-1 : ({T})1) : ({T})0;\n",
                         fmt::arg("T", T))
                   : "";
  std::string def = fmt::format(
      "{H} {T} {N}({T} a, {T} n) {{\n"
      "{neg}"
      "  {U} acc = 1;\n"
      "  {U} b = ({U})a;\n"
      "  {U} e = ({U})n;\n"
      "  for (;;) {{\n"
      "    if ((e & 1) != 0) acc = acc * b;\n"
      "    e = e >> 1;\n"
      "    if (e == 0) break;\n"
      "    b = b * b;\n"
      "  }}\n"
      "  return ({T})acc;\n"
      "}}\n",
      fmt::arg("H", d_.helper_qualifier.str()), fmt::arg("T", T), fmt::arg("U", U),
      fmt::arg("N", name), fmt::arg("neg", negative));
  return use_helper(name, def);
}

// Shift amounts arrive as unsigned 64-bit values (a negative amount is huge): an amount of at
// least the width shifts everything out.
std::string CFamilyGenerator::helper_shift(Op op, DType t) {
  std::string name = fmt::format("tack_{}_{}", op == Op::Shl ? "shl" : "shr", tag(t));
  if (helper_names_.count(name)) return name;
  std::string T = type_name(t), U = wrap_type(t), U64 = type_name(DType::U64);
  int w = dtype_bits(t);
  std::string result;
  if (op == Op::Shl)
    result = fmt::format("n >= {w} ? ({T})0 : ({T})(({U})v << n)", fmt::arg("w", w),
                         fmt::arg("T", T), fmt::arg("U", U));
  else if (is_signed(t))
    result = fmt::format("n >= {w} ? ({T})(v < 0 ? -1 : 0) : ({T})(v >> n)", fmt::arg("w", w),
                         fmt::arg("T", T));
  else
    result = fmt::format("n >= {w} ? ({T})0 : ({T})(v >> n)", fmt::arg("w", w), fmt::arg("T", T));
  return use_helper(name, fmt::format("{} {} {}({} v, {} n) {{ return {}; }}\n",
                                      d_.helper_qualifier.str(), T, name, T, U64, result));
}

// Float min and max propagate NaN and order -0.0 below +0.0 (LLVM's minimum and maximum).
std::string CFamilyGenerator::helper_min_max(Op op, DType t) {
  bool is_min = op == Op::Min;
  std::string name = fmt::format("tack_{}_{}", is_min ? "min" : "max", tag(t));
  if (helper_names_.count(name)) return name;
  std::string T = type_name(t), H = d_.helper_qualifier.str();
  std::string def;
  if (!is_float(t)) {
    def = fmt::format("{} {} {}({} a, {} b) {{ return a {} b ? a : b; }}\n", H, T, name, T, T,
                      is_min ? "<" : ">");
  } else {
    def = fmt::format(
        "{H} {T} {N}({T} a, {T} b) {{\n"
        "  if (a != a) return a;\n"
        "  if (b != b) return b;\n"
        "  if (a == b) return {signbit}(a) ? {zero_pick};\n"
        "  return a {cmp} b ? a : b;\n"
        "}}\n",
        fmt::arg("H", H), fmt::arg("T", T), fmt::arg("N", name),
        fmt::arg("signbit", math("signbit", t)), fmt::arg("zero_pick", is_min ? "a : b" : "b : a"),
        fmt::arg("cmp", is_min ? "<" : ">"));
  }
  return use_helper(name, def);
}

std::string CFamilyGenerator::helper_abs(DType t) {
  std::string name = "tack_abs_" + tag(t);
  if (helper_names_.count(name)) return name;
  std::string T = type_name(t);
  std::string result =
      is_signed(t) ? fmt::format("x < 0 ? ({})(-({})x) : x", T, wrap_type(t)) : std::string("x");
  return use_helper(name, fmt::format("{} {} {}({} x) {{ return {}; }}\n",
                                      d_.helper_qualifier.str(), T, name, T, result));
}

// Float to integer: truncates toward zero, saturating at the type's limits; NaN gives 0.
std::string CFamilyGenerator::helper_float_to_int(DType from, DType to) {
  std::string name = fmt::format("tack_cast_{}_{}", tag(to), tag(from));
  if (helper_names_.count(name)) return name;
  std::string F = type_name(from), T = type_name(to);
  int w = dtype_bits(to);
  uint64_t max_bits = is_signed(to) ? (~uint64_t{0} >> (65 - w)) : (~uint64_t{0} >> (64 - w));
  std::string def;
  if (is_signed(to)) {
    def = fmt::format(
        "{H} {T} {N}({F} x) {{\n"
        "  if (x != x) return 0;\n"
        "  if (x <= {lo}) return {min};\n"
        "  if (x >= {hi}) return {max};\n"
        "  return ({T})x;\n"
        "}}\n",
        fmt::arg("H", d_.helper_qualifier.str()), fmt::arg("T", T), fmt::arg("N", name),
        fmt::arg("F", F), fmt::arg("lo", flit(from, -std::ldexp(1.0, w - 1))),
        fmt::arg("hi", flit(from, std::ldexp(1.0, w - 1))), fmt::arg("min", ilit(to, ~max_bits)),
        fmt::arg("max", ilit(to, max_bits)));
  } else {
    def = fmt::format(
        "{H} {T} {N}({F} x) {{\n"
        "  if (!(x > {m1})) return 0;\n"
        "  if (x >= {hi}) return {max};\n"
        "  return ({T})x;\n"
        "}}\n",
        fmt::arg("H", d_.helper_qualifier.str()), fmt::arg("T", T), fmt::arg("N", name),
        fmt::arg("F", F), fmt::arg("m1", flit(from, -1.0)),
        fmt::arg("hi", flit(from, std::ldexp(1.0, w))), fmt::arg("max", ilit(to, max_bits)));
  }
  return use_helper(name, def);
}

// The trip count of range(start, stop, step), computed in unsigned 64-bit arithmetic so that no
// bound near the type's limits overflows; a zero step runs nothing.
std::string CFamilyGenerator::helper_trips(bool is_signed_type) {
  std::string I64 = type_name(DType::I64), U64 = type_name(DType::U64),
              H = d_.helper_qualifier.str();
  if (is_signed_type)
    return use_helper(
        "tack_trips_s",
        fmt::format(
            "{H} {U} tack_trips_s({I} start, {I} stop, {I} step) {{\n"
            "  if (step > 0) return start < stop ? (({U})stop - ({U})start - 1) / ({U})step + 1 "
            ": 0;\n"
            "  if (step < 0) return start > stop ? (({U})start - ({U})stop - 1) / (({U})0 - "
            "({U})step) + 1 : 0;\n"
            "  return 0;\n"
            "}}\n",
            fmt::arg("H", H), fmt::arg("U", U64), fmt::arg("I", I64)));
  return use_helper("tack_trips_u",
                    fmt::format("{H} {U} tack_trips_u({U} start, {U} stop, {U} step) {{\n"
                                "  return step != 0 && start < stop ? (stop - start - 1) / step + "
                                "1 : 0;\n"
                                "}}\n",
                                fmt::arg("H", H), fmt::arg("U", U64)));
}

// Records the first out-of-bounds access in the debug record (codegen/debug_record.hpp: hit,
// array, line, col, rank, is_store, then int64 indices as pairs of ints, low word first).
std::string CFamilyGenerator::helper_report(int rank) {
  std::string name = fmt::format("tack_report{}", rank);
  if (helper_names_.count(name)) return name;
  std::string I32 = type_name(DType::I32), I64 = type_name(DType::I64);
  std::string params;
  std::string stores;
  for (int d = 0; d < rank; ++d) {
    params += fmt::format(", {} i{}", I64, d);
    if (d < kDebugRecordIndices)
      stores += fmt::format("  rec[{}] = ({})i{};\n  rec[{}] = ({})(i{} >> 32);\n",
                            kDebugRecordIndexInts + 2 * d, I32, d,
                            kDebugRecordIndexInts + 2 * d + 1, I32, d);
  }
  std::string claim = claim_record("rec", "won");
  std::string def = fmt::format(
      "{H} void {N}({G}{I}* rec, {I} which, {I} line, {I} col, {I} is_store{P}) {{\n"
      "  bool won = false;\n"
      "{C}"
      "  if (!won) return;\n"
      "  rec[1] = which;\n"
      "  rec[2] = line;\n"
      "  rec[3] = col;\n"
      "  rec[4] = {R};\n"
      "  rec[5] = is_store;\n"
      "{S}"
      "}}\n",
      fmt::arg("H", d_.helper_qualifier.str()), fmt::arg("N", name),
      fmt::arg("G", d_.global_space.str()), fmt::arg("I", I32), fmt::arg("P", params),
      fmt::arg("C", claim), fmt::arg("R", rank), fmt::arg("S", stores));
  return use_helper(name, def);
}

// A checked load: the element when every index is within its extent, else 0 and a report.
// Local arrays live in the thread's private memory, a different address space on some targets.
std::string CFamilyGenerator::helper_checked_load(DType mem, int rank, const std::string& space) {
  std::string suffix = space == d_.global_space.str()   ? ""
                       : space == d_.shared_space.str() ? "_shared"
                                                        : "_local";
  std::string name = fmt::format("tack_load{}_{}{}", rank, tag(mem), suffix);
  if (helper_names_.count(name)) return name;
  std::string report = helper_report(rank);
  std::string M = type_name(mem), I32 = type_name(DType::I32), I64 = type_name(DType::I64),
              U64 = type_name(DType::U64);
  std::vector<std::string> exts, idx, conds, pass;
  for (int d = 0; d < rank; ++d) {
    exts.push_back(fmt::format("{} e{}", I64, d));
    idx.push_back(fmt::format("{} i{}", I64, d));
    conds.push_back(fmt::format("({})i{} < ({})e{}", U64, d, U64, d));
    pass.push_back(fmt::format("i{}", d));
  }
  std::string flat = rank ? "i0" : "0";
  for (int d = 1; d < rank; ++d) flat = fmt::format("({} * e{} + i{})", flat, d, d);
  std::vector<std::string> params = {fmt::format("{}const {}* p", space, M)};
  params.insert(params.end(), exts.begin(), exts.end());
  params.insert(params.end(), idx.begin(), idx.end());
  params.push_back(fmt::format("{}{}* rec", d_.global_space.str(), I32));
  params.push_back(fmt::format("{} which, {} line, {} col", I32, I32, I32));
  std::string def = fmt::format(
      "{H} {M} {N}({P}) {{\n"
      "  if ({C}) return p[{F}];\n"
      "  {R}(rec, which, line, col, 0{A});\n"
      "  return 0;\n"
      "}}\n",
      fmt::arg("H", d_.helper_qualifier.str()), fmt::arg("M", M), fmt::arg("N", name),
      fmt::arg("P", join(params, ", ")), fmt::arg("C", conds.empty() ? "1" : join(conds, " && ")),
      fmt::arg("F", flat), fmt::arg("R", report),
      fmt::arg("A", pass.empty() ? "" : ", " + join(pass, ", ")));
  return use_helper(name, def);
}

}  // namespace tack::codegen
