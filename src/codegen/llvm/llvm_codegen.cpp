#include "codegen/llvm/llvm_codegen.hpp"

#include <fmt/format.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "codegen/llvm/abi.hpp"
#include "codegen/llvm/gang_codegen.hpp"
#include "codegen/llvm/value_ops.hpp"
#include "ir/builder.hpp"
#include "tack/error.hpp"

namespace tack::codegen {
namespace {

using ir::Op;
using llvm::BasicBlock;
using llvm::Value;

class Generator {
 public:
  Generator(const ir::Kernel& k, llvm::LLVMContext& ctx, const LlvmOptions& options)
      : k_(k),
        ctx_(ctx),
        options_(options),
        b_(ctx),
        layout_(k),
        module_(std::make_unique<llvm::Module>(k.name, ctx)),
        ops_(b_, *module_) {}

  // The module, with the scalar chunk function unless `widen` (a LaneAnalysis that found nothing
  // unsupported) and its gang width say to build the widened one.
  std::unique_ptr<llvm::Module> run(const LaneAnalysis* widen, int width) {
    make_alias_scopes();
    if (widen)
      build_gang_chunk(k_, *widen, width, *module_, options_);
    else
      build_chunk();
    if (k_.result) build_result();
    // Loops stay loops: LLVM would turn a loop that zeroes or copies memory into a call of the C
    // library's memset or memcpy, which makes the kernel's shared object depend on libc, with a
    // writable segment for the function's address that the loader binds and protects at each
    // load (shared_object_linker.hpp): 0.07 ms of Mandelbrot's warm first call in Python, for
    // code that runs as fast vectorized.
    for (llvm::Function& f : *module_)
      if (!f.isDeclaration())
        for (const char* name : {"no-builtin-memset", "no-builtin-memcpy", "no-builtin-memmove"})
          f.addFnAttr(name);
    std::string err;
    llvm::raw_string_ostream os(err);
    if (llvm::verifyModule(*module_, &os))
      throw Error(fmt::format("internal error: invalid LLVM IR for kernel '{}': {}", k_.name, err));
    return std::move(module_);
  }

 private:
  // ---- types ----
  llvm::Type* type(DType t) { return llvm_type(ctx_, t); }
  llvm::Type* mem_type(DType t) { return llvm_mem_type(ctx_, t); }
  llvm::Type* type(const ir::Type& t) { return type(t.dtype); }

  // ---- function skeleton ----
  llvm::Function* begin_function(const std::string& name, std::vector<llvm::Type*> params) {
    auto* fty = llvm::FunctionType::get(b_.getVoidTy(), params, false);
    auto* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, *module_);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    f->addFnAttr(llvm::Attribute::NoRecurse);
    fn_ = f;
    BasicBlock* entry = BasicBlock::Create(ctx_, "entry", f);
    b_.SetInsertPoint(entry);
    return f;
  }

