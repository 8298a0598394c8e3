#include "ir/serialize.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <span>

#include "ir/verifier.hpp"

namespace tack::ir {

namespace {

// Little-endian on every host: a record is read where it was written, but the format is one.
template <typename T>
T little_endian(T v) {
  if constexpr (std::endian::native == std::endian::big) {
    if constexpr (sizeof(T) == 4) return __builtin_bswap32(v);
    if constexpr (sizeof(T) == 8) return __builtin_bswap64(v);
  }
  return v;
}

}  // namespace

template <typename T>
void ByteWriter::word(T v) {
  v = little_endian(v);
  out_.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void ByteWriter::u32(uint32_t v) {
  word(v);
}

void ByteWriter::u64(uint64_t v) {
  word(v);
}

void ByteWriter::str(std::string_view s) {
  u32(static_cast<uint32_t>(s.size()));
  out_ += s;
}

bool ByteReader::take(size_t n) {
  if (failed_ || in_.size() - pos_ < n) {
    failed_ = true;
    return false;
  }
  return true;
}

uint8_t ByteReader::u8() {
  if (!take(1)) return 0;
  return static_cast<uint8_t>(in_[pos_++]);
}

// A record is read at every new process's first call of its kernel: whole words, not bytes.
template <typename T>
T ByteReader::word() {
  if (!take(sizeof(T))) return 0;
  T v;
  std::memcpy(&v, in_.data() + pos_, sizeof v);
  pos_ += sizeof v;
  return little_endian(v);
}

uint32_t ByteReader::u32() {
  return word<uint32_t>();
}

uint64_t ByteReader::u64() {
  return word<uint64_t>();
}

std::string_view ByteReader::str() {
  const uint32_t n = u32();
  if (!take(n)) return {};
  std::string_view s = in_.substr(pos_, n);
  pos_ += n;
  return s;
}

uint32_t ByteReader::count() {
  const uint32_t n = u32();
  if (!failed_ && n > in_.size() - pos_) failed_ = true;
  return failed_ ? 0 : n;
}

namespace {

// Each enumeration's last value, for the range check on reading.
constexpr uint8_t kLastOp = static_cast<uint8_t>(Op::TextureSample);
constexpr uint8_t kLastBuiltin = static_cast<uint8_t>(Builtin::IsInf);
constexpr uint8_t kLastAtomic = static_cast<uint8_t>(AtomicOp::Cas);
constexpr uint8_t kLastCollective = static_cast<uint8_t>(Collective::Scan);
constexpr uint8_t kLastStmt = static_cast<uint8_t>(Stmt::Kind::Barrier);
constexpr uint8_t kLastTypeKind = static_cast<uint8_t>(Type::Kind::Array);
constexpr uint8_t kLastDType = static_cast<uint8_t>(DType::F64);
// As deep as ir::verify allows: reading recurses once per level.
constexpr int kMaxDepth = 8000;

class Writer {
 public:
  explicit Writer(ByteWriter& w) : w_(w) {}

  void type(const Type& t) {
    w_.u8(static_cast<uint8_t>(t.kind));
    w_.u8(static_cast<uint8_t>(t.dtype));
    w_.u8(t.lanes);
    w_.u8(t.rows);
    w_.u8(t.rank);
  }
  void loc(SourceLoc l) {
    w_.u32(static_cast<uint32_t>(l.line));
    w_.u32(static_cast<uint32_t>(l.col));
  }
  void integer(int v) { w_.u32(static_cast<uint32_t>(v)); }

  void expr(const Expr* e) {
    w_.u8(e != nullptr);
    if (!e) return;
    w_.u8(static_cast<uint8_t>(e->op));
    type(e->type);
    loc(e->loc);
    integer(e->index);
    integer(e->dim);
    w_.u8(static_cast<uint8_t>(e->callee));
    w_.u8(static_cast<uint8_t>(e->atomic));
    w_.u8(static_cast<uint8_t>(e->collective));
    w_.u64(e->int_bits);
    w_.u64(std::bit_cast<uint64_t>(e->float_value));
    w_.u8(e->checked);
    exprs(e->operands);
  }
  void exprs(const std::vector<ExprPtr>& v) {
    w_.u32(static_cast<uint32_t>(v.size()));
    for (const ExprPtr& e : v) expr(e.get());
  }

  void block(const Block& b) {
    w_.u32(static_cast<uint32_t>(b.size()));
    for (const StmtPtr& s : b) stmt(*s);
  }
  void stmt(const Stmt& s) {
    w_.u8(static_cast<uint8_t>(s.kind));
    loc(s.loc);
    integer(s.index);
    w_.u8(s.checked);
    expr(s.value.get());
    exprs(s.indices);
    w_.u32(static_cast<uint32_t>(s.labels.size()));
    for (const std::string& l : s.labels) w_.str(l);
    for (const Expr* e : {s.cond.get(), s.start.get(), s.stop.get(), s.step.get()}) expr(e);
    block(s.body);
    block(s.orelse);
  }

  void linear(const Linear& l) {
    expr(l.offset.get());
    w_.u32(static_cast<uint32_t>(l.terms.size()));
    for (const Linear::Term& t : l.terms) {
      integer(t.var);
      expr(t.coef.get());
    }
  }
  void ints(const std::vector<int>& v) {
    w_.u32(static_cast<uint32_t>(v.size()));
    for (int i : v) integer(i);
  }
  void proof(const IndexProof& p) {
    w_.u32(static_cast<uint32_t>(p.vars.size()));
    for (const RangedVar& v : p.vars) {
      integer(v.local);
      integer(v.parallel_dim);
      for (const Expr* e : {v.start.get(), v.stop.get(), v.step.get()}) expr(e);
      w_.u8(static_cast<uint8_t>(v.type));
    }
    w_.u32(static_cast<uint32_t>(p.accesses.size()));
    for (const ProvenAccess& a : p.accesses) {
      integer(a.array);
      loc(a.loc);
      w_.u8(a.is_store);
      ints(a.dims);
      w_.u32(static_cast<uint32_t>(a.indices.size()));
      for (const AffineIndex& index : a.indices) {
        linear(index.value);
        w_.u32(static_cast<uint32_t>(index.fits.size()));
        for (const AffineIndex::Fit& f : index.fits) {
          linear(f.value);
          w_.u8(static_cast<uint8_t>(f.type));
        }
      }
      ints(a.guards);
    }
  }

  void kernel(const Kernel& k) {
    w_.str(k.name);
    w_.str(k.file);
    w_.u32(static_cast<uint32_t>(k.params.size()));
    for (const Param& p : k.params) {
      w_.str(p.name);
      type(p.type);
      w_.u8(p.written);
      w_.u64(static_cast<uint64_t>(p.local_size));
      w_.u8(p.shared);
      w_.u8(p.texture);
      w_.u8(p.partials);
    }
    w_.u32(static_cast<uint32_t>(k.locals.size()));
    for (const Local& l : k.locals) {
      w_.str(l.name);
      type(l.type);
    }
    block(k.prelude);
    w_.u32(static_cast<uint32_t>(k.dims.size()));
    for (const LoopDim& d : k.dims) {
      integer(d.var);
      for (const Expr* e : {d.start.get(), d.stop.get(), d.step.get()}) expr(e);
    }
    loc(k.loop_loc);
    block(k.body);
    w_.u8(k.collectives);
    w_.u32(static_cast<uint32_t>(k.reductions.size()));
    for (const Reduction& r : k.reductions) {
      integer(r.acc);
      integer(r.init);
      integer(r.partials);
      w_.u8(static_cast<uint8_t>(r.op));
      expr(r.identity.get());
    }
    block(k.epilogue);
    expr(k.result.get());
    w_.u8(k.debug);
    integer(k.workgroup_size);
  }

 private:
  ByteWriter& w_;
};

class Reader {
 public:
  explicit Reader(ByteReader& r) : r_(r) {}

  uint8_t enumerator(uint8_t last) {
    const uint8_t v = r_.u8();
    if (v > last) r_.fail();
    return r_.failed() ? 0 : v;
  }
  bool flag() { return enumerator(1) != 0; }
  int integer() { return static_cast<int>(r_.u32()); }
  SourceLoc loc() {
    SourceLoc l;
    l.line = integer();
    l.col = integer();
    return l;
  }
  Type type() {
    Type t;
    t.kind = static_cast<Type::Kind>(enumerator(kLastTypeKind));
    t.dtype = static_cast<DType>(enumerator(kLastDType));
    t.lanes = r_.u8();
    t.rows = r_.u8();
    t.rank = r_.u8();
    return t;
  }

  ExprPtr expr() {
    if (!flag() || !deeper()) return nullptr;
    const auto op = static_cast<Op>(enumerator(kLastOp));
    const Type t = type();
    auto e = std::make_unique<Expr>(op, t, loc());
    e->index = integer();
    e->dim = integer();
    e->callee = static_cast<Builtin>(enumerator(kLastBuiltin));
    e->atomic = static_cast<AtomicOp>(enumerator(kLastAtomic));
    e->collective = static_cast<Collective>(enumerator(kLastCollective));
    e->int_bits = r_.u64();
    e->float_value = std::bit_cast<double>(r_.u64());
    e->checked = flag();
    e->operands = exprs();
    --depth_;
    if (!r_.failed() && !well_formed(*e)) r_.fail();
    return r_.failed() ? nullptr : std::move(e);
  }
  // What ir::verify and the printer take for granted of an expression before they check its
  // types: its local or parameter exists, and it has the operands they read.
  bool well_formed(const Expr& e) const {
    switch (e.op) {
      case Op::Local:
        return is_local(e.index);
      case Op::Param:
      case Op::ArrayDim:
      case Op::Load:
      case Op::TextureSample:
        return is_param(e.index);
      case Op::Atomic:
        return is_param(e.index) && e.operands.size() >= params_[e.index].type.rank;
      case Op::Collective:
        return !e.operands.empty();
      default:
        return true;
    }
  }
  bool is_local(int id) const { return id >= 0 && static_cast<size_t>(id) < locals_; }
  bool is_param(int id) const { return id >= 0 && static_cast<size_t>(id) < params_.size(); }
  std::vector<ExprPtr> exprs() {
    std::vector<ExprPtr> v(r_.count());
    for (ExprPtr& e : v) e = required_expr();
    return v;
  }
  // An expression that must be there (operands, indices): a null one fails the read.
  ExprPtr required_expr() {
    ExprPtr e = expr();
    if (!e) r_.fail();
    return e;
  }

  Block block() {
    Block b(r_.count());
    for (StmtPtr& s : b) s = stmt();
    return b;
  }
  StmtPtr stmt() {
    if (!deeper()) return nullptr;
    const auto kind = static_cast<Stmt::Kind>(enumerator(kLastStmt));
    auto s = std::make_unique<Stmt>(kind, loc());
    s->index = integer();
    s->checked = flag();
    s->value = expr();
    s->indices = exprs();
    s->labels.resize(r_.count());
    for (std::string& l : s->labels) l = r_.str();
    s->cond = expr();
    s->start = expr();
    s->stop = expr();
    s->step = expr();
    s->body = block();
    s->orelse = block();
    --depth_;
    if (!r_.failed() && !well_formed(*s)) r_.fail();
    if (r_.failed()) return nullptr;
    return s;
  }
  // The parts each kind of statement has, which ir::verify reads before it checks them.
  bool well_formed(const Stmt& s) const {
    switch (s.kind) {
      case Stmt::Kind::Assign:
        return s.value && is_local(s.index);
      case Stmt::Kind::Store:
        return s.value && is_param(s.index);
      case Stmt::Kind::If:
      case Stmt::Kind::While:
        return s.cond != nullptr;
      case Stmt::Kind::For:
        return s.start && s.stop && s.step && is_local(s.index);
      default:
        return true;
    }
  }

  std::optional<Kernel> kernel() {
    Kernel k;
    k.name = r_.str();
    k.file = r_.str();
    k.params.resize(r_.count());
    for (Param& p : k.params) {
      p.name = r_.str();
      p.type = type();
      p.written = flag();
      p.local_size = static_cast<int64_t>(r_.u64());
      p.shared = flag();
      p.texture = flag();
      p.partials = flag();
    }
    k.locals.resize(r_.count());
    for (Local& l : k.locals) {
      l.name = r_.str();
      l.type = type();
    }
    params_ = k.params;
    locals_ = k.locals.size();
    k.prelude = block();
    k.dims.resize(r_.count());
    for (LoopDim& d : k.dims) {
      d.var = integer();
      if (!is_local(d.var)) r_.fail();
      d.start = required_expr();
      d.stop = required_expr();
      d.step = required_expr();
    }
    k.loop_loc = loc();
    k.body = block();
    k.collectives = flag();
    k.reductions.resize(r_.count());
    for (Reduction& red : k.reductions) {
      red.acc = integer();
      red.init = integer();
      red.partials = integer();
      red.op = static_cast<Op>(enumerator(kLastOp));
      red.identity = required_expr();
    }
    k.epilogue = block();
    k.result = expr();
    k.debug = flag();
    k.workgroup_size = integer();
    if (r_.failed()) return std::nullopt;
    return k;
  }

  // The proof's bounds and index forms: host expressions whose parameters and extents exist.
  bool host_expr(const Expr* e) const {
    if (!e || !is_host_expr(*e) || !e->type.is_int()) return false;
    const size_t arity = e->op == Op::Const || e->op == Op::Param || e->op == Op::ArrayDim ? 0
                         : e->op == Op::Cast || e->op == Op::Neg                           ? 1
                                                                                           : 2;
    if (e->operands.size() != arity) return false;
    if ((e->op == Op::Param || e->op == Op::ArrayDim) &&
        (!is_param(e->index) ||
         (e->op == Op::Param ? !params_[e->index].type.is_scalar()
                             : !params_[e->index].type.is_array() ||
                                   e->dim >= params_[e->index].type.rank || e->dim < 0)))
      return false;
    return std::all_of(e->operands.begin(), e->operands.end(),
                       [&](const ExprPtr& o) { return host_expr(o.get()); });
  }
  Linear linear(size_t vars) {
    Linear l;
    l.offset = expr();
    if (!host_expr(l.offset.get())) r_.fail();
    l.terms.resize(r_.count());
    for (Linear::Term& t : l.terms) {
      t.var = integer();
      t.coef = expr();
      if (t.var < 0 || static_cast<size_t>(t.var) >= vars || !host_expr(t.coef.get())) r_.fail();
    }
    return l;
  }
  std::vector<int> ints(int limit) {
    std::vector<int> v(r_.count());
    for (int& i : v) {
      i = integer();
      if (i < 0 || i >= limit) r_.fail();
    }
    return v;
  }
  std::optional<IndexProof> proof(const Kernel& k) {
    params_ = k.params;
    locals_ = k.locals.size();
    IndexProof p;
    p.vars.resize(r_.count());
    for (RangedVar& v : p.vars) {
      v.local = integer();
      v.parallel_dim = integer();
      v.start = expr();
      v.stop = expr();
      v.step = expr();
      v.type = static_cast<DType>(enumerator(kLastDType));
      const bool parallel =
          v.parallel_dim >= 0 && static_cast<size_t>(v.parallel_dim) < k.dims.size();
      if (!is_local(v.local) || !is_integer(v.type) ||
          !(parallel || (v.parallel_dim == -1 && host_expr(v.start.get()) &&
                         host_expr(v.stop.get()) && host_expr(v.step.get()))))
        r_.fail();
    }
    const int vars = static_cast<int>(p.vars.size());
    p.accesses.resize(r_.count());
    for (ProvenAccess& a : p.accesses) {
      a.array = integer();
      a.loc = loc();
      a.is_store = flag();
      const bool array = is_param(a.array) && k.params[a.array].type.is_array();
      a.dims = ints(array ? k.params[a.array].type.rank : 0);
      a.indices.resize(r_.count());
      if (!array || a.indices.size() != a.dims.size()) r_.fail();
      for (AffineIndex& index : a.indices) {
        index.value = linear(p.vars.size());
        index.fits.resize(r_.count());
        for (AffineIndex::Fit& f : index.fits) {
          f.value = linear(p.vars.size());
          f.type = static_cast<DType>(enumerator(kLastDType));
        }
      }
      a.guards = ints(vars);
    }
    if (r_.failed()) return std::nullopt;
    return p;
  }

 private:
  // Counts a level of nesting; false (and the read failed) past kMaxDepth.
  bool deeper() {
    if (++depth_ <= kMaxDepth && !r_.failed()) return true;
    --depth_;
    r_.fail();
    return false;
  }

  ByteReader& r_;
  int depth_ = 0;
  std::span<const Param> params_;  // the kernel's, once read
  size_t locals_ = 0;
};

}  // namespace

void write_kernel(ByteWriter& w, const Kernel& k) {
  Writer(w).kernel(k);
}

std::optional<Kernel> read_kernel(ByteReader& r) {
  return Reader(r).kernel();
}

void write_proof(ByteWriter& w, const IndexProof& proof) {
  Writer(w).proof(proof);
}

std::optional<IndexProof> read_proof(ByteReader& r, const Kernel& k) {
  return Reader(r).proof(k);
}

}  // namespace tack::ir
