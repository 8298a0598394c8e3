#include "codegen/llvm/gang_codegen.hpp"

#include <fmt/format.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>

#include <algorithm>
#include <map>
#include <set>
#include <span>

#include "codegen/llvm/abi.hpp"
#include "codegen/llvm/value_ops.hpp"
#include "ir/builder.hpp"
#include "tack/error.hpp"

namespace tack::codegen {
namespace {

using ir::Op;
using llvm::BasicBlock;
using llvm::Value;
using Kind = ir::Stmt::Kind;

// The locals a block assigns, nested blocks included.
void assigned_locals(const ir::Block& b, std::set<int>& out) {
  for (const auto& s : b) {
    if (s->kind == Kind::Assign || s->kind == Kind::For) out.insert(s->index);
    assigned_locals(s->body, out);
    assigned_locals(s->orelse, out);
  }
}

// A break or continue of the enclosing loop in `b` (not of a loop inside it).
bool exits_loop(const ir::Block& b) {
  for (const auto& s : b) {
    if (s->kind == Kind::Break || s->kind == Kind::Continue) return true;
    if (s->kind == Kind::If && (exits_loop(s->body) || exits_loop(s->orelse))) return true;
  }
  return false;
}

class GangGenerator {
 public:
  GangGenerator(const ir::Kernel& k, const LaneAnalysis& a, int width, llvm::Module& m,
                const LlvmOptions& options)
      : k_(k),
        a_(a),
        w_(width),
        m_(m),
        ctx_(m.getContext()),
        options_(options),
        b_(ctx_),
        layout_(k),
        ops_(b_, m) {}

  void run() {
    auto* fty = llvm::FunctionType::get(b_.getVoidTy(),
                                        {b_.getPtrTy(), b_.getInt64Ty(), b_.getInt64Ty()}, false);
    fn_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage,
                                 chunk_symbol(options_.symbol_prefix), m_);
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
    fn_->addFnAttr(llvm::Attribute::NoRecurse);
    fn_->addParamAttr(0, llvm::Attribute::NoAlias);
    fn_->addParamAttr(0, llvm::Attribute::ReadOnly);
    b_.SetInsertPoint(BasicBlock::Create(ctx_, "entry", fn_));
    auto args = fn_->arg_begin();
    Value* slots = &*args++;
    Value* begin = &*args++;
    Value* end = &*args;
    load_arguments(slots);
    block(k_.prelude);
    emit_loop(0, begin, end);
    // Streamed stores are weakly ordered: fenced before the chunk reports done, so that every
    // thread that sees the launch finished sees them.
    if (options_.stream_stores && streamable_)
      b_.CreateCall(llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::x86_sse_sfence));
    b_.CreateRetVoid();
    if (streamable_)
      new llvm::GlobalVariable(m_, b_.getInt8Ty(), true, llvm::GlobalValue::ExternalLinkage,
                               b_.getInt8(1), streams_symbol(options_.symbol_prefix));
  }

 private:
  // ---- types and lanes ----
  llvm::Type* type(DType t) { return llvm_type(ctx_, t); }
  llvm::Type* mem_type(DType t) { return llvm_mem_type(ctx_, t); }
  llvm::Type* vec(llvm::Type* t) { return llvm::FixedVectorType::get(t, w_); }
  llvm::Type* mask_type() { return vec(b_.getInt1Ty()); }
  Value* splat(Value* v) { return v->getType()->isVectorTy() ? v : b_.CreateVectorSplat(w_, v); }
  // 0, 1, ..., W-1 in integer type `t`.
  Value* iota(llvm::Type* t) {
    std::vector<llvm::Constant*> lanes;
    for (int l = 0; l < w_; ++l) lanes.push_back(llvm::ConstantInt::get(t, l));
    return llvm::ConstantVector::get(lanes);
  }
  Value* all_on() { return llvm::Constant::getAllOnesValue(mask_type()); }
  Value* all_off() { return llvm::Constant::getNullValue(mask_type()); }
  Value* any(Value* m) { return b_.CreateOrReduce(m); }
  Value* mask() { return b_.CreateLoad(mask_type(), mask_); }
  void set_mask(Value* m) {
    b_.CreateStore(m, mask_);
    all_lanes_ = m == all_on();
  }
  llvm::Type* local_type(int id) {
    llvm::Type* t = type(k_.locals[id].type.dtype);
    return a_.varying_local[id] ? vec(t) : t;
  }
  llvm::AllocaInst* entry_alloca(llvm::Type* t, const std::string& name) {
    llvm::IRBuilderBase::InsertPointGuard guard(b_);
    BasicBlock& entry = fn_->getEntryBlock();
    b_.SetInsertPoint(&entry, entry.begin());
    return b_.CreateAlloca(t, nullptr, name);
  }

