// tack.random: a counter-based generator with explicit state, written with the integer operators
// so that every backend produces the same bits. The state is a u64: seed() mixes (index, stream)
// with SplitMix64's finalizer; uniform() steps it as PCG32 (a 64-bit LCG with the XSH-RR output
// permutation) and turns the top 24 bits of the output into an f32 in [0, 1); normal() and
// direction3() are built from two such uniforms.
#include <fmt/format.h>

#include <numbers>

#include "sema/lowerer.hpp"

namespace tack::sema {

using ir::Op;
using ir::Type;

namespace {

ir::ExprPtr u64c(uint64_t v, SourceLoc loc) {
  return ir::make_int(Type::scalar(DType::U64), v, loc);
}
ir::ExprPtr u32c(uint64_t v, SourceLoc loc) {
  return ir::make_int(Type::scalar(DType::U32), v, loc);
}
ir::ExprPtr bin(Op op, ir::ExprPtr a, ir::ExprPtr b, SourceLoc loc) {
  return ir::make_binary(op, std::move(a), std::move(b), loc);
}

}  // namespace

std::vector<Value> Lowerer::random(const std::string& name, const ast::Expr& e) {
  SourceLoc loc = e.loc;
  auto nargs = [&](size_t n, const char* usage) {
    if (e.args.size() != n || !e.keywords.empty())
      fail(loc, fmt::format("tack.random.{}() takes {} argument{}", name, n, n == 1 ? "" : "s"),
           usage);
  };
  // Values used more than once live in temporaries, so a statement block is needed.
  if (!block_) fail(loc, "tack.random cannot be used here", "use it inside the kernel's body");
  ir::Block& out = *block_;
  auto keep = [&](ir::ExprPtr v) {
    int t = temp(std::move(v), loc, out);
    return t;
  };
  auto get = [&](int t) { return ir::make_local(t, k_.locals[t].type, loc); };
  auto as_u64 = [&](const ast::Expr& a) {
    Value v = expr(a);
    if (v.weak == Value::Weak::Float ||
        (!v.is_weak() && !v.e->type.is_int() && !v.e->type.is_bool()))
      fail(a.loc, "tack.random takes integers for the index and the stream",
           "convert with int(...)");
    return ir::make_cast(materialize(std::move(v)), Type::scalar(DType::U64));
  };
  auto state_arg = [&]() {
    Value v = expr(*e.args[0]);
    if (v.is_weak() || v.e->type != Type::scalar(DType::U64))
      fail(e.args[0]->loc, "a tack.random state is the u64 that tack.random.seed() returns",
           "write s = tack.random.seed(i, 0) first");
    return keep(std::move(v.e));
  };
  // PCG32 step: the output of `state` and the next state.
  auto step = [&](int state, int& next) {
    next = keep(bin(Op::Add, bin(Op::Mul, get(state), u64c(6364136223846793005ull, loc), loc),
                    u64c(1442695040888963407ull, loc), loc));
    ir::ExprPtr xorshifted = ir::make_cast(
        bin(Op::Shr, bin(Op::BitXor, bin(Op::Shr, get(state), u64c(18, loc), loc), get(state), loc),
            u64c(27, loc), loc),
        Type::scalar(DType::U32));
    int x = keep(std::move(xorshifted));
    int rot =
        keep(ir::make_cast(bin(Op::Shr, get(state), u64c(59, loc), loc), Type::scalar(DType::U32)));
    ir::ExprPtr left =
        bin(Op::Shl, get(x),
            bin(Op::BitAnd, ir::make_unary(Op::Neg, get(rot), loc), u32c(31, loc), loc), loc);
    return keep(bin(Op::BitOr, bin(Op::Shr, get(x), get(rot), loc), std::move(left), loc));
  };
  auto call1 = [&](ir::Builtin b, ir::ExprPtr x) {
    std::vector<ir::ExprPtr> a;
    a.push_back(std::move(x));
    return ir::make_call(b, Type::scalar(DType::F32), std::move(a), loc);
  };
  // The top 24 bits as an f32 in [0, 1): exact, the same on every backend.
  auto to_unit = [&](int bits) {
    ir::ExprPtr top =
        ir::make_cast(bin(Op::Shr, get(bits), u32c(8, loc), loc), Type::scalar(DType::F32));
    return bin(Op::Mul, std::move(top),
               ir::make_float(Type::scalar(DType::F32), 1.0 / 16777216.0, loc), loc);
  };

  if (name == "seed") {
    nargs(2, "write s = tack.random.seed(index, stream)");
    ir::ExprPtr z =
        bin(Op::Add, bin(Op::Mul, as_u64(*e.args[0]), u64c(0x9E3779B97F4A7C15ull, loc), loc),
            as_u64(*e.args[1]), loc);
    int t = keep(std::move(z));
    auto mix = [&](int v, uint64_t shift, uint64_t mul) {
      return keep(bin(Op::Mul,
                      bin(Op::BitXor, get(v), bin(Op::Shr, get(v), u64c(shift, loc), loc), loc),
                      u64c(mul, loc), loc));
    };
    t = mix(t, 30, 0xBF58476D1CE4E5B9ull);
    t = mix(t, 27, 0x94D049BB133111EBull);
    std::vector<Value> r;
    r.push_back({bin(Op::BitXor, get(t), bin(Op::Shr, get(t), u64c(31, loc), loc), loc)});
    return r;
  }
  if (name == "uniform") {
    nargs(1, "write u, s = tack.random.uniform(s)");
    int s = state_arg(), next = -1;
    int bits = step(s, next);
    std::vector<Value> r;
    r.push_back({to_unit(bits)});
    r.push_back({get(next)});
    return r;
  }
  if (name == "normal") {
    // Box-Muller from two uniforms; 1 - u keeps the logarithm's argument in (0, 1].
    nargs(1, "write z, s = tack.random.normal(s)");
    int s = state_arg(), s1 = -1, s2 = -1;
    int b1 = step(s, s1);
    int b2 = step(s1, s2);
    Type f = Type::scalar(DType::F32);
    ir::ExprPtr radius = call1(
        ir::Builtin::Sqrt,
        bin(Op::Mul, ir::make_float(f, -2.0, loc),
            call1(ir::Builtin::Log, bin(Op::Sub, ir::make_float(f, 1.0, loc), to_unit(b1), loc)),
            loc));
    ir::ExprPtr angle =
        bin(Op::Mul, ir::make_float(f, 2 * std::numbers::pi, loc), to_unit(b2), loc);
    std::vector<Value> r;
    r.push_back({bin(Op::Mul, std::move(radius), call1(ir::Builtin::Cos, std::move(angle)), loc)});
    r.push_back({get(s2)});
    return r;
  }
  if (name == "direction3") {
    // A direction uniform on the unit sphere (Archimedes): z uniform in (-1, 1], the angle around
    // the z axis uniform in [0, 2 pi).
    nargs(1, "write d, s = tack.random.direction3(s)");
    int s = state_arg(), s1 = -1, s2 = -1;
    int b1 = step(s, s1);
    int b2 = step(s1, s2);
    Type f = Type::scalar(DType::F32);
    int z = keep(bin(Op::Sub, ir::make_float(f, 1.0, loc),
                     bin(Op::Mul, ir::make_float(f, 2.0, loc), to_unit(b1), loc), loc));
    int radius = keep(call1(ir::Builtin::Sqrt, bin(Op::Max, ir::make_float(f, 0.0, loc),
                                                   bin(Op::Sub, ir::make_float(f, 1.0, loc),
                                                       bin(Op::Mul, get(z), get(z), loc), loc),
                                                   loc)));
    int angle = keep(bin(Op::Mul, ir::make_float(f, 2 * std::numbers::pi, loc), to_unit(b2), loc));
    std::vector<ir::ExprPtr> comps;
    comps.push_back(bin(Op::Mul, get(radius), call1(ir::Builtin::Cos, get(angle)), loc));
    comps.push_back(bin(Op::Mul, get(radius), call1(ir::Builtin::Sin, get(angle)), loc));
    comps.push_back(get(z));
    std::vector<Value> r;
    r.push_back(Value::composite(std::move(comps), 3, 1));
    r.push_back({get(s2)});
    return r;
  }
  fail(loc, fmt::format("tack.random has no '{}'", name),
       "use tack.random.seed, uniform, normal or direction3");
}

}  // namespace tack::sema
