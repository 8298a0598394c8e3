#include "ir/verifier.hpp"

#include <fmt/format.h>

#include "ir/printer.hpp"
#include "tack/error.hpp"

namespace tack::ir {
namespace {

class Verifier {
 public:
  Verifier(const Kernel& k, const char* stage) : k_(k), stage_(stage) {}

  void run() {
    for (size_t i = 0; i < k_.params.size(); ++i) {
      if (k_.params[i].written && !k_.params[i].type.is_array())
        fail(k_.loop_loc, fmt::format("scalar parameter '{}' marked written", k_.params[i].name));
      if (k_.params[i].shared && (!k_.params[i].is_local_array() || k_.workgroup_size <= 0))
        fail(k_.loop_loc, fmt::format("bad shared array '{}'", k_.params[i].name));
    }
    block(k_.prelude, 0);
    for (const auto& s : k_.prelude)
      if (s->kind == Stmt::Kind::Store) fail(s->loc, "store before the parallel loop");
    if (k_.dims.empty()) fail(k_.loop_loc, "no parallel loop");
    for (const LoopDim& d : k_.dims) {
      check_local(d.var, Type::i64(), k_.loop_loc);
      for (const Expr* b : {d.start.get(), d.stop.get(), d.step.get()}) {
        expr(*b);
        if (b->type != Type::i64() || !is_host_expr(*b))
          fail(b->loc, "loop bound is not an i64 host expression: " + print(*b, k_));
      }
    }
    block(k_.body, 0);
    for (const Reduction& r : k_.reductions) {
      if (r.acc < 0 || r.acc >= static_cast<int>(k_.locals.size()) || r.init < 0 ||
          r.init >= static_cast<int>(k_.locals.size()) || !r.identity)
        fail(k_.loop_loc, "bad reduction");
      Type t = k_.locals[r.init].type;
      check_local(r.acc, t, k_.loop_loc);
      expr(*r.identity);
      expect(r.identity->op == Op::Const && r.identity->type == t, *r.identity,
             "reduction identity");
      const Param& p = array_param(r.partials, k_.loop_loc);
      if (!p.partials || p.type != Type::array(t.dtype, 1) || !k_.result || k_.workgroup_size > 0)
        fail(k_.loop_loc, "bad reduction partials");
    }
    block(k_.epilogue, 0);
    if (k_.result) {
      expr(*k_.result);
      if (!k_.result->type.is_scalar()) fail(k_.result->loc, "non-scalar kernel result");
    }
  }

 private:
  [[noreturn]] void fail(SourceLoc loc, const std::string& what) const {
    throw Error(fmt::format("internal error: IR of kernel '{}' is invalid after {} ({}:{}): {}",
                            k_.name, stage_, loc.line, loc.col, what));
  }

  void expect(bool ok, const Expr& e, const char* rule) const {
    if (!ok) fail(e.loc, fmt::format("{}: {}", rule, print(e, k_)));
  }

  void check_local(int id, Type t, SourceLoc loc) const {
    if (id < 0 || id >= static_cast<int>(k_.locals.size())) fail(loc, "bad local id");
    if (k_.locals[id].type != t)
      fail(loc, fmt::format("local '{}' has type {}, used as {}", k_.locals[id].name,
                            to_string(k_.locals[id].type), to_string(t)));
  }

  const Param& array_param(int id, SourceLoc loc) const {
    if (id < 0 || id >= static_cast<int>(k_.params.size()) || !k_.params[id].type.is_array())
      fail(loc, "bad array parameter id");
    return k_.params[id];
  }

  void indices(const Param& p, const std::vector<ExprPtr>& idx, SourceLoc loc) {
    if (idx.size() != p.type.rank) fail(loc, "index count differs from the array's rank");
    for (const auto& i : idx) {
      expr(*i);
      if (i->type != Type::i64()) fail(i->loc, "array index is not i64");
    }
  }

  // Sema bounds how deeply it nests what it builds; this backstop keeps a bug there from
  // overflowing the stack in the passes and generators, which recurse once per level.
  class Level {
   public:
    Level(Verifier& v, SourceLoc loc) : v_(v) {
      if (++v_.depth_ > kMaxDepth)
        v_.fail(loc, fmt::format("statements and expressions nested more than {} deep", kMaxDepth));
    }
    ~Level() { --v_.depth_; }
    Level(const Level&) = delete;
    Level& operator=(const Level&) = delete;

   private:
    Verifier& v_;
  };
  static constexpr int kMaxDepth = 8000;
  int depth_ = 0;