  void load_arguments(Value* slots) {
    auto slot = [&](int i) { return b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), slots, i); };
    arrays_.assign(k_.params.size(), nullptr);
    extents_.assign(k_.params.size(), {});
    scalars_.assign(k_.params.size(), nullptr);
    for (size_t p = 0; p < k_.params.size(); ++p) {
      const ir::Param& param = k_.params[p];
      int s = layout_.param_slot[p];
      if (param.is_local_array()) {
        // Per-thread scratch on the stack; zeroed where it is declared (sema emits the loop).
        auto* ty = llvm::ArrayType::get(mem_type(param.type.dtype), param.local_size);
        arrays_[p] = b_.CreateAlloca(ty, nullptr, param.name);
        extents_[p].push_back(b_.getInt64(param.local_size));
      } else if (param.type.is_array()) {
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
    debug_record_ = b_.CreateLoad(b_.getPtrTy(), slot(layout_.debug_slot), "debug.record");
    loop_values_.clear();
    for (size_t d = 0; d < k_.dims.size(); ++d) {
      int s = layout_.loop_slot + 3 * static_cast<int>(d);
      const ir::LoopDim& dim = k_.dims[d];
      // Constant starts and steps (the common range(n)) are compiled in so that the vectorizer
      // sees unit-stride accesses; counts always come from the launch.
      auto bound = [&](const ir::Expr& e, int i) -> Value* {
        if (ir::is_const(e)) return b_.getInt64(e.int_bits);
        return b_.CreateLoad(b_.getInt64Ty(), slot(i));
      };
      Value* start = bound(*dim.start, s);
      Value* step = bound(*dim.step, s + 1);
      Value* count = b_.CreateLoad(b_.getInt64Ty(), slot(s + 2));
      loop_values_.push_back({start, step, count});
    }
    // Locals live in stack slots, zeroed so that a path that skips an assignment reads 0; SROA
    // turns them into registers.
    locals_.clear();
    for (const ir::Local& l : k_.locals) {
      auto* a = b_.CreateAlloca(type(l.type), nullptr, l.name);
      locals_.push_back(a);
    }
    for (size_t i = 0; i < k_.locals.size(); ++i)
      b_.CreateStore(llvm::Constant::getNullValue(type(k_.locals[i].type)), locals_[i]);
  }

  void build_chunk() {
    begin_function(chunk_symbol(options_.symbol_prefix),
                   {b_.getPtrTy(), b_.getInt64Ty(), b_.getInt64Ty()});
    auto args = fn_->arg_begin();
    Value* slots = &*args++;
    Value* begin = &*args++;
    Value* end = &*args;
    fn_->addParamAttr(0, llvm::Attribute::NoAlias);
    fn_->addParamAttr(0, llvm::Attribute::ReadOnly);
    load_arguments(slots);
    block(k_.prelude);
    if (k_.reductions.empty())
      emit_loop(0, begin, end);
    else
      emit_reduction_blocks(begin, end);
    b_.CreateRetVoid();
  }

  // ---- reductions (the order of ir::Reduction) ----
  // A counted loop idx in [from, to) whose body `emit` writes; returns after the loop.
  template <typename F>
  void counted_loop(Value* from, Value* to, const std::string& name, const F& emit) {
    BasicBlock* pre = b_.GetInsertBlock();
    BasicBlock* head = BasicBlock::Create(ctx_, fmt::format("{}.head", name), fn_);
    BasicBlock* body = BasicBlock::Create(ctx_, fmt::format("{}.body", name), fn_);
    BasicBlock* exit = BasicBlock::Create(ctx_, fmt::format("{}.exit", name), fn_);
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

  // Iteration g (row-major over the dimensions) on lane j: the lane's copies of the reduced
  // locals go into the locals the body updates, and back.
  // The indices of iteration g in each dimension, row-major.
  std::vector<Value*> split(Value* g) {
    std::vector<Value*> idx(k_.dims.size());
    Value* rem = g;
    for (size_t d = k_.dims.size(); d-- > 0;) {
      Value* count = std::get<2>(loop_values_[d]);
      idx[d] = d > 0 ? b_.CreateURem(rem, count) : rem;
      if (d > 0) rem = b_.CreateUDiv(rem, count);
    }
    return idx;
  }

  void set_loop_variables(const std::vector<Value*>& idx) {
    for (size_t d = 0; d < k_.dims.size(); ++d) {
      auto [start, step, count] = loop_values_[d];
      b_.CreateStore(b_.CreateAdd(start, b_.CreateMul(idx[d], step)), locals_[k_.dims[d].var]);
    }
  }

  // `row`: the indices of the row's first iteration when the row of 16 iterations lies in one
  // row of the loop's last dimension, so that iteration row + j only adds j to the last index.
  void emit_lane_iteration(Value* g, Value* j, const std::vector<llvm::AllocaInst*>& lanes,
                           const std::vector<Value*>* row = nullptr) {
    size_t n = k_.dims.size();
    if (n == 1) {
      set_loop_variables({g});
    } else if (!row) {
      set_loop_variables(split(g));
    } else {
      std::vector<Value*> idx = *row;
      idx[n - 1] = b_.CreateAdd(idx[n - 1], j);
      set_loop_variables(idx);
    }
    for (size_t r = 0; r < lanes.size(); ++r) {
      llvm::Type* t = type(k_.locals[k_.reductions[r].acc].type);
      Value* slot = b_.CreateInBoundsGEP(t, lanes[r], j);
      b_.CreateStore(b_.CreateLoad(t, slot), locals_[k_.reductions[r].acc]);
    }
    block(k_.body);
    for (size_t r = 0; r < lanes.size(); ++r) {
      llvm::Type* t = type(k_.locals[k_.reductions[r].acc].type);
      Value* slot = b_.CreateInBoundsGEP(t, lanes[r], j);
      b_.CreateStore(b_.CreateLoad(t, locals_[k_.reductions[r].acc]), slot);
    }
  }

  // A reduction kernel's chunk runs blocks [begin, end) of ir::kReductionBlock iterations: lane
  // j of a block takes iterations j, j + 16, ... of it. Whole rows of 16 iterations run through
  // an inner loop of constant trip count over the lanes, which LLVM vectorizes or unrolls into
  // independent chains; then the lanes' values are stored to the partials.
  void emit_reduction_blocks(Value* begin, Value* end) {
    Value* total = b_.getInt64(1);
    for (const auto& lv : loop_values_) total = b_.CreateMul(total, std::get<2>(lv));
    std::vector<llvm::AllocaInst*> lanes;
    {
      llvm::IRBuilderBase::InsertPointGuard guard(b_);
      b_.SetInsertPoint(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
      for (const ir::Reduction& r : k_.reductions)
        lanes.push_back(
            b_.CreateAlloca(llvm::ArrayType::get(type(k_.locals[r.acc].type), ir::kReductionLanes),
                            nullptr, k_.locals[r.acc].name));
    }
    Value* lanes_n = b_.getInt64(ir::kReductionLanes);
    counted_loop(begin, end, "block", [&](Value* b) {
      Value* first = b_.CreateMul(b, b_.getInt64(ir::kReductionBlock));
      Value* last = b_.CreateAdd(first, b_.getInt64(ir::kReductionBlock));
      last = b_.CreateSelect(b_.CreateICmpSLT(last, total), last, total);
      for (size_t r = 0; r < lanes.size(); ++r) {
        llvm::Type* t = type(k_.locals[k_.reductions[r].acc].type);
        Value* id = expr(*k_.reductions[r].identity);
        for (int j = 0; j < ir::kReductionLanes; ++j)
          b_.CreateStore(id, b_.CreateConstInBoundsGEP1_64(t, lanes[r], j));
      }
      // Whole rows, then the last, partial one.
      Value* rows = b_.CreateUDiv(b_.CreateSub(last, first), lanes_n);
      counted_loop(b_.getInt64(0), rows, "row", [&](Value* row) {
        Value* g0 = b_.CreateAdd(first, b_.CreateMul(row, lanes_n));
        size_t n = k_.dims.size();
        if (n == 1) {
          counted_loop(b_.getInt64(0), lanes_n, "lane",
                       [&](Value* j) { emit_lane_iteration(b_.CreateAdd(g0, j), j, lanes); });
          return;
        }
        // Several dimensions: the divisions once per row, and a lane loop as simple as the
        // one-dimensional one when the row does not cross into the next row of the loop.
        std::vector<Value*> row_idx = split(g0);
        Value* fits = b_.CreateICmpULE(b_.CreateAdd(row_idx[n - 1], lanes_n),
                                       std::get<2>(loop_values_[n - 1]));
        BasicBlock* within = BasicBlock::Create(ctx_, "row.within", fn_);
        BasicBlock* across = BasicBlock::Create(ctx_, "row.across", fn_);
        BasicBlock* done = BasicBlock::Create(ctx_, "row.done", fn_);
        b_.CreateCondBr(fits, within, across);
        b_.SetInsertPoint(within);
        counted_loop(b_.getInt64(0), lanes_n, "lane", [&](Value* j) {
          emit_lane_iteration(b_.CreateAdd(g0, j), j, lanes, &row_idx);
        });
        b_.CreateBr(done);
        b_.SetInsertPoint(across);
        counted_loop(b_.getInt64(0), lanes_n, "lane_across",
                     [&](Value* j) { emit_lane_iteration(b_.CreateAdd(g0, j), j, lanes); });
        b_.CreateBr(done);
        b_.SetInsertPoint(done);
      });
      Value* g0 = b_.CreateAdd(first, b_.CreateMul(rows, lanes_n));
      counted_loop(b_.getInt64(0), b_.CreateSub(last, g0), "tail",
                   [&](Value* j) { emit_lane_iteration(b_.CreateAdd(g0, j), j, lanes); });
      for (size_t r = 0; r < lanes.size(); ++r) {
        const ir::Reduction& red = k_.reductions[r];
        llvm::Type* t = type(k_.locals[red.acc].type);
        llvm::Type* mt = mem_type(k_.locals[red.acc].type.dtype);
        for (int j = 0; j < ir::kReductionLanes; ++j) {
          Value* v = b_.CreateLoad(t, b_.CreateConstInBoundsGEP1_64(t, lanes[r], j));
          if (t != mt) v = b_.CreateZExt(v, mt);
          Value* at = b_.CreateAdd(b_.CreateMul(b, lanes_n), b_.getInt64(j));
          b_.CreateStore(v, b_.CreateInBoundsGEP(mt, arrays_[red.partials], at));
        }
      }
    });
  }

  // A counted loop idx in [from, to): var = start + idx * step.
  void emit_loop(size_t d, Value* from, Value* to) {
    if (d == k_.dims.size()) {
      block(k_.body);
      return;
    }
    auto [start, step, count] = loop_values_[d];
    counted_loop(from ? from : b_.getInt64(0), to ? to : count, fmt::format("par{}", d),
                 [&](Value* idx) {
                   Value* var = b_.CreateAdd(start, b_.CreateMul(idx, step));
                   b_.CreateStore(var, locals_[k_.dims[d].var]);
                   emit_loop(d + 1, nullptr, nullptr);
                 });
  }

  void build_result() {
    begin_function(result_symbol(options_.symbol_prefix), {b_.getPtrTy(), b_.getPtrTy()});
    auto args = fn_->arg_begin();
    Value* slots = &*args++;
    Value* out = &*args;
    load_arguments(slots);
    block(k_.prelude);
    block(k_.epilogue);
    Value* v = expr(*k_.result);
    if (k_.result->type.is_bool()) v = b_.CreateZExt(v, b_.getInt8Ty());
    b_.CreateStore(v, out);
    b_.CreateRetVoid();
  }

  // ---- alias scopes ----
  void make_alias_scopes() {
    if (!options_.no_alias) return;
    llvm::MDBuilder md(ctx_);
    llvm::MDNode* domain = md.createAnonymousAliasScopeDomain("tack.args");
    scopes_.assign(k_.params.size(), nullptr);
    for (size_t p = 0; p < k_.params.size(); ++p)
      if (k_.params[p].type.is_array())
        scopes_[p] = md.createAnonymousAliasScope(domain, k_.params[p].name);
  }

  void annotate(llvm::Instruction* inst, int array) {
    if (scopes_.empty()) return;
    std::vector<llvm::Metadata*> others;
    for (size_t p = 0; p < scopes_.size(); ++p)
      if (scopes_[p] && static_cast<int>(p) != array) others.push_back(scopes_[p]);
    inst->setMetadata(llvm::LLVMContext::MD_alias_scope, llvm::MDNode::get(ctx_, {scopes_[array]}));
    if (!others.empty())
      inst->setMetadata(llvm::LLVMContext::MD_noalias, llvm::MDNode::get(ctx_, others));
  }

  // ---- memory ----
  Value* address(int array, const std::vector<Value*>& idx) {
    // Row-major: ((i0 * e1 + i1) * e2 + i2)...
    Value* flat = idx[0];
    for (size_t d = 1; d < idx.size(); ++d)
      flat = b_.CreateAdd(b_.CreateMul(flat, extents_[array][d], "", false, true), idx[d], "",
                          false, true);
    return b_.CreateInBoundsGEP(mem_type(k_.params[array].type.dtype), arrays_[array], flat);
  }

  // Debug mode: the access happens only when every index is within its extent; otherwise the
  // first violation is recorded for the runtime to report after the launch.
  Value* in_bounds(int array, const std::vector<Value*>& idx) {
    Value* ok = b_.getTrue();
    for (size_t d = 0; d < idx.size(); ++d)
      ok = b_.CreateAnd(ok, b_.CreateICmpULT(idx[d], extents_[array][d]));
    return ok;
  }

  void report(int array, const std::vector<Value*>& idx, SourceLoc loc, bool is_store) {
    auto* rec_ty = llvm::StructType::get(
        ctx_, {b_.getInt32Ty(), b_.getInt32Ty(), b_.getInt32Ty(), b_.getInt32Ty(), b_.getInt32Ty(),
               b_.getInt32Ty(), llvm::ArrayType::get(b_.getInt64Ty(), 8)});
    auto* cas = b_.CreateAtomicCmpXchg(b_.CreateStructGEP(rec_ty, debug_record_, 0), b_.getInt32(0),
                                       b_.getInt32(1), llvm::MaybeAlign(4),
                                       llvm::AtomicOrdering::SequentiallyConsistent,
                                       llvm::AtomicOrdering::SequentiallyConsistent);
    BasicBlock* won = BasicBlock::Create(ctx_, "oob.first", fn_);
    BasicBlock* done = BasicBlock::Create(ctx_, "oob.done", fn_);
    b_.CreateCondBr(b_.CreateExtractValue(cas, 1), won, done);
    b_.SetInsertPoint(won);
    auto field = [&](int i, int v) {
      b_.CreateStore(b_.getInt32(v), b_.CreateStructGEP(rec_ty, debug_record_, i));
    };
    field(1, array);
    field(2, loc.line);
    field(3, loc.col);
    field(4, static_cast<int>(idx.size()));
    field(5, is_store);
    for (size_t d = 0; d < idx.size() && d < 8; ++d)
      b_.CreateStore(idx[d], b_.CreateGEP(rec_ty, debug_record_,
                                          {b_.getInt32(0), b_.getInt32(6), b_.getInt32(d)}));
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  }

  // Performs `access` (which returns the value read, or null) when `checked` is off, or only when
  // every index is within its extent; otherwise records the violation and reads zero.
  template <typename F>
  Value* guarded(bool checked, int array, const std::vector<Value*>& idx, SourceLoc loc,
                 bool is_store, F access) {
    if (!checked) return access();
    BasicBlock* ok = BasicBlock::Create(ctx_, "access.ok", fn_);
    BasicBlock* bad = BasicBlock::Create(ctx_, "access.oob", fn_);
    BasicBlock* join = BasicBlock::Create(ctx_, "access.join", fn_);
    b_.CreateCondBr(in_bounds(array, idx), ok, bad);
    b_.SetInsertPoint(ok);
    Value* v = access();
    BasicBlock* ok_end = b_.GetInsertBlock();
    b_.CreateBr(join);
    b_.SetInsertPoint(bad);
    report(array, idx, loc, is_store);
    BasicBlock* bad_end = b_.GetInsertBlock();
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    if (!v) return nullptr;
    auto* phi = b_.CreatePHI(v->getType(), 2);
    phi->addIncoming(v, ok_end);
    phi->addIncoming(llvm::Constant::getNullValue(v->getType()), bad_end);
    return phi;
  }

  Value* load(const ir::Expr& e) {
    std::vector<Value*> idx;
    for (const auto& i : e.operands) idx.push_back(expr(*i));
    DType dt = k_.params[e.index].type.dtype;
    auto do_load = [&]() -> Value* {
      auto* v = b_.CreateLoad(mem_type(dt), address(e.index, idx));
      annotate(v, e.index);
      return dt == DType::Bool ? b_.CreateICmpNE(v, b_.getInt8(0)) : static_cast<Value*>(v);
    };
    return guarded(e.checked, e.index, idx, e.loc, false, do_load);
  }

  // Relaxed read-modify-write at device scope; returns the old value.
  Value* atomic(const ir::Expr& e) {
    const ir::Param& p = k_.params[e.index];
    std::vector<Value*> idx, vals;
    for (size_t i = 0; i < e.operands.size(); ++i)
      (i < p.type.rank ? idx : vals).push_back(expr(*e.operands[i]));
    auto do_atomic = [&]() -> Value* {
      llvm::Instruction* inst = nullptr;
      Value* old = ops_.atomic(e.atomic, p.type.dtype, address(e.index, idx), vals, &inst);
      annotate(inst, e.index);
      return old;
    };
    return guarded(e.checked, e.index, idx, e.loc, true, do_atomic);
  }

  void store(const ir::Stmt& s) {
    std::vector<Value*> idx;
    for (const auto& i : s.indices) idx.push_back(expr(*i));
    Value* v = expr(*s.value);
    DType dt = k_.params[s.index].type.dtype;
    if (dt == DType::Bool) v = b_.CreateZExt(v, b_.getInt8Ty());
    guarded(s.checked, s.index, idx, s.loc, true, [&]() -> Value* {
      annotate(b_.CreateStore(v, address(s.index, idx)), s.index);
      return nullptr;
    });
  }

  // ---- expressions ----
  // Evaluates `then` or `otherwise` (only one), joining the results.
  template <typename A, typename B>
  Value* branch_value(Value* cond, A then, B otherwise, const char* name) {
    BasicBlock* t = BasicBlock::Create(ctx_, fmt::format("{}.then", name), fn_);
    BasicBlock* f = BasicBlock::Create(ctx_, fmt::format("{}.else", name), fn_);
    BasicBlock* join = BasicBlock::Create(ctx_, fmt::format("{}.join", name), fn_);
    b_.CreateCondBr(cond, t, f);
    b_.SetInsertPoint(t);
    Value* tv = then();
    BasicBlock* t_end = b_.GetInsertBlock();
    b_.CreateBr(join);
    b_.SetInsertPoint(f);
    Value* fv = otherwise();
    BasicBlock* f_end = b_.GetInsertBlock();
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    auto* phi = b_.CreatePHI(tv->getType(), 2);
    phi->addIncoming(tv, t_end);
    phi->addIncoming(fv, f_end);
    return phi;
  }

  Value* expr(const ir::Expr& e) {
    DType t = e.type.dtype;
    switch (e.op) {
      case Op::Const:
        if (e.type.is_float()) return llvm::ConstantFP::get(type(t), e.float_value);
        return llvm::ConstantInt::get(type(t), e.int_bits);
      case Op::Local:
        return b_.CreateLoad(type(e.type), locals_[e.index]);
      case Op::Param:
        return scalars_[e.index];
      case Op::ArrayDim:
        return extents_[e.index][e.dim];
      case Op::Load:
        return load(e);
      case Op::Atomic:
        return atomic(e);
      case Op::Select: {
        Value* c = expr(*e.operands[0]);
        return branch_value(
            c, [&] { return expr(*e.operands[1]); }, [&] { return expr(*e.operands[2]); }, "sel");
      }
      case Op::LogicalAnd: {
        Value* l = expr(*e.operands[0]);
        return branch_value(
            l, [&] { return expr(*e.operands[1]); }, [&] { return b_.getFalse(); }, "and");
      }
      case Op::LogicalOr: {
        Value* l = expr(*e.operands[0]);
        return branch_value(
            l, [&] { return b_.getTrue(); }, [&] { return expr(*e.operands[1]); }, "or");
      }
      case Op::ThreadId:
      case Op::GroupId:
      case Op::GroupSize:
      case Op::Collective:
      case Op::TextureSample:
        // Semantic analysis rejects workgroup primitives for the CPU, and samples textures in
        // software there, before this point.
        throw Error(fmt::format("internal error: kernel '{}' reached the CPU generator with {}",
                                k_.name, ir::op_name(e.op)));
      default:
        break;
    }
    std::vector<Value*> operands;
    for (const auto& o : e.operands) operands.push_back(expr(*o));
    if (Value* v = ops_.apply(e, operands)) return v;
    throw Error(
        fmt::format("internal error: no CPU code for IR operation '{}'", ir::op_name(e.op)));
  }

  void print(const ir::Stmt& s) {
    std::vector<Value*> values;
    for (const auto& e : s.indices) values.push_back(expr(*e));
    ops_.print(s, values);
  }

  // ---- statements ----
  void block(const ir::Block& b) {
    for (const auto& s : b) {
      stmt(*s);
      if (b_.GetInsertBlock()->getTerminator()) {
        // Code after break/continue is unreachable; give it a block of its own.
        b_.SetInsertPoint(BasicBlock::Create(ctx_, "dead", fn_));
      }
    }
  }

  void stmt(const ir::Stmt& s) {
    switch (s.kind) {
      case ir::Stmt::Kind::Assign:
        b_.CreateStore(expr(*s.value), locals_[s.index]);
        return;
      case ir::Stmt::Kind::Store:
        store(s);
        return;
      case ir::Stmt::Kind::If: {
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
        return;
      }
      case ir::Stmt::Kind::While: {
        BasicBlock* head = BasicBlock::Create(ctx_, "while.head", fn_);
        BasicBlock* body = BasicBlock::Create(ctx_, "while.body", fn_);
        BasicBlock* exit = BasicBlock::Create(ctx_, "while.end", fn_);
        b_.CreateBr(head);
        b_.SetInsertPoint(head);
        b_.CreateCondBr(expr(*s.cond), body, exit);
        b_.SetInsertPoint(body);
        loops_.push_back({head, exit});
        block(s.body);
        loops_.pop_back();
        b_.CreateBr(head);
        b_.SetInsertPoint(exit);
        return;
      }
      case ir::Stmt::Kind::For:
        return for_loop(s);
      case ir::Stmt::Kind::Break:
        b_.CreateBr(loops_.back().second);
        return;
      case ir::Stmt::Kind::Continue:
        b_.CreateBr(loops_.back().first);
        return;
      case ir::Stmt::Kind::Print:
        return print(s);
      case ir::Stmt::Kind::Barrier:
        throw Error(
            fmt::format("internal error: kernel '{}' reached the CPU generator with a "
                        "barrier",
                        k_.name));
    }
  }

  // range(start, stop, step): the trip count is computed once with unsigned 64-bit arithmetic,
  // so no bound near the type's limits can overflow, and a zero step runs nothing.
  void for_loop(const ir::Stmt& s) {
    DType t = s.start->type.dtype;
    bool sgn = is_signed(t);
    Value* start = expr(*s.start);
    Value* stop = expr(*s.stop);
    Value* step = expr(*s.step);
    auto wide = [&](Value* v) { return b_.CreateIntCast(v, b_.getInt64Ty(), sgn); };
    Value* start64 = wide(start);
    Value* stop64 = wide(stop);
    Value* step64 = wide(step);
    Value* zero = b_.getInt64(0);
    Value* up = sgn ? b_.CreateICmpSGT(step64, zero) : b_.CreateICmpNE(step64, zero);
    Value* nonempty = b_.CreateSelect(
        up, sgn ? b_.CreateICmpSLT(start64, stop64) : b_.CreateICmpULT(start64, stop64),
        b_.CreateAnd(b_.CreateICmpSLT(step64, zero), b_.CreateICmpSGT(start64, stop64)));
    Value* dist = b_.CreateSelect(up, b_.CreateSub(stop64, start64), b_.CreateSub(start64, stop64));
    Value* mag = b_.CreateSelect(up, step64, b_.CreateNeg(step64));
    Value* safe_mag = b_.CreateSelect(b_.CreateICmpEQ(mag, zero), b_.getInt64(1), mag);
    Value* trips = b_.CreateSelect(
        nonempty,
        b_.CreateAdd(b_.CreateUDiv(b_.CreateSub(dist, b_.getInt64(1)), safe_mag), b_.getInt64(1)),
        zero);
    BasicBlock* pre = b_.GetInsertBlock();
    BasicBlock* head = BasicBlock::Create(ctx_, "for.head", fn_);
    BasicBlock* body = BasicBlock::Create(ctx_, "for.body", fn_);
    BasicBlock* latch = BasicBlock::Create(ctx_, "for.next", fn_);
    BasicBlock* exit = BasicBlock::Create(ctx_, "for.end", fn_);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    auto* k = b_.CreatePHI(b_.getInt64Ty(), 2, "for.k");
    k->addIncoming(zero, pre);
    b_.CreateCondBr(b_.CreateICmpULT(k, trips), body, exit);
    b_.SetInsertPoint(body);
    Value* var = b_.CreateAdd(start, b_.CreateMul(b_.CreateTrunc(k, start->getType()), step));
    b_.CreateStore(var, locals_[s.index]);
    loops_.push_back({latch, exit});
    block(s.body);
    loops_.pop_back();
    b_.CreateBr(latch);
    b_.SetInsertPoint(latch);
    Value* next = b_.CreateAdd(k, b_.getInt64(1));
    k->addIncoming(next, latch);
    b_.CreateBr(head);
    b_.SetInsertPoint(exit);
  }

  const ir::Kernel& k_;
  llvm::LLVMContext& ctx_;
  LlvmOptions options_;
  llvm::IRBuilder<> b_;
  ArgLayout layout_;
  std::unique_ptr<llvm::Module> module_;
  ValueOps ops_;
  llvm::Function* fn_ = nullptr;
  std::vector<Value*> arrays_;
  std::vector<std::vector<Value*>> extents_;
  std::vector<Value*> scalars_;
  std::vector<llvm::AllocaInst*> locals_;
  std::vector<std::array<Value*, 3>> loop_values_;
  Value* debug_record_ = nullptr;
  std::vector<llvm::MDNode*> scopes_;
  std::vector<std::pair<BasicBlock*, BasicBlock*>> loops_;  // continue, break targets
};

}  // namespace

std::unique_ptr<llvm::Module> generate_llvm(const ir::Kernel& k, llvm::LLVMContext& ctx,
                                            const LlvmOptions& options, std::string* path) {
  std::string why;
  if (options.vector_bits <= 0) {
    why = "SIMD lanes are off (TACK_CPU_SIMD=0)";
  } else {
    LaneAnalysis lanes = analyze_lanes(k);
    if (lanes.unsupported.empty()) {
      int width = gang_width(k, options.vector_bits);
      if (path) *path = fmt::format("widened: gangs of {} lanes", width);
      return Generator(k, ctx, options).run(&lanes, width);
    }
    why = lanes.unsupported;
  }
  if (path) *path = "scalar: " + why;
  return Generator(k, ctx, options).run(nullptr, 0);
}

}  // namespace tack::codegen
