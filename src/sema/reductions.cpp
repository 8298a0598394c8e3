// The locals of the parallel loop: which locals bound before the loop the loop assigns, which of
// those are reductions, and the checks on what the `return` after the loop reads.
//
// Each iteration starts from the values bound before the loop (spec language.md), so a local the
// loop assigns gets a copy per iteration (the CPU runs many iterations per thread, which must not
// see each other's assignments). A scalar bound before the loop and updated in it only by
// `s += e`, `s -= e`, `s *= e`, `s = min(s, e)`, `s = max(s, e)`, `s |= e`, `s &= e`, `s ^= e`
// (and `s = s + e`...), read nowhere else in the loop, and read by the `return`, is a reduction
// (ir::Reduction gives the order): the body updates a per-lane copy that starts at the
// operation's identity, and the epilogue built here combines the lanes' values. Any other local
// that the loop assigns is an error when the `return` reads it.
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <set>

#include "sema/lowerer.hpp"

namespace tack::sema {

using ir::Op;
using ir::Type;
using K = ast::Stmt::Kind;
using EK = ast::Expr::Kind;

namespace {

const char* update_spelling(Op op) {
  switch (op) {
    case Op::Add:
      return "+= or -=";
    case Op::Mul:
      return "*=";
    case Op::Min:
      return "= min(s, e)";
    case Op::Max:
      return "= max(s, e)";
    case Op::BitOr:
      return "|=";
    case Op::BitAnd:
      return "&=";
    case Op::BitXor:
      return "^=";
    default:
      return "?";
  }
}

std::optional<Op> aug_reduction(ast::BinOp op) {
  switch (op) {
    case ast::BinOp::Add:
    case ast::BinOp::Sub:
      return Op::Add;
    case ast::BinOp::Mul:
      return Op::Mul;
    case ast::BinOp::BitOr:
      return Op::BitOr;
    case ast::BinOp::BitAnd:
      return Op::BitAnd;
    case ast::BinOp::BitXor:
      return Op::BitXor;
    default:
      return std::nullopt;
  }
}

// Every Name in `e` (iteratively: expressions may be long operator chains).
template <typename F>
void for_each_name(const ast::Expr& e, const F& f) {
  std::vector<const ast::Expr*> stack{&e};
  while (!stack.empty()) {
    const ast::Expr* x = stack.back();
    stack.pop_back();
    if (x->kind == EK::Name) f(*x);
    if (x->operand) stack.push_back(x->operand.get());
    for (const auto& a : x->args) stack.push_back(a.get());
    for (const auto& kw : x->keywords) stack.push_back(kw.value.get());
  }
}

bool mentions(const ast::Expr& e, const std::string& name) {
  bool found = false;
  for_each_name(e, [&](const ast::Expr& n) { found |= n.name == name; });
  return found;
}

const char* spelling_of(ast::BinOp op) {
  return ast::spelling(op);
}

}  // namespace

void Lowerer::plan_loop_locals(const ast::Stmt& loop, const ast::Stmt* ret) {
  loop_plan_.clear();
  // What the loop does to each name: updates of a reduction's form, other assignments, and reads
  // other than those updates.
  struct Use {
    std::optional<Op> op;  // the updates' operation (the first one's)
    SourceLoc update;      // the first update
    SourceLoc mixed;       // an update with another operation, if any
    std::optional<Op> mixed_op;
    SourceLoc assigned;  // the first other assignment (line 0: none)
    std::string how;     // what that assignment is
    SourceLoc read;      // the first other read in the loop (line 0: none)
    bool any = false;    // assigned at all
  };
  std::map<std::string, Use> uses;
  auto note_read = [&](const ast::Expr& e) {
    for_each_name(e, [&](const ast::Expr& n) {
      Use& u = uses[n.name];
      if (u.read.line == 0) u.read = n.loc;
    });
  };
  auto note_update = [&](const std::string& name, Op op, SourceLoc loc) {
    Use& u = uses[name];
    u.any = true;
    if (!u.op) {
      u.op = op;
      u.update = loc;
    } else if (*u.op != op && !u.mixed_op) {
      u.mixed_op = op;
      u.mixed = loc;
    }
  };
  auto note_assign = [&](const std::string& name, SourceLoc loc, std::string how) {
    Use& u = uses[name];
    u.any = true;
    if (u.assigned.line == 0) {
      u.assigned = loc;
      u.how = std::move(how);
    }
  };
  // A target: a name is assigned; a component (v.x, v[k]) assigns its vector and reads its
  // index; an array element reads its indices.
  std::function<void(const ast::Expr&, SourceLoc)> target = [&](const ast::Expr& t, SourceLoc loc) {
    if (t.kind == EK::Name) return note_assign(t.name, loc, fmt::format("`{} = ...`", t.name));
    if (t.kind == EK::Tuple) {
      for (const auto& a : t.args) target(*a, loc);
      return;
    }
    if ((t.kind == EK::Subscript || t.kind == EK::Attribute) && t.operand->kind == EK::Name &&
        is_local(t.operand->name)) {
      note_assign(t.operand->name, loc,
                  fmt::format("an assignment to a component of '{}'", t.operand->name));
      for (const auto& a : t.args) note_read(*a);
      return;
    }
    note_read(t);
  };
  // `s = min(s, e)`, `s = max(e, s)`, `s = s + e`...: the operation, when `value` is one.
  auto update_form = [&](const std::string& s, const ast::Expr& value) -> std::optional<Op> {
    if (value.kind == EK::Call && value.args.size() == 2 && value.keywords.empty()) {
      std::string fn = builtin_name(*value.operand);
      if (fn != "min" && fn != "max") return std::nullopt;
      const ast::Expr& a = *value.args[0];
      const ast::Expr& b = *value.args[1];
      bool first = a.kind == EK::Name && a.name == s && !mentions(b, s);
      bool second = b.kind == EK::Name && b.name == s && !mentions(a, s);
      if (!first && !second) return std::nullopt;
      return fn == "min" ? Op::Min : Op::Max;
    }
    if (value.kind == EK::Binary && value.args[0]->kind == EK::Name && value.args[0]->name == s &&
        !mentions(*value.args[1], s))
      return aug_reduction(value.bin_op);
    return std::nullopt;
  };
  std::function<void(const ast::Block&)> visit = [&](const ast::Block& b) {
    for (const auto& st : b) {
      const ast::Stmt& s = *st;
      switch (s.kind) {
        case K::AugAssign: {
          const ast::Expr& t = *s.targets[0];
          note_read(*s.value);
          if (t.kind == EK::Name) {
            std::optional<Op> op = aug_reduction(s.aug_op);
            if (op && !mentions(*s.value, t.name)) {
              note_update(t.name, *op, s.loc);
            } else {
              note_assign(t.name, s.loc,
                          fmt::format("`{} {}= ...`", t.name, spelling_of(s.aug_op)));
            }
          } else {
            target(t, s.loc);
          }
          break;
        }
        case K::Assign: {
          if (s.targets.size() == 1 && s.targets[0]->kind == EK::Name) {
            const std::string& name = s.targets[0]->name;
            if (std::optional<Op> op = update_form(name, *s.value)) {
              note_update(name, *op, s.loc);
              // The other operand's reads (the name itself is the update's).
              for_each_name(*s.value, [&](const ast::Expr& n) {
                if (n.name != name) {
                  Use& u = uses[n.name];
                  if (u.read.line == 0) u.read = n.loc;
                }
              });
              break;
            }
          }
          note_read(*s.value);
          for (const auto& t : s.targets) target(*t, s.loc);
          break;
        }
        case K::For:
          note_read(*s.iter);
          target(*s.targets[0], s.loc);
          visit(s.body);
          visit(s.orelse);
          break;
        case K::If:
        case K::While:
          note_read(*s.cond);
          visit(s.body);
          visit(s.orelse);
          break;
        case K::Expr:
        case K::Return:
          if (s.value) note_read(*s.value);
          break;
        case K::Break:
        case K::Continue:
        case K::Pass:
          break;
      }
    }
  };
  visit(loop.body);
  // The parallel loop's own variables.
  const ast::Expr& vars = *loop.targets[0];
  if (vars.kind == EK::Name) note_assign(vars.name, loop.loc, "the loop variable");
  for (const auto& v : vars.args)
    if (v->kind == EK::Name) note_assign(v->name, loop.loc, "the loop variable");

  // The locals bound before the loop that it assigns: reductions or per-iteration copies.
  std::set<std::string> read_after;
  if (ret && ret->value)
    for_each_name(*ret->value, [&](const ast::Expr& n) { read_after.insert(n.name); });
  for (auto& [name, u] : uses) {
    if (!u.any || !is_local(name)) continue;
    LoopLocal l;
    l.name = name;
    bool reduction =
        locals_.count(name) && u.op && !u.mixed_op && u.assigned.line == 0 && u.read.line == 0;
    if (reduction && read_after.count(name)) l.op = *u.op;
    loop_plan_.push_back(std::move(l));
  }

  // What the return reads: a reduction, or a local the loop does not assign.
  if (!ret || !ret->value) return;
  std::string how_to =
      "to reduce over the loop, bind the variable before it and update it in the loop only with "
      "s += e, s -= e, s *= e, s = min(s, e), s = max(s, e), s |= e, s &= e or s ^= e; or store "
      "each iteration's value into an array";
  for_each_name(*ret->value, [&](const ast::Expr& n) {
    auto it = uses.find(n.name);
    if (it == uses.end() || !it->second.any) return;
    const Use& u = it->second;
    for (const LoopLocal& l : loop_plan_)
      if (l.name == n.name && l.op) return;
    std::string why;
    if (!is_local(n.name))
      why = fmt::format("it is first assigned in the loop (line {})",
                        u.assigned.line ? u.assigned.line : u.update.line);
    else if (composites_.count(n.name))
      why = "a vector or matrix is not reduced: reduce each component into a scalar of its own";
    else if (u.assigned.line)
      why = fmt::format("{} at line {} is not a reduction update", u.how, u.assigned.line);
    else if (u.mixed_op)
      why = fmt::format(
          "it is updated with {} at line {} and with {} at line {}; a reduction "
          "uses one operation",
          update_spelling(*u.op), u.update.line, update_spelling(*u.mixed_op), u.mixed.line);
    else
      why = fmt::format(
          "it is read at line {}, column {} inside the loop; a reduction variable may only be "
          "updated there",
          u.read.line, u.read.col + current_file().column_offset());
    fail(n.loc,
         fmt::format("'{}' is assigned in the parallel loop, so each iteration has its own copy "
                     "and it has no single value after the loop: {}",
                     n.name, why),
         how_to);
  });
}

void Lowerer::begin_loop_locals(ir::Block& body, SourceLoc loc) {
  for (LoopLocal& l : loop_plan_) {
    auto copy_of = [&](int outer, const std::string& suffix) {
      k_.locals.push_back(
          {fmt::format("{}${}", k_.locals[outer].name, suffix), k_.locals[outer].type});
      int inner = static_cast<int>(k_.locals.size()) - 1;
      if (auto d = local_decl_.find(outer); d != local_decl_.end()) local_decl_[inner] = d->second;
      return inner;
    };
    if (auto c = composites_.find(l.name); c != composites_.end()) {
      l.outer_components = c->second.ids;
      for (int& id : c->second.ids) {
        int inner = copy_of(id, "it");
        body.push_back(ir::make_assign(inner, ir::make_local(id, k_.locals[id].type, loc), loc));
        id = inner;
      }
      continue;
    }
    l.outer = locals_.at(l.name);
    Type t = k_.locals[l.outer].type;
    if (!l.op) {
      // A copy per iteration, from the value bound before the loop.
      l.inner = copy_of(l.outer, "it");
      body.push_back(ir::make_assign(l.inner, ir::make_local(l.outer, t, loc), loc));
      locals_[l.name] = l.inner;
      continue;
    }
    // A reduction: the lanes' copies start at the identity (set by the generators).
    l.inner = copy_of(l.outer, "lane");
    locals_[l.name] = l.inner;
    ir::Reduction r;
    r.acc = l.inner;
    r.init = l.outer;
    r.op = *l.op;
    DType d = t.dtype;
    switch (r.op) {
      case Op::Add:
        // -0.0 is the exact identity of IEEE addition (x + -0.0 == x, also for x == -0.0).
        r.identity = is_float(d) ? ir::make_float(t, -0.0, loc) : ir::make_int(t, 0, loc);
        break;
      case Op::Mul:
        r.identity = is_float(d) ? ir::make_float(t, 1.0, loc) : ir::make_int(t, 1, loc);
        break;
      case Op::BitOr:
      case Op::BitXor:
        r.identity = ir::make_int(t, 0, loc);
        break;
      case Op::BitAnd:
        r.identity = ir::make_int(t, t.is_bool() ? 1 : ~uint64_t{0} >> (64 - dtype_bits(d)), loc);
        break;
      case Op::Min:
      case Op::Max: {
        bool min = r.op == Op::Min;
        if (is_float(d)) {
          r.identity = ir::make_float(t, min ? HUGE_VAL : -HUGE_VAL, loc);
        } else {
          int bits = dtype_bits(d);
          uint64_t all = ~uint64_t{0} >> (64 - bits);
          uint64_t v = is_signed(d) ? (min ? all >> 1 : ~(all >> 1)) : (min ? all : 0);
          r.identity = ir::make_int(t, v & all, loc);
        }
        break;
      }
      default:
        break;
    }
    k_.params.push_back({fmt::format("{}$partials", l.name), Type::array(d, 1), true});
    k_.params.back().partials = true;
    r.partials = static_cast<int>(k_.params.size()) - 1;
    k_.reductions.push_back(std::move(r));
  }
  first_body_local_ = k_.locals.size();
}

void Lowerer::end_loop_locals(SourceLoc loc) {
  if (k_.workgroup_size > 0)
    for (const LoopLocal& l : loop_plan_)
      if (l.op)
        fail(loc,
             fmt::format("'{}' is a reduction, which a kernel with workgroups cannot have", l.name),
             "reduce with tack.block_sum, block_min or block_max into an array of the groups' "
             "results");
  for (const LoopLocal& l : loop_plan_) {
    if (!l.outer_components.empty()) {
      composites_[l.name].ids = l.outer_components;
      continue;
    }
    locals_[l.name] = l.outer;
  }
  // The locals the body binds read zero on a path where the iteration has not assigned them
  // (docs/language.md, "Locals"), also on the CPU, where a thread runs many iterations: each
  // iteration starts by zeroing them (LLVM drops the stores that nothing reads).
  ir::Block zeroes;
  for (size_t id = first_body_local_; id < k_.locals.size(); ++id) {
    const ir::Local& l = k_.locals[id];
    if (l.name.empty() || l.name[0] == '$') continue;  // temporaries: assigned before any read
    int i = static_cast<int>(id);
    zeroes.push_back(ir::make_assign(
        i, is_float(l.type.dtype) ? ir::make_float(l.type, 0.0, loc) : ir::make_int(l.type, 0, loc),
        loc));
  }
  k_.body.insert(k_.body.begin(), std::make_move_iterator(zeroes.begin()),
                 std::make_move_iterator(zeroes.end()));
  // The epilogue: each reduction's lanes, then its blocks, combined in the order of
  // ir::Reduction, into the local bound before the loop.
  auto i64 = [&](uint64_t v) { return ir::make_int(Type::i64(), v, loc); };
  auto local = [&](int id) { return ir::make_local(id, k_.locals[id].type, loc); };
  auto fresh = [&](const std::string& name, Type t) {
    k_.locals.push_back({name, t});
    return static_cast<int>(k_.locals.size()) - 1;
  };
  auto counted = [&](int var, ir::ExprPtr stop) {
    auto f = std::make_unique<ir::Stmt>(ir::Stmt::Kind::For, loc);
    f->index = var;
    f->start = i64(0);
    f->stop = std::move(stop);
    f->step = i64(1);
    return f;
  };
  for (const ir::Reduction& r : k_.reductions) {
    const std::string name = k_.locals[r.init].name;
    Type t = k_.locals[r.init].type;
    DType d = t.dtype;
    int p = r.partials;
    auto load = [&](ir::ExprPtr index) {
      std::vector<ir::ExprPtr> idx;
      idx.push_back(std::move(index));
      return ir::make_load(p, d, std::move(idx), loc);
    };
    auto store = [&](ir::ExprPtr index, ir::ExprPtr value) {
      std::vector<ir::ExprPtr> idx;
      idx.push_back(std::move(index));
      return ir::make_store(p, std::move(idx), std::move(value), loc);
    };
    auto combine = [&](ir::ExprPtr a, ir::ExprPtr b) {
      return ir::make_binary(r.op, std::move(a), std::move(b), loc);
    };
    int blocks = fresh(fmt::format("{}$blocks", name), Type::i64());
    k_.epilogue.push_back(ir::make_assign(
        blocks, ir::make_binary(Op::Shr, ir::make_array_dim(p, 0, loc), i64(4), loc),  // lanes = 16
        loc));
    static_assert(ir::kReductionLanes == 16);
    // Per block: the lanes' tree, into partials[b].
    int b = fresh(fmt::format("{}$b", name), Type::i64());
    auto per_block = counted(b, local(blocks));
    std::array<int, ir::kReductionLanes> v{};
    for (int l = 0; l < ir::kReductionLanes; ++l) {
      v[l] = fresh(fmt::format("{}$v{}", name, l), t);
      per_block->body.push_back(ir::make_assign(
          v[l],
          load(ir::make_binary(Op::Add, ir::make_binary(Op::Mul, local(b), i64(16), loc), i64(l),
                               loc)),
          loc));
    }
    for (int s = ir::kReductionLanes / 2; s >= 1; s /= 2)
      for (int l = 0; l < s; ++l)
        per_block->body.push_back(
            ir::make_assign(v[l], combine(local(v[l]), local(v[l + s])), loc));
    per_block->body.push_back(store(local(b), local(v[0])));
    k_.epilogue.push_back(std::move(per_block));
    // The blocks, pairwise, level by level: n values become n - n / 2.
    int n = fresh(fmt::format("{}$n", name), Type::i64());
    int h = fresh(fmt::format("{}$h", name), Type::i64());
    int i = fresh(fmt::format("{}$i", name), Type::i64());
    k_.epilogue.push_back(ir::make_assign(n, local(blocks), loc));
    auto level = std::make_unique<ir::Stmt>(ir::Stmt::Kind::While, loc);
    level->cond = ir::make_binary(Op::Gt, local(n), i64(1), loc);
    level->body.push_back(ir::make_assign(h, ir::make_binary(Op::Shr, local(n), i64(1), loc), loc));
    auto pairs = counted(i, local(h));
    auto two_i = [&](uint64_t plus) {
      return ir::make_binary(Op::Add, ir::make_binary(Op::Mul, local(i), i64(2), loc), i64(plus),
                             loc);
    };
    pairs->body.push_back(store(local(i), combine(load(two_i(0)), load(two_i(1)))));
    level->body.push_back(std::move(pairs));
    auto odd = std::make_unique<ir::Stmt>(ir::Stmt::Kind::If, loc);
    odd->cond =
        ir::make_binary(Op::Ne, ir::make_binary(Op::BitAnd, local(n), i64(1), loc), i64(0), loc);
    odd->body.push_back(store(local(h), load(ir::make_binary(Op::Sub, local(n), i64(1), loc))));
    level->body.push_back(std::move(odd));
    level->body.push_back(
        ir::make_assign(n, ir::make_binary(Op::Sub, local(n), local(h), loc), loc));
    k_.epilogue.push_back(std::move(level));
    // init op total (an empty loop leaves the local as it was).
    auto any = std::make_unique<ir::Stmt>(ir::Stmt::Kind::If, loc);
    any->cond = ir::make_binary(Op::Gt, local(blocks), i64(0), loc);
    any->body.push_back(ir::make_assign(r.init, combine(local(r.init), load(i64(0))), loc));
    k_.epilogue.push_back(std::move(any));
  }
}

}  // namespace tack::sema