  void expr(const Expr& e) {
    Level level(*this, e.loc);
    for (const auto& o : e.operands) expr(*o);
    const auto& ops = e.operands;
    auto arity = [&](size_t n) { expect(ops.size() == n, e, "wrong operand count"); };
    switch (e.op) {
      case Op::Const:
        arity(0);
        expect(e.type.is_scalar(), e, "non-scalar constant");
        break;
      case Op::Local:
        arity(0);
        check_local(e.index, e.type, e.loc);
        break;
      case Op::Param:
        arity(0);
        expect(e.index >= 0 && e.index < static_cast<int>(k_.params.size()) &&
                   k_.params[e.index].type == e.type && e.type.is_scalar(),
               e, "bad scalar parameter reference");
        break;
      case Op::ArrayDim:
        expect(e.dim >= 0 && e.dim < array_param(e.index, e.loc).type.rank, e, "dim out of range");
        expect(!k_.params[e.index].texture, e, "extent of a hardware texture");
        expect(e.type == Type::i64(), e, "array dimension is not i64");
        break;
      case Op::Load: {
        const Param& p = array_param(e.index, e.loc);
        indices(p, ops, e.loc);
        expect(e.type == Type::scalar(p.type.dtype), e, "load type differs from the array dtype");
        expect(!p.texture, e, "load from a hardware texture");
        break;
      }
      case Op::TextureSample: {
        const Param& p = array_param(e.index, e.loc);
        expect(p.texture && p.type.dtype == DType::F32 && (p.type.rank == 2 || p.type.rank == 3), e,
               "sample of a parameter that is not a hardware texture");
        expect(ops.size() == static_cast<size_t>(p.type.rank), e, "texture coordinate count");
        for (const auto& o : ops)
          expect(o->type == Type::scalar(DType::F32), e, "texture coordinate is not f32");
        expect(e.type == Type::scalar(DType::F32), e, "texture sample is not f32");
        break;
      }
      case Op::Not:
        arity(1);
        expect(e.type.is_bool() && ops[0]->type.is_bool(), e, "not on non-bool");
        break;
      case Op::Neg:
        arity(1);
        expect(e.type == ops[0]->type && e.type.is_scalar() && !e.type.is_bool(), e, "bad neg");
        break;
      case Op::BitNot:
        arity(1);
        expect(e.type == ops[0]->type && e.type.is_int(), e, "bitnot on non-integer");
        break;
      case Op::Shl:
      case Op::Shr:
        arity(2);
        expect(e.type == ops[0]->type && e.type.is_int() && ops[1]->type.is_int(), e, "bad shift");
        break;
      case Op::BitAnd:
      case Op::BitOr:
      case Op::BitXor:
        arity(2);
        expect(e.type == ops[0]->type && e.type == ops[1]->type &&
                   (e.type.is_int() || e.type.is_bool()),
               e, "bitwise operands");
        break;
      case Op::Div:
        arity(2);
        expect(e.type.is_float() && ops[0]->type == e.type && ops[1]->type == e.type, e,
               "true division on non-floats");
        break;
      case Op::Add:
      case Op::Sub:
      case Op::Mul:
      case Op::FloorDiv:
      case Op::Mod:
      case Op::Pow:
      case Op::Min:
      case Op::Max:
        arity(2);
        expect(e.type == ops[0]->type && e.type == ops[1]->type && e.type.is_scalar() &&
                   !e.type.is_bool(),
               e, "arithmetic operand types");
        break;
      case Op::Lt:
      case Op::Le:
      case Op::Gt:
      case Op::Ge:
      case Op::Eq:
      case Op::Ne:
        arity(2);
        expect(e.type.is_bool() && ops[0]->type == ops[1]->type && ops[0]->type.is_scalar(), e,
               "comparison operand types");
        break;
      case Op::LogicalAnd:
      case Op::LogicalOr:
        arity(2);
        expect(e.type.is_bool() && ops[0]->type.is_bool() && ops[1]->type.is_bool(), e,
               "logic on non-bools");
        break;
      case Op::Select:
        arity(3);
        expect(ops[0]->type.is_bool() && ops[1]->type == e.type && ops[2]->type == e.type, e,
               "select types");
        break;
      case Op::Cast:
        arity(1);
        expect(e.type.is_scalar() && ops[0]->type.is_scalar(), e, "cast of non-scalars");
        break;
      case Op::Call:
        call(e);
        break;
      case Op::Atomic: {
        const Param& p = array_param(e.index, e.loc);
        size_t rank = p.type.rank, values = e.atomic == AtomicOp::Cas ? 2 : 1;
        expect(ops.size() == rank + values, e, "atomic operand count");
        expect(p.written, e, "atomic on an array not marked written");
        for (size_t i = 0; i < rank; ++i)
          expect(ops[i]->type == Type::i64(), e, "array index is not i64");
        for (size_t i = rank; i < ops.size(); ++i)
          expect(ops[i]->type == Type::scalar(p.type.dtype), e,
                 "atomic value type differs from the array dtype");
        expect(e.type == Type::scalar(p.type.dtype) && !e.type.is_bool(), e, "atomic result type");
        break;
      }
      case Op::ThreadId:
      case Op::GroupSize:
        arity(0);
        expect(e.type == Type::scalar(DType::I32), e, "lane or group size is not i32");
        expect(k_.workgroup_size > 0, e, "workgroup primitive in a kernel without workgroups");
        break;
      case Op::GroupId:
        arity(0);
        expect(e.type == Type::i64(), e, "group id is not i64");
        expect(k_.workgroup_size > 0, e, "workgroup primitive in a kernel without workgroups");
        break;
      case Op::Collective:
        arity(1);
        expect(e.type == ops[0]->type && e.type.is_scalar() && !e.type.is_bool(), e,
               "block collective types");
        expect(k_.collectives && k_.workgroup_size > 0, e, "collective not marked on the kernel");
        break;
    }
  }

