// Lowering the workgroup primitives: tack.shared / tack.shared_like storage, tack.barrier(),
// tack.thread_id() / group_id() / group_size(), and the block collectives
// tack.block_sum / block_min / block_max / block_scan.
//
// They exist only on backends with workgroups; on the others check_no_workgroup_primitives
// (lower_stmt.cpp) has rejected the kernel before any of this runs. A kernel that uses any of
// them gets Kernel::workgroup_size = 256 (launches use groups of 256 lanes); one that uses a
// barrier or a block collective is also marked Kernel::collectives, which makes launches insist
// on complete groups and makes the uniformity analysis (uniformity.cpp) check where each
// collective stands.
#include <fmt/format.h>

#include "sema/lowerer.hpp"

namespace tack::sema {

using ir::Type;

namespace {

// Workgroup memory is small: 32 KiB is what every target guarantees (OpenCL's minimum local
// memory, Metal's threadgroup memory); the collectives' scratch counts too.
constexpr int64_t kMaxSharedBytes = 32 * 1024;
constexpr int kGroupSize = 256;

}  // namespace

void Lowerer::use_workgroups(bool collective) {
  k_.workgroup_size = kGroupSize;
  if (collective) k_.collectives = true;
}

int64_t Lowerer::shared_bytes() const {
  int64_t bytes = 0;
  for (const ir::Param& p : k_.params)
    if (p.is_shared_array()) bytes += p.local_size * dtype_size(p.type.dtype);
  return bytes;
}

bool Lowerer::declare_shared_array(const ast::Stmt& s) {
  if (s.targets.size() != 1 || s.value->kind != ast::Expr::Kind::Call) return false;
  std::string fn = builtin_name(*s.value->operand);
  if (fn != "shared" && fn != "shared_like") return false;
  const ast::Expr& call = *s.value;
  std::string usage = fn == "shared" ? "write tile = tack.shared(tack.f32, 256)"
                                     : "write tile = tack.shared_like(x, 256)";
  if (call.args.size() != 2 || !call.keywords.empty())
    fail(call.loc, fmt::format("tack.{}() takes two arguments", fn), usage);
  const ast::Expr& target = *s.targets[0];
  if (target.kind != ast::Expr::Kind::Name)
    fail(target.loc, "a shared array is bound to a name", usage);
  if (locals_.count(target.name) || is_param(target.name))
    fail(target.loc,
         fmt::format("'{}' is already bound; a shared array needs a name of its own", target.name),
         "choose another name");
  std::optional<DType> dt;
  if (fn == "shared") {
    dt = dtype_named(*call.args[0]);
    if (!dt) fail(call.args[0]->loc, "the first argument of tack.shared is a dtype", usage);
  } else {
    int like = array_param(*call.args[0]);
    if (like < 0)
      fail(call.args[0]->loc, "tack.shared_like takes an array to copy the dtype of", usage);
    dt = k_.params[like].type.dtype;
  }
  Value size = expr(*call.args[1]);
  int64_t n = size.weak == Value::Weak::Int ? static_cast<int64_t>(size.e->int_bits) : 0;
  if (size.weak != Value::Weak::Int || n <= 0)
    fail(call.args[1]->loc,
         "a shared array's size is a positive constant: a literal, a tack.constant or arithmetic "
         "of them",
         usage);
  int64_t total = shared_bytes() + n * dtype_size(*dt);
  if (n > kMaxSharedBytes || total > kMaxSharedBytes)
    fail(call.args[1]->loc,
         fmt::format("this kernel's shared arrays need {} bytes; a workgroup has at most {} bytes "
                     "of shared memory on every backend",
                     total, kMaxSharedBytes),
         "use smaller shared arrays");
  use_workgroups(false);
  ir::Param p{target.name, Type::array(*dt, 1), true, n};
  p.shared = true;
  k_.params.push_back(std::move(p));
  params_[target.name] = static_cast<int>(k_.params.size()) - 1;
  return true;
}

bool Lowerer::workgroup_statement(const ast::Expr& call, ir::Block& out) {
  if (call.kind != ast::Expr::Kind::Call || builtin_name(*call.operand) != "barrier") return false;
  if (!call.args.empty() || !call.keywords.empty())
    fail(call.loc, "tack.barrier() takes no arguments", "write tack.barrier()");
  if (phase_ != Phase::Loop)
    fail(call.loc, "tack.barrier() is only allowed inside the parallel loop",
         "move the barrier into the loop body");
  use_workgroups(true);
  out.push_back(std::make_unique<ir::Stmt>(ir::Stmt::Kind::Barrier, call.loc));
  return true;
}

std::optional<Value> Lowerer::workgroup_call(const std::string& name, const ast::Expr& e) {
  static const std::map<std::string, ir::Collective> collectives = {
      {"block_sum", ir::Collective::Sum},
      {"block_min", ir::Collective::Min},
      {"block_max", ir::Collective::Max},
      {"block_scan", ir::Collective::Scan}};
  SourceLoc loc = e.loc;
  if (name == "thread_id" || name == "group_id" || name == "group_size") {
    if (!e.args.empty())
      fail(loc, fmt::format("tack.{}() takes no arguments", name),
           fmt::format("write tack.{}()", name));
    if (phase_ == Phase::AfterLoop)
      fail(loc, fmt::format("tack.{}() is only allowed before or inside the parallel loop", name),
           "a kernel's result is computed once, outside any group");
    use_workgroups(false);
    ir::Op op = name == "thread_id"  ? ir::Op::ThreadId
                : name == "group_id" ? ir::Op::GroupId
                                     : ir::Op::GroupSize;
    return Value{std::make_unique<ir::Expr>(
        op, name == "group_id" ? Type::i64() : Type::scalar(DType::I32), loc)};
  }
  auto it = collectives.find(name);
  if (it == collectives.end()) {
    if (name == "barrier")
      fail(loc, "tack.barrier() is a statement and gives no value", "write tack.barrier() alone");
    if (name == "shared" || name == "shared_like")
      fail(loc, fmt::format("tack.{}() declares storage and must be assigned to a name", name),
           fmt::format("write tile = tack.{}(...)", name));
    return std::nullopt;
  }
  if (e.args.size() != 1)
    fail(loc, fmt::format("tack.{}() takes one argument", name),
         fmt::format("write total = tack.{}(x)", name));
  if (phase_ != Phase::Loop)
    fail(loc, fmt::format("tack.{}() is only allowed inside the parallel loop", name),
         "move it into the loop body");
  ir::ExprPtr v = materialize(expr(*e.args[0]));
  if (!v->type.is_scalar())
    fail(e.args[0]->loc, fmt::format("tack.{}() takes a scalar", name),
         "reduce each component separately");
  if (v->type.is_bool()) v = ir::make_cast(std::move(v), Type::scalar(DType::I32));
  use_workgroups(true);
  // The scratch memory the collective combines in (256 values of its type) is shared memory too.
  int64_t scratch = kGroupSize * dtype_size(v->type.dtype);
  if (shared_bytes() + scratch > kMaxSharedBytes)
    fail(loc,
         fmt::format("tack.{}() needs {} bytes of shared memory, but the kernel's shared arrays "
                     "leave less than that of the {} bytes a workgroup has",
                     name, scratch, kMaxSharedBytes),
         "use smaller shared arrays");
  auto node = std::make_unique<ir::Expr>(ir::Op::Collective, v->type, loc);
  node->collective = it->second;
  node->operands.push_back(std::move(v));
  return Value{std::move(node)};
}

}  // namespace tack::sema