  // ---- arguments (as the scalar chunk reads them) ----
  void load_arguments(Value* slots) {
    auto slot = [&](int i) { return b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), slots, i); };
    arrays_.assign(k_.params.size(), nullptr);
    extents_.assign(k_.params.size(), {});
    scalars_.assign(k_.params.size(), nullptr);
    for (size_t p = 0; p < k_.params.size(); ++p) {
      const ir::Param& param = k_.params[p];
      int s = layout_.param_slot[p];
      if (param.type.is_array()) {
        auto* ptr = b_.CreateLoad(b_.getPtrTy(), slot(s), param.name);
        ptr->setMetadata(llvm::LLVMContext::MD_nonnull, llvm::MDNode::get(ctx_, {}));
        arrays_[p] = ptr;
        for (int d = 0; d < param.type.rank; ++d)
          extents_[p].push_back(b_.CreateLoad(b_.getInt64Ty(), slot(s + 1 + d),
                                              fmt::format("{}.shape{}", param.name, d)));
      } else {
        Value* v = b_.CreateLoad(mem_type(param.type.dtype), slot(s), param.name);
        if (param.type.is_bool()) v = b_.CreateICmpNE(v, b_.getInt8(0));
        scalars_[p] = v;
      }
    }
    for (size_t d = 0; d < k_.dims.size(); ++d) {
      int s = layout_.loop_slot + 3 * static_cast<int>(d);
      const ir::LoopDim& dim = k_.dims[d];
      // Constant starts and steps are compiled in; a unit step makes the innermost index
      // contiguous across the lanes, so its accesses are vector loads and stores.
      auto bound = [&](const ir::Expr& e, int i) -> Value* {
        if (ir::is_const(e)) return b_.getInt64(e.int_bits);
        return b_.CreateLoad(b_.getInt64Ty(), slot(i));
      };
      Value* start = bound(*dim.start, s);
      Value* step = bound(*dim.step, s + 1);
      Value* count = b_.CreateLoad(b_.getInt64Ty(), slot(s + 2));
      loop_values_.push_back({start, step, count});
    }
    mask_ = b_.CreateAlloca(mask_type(), nullptr, "mask");
    set_mask(all_on());
    for (size_t i = 0; i < k_.locals.size(); ++i) {
      llvm::Type* t = local_type(static_cast<int>(i));
      locals_.push_back(b_.CreateAlloca(t, nullptr, k_.locals[i].name));
    }
    for (size_t i = 0; i < k_.locals.size(); ++i)
      b_.CreateStore(llvm::Constant::getNullValue(locals_[i]->getAllocatedType()), locals_[i]);
  }

  // ---- the parallel loop ----
  template <typename F>
  void counted_loop(Value* from, Value* to, const std::string& name, const F& emit) {
    BasicBlock* pre = b_.GetInsertBlock();
    BasicBlock* head = BasicBlock::Create(ctx_, name + ".head", fn_);
    BasicBlock* body = BasicBlock::Create(ctx_, name + ".body", fn_);
    BasicBlock* exit = BasicBlock::Create(ctx_, name + ".exit", fn_);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    auto* idx = b_.CreatePHI(b_.getInt64Ty(), 2, name + ".idx");
    idx->addIncoming(from, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(idx, to), body, exit);
    b_.SetInsertPoint(body);
    emit(idx);
    Value* next = b_.CreateAdd(idx, b_.getInt64(1), "", /*HasNUW=*/true, /*HasNSW=*/true);
    idx->addIncoming(next, b_.GetInsertBlock());
    b_.CreateBr(head);
    b_.SetInsertPoint(exit);
  }

  // The outer dimensions are ordinary loops (their variables are uniform in a gang); the
  // innermost runs whole gangs, then one gang of the remaining lanes under a mask.
  void emit_loop(size_t d, Value* from, Value* to) {
    auto [start, step, count] = loop_values_[d];
    if (!from) from = b_.getInt64(0);
    if (!to) to = count;
    if (d + 1 < k_.dims.size()) {
      counted_loop(from, to, fmt::format("par{}", d), [&](Value* idx) {
        b_.CreateStore(b_.CreateAdd(start, b_.CreateMul(idx, step)), locals_[k_.dims[d].var]);
        emit_loop(d + 1, nullptr, nullptr);
      });
      return;
    }
    Value* n = b_.CreateSub(to, from);
    Value* width = b_.getInt64(w_);
    Value* gangs = b_.CreateSDiv(n, width);
    counted_loop(b_.getInt64(0), gangs, "gang", [&](Value* g) {
      emit_gang(b_.CreateAdd(from, b_.CreateMul(g, width)), all_on());
    });
    Value* first = b_.CreateAdd(from, b_.CreateMul(gangs, width));
    Value* rest = b_.CreateSub(to, first);
    BasicBlock* tail = BasicBlock::Create(ctx_, "gang.tail", fn_);
    BasicBlock* done = BasicBlock::Create(ctx_, "gang.done", fn_);
    b_.CreateCondBr(b_.CreateICmpSGT(rest, b_.getInt64(0)), tail, done);
    b_.SetInsertPoint(tail);
    emit_gang(first, b_.CreateICmpSLT(iota(b_.getInt64Ty()), splat(rest)));
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  }

  // Iterations first, first + 1, ... (of the innermost dimension's count) on lanes 0, 1, ...
  void emit_gang(Value* first, Value* lanes) {
    auto [start, step, count] = loop_values_.back();
    set_mask(lanes);
    bases_.clear();
    int var = k_.dims.back().var;
    Value* idx = b_.CreateAdd(splat(first), iota(b_.getInt64Ty()));
    b_.CreateStore(b_.CreateAdd(splat(start), b_.CreateMul(idx, splat(step))), locals_[var]);
    if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(step); c && c->isOne())
      bases_[var] = b_.CreateAdd(start, first);
    block(k_.body);
  }

  // ---- memory ----
  struct Address {
    Value* ptr = nullptr;  // a scalar pointer (uniform or contiguous), or a vector of pointers
    bool contiguous = false;
  };

  // Row-major, as the scalar generator: ((i0 * e1 + i1) * e2 + i2)... Contiguous when every index
  // is uniform but the last, which is a uniform base plus the lane.
  Address address(int array, std::span<const ir::ExprPtr> indices) {
    llvm::Type* et = mem_type(k_.params[array].type.dtype);
    bool varying = false;
    for (const auto& i : indices) varying = varying || a_.varying(*i);
    size_t n = indices.size();
    auto flatten = [&](std::vector<Value*> idx) {
      Value* flat = idx[0];
      for (size_t d = 1; d < idx.size(); ++d) {
        Value* e = extents_[array][d];
        if (flat->getType()->isVectorTy() || idx[d]->getType()->isVectorTy()) {
          flat = splat(flat);
          e = splat(e);
        }
        flat = b_.CreateAdd(b_.CreateMul(flat, e, "", false, true), splat_like(idx[d], flat), "",
                            false, true);
      }
      return flat;
    };
    if (varying) {
      bool others_uniform = true;
      for (size_t d = 0; d + 1 < n; ++d)
        others_uniform = others_uniform && !a_.varying(*indices[d]);
      if (others_uniform) {
        if (Value* last = base(*indices[n - 1])) {
          std::vector<Value*> idx;
          for (size_t d = 0; d + 1 < n; ++d) idx.push_back(expr(*indices[d]));
          idx.push_back(last);
          return {b_.CreateInBoundsGEP(et, arrays_[array], flatten(idx)), true};
        }
      }
    }
    std::vector<Value*> idx;
    for (const auto& i : indices) idx.push_back(expr(*i));
    Value* flat = flatten(idx);
    if (varying) flat = splat(flat);
    return {b_.CreateInBoundsGEP(et, arrays_[array], flat), false};
  }
  // `v` in the shape of `shape`.
  Value* splat_like(Value* v, Value* shape) {
    return shape->getType()->isVectorTy() ? splat(v) : v;
  }

  Value* load(const ir::Expr& e) {
    DType dt = k_.params[e.index].type.dtype;
    llvm::Type* et = mem_type(dt);
    llvm::Align align(dtype_size(dt));
    Address at = address(e.index, e.operands);
    auto to_reg = [&](Value* v) -> Value* {
      return dt == DType::Bool ? b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType())) : v;
    };
    if (!a_.varying(e)) {
      if (!maybe_empty_) return to_reg(b_.CreateLoad(et, at.ptr));
      // In an arm of a varying conditional no lane may take: the scalar code would not read.
      BasicBlock* some = BasicBlock::Create(ctx_, "load.some", fn_);
      BasicBlock* join = BasicBlock::Create(ctx_, "load.join", fn_);
      BasicBlock* pre = b_.GetInsertBlock();
      b_.CreateCondBr(any(mask()), some, join);
      b_.SetInsertPoint(some);
      Value* v = b_.CreateLoad(et, at.ptr);
      b_.CreateBr(join);
      b_.SetInsertPoint(join);
      auto* phi = b_.CreatePHI(et, 2);
      phi->addIncoming(v, some);
      phi->addIncoming(llvm::Constant::getNullValue(et), pre);
      return to_reg(phi);
    }
    Value* zero = llvm::Constant::getNullValue(vec(et));
    if (at.contiguous) return to_reg(b_.CreateMaskedLoad(vec(et), at.ptr, align, mask(), zero));
    return to_reg(b_.CreateMaskedGather(vec(et), at.ptr, align, mask(), zero));
  }

  // Lanes store in ascending order (a scatter to one address leaves the highest lane's value, as
  // the scalar loop leaves the last iteration's).
  void store(const ir::Stmt& s) {
    DType dt = k_.params[s.index].type.dtype;
    llvm::Align align(dtype_size(dt));
    Address at = address(s.index, s.indices);
    Value* v = expr(*s.value);
    auto to_mem = [&](Value* x) {
      return dt == DType::Bool ? b_.CreateZExt(x, shaped(b_.getInt8Ty(), x)) : x;
    };
    bool uniform_at = !at.ptr->getType()->isVectorTy() && !at.contiguous;
    if (uniform_at && !v->getType()->isVectorTy()) {
      BasicBlock* some = BasicBlock::Create(ctx_, "store.some", fn_);
      BasicBlock* join = BasicBlock::Create(ctx_, "store.join", fn_);
      b_.CreateCondBr(any(mask()), some, join);
      b_.SetInsertPoint(some);
      b_.CreateStore(to_mem(v), at.ptr);
      b_.CreateBr(join);
      b_.SetInsertPoint(join);
      return;
    }
    v = to_mem(splat(v));
    if (at.contiguous && all_lanes_ && nest_ == 0 && options_.can_stream) {
      streamable_ = true;
      if (options_.stream_stores)
        store_streamed(v, at.ptr, align);
      else
        b_.CreateAlignedStore(v, at.ptr, align);
      return;
    }
    if (at.contiguous) {
      b_.CreateMaskedStore(v, at.ptr, align, mask());
      return;
    }
    b_.CreateMaskedScatter(v, splat(at.ptr), align, mask());
  }

  // A store of every lane of a whole gang, once per iteration (outside ifs and loops), in the build
  // for streaming launches: past the caches (a non-temporal store, which the target only has for a
  // whole aligned vector) where the address is aligned, an ordinary store otherwise.
  void store_streamed(Value* v, Value* ptr, llvm::Align align) {
    const uint64_t bytes = m_.getDataLayout().getTypeStoreSize(v->getType());
    Value* aligned = b_.CreateICmpEQ(
        b_.CreateAnd(b_.CreatePtrToInt(ptr, b_.getInt64Ty()), b_.getInt64(bytes - 1)),
        b_.getInt64(0));
    BasicBlock* streamed = BasicBlock::Create(ctx_, "store.stream", fn_);
    BasicBlock* cached = BasicBlock::Create(ctx_, "store.cached", fn_);
    BasicBlock* join = BasicBlock::Create(ctx_, "store.join", fn_);
    b_.CreateCondBr(aligned, streamed, cached);
    b_.SetInsertPoint(streamed);
    llvm::StoreInst* nt = b_.CreateAlignedStore(v, ptr, llvm::Align(bytes));
    nt->setMetadata(llvm::LLVMContext::MD_nontemporal,
                    llvm::MDNode::get(ctx_, {llvm::ConstantAsMetadata::get(b_.getInt32(1))}));
    b_.CreateBr(join);
    b_.SetInsertPoint(cached);
    b_.CreateAlignedStore(v, ptr, align);
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
  }

  // ---- what runs lane by lane ----
  // `emit(l)` for each lane l that is on, in ascending order, as the iterations run on the scalar
  // path; the scalar values it returns (when `result` is a type) make a vector, zero where the
  // lane is off.
  template <typename F>
  Value* each_active_lane(llvm::Type* result, const F& emit) {
    Value* m = mask();
    Value* out = result ? llvm::Constant::getNullValue(vec(result)) : nullptr;
    for (int l = 0; l < w_; ++l) {
      BasicBlock* pre = b_.GetInsertBlock();
      BasicBlock* on = BasicBlock::Create(ctx_, fmt::format("lane{}", l), fn_);
      BasicBlock* next = BasicBlock::Create(ctx_, fmt::format("lane{}.next", l), fn_);
      b_.CreateCondBr(b_.CreateExtractElement(m, l), on, next);
      b_.SetInsertPoint(on);
      Value* v = emit(l);
      Value* with = result ? b_.CreateInsertElement(out, v, l) : nullptr;
      BasicBlock* on_end = b_.GetInsertBlock();
      b_.CreateBr(next);
      b_.SetInsertPoint(next);
      if (result) {
        auto* phi = b_.CreatePHI(out->getType(), 2);
        phi->addIncoming(with, on_end);
        phi->addIncoming(out, pre);
        out = phi;
      }
    }
    return out;
  }
  Value* lane(Value* v, int l) {
    return v->getType()->isVectorTy() ? b_.CreateExtractElement(v, l) : v;
  }

  // Lane by lane in ascending order, each lane receiving its old value.
  Value* atomic(const ir::Expr& e) {
    const ir::Param& p = k_.params[e.index];
    DType dt = p.type.dtype;
    std::span<const ir::ExprPtr> operands(e.operands);
    Address at = address(e.index, operands.subspan(0, p.type.rank));
    std::vector<Value*> vals;
    for (const auto& o : operands.subspan(p.type.rank)) vals.push_back(expr(*o));
    return each_active_lane(type(dt), [&](int l) {
      Value* ptr =
          at.contiguous ? b_.CreateConstInBoundsGEP1_64(mem_type(dt), at.ptr, l) : lane(at.ptr, l);
      std::vector<Value*> lane_vals;
      for (Value* v : vals) lane_vals.push_back(lane(v, l));
      llvm::Instruction* inst = nullptr;
      return ops_.atomic(e.atomic, dt, ptr, lane_vals, &inst);
    });
  }

  // One line per lane that is on, in lane order.
  void print(const ir::Stmt& s) {
    std::vector<Value*> values;
    for (const auto& e : s.indices) values.push_back(expr(*e));
    each_active_lane(nullptr, [&](int l) -> Value* {
      std::vector<Value*> lane_values;
      for (Value* v : values) lane_values.push_back(lane(v, l));
      ops_.print(s, lane_values);
      return nullptr;
    });
  }

  // ---- expressions ----
  // The scalar value at lane 0 of `e` when lane l holds it plus l (a contiguous index), else null.
  Value* base(const ir::Expr& e) {
    if (!e.type.is_int() || dtype_bits(e.type.dtype) != 64) return nullptr;
    switch (e.op) {
      case Op::Local: {
        auto it = bases_.find(e.index);
        return it == bases_.end() ? nullptr : it->second;
      }
      case Op::Add:
        if (!a_.varying(*e.operands[1]))
          if (Value* b = base(*e.operands[0])) return b_.CreateAdd(b, expr(*e.operands[1]));
        if (!a_.varying(*e.operands[0]))
          if (Value* b = base(*e.operands[1])) return b_.CreateAdd(expr(*e.operands[0]), b);
        return nullptr;
      case Op::Sub:
        if (!a_.varying(*e.operands[1]))
          if (Value* b = base(*e.operands[0])) return b_.CreateSub(b, expr(*e.operands[1]));
        return nullptr;
      default:
        return nullptr;
    }
  }

  // Evaluates `then` or `otherwise` (only one) under a uniform condition.
  template <typename A, typename B>
  Value* branch_value(Value* cond, bool vector, A then, B otherwise) {
    BasicBlock* t = BasicBlock::Create(ctx_, "sel.then", fn_);
    BasicBlock* f = BasicBlock::Create(ctx_, "sel.else", fn_);
    BasicBlock* join = BasicBlock::Create(ctx_, "sel.join", fn_);
    b_.CreateCondBr(cond, t, f);
    b_.SetInsertPoint(t);
    Value* tv = then();
    if (vector) tv = splat(tv);
    BasicBlock* t_end = b_.GetInsertBlock();
    b_.CreateBr(join);
    b_.SetInsertPoint(f);
    Value* fv = otherwise();
    if (vector) fv = splat(fv);
    BasicBlock* f_end = b_.GetInsertBlock();
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    auto* phi = b_.CreatePHI(tv->getType(), 2);
    phi->addIncoming(tv, t_end);
    phi->addIncoming(fv, f_end);
    return phi;
  }

  // Evaluates `f` with the mask narrowed to `m`, where no lane may be on.
  template <typename F>
  Value* under(Value* m, const F& f) {
    Value* saved = mask();
    set_mask(m);
    bool was = maybe_empty_;
    maybe_empty_ = true;
    Value* v = f();
    maybe_empty_ = was;
    set_mask(saved);
    return v;
  }

  Value* expr(const ir::Expr& e) {
    DType t = e.type.dtype;
    bool varying = a_.varying(e);
    switch (e.op) {
      case Op::Const:
        if (e.type.is_float()) return llvm::ConstantFP::get(type(t), e.float_value);
        return llvm::ConstantInt::get(type(t), e.int_bits);
      case Op::Local:
        return b_.CreateLoad(local_type(e.index), locals_[e.index]);
      case Op::Param:
        return scalars_[e.index];
      case Op::ArrayDim:
        return extents_[e.index][e.dim];
      case Op::Load:
        return load(e);
      case Op::Atomic:
        return atomic(e);
      case Op::Select: {
        const ir::Expr& c = *e.operands[0];
        if (!a_.varying(c))
          return branch_value(
              expr(c), varying, [&] { return expr(*e.operands[1]); },
              [&] { return expr(*e.operands[2]); });
        Value* cv = expr(c);
        Value* m = mask();
        Value* tv = under(b_.CreateAnd(m, cv), [&] { return expr(*e.operands[1]); });
        Value* fv = under(b_.CreateAnd(m, b_.CreateNot(cv)), [&] { return expr(*e.operands[2]); });
        return b_.CreateSelect(cv, splat(tv), splat(fv));
      }
      case Op::LogicalAnd:
      case Op::LogicalOr: {
        bool is_and = e.op == Op::LogicalAnd;
        const ir::Expr& l = *e.operands[0];
        const ir::Expr& r = *e.operands[1];
        if (!a_.varying(l)) {
          Value* lv = expr(l);
          auto right = [&] { return expr(r); };
          auto fixed = [&]() -> Value* { return b_.getInt1(!is_and); };
          return is_and ? branch_value(lv, varying, right, fixed)
                        : branch_value(lv, varying, fixed, right);
        }
        Value* lv = expr(l);
        Value* m = mask();
        Value* rv = under(b_.CreateAnd(m, is_and ? lv : b_.CreateNot(lv)), [&] { return expr(r); });
        return is_and ? b_.CreateAnd(lv, splat(rv)) : b_.CreateOr(lv, splat(rv));
      }
      default:
        break;
    }
    std::vector<Value*> operands;
    for (const auto& o : e.operands) {
      Value* v = expr(*o);
      operands.push_back(varying ? splat(v) : v);
    }
    if (Value* v = ops_.apply(e, operands)) return v;
    throw Error(fmt::format("internal error: no widened CPU code for IR operation '{}'",
                            ir::op_name(e.op)));
  }

  // ---- statements ----
  struct Loop {
    bool varying = false;
    BasicBlock* next = nullptr;  // where `continue` goes (the latch)
    BasicBlock* exit = nullptr;
    llvm::AllocaInst* live = nullptr;       // varying loops: the lanes still iterating
    llvm::AllocaInst* continued = nullptr;  // varying loops: the lanes done with this iteration
    int varying_ifs = 0;                    // varying ifs entered since the loop's body began
  };

  void block(const ir::Block& b) {
    for (const auto& s : b) {
      stmt(*s);
      if (b_.GetInsertBlock()->getTerminator())
        b_.SetInsertPoint(BasicBlock::Create(ctx_, "dead", fn_));
    }
  }

  // Under varying control a lane keeps its old value where the mask is off.
  void assign(int id, Value* v) {
    bases_.erase(id);
    if (!a_.varying_local[id]) {
      b_.CreateStore(v, locals_[id]);
      return;
    }
    v = splat(v);
    if (varying_depth_ > 0)
      v = b_.CreateSelect(mask(), v, b_.CreateLoad(v->getType(), locals_[id]));
    b_.CreateStore(v, locals_[id]);
  }

  void stmt(const ir::Stmt& s) {
    switch (s.kind) {
      case Kind::Assign: {
        Value* b = varying_depth_ == 0 && nest_ == 0 ? base(*s.value) : nullptr;
        assign(s.index, expr(*s.value));
        if (b) bases_[s.index] = b;
        return;
      }
      case Kind::Store:
        return store(s);
      case Kind::If:
        return if_stmt(s);
      case Kind::While:
      case Kind::For:
        return loop(s);
      case Kind::Break:
      case Kind::Continue:
        return exit_stmt(s.kind == Kind::Break);
      case Kind::Print:
        return print(s);
      default:
        throw Error(
            fmt::format("internal error: kernel '{}' reached the widened CPU generator "
                        "with a statement it does not handle",
                        k_.name));
    }
  }

  void exit_stmt(bool is_break) {
    Loop& l = loops_.back();
    if (!l.varying) {
      b_.CreateBr(is_break ? l.exit : l.next);
      return;
    }
    Value* m = mask();
    if (is_break)
      b_.CreateStore(b_.CreateAnd(b_.CreateLoad(mask_type(), l.live), b_.CreateNot(m)), l.live);
    if (l.varying_ifs == 0) {
      // Every lane running here leaves: the latch takes the others (those that continued).
      b_.CreateBr(l.next);
      return;
    }
    if (!is_break)
      b_.CreateStore(b_.CreateOr(b_.CreateLoad(mask_type(), l.continued), m), l.continued);
    set_mask(all_off());
  }

  void if_stmt(const ir::Stmt& s) {
    ++nest_;
    if (!a_.varying(*s.cond)) {
      Value* c = expr(*s.cond);
      BasicBlock* t = BasicBlock::Create(ctx_, "if.then", fn_);
      BasicBlock* f = BasicBlock::Create(ctx_, "if.else", fn_);
      BasicBlock* join = BasicBlock::Create(ctx_, "if.end", fn_);
      b_.CreateCondBr(c, t, f);
      b_.SetInsertPoint(t);
      block(s.body);
      b_.CreateBr(join);
      b_.SetInsertPoint(f);
      block(s.orelse);
      b_.CreateBr(join);
      b_.SetInsertPoint(join);
      --nest_;
      return;
    }
    // Both arms under the lanes' masks; an arm no lane takes is skipped.
    Value* c = expr(*s.cond);
    Value* m = mask();
    ++varying_depth_;
    if (!loops_.empty()) ++loops_.back().varying_ifs;
    auto arm = [&](const ir::Block& body, Value* arm_mask, const char* name) {
      if (body.empty()) return;
      BasicBlock* run = BasicBlock::Create(ctx_, fmt::format("vif.{}", name), fn_);
      BasicBlock* after = BasicBlock::Create(ctx_, fmt::format("vif.{}.end", name), fn_);
      set_mask(arm_mask);
      b_.CreateCondBr(any(arm_mask), run, after);
      b_.SetInsertPoint(run);
      block(body);
      b_.CreateBr(after);
      b_.SetInsertPoint(after);
    };
    arm(s.body, b_.CreateAnd(m, c), "then");
    arm(s.orelse, b_.CreateAnd(m, b_.CreateNot(c)), "else");
    --varying_depth_;
    --nest_;
    if (loops_.empty() || !(exits_loop(s.body) || exits_loop(s.orelse))) {
      set_mask(m);
      if (!loops_.empty()) --loops_.back().varying_ifs;
      return;
    }
    Loop& l = loops_.back();
    --l.varying_ifs;
    if (!l.varying) {
      set_mask(m);
      return;
    }
    // Lanes that left the loop or its iteration stay off until the latch.
    Value* after = b_.CreateAnd(m, b_.CreateLoad(mask_type(), l.live));
    after = b_.CreateAnd(after, b_.CreateNot(b_.CreateLoad(mask_type(), l.continued)));
    set_mask(after);
    BasicBlock* rest = BasicBlock::Create(ctx_, "vif.rest", fn_);
    b_.CreateCondBr(any(after), rest, l.next);
    b_.SetInsertPoint(rest);
  }

  // range(start, stop, step) trip counts as the scalar generator computes them (unsigned 64-bit,
  // a zero step runs nothing), lane by lane when the bounds are varying.
  Value* trip_count(Value* start, Value* stop, Value* step, DType t) {
    bool sgn = is_signed(t);
    llvm::Type* i64 = shaped(b_.getInt64Ty(), start);
    auto wide = [&](Value* v) { return b_.CreateIntCast(v, i64, sgn); };
    Value* start64 = wide(start);
    Value* stop64 = wide(stop);
    Value* step64 = wide(step);
    Value* zero = llvm::ConstantInt::get(i64, 0);
    Value* one = llvm::ConstantInt::get(i64, 1);
    Value* up = sgn ? b_.CreateICmpSGT(step64, zero) : b_.CreateICmpNE(step64, zero);
    Value* nonempty = b_.CreateSelect(
        up, sgn ? b_.CreateICmpSLT(start64, stop64) : b_.CreateICmpULT(start64, stop64),
        b_.CreateAnd(b_.CreateICmpSLT(step64, zero), b_.CreateICmpSGT(start64, stop64)));
    Value* dist = b_.CreateSelect(up, b_.CreateSub(stop64, start64), b_.CreateSub(start64, stop64));
    Value* mag = b_.CreateSelect(up, step64, b_.CreateNeg(step64));
    Value* safe_mag = b_.CreateSelect(b_.CreateICmpEQ(mag, zero), one, mag);
    return b_.CreateSelect(
        nonempty, b_.CreateAdd(b_.CreateUDiv(b_.CreateSub(dist, one), safe_mag), one), zero);
  }

  void loop(const ir::Stmt& s) {
    bool is_for = s.kind == Kind::For;
    // A local the loop assigns is not a contiguous base inside it (an earlier pass may have
    // changed it) nor after it.
    std::set<int> assigned;
    assigned_locals(s.body, assigned);
    if (is_for) assigned.insert(s.index);
    for (int id : assigned) bases_.erase(id);

    Value *start = nullptr, *step = nullptr, *trips = nullptr;
    if (is_for) {
      start = expr(*s.start);
      Value* stop = expr(*s.stop);
      step = expr(*s.step);
      if (start->getType()->isVectorTy() || stop->getType()->isVectorTy() ||
          step->getType()->isVectorTy()) {
        start = splat(start);
        stop = splat(stop);
        step = splat(step);
      }
      trips = trip_count(start, stop, step, s.start->type.dtype);
    }
    bool varying = a_.varying_loop(s);
    Value* m0 = varying ? mask() : nullptr;
    llvm::AllocaInst* k = is_for ? entry_alloca(b_.getInt64Ty(), "for.k") : nullptr;
    if (k) b_.CreateStore(b_.getInt64(0), k);
    Loop l;
    l.varying = varying;
    if (varying) {
      l.live = entry_alloca(mask_type(), "live");
      l.continued = entry_alloca(mask_type(), "continued");
      b_.CreateStore(m0, l.live);
    }
    BasicBlock* head = BasicBlock::Create(ctx_, "loop.head", fn_);
    BasicBlock* body = BasicBlock::Create(ctx_, "loop.body", fn_);
    BasicBlock* latch = is_for ? BasicBlock::Create(ctx_, "loop.next", fn_) : head;
    BasicBlock* exit = BasicBlock::Create(ctx_, "loop.end", fn_);
    l.next = latch;
    l.exit = exit;
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    Value* kv = k ? b_.CreateLoad(b_.getInt64Ty(), k) : nullptr;
    if (!varying) {
      Value* c = is_for ? b_.CreateICmpULT(kv, trips) : expr(*s.cond);
      b_.CreateCondBr(c, body, exit);
    } else {
      b_.CreateStore(all_off(), l.continued);
      Value* live = b_.CreateLoad(mask_type(), l.live);
      set_mask(live);
      Value* c = nullptr;
      if (is_for) {
        c = trips->getType()->isVectorTy() ? b_.CreateICmpULT(splat(kv), trips)
                                           : b_.CreateICmpULT(kv, trips);
      } else {
        c = expr(*s.cond);
      }
      live = b_.CreateAnd(live, splat(c));
      b_.CreateStore(live, l.live);
      set_mask(live);
      b_.CreateCondBr(any(live), body, exit);
    }
    b_.SetInsertPoint(body);
    ++nest_;
    if (varying) ++varying_depth_;
    if (is_for) {
      Value* var = b_.CreateAdd(
          start, b_.CreateMul(b_.CreateTrunc(splat_like(kv, start), start->getType()), step));
      assign(s.index, var);
    }
    loops_.push_back(l);
    block(s.body);
    loops_.pop_back();
    if (varying) --varying_depth_;
    --nest_;
    b_.CreateBr(latch);
    if (is_for) {
      b_.SetInsertPoint(latch);
      b_.CreateStore(b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), k), b_.getInt64(1)), k);
      b_.CreateBr(head);
    }
    b_.SetInsertPoint(exit);
    if (varying) set_mask(m0);
    for (int id : assigned) bases_.erase(id);
  }

  const ir::Kernel& k_;
  const LaneAnalysis& a_;
  int w_;
  llvm::Module& m_;
  llvm::LLVMContext& ctx_;
  const LlvmOptions& options_;
  llvm::IRBuilder<> b_;
  ArgLayout layout_;
  ValueOps ops_;
  llvm::Function* fn_ = nullptr;
  std::vector<Value*> arrays_;
  std::vector<std::vector<Value*>> extents_;
  std::vector<Value*> scalars_;
  std::vector<llvm::AllocaInst*> locals_;
  std::vector<std::array<Value*, 3>> loop_values_;
  llvm::AllocaInst* mask_ = nullptr;  // the lanes running the current statement
  bool all_lanes_ = false;            // ...known, as the code is generated, to be all of them
  bool streamable_ = false;  // a whole-gang store that the streaming build streams (abi.hpp)
  std::vector<Loop> loops_;
  std::map<int, Value*> bases_;  // locals known to hold base + lane (see base())
  int varying_depth_ = 0;        // enclosing varying ifs and loops
  int nest_ = 0;                 // enclosing ifs and loops
  bool maybe_empty_ = false;     // in an arm of a varying conditional
};

}  // namespace

int gang_width(const ir::Kernel& k, int vector_bits) {
  int widest = 32;
  auto consider = [&](const ir::Type& t) {
    if (t.is_array() || is_float(t.dtype)) widest = std::max(widest, dtype_bits(t.dtype));
  };
  for (const ir::Param& p : k.params) consider(p.type);
  for (const ir::Local& l : k.locals) consider(l.type);
  return std::max(4, vector_bits / widest);
}

void build_gang_chunk(const ir::Kernel& k, const LaneAnalysis& lanes, int width, llvm::Module& m,
                      const LlvmOptions& options) {
  GangGenerator(k, lanes, width, m, options).run();
}

}  // namespace tack::codegen