  void call(const Expr& e) {
    const auto& ops = e.operands;
    size_t want = e.callee == Builtin::Atan2 ? 2 : e.callee == Builtin::Fma ? 3 : 1;
    expect(ops.size() == want, e, "builtin arity");
    for (const auto& o : ops) expect(o->type == ops[0]->type, e, "builtin operand types differ");
    bool predicate = e.callee == Builtin::IsNan || e.callee == Builtin::IsInf;
    if (predicate) {
      expect(e.type.is_bool() && ops[0]->type.is_float(), e, "predicate types");
    } else if (e.callee == Builtin::Abs) {
      expect(e.type == ops[0]->type && e.type.is_scalar() && !e.type.is_bool(), e, "abs types");
    } else {
      expect(e.type == ops[0]->type && e.type.is_float(), e, "math builtin on non-floats");
    }
  }

  void block(const Block& b, int loop_depth) {
    for (const auto& s : b) stmt(*s, loop_depth);
  }

  void stmt(const Stmt& s, int loop_depth) {
    Level level(*this, s.loc);
    switch (s.kind) {
      case Stmt::Kind::Assign:
        expr(*s.value);
        check_local(s.index, s.value->type, s.loc);
        break;
      case Stmt::Kind::Store: {
        const Param& p = array_param(s.index, s.loc);
        if (!p.written) fail(s.loc, "store to an array not marked written");
        indices(p, s.indices, s.loc);
        expr(*s.value);
        if (s.value->type != Type::scalar(p.type.dtype))
          fail(s.loc, "stored value type differs from the array dtype");
        break;
      }
      case Stmt::Kind::If:
        expr(*s.cond);
        if (!s.cond->type.is_bool()) fail(s.loc, "if condition is not bool");
        block(s.body, loop_depth);
        block(s.orelse, loop_depth);
        break;
      case Stmt::Kind::While:
        expr(*s.cond);
        if (!s.cond->type.is_bool()) fail(s.loc, "while condition is not bool");
        block(s.body, loop_depth + 1);
        break;
      case Stmt::Kind::For: {
        expr(*s.start);
        expr(*s.stop);
        expr(*s.step);
        Type t = s.start->type;
        if (!t.is_int() || s.stop->type != t || s.step->type != t) fail(s.loc, "for bounds types");
        check_local(s.index, t, s.loc);
        block(s.body, loop_depth + 1);
        break;
      }
      case Stmt::Kind::Break:
      case Stmt::Kind::Continue:
        if (loop_depth == 0) fail(s.loc, "break/continue outside a sequential loop");
        break;
      case Stmt::Kind::Barrier:
        if (!k_.collectives || k_.workgroup_size <= 0)
          fail(s.loc, "barrier not marked on the kernel");
        break;
      case Stmt::Kind::Print:
        if (s.labels.size() != s.indices.size() + 1)
          fail(s.loc, "print needs one more label than values");
        for (const auto& v : s.indices) {
          expr(*v);
          if (!v->type.is_scalar()) fail(s.loc, "print of a non-scalar");
        }
        break;
    }
  }

  const Kernel& k_;
  const char* stage_;
};

}  // namespace

bool is_host_expr(const Expr& e) {
  switch (e.op) {
    case Op::Const:
    case Op::Param:
    case Op::ArrayDim:
      return true;
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::FloorDiv:
    case Op::Cast:
    case Op::Neg:
      for (const auto& o : e.operands)
        if (!o->type.is_int() || !is_host_expr(*o)) return false;
      return e.type.is_int();
    default:
      return false;
  }
}

void verify(const Kernel& k, const char* stage) {
  Verifier(k, stage).run();
}

}  // namespace tack::ir
