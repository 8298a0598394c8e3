// Lowering vectors and matrices. A composite value is a list of scalar expressions (see Value), so
// everything here rewrites a vector operation as scalar ones: componentwise arithmetic, masks,
// swizzles, the GLSL geometry helpers and the matrix algebra, each with one fixed order of
// operations (sums left to right, no contraction) that every backend follows.
#include <fmt/format.h>

#include "sema/lowerer.hpp"

namespace tack::sema {

using ir::Op;
using ir::Type;
using Weak = Value::Weak;

namespace {

// The GLSL family of a component dtype ("vec" for f32), or "" when it has none.
std::string glsl_family(DType t, bool matrix) {
  switch (t) {
    case DType::F32:
      return matrix ? "mat" : "vec";
    case DType::F64:
      return matrix ? "dmat" : "dvec";
    case DType::I32:
      return matrix ? "" : "ivec";
    case DType::U32:
      return matrix ? "" : "uvec";
    case DType::Bool:
      return matrix ? "" : "bvec";
    default:
      return "";
  }
}

// The shape and component dtype a constructor name gives: "dvec3" is 3 rows of f64.
struct ConstructorType {
  DType dtype;
  int rows, cols;
};

std::optional<ConstructorType> constructor_type(const std::string& name) {
  static const std::pair<const char*, DType> families[] = {
      {"dvec", DType::F64}, {"ivec", DType::I32}, {"uvec", DType::U32},
      {"vec", DType::F32},  {"dmat", DType::F64}, {"mat", DType::F32}};
  for (auto [prefix, dt] : families) {
    std::string p = prefix;
    if (name.size() != p.size() + 1 || name.compare(0, p.size(), p) != 0) continue;
    int n = name.back() - '0';
    if (n < 2 || n > 4) return std::nullopt;
    bool matrix = p.find("mat") != std::string::npos;
    return ConstructorType{dt, n, matrix ? n : 1};
  }
  return std::nullopt;
}

// The component a swizzle letter names: xyzw or rgba.
int field_index(char c) {
  switch (c) {
    case 'x':
    case 'r':
      return 0;
    case 'y':
    case 'g':
      return 1;
    case 'z':
    case 'b':
      return 2;
    case 'w':
    case 'a':
      return 3;
    default:
      return -1;
  }
}

// Whether reading an expression twice costs nothing: a leaf, or a conversion of one.
bool cheap(const ir::Expr& e) {
  if (e.op == Op::Cast) return cheap(*e.operands[0]);
  return e.op == Op::Const || e.op == Op::Local || e.op == Op::Param;
}

}  // namespace

Value Value::copy() const {
  Value v;
  if (e) v.e = e->clone();
  v.weak = weak;
  for (const auto& c : comps) v.comps.push_back(c->clone());
  v.rows = rows;
  v.cols = cols;
  return v;
}

std::string Value::type_name() const {
  if (!is_composite()) return std::string(dtype_name(dtype()));
  std::string family = glsl_family(dtype(), is_matrix());
  if (!family.empty())
    return family == "bvec" ? fmt::format("a mask of {}", rows) : fmt::format("{}{}", family, rows);
  if (is_matrix()) return fmt::format("a {}x{} matrix of {}", rows, cols, dtype_name(dtype()));
  return fmt::format("a vector of {} {}", rows, dtype_name(dtype()));
}

void Lowerer::require_scalar(const Value& v, SourceLoc loc, const std::string& where) const {
  if (!v.is_composite()) return;
  fail(loc, fmt::format("{} needs a scalar, not {}", where, v.type_name()),
       v.is_matrix() ? "use one element, e.g. m[0, 1]"
                     : "use one component, e.g. v.x or v[0], or reduce it with any(), all(), "
                       "dot() or length()");
}

Value Lowerer::reusable(Value v, SourceLoc loc) {
  if (v.is_weak() || !block_) return v;
  auto keep = [&](ir::ExprPtr& e) {
    if (cheap(*e)) return;
    int t = temp(std::move(e), loc, *block_);
    e = ir::make_local(t, k_.locals[t].type, loc);
  };
  if (v.is_composite())
    for (auto& c : v.comps) keep(c);
  else
    keep(v.e);
  return v;
}

Value Lowerer::composite_local(const std::string& name, SourceLoc loc) const {
  const CompositeLocal& c = composites_.at(name);
  std::vector<ir::ExprPtr> comps;
  for (int id : c.ids) comps.push_back(ir::make_local(id, k_.locals[id].type, loc));
  return Value::composite(std::move(comps), c.rows, c.cols);
}

Value Lowerer::componentwise(std::vector<Value> args, SourceLoc loc, const std::string& what,
                             const std::function<Value(std::vector<Value>)>& scalar_op) {
  const Value* shape = nullptr;
  for (const Value& a : args) {
    if (!a.is_composite()) continue;
    if (shape && (a.rows != shape->rows || a.cols != shape->cols))
      fail(loc,
           fmt::format("{} of {} and {}: the shapes differ", what, shape->type_name(),
                       a.type_name()),
           "convert one operand, e.g. tack.vec3(v.x, v.y, 0.0), or pick components with .xy");
    shape = &a;
  }
  int rows = shape->rows, cols = shape->cols;
  // A scalar operand meets every component, so it is computed once.
  for (Value& a : args)
    if (!a.is_composite()) a = reusable(std::move(a), loc);
  std::vector<ir::ExprPtr> comps;
  for (int k = 0; k < rows * cols; ++k) {
    std::vector<Value> part;
    for (Value& a : args)
      part.push_back(a.is_composite() ? Value{std::move(a.comps[k])} : a.copy());
    Value r = scalar_op(std::move(part));
    comps.push_back(materialize(std::move(r)));
  }
  return Value::composite(std::move(comps), rows, cols);
}

Value Lowerer::construct(const std::string& type, std::vector<Value> args, SourceLoc loc) {
  ConstructorType ct = *constructor_type(type);
  int n = ct.rows * ct.cols;
  std::string dt(dtype_name(ct.dtype));
  auto convert = [&](Value v) {
    return materialize(scalar_builtin(dt, values(std::move(v)), loc));
  };
  std::string usage =
      ct.cols == 1 ? fmt::format("write tack.{0}(x) or tack.{0}({1} components)", type, ct.rows)
                   : fmt::format(
                         "write tack.{0}(s) for s on the diagonal, "
                         "{1} column vectors, or {2} numbers column by "
                         "column",
                         type, ct.rows, n);
  if (args.empty()) fail(loc, fmt::format("tack.{}() needs arguments", type), usage);
  std::vector<ir::ExprPtr> comps;
  if (args.size() == 1 && !args[0].is_composite()) {
    // One scalar: every component of a vector; the diagonal of a matrix.
    Value s = reusable(std::move(args[0]), loc);
    for (int k = 0; k < n; ++k) {
      bool diagonal = ct.cols == 1 || k / ct.rows == k % ct.rows;
      comps.push_back(diagonal ? convert(s.copy()) : convert(weak_int(0, loc)));
    }
    return Value::composite(std::move(comps), ct.rows, ct.cols);
  }
  for (Value& a : args) {
    if (!a.is_composite()) {
      comps.push_back(convert(std::move(a)));
      continue;
    }
    if (a.is_matrix() && (args.size() != 1 || a.rows != ct.rows || ct.cols == 1))
      fail(loc, fmt::format("tack.{}() cannot take {} as a part", type, a.type_name()), usage);
    for (auto& c : a.comps) comps.push_back(convert(Value{std::move(c)}));
  }
  if (static_cast<int>(comps.size()) != n)
    fail(loc,
         fmt::format("tack.{}() needs {} components, and these arguments give {}", type, n,
                     comps.size()),
         usage);
  return Value::composite(std::move(comps), ct.rows, ct.cols);
}

Value Lowerer::composite_binary(ast::BinOp op, Value a, Value b, SourceLoc loc) {
  if (op == ast::BinOp::MatMul) return matmul(std::move(a), std::move(b), loc);
  std::string what = fmt::format("the operator {}", ast::spelling(op));
  return componentwise(values(std::move(a), std::move(b)), loc, what, [&](std::vector<Value> x) {
    return binary(op, std::move(x[0]), std::move(x[1]), loc);
  });
}

// a @ b with vectors as columns on the right and rows on the left, as NumPy does: matrix @
// vector, vector @ matrix, matrix @ matrix, and vector @ vector (the dot product).
Value Lowerer::matmul(Value a, Value b, SourceLoc loc) {
  if (!a.is_composite() || !b.is_composite())
    fail(loc, "the @ operator multiplies matrices and vectors",
         "use * to scale by a scalar: 2.0 * m");
  // As matrices: a vector on the left is one row; on the right, one column.
  int ar = a.is_matrix() ? a.rows : 1, ac = a.is_matrix() ? a.cols : a.rows;
  int br = b.rows, bc = b.is_matrix() ? b.cols : 1;
  if (ac != br)
    fail(loc,
         fmt::format("{} @ {}: the inner sizes differ ({} and {})", a.type_name(), b.type_name(),
                     ac, br),
         "multiply a matrix by a vector of its size");
  a = reusable(std::move(a), loc);
  b = reusable(std::move(b), loc);
  auto at = [](const Value& m, int rows, int i, int j) {
    return Value{m.comps[j * rows + i]->clone()};
  };
  std::vector<ir::ExprPtr> comps;
  for (int j = 0; j < bc; ++j)
    for (int i = 0; i < ar; ++i) {
      Value sum = binary(ast::BinOp::Mul, at(a, ar, i, 0), at(b, br, 0, j), loc);
      for (int k = 1; k < ac; ++k)
        sum = binary(ast::BinOp::Add, std::move(sum),
                     binary(ast::BinOp::Mul, at(a, ar, i, k), at(b, br, k, j), loc), loc);
      comps.push_back(materialize(std::move(sum)));
    }
  if (ar == 1 && bc == 1) return Value{std::move(comps[0])};
  if (ar == 1 || bc == 1) return Value::composite(std::move(comps), ar * bc, 1);
  return Value::composite(std::move(comps), ar, bc);
}

Value Lowerer::composite_compare(Op op, Value a, Value b, SourceLoc loc) {
  return componentwise(
      values(std::move(a), std::move(b)), loc, "the comparison", [&](std::vector<Value> x) {
        auto [l, r] = unify(std::move(x[0]), std::move(x[1]), loc, "the comparison");
        return Value{ir::make_binary(op, std::move(l), std::move(r), loc)};
      });
}

std::optional<Value> Lowerer::vector_helper(const std::string& name, std::vector<Value>& args,
                                            SourceLoc loc) {
  if (constructor_type(name)) return construct(name, std::move(args), loc);
  static const std::map<std::string, size_t> arity = {
      {"dot", 2},       {"cross", 2},       {"length", 1}, {"distance", 2},
      {"normalize", 1}, {"reflect", 2},     {"any", 1},    {"all", 1},
      {"transpose", 1}, {"determinant", 1}, {"inverse", 1}};
  auto it = arity.find(name);
  if (it == arity.end()) return std::nullopt;
  if (args.size() != it->second)
    fail(loc, fmt::format("{}() takes {} argument{}", name, it->second, it->second == 1 ? "" : "s"),
         "pass the arguments by position");
  using B = ast::BinOp;
  auto need_vector = [&](const Value& v, const char* what) {
    if (!v.is_composite() || v.is_matrix())
      fail(loc, fmt::format("{}() takes {}, not {}", name, what, v.type_name()),
           "pass a vector such as tack.vec3(x, y, z)");
  };
  auto need_matrix = [&](const Value& v) {
    if (!v.is_matrix())
      fail(loc, fmt::format("{}() takes a square matrix, not {}", name, v.type_name()),
           "pass a matrix such as tack.mat3(...)");
  };
  // Geometry works in floats: integer vectors convert to the kernel's float type.
  auto floats = [&](Value v) {
    if (is_float(v.dtype())) return v;
    for (auto& c : v.comps) c = ir::make_cast(std::move(c), Type::scalar(float_type_));
    return v;
  };
  auto dot = [&](const Value& a, const Value& b) {
    Value sum = binary(B::Mul, Value{a.comps[0]->clone()}, Value{b.comps[0]->clone()}, loc);
    for (int k = 1; k < a.rows; ++k)
      sum =
          binary(B::Add, std::move(sum),
                 binary(B::Mul, Value{a.comps[k]->clone()}, Value{b.comps[k]->clone()}, loc), loc);
    return sum;
  };
  auto same_size = [&](const Value& a, const Value& b) {
    if (a.rows != b.rows)
      fail(loc,
           fmt::format("{}() of {} and {}: the sizes differ", name, a.type_name(), b.type_name()),
           "pass two vectors of one size");
  };
  auto sqrt_of = [&](Value v) {
    ir::ExprPtr x = materialize(std::move(v));
    Type t = x->type;
    std::vector<ir::ExprPtr> operands;
    operands.push_back(std::move(x));
    return Value{ir::make_call(ir::Builtin::Sqrt, t, std::move(operands), loc)};
  };

  if (name == "any" || name == "all") {
    Value v = std::move(args[0]);
    if (!v.is_composite()) return Value{truth(std::move(v), loc)};
    ir::ExprPtr acc;
    for (auto& c : v.comps) {
      ir::ExprPtr b = truth(Value{std::move(c)}, loc);
      acc = acc ? ir::make_binary(name == "any" ? Op::LogicalOr : Op::LogicalAnd, std::move(acc),
                                  std::move(b), loc)
                : std::move(b);
    }
    return Value{std::move(acc)};
  }
  if (name == "dot") {
    need_vector(args[0], "vectors");
    need_vector(args[1], "vectors");
    same_size(args[0], args[1]);
    return dot(args[0], args[1]);
  }
  if (name == "cross") {
    need_vector(args[0], "3-component vectors");
    need_vector(args[1], "3-component vectors");
    if (args[0].rows != 3 || args[1].rows != 3)
      fail(loc, "cross() takes two 3-component vectors", "pass vec3 or dvec3 values");
    Value a = reusable(std::move(args[0]), loc), b = reusable(std::move(args[1]), loc);
    auto c = [](const Value& v, int k) { return Value{v.comps[k]->clone()}; };
    std::vector<ir::ExprPtr> comps;
    for (int k = 0; k < 3; ++k) {
      int i = (k + 1) % 3, j = (k + 2) % 3;
      comps.push_back(materialize(binary(B::Sub, binary(B::Mul, c(a, i), c(b, j), loc),
                                         binary(B::Mul, c(a, j), c(b, i), loc), loc)));
    }
    return Value::composite(std::move(comps), 3, 1);
  }
  if (name == "length" || name == "distance" || name == "normalize") {
    need_vector(args[0], "a vector");
    Value v = std::move(args[0]);
    if (name == "distance") {
      need_vector(args[1], "vectors");
      same_size(v, args[1]);
      v = composite_binary(B::Sub, std::move(v), std::move(args[1]), loc);
    }
    v = reusable(floats(std::move(v)), loc);
    Value len = sqrt_of(dot(v, v));
    if (name != "normalize") return len;
    return composite_binary(B::Div, std::move(v), std::move(len), loc);
  }
  if (name == "reflect") {  // i - 2 dot(n, i) n
    need_vector(args[0], "vectors");
    need_vector(args[1], "vectors");
    same_size(args[0], args[1]);
    Value i = reusable(floats(std::move(args[0])), loc),
          n = reusable(floats(std::move(args[1])), loc);
    Value scale = reusable(binary(B::Mul, weak_float(2.0, loc), dot(n, i), loc), loc);
    return composite_binary(B::Sub, std::move(i),
                            composite_binary(B::Mul, std::move(scale), std::move(n), loc), loc);
  }
  // Matrices.
  Value m = std::move(args[0]);
  need_matrix(m);
  int n = m.rows;
  if (name == "transpose") {
    std::vector<ir::ExprPtr> comps;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) comps.push_back(std::move(m.comps[i * n + j]));
    return Value::composite(std::move(comps), n, n);
  }
  m = reusable(floats(std::move(m)), loc);
  // Determinants by cofactor expansion along the first column, minors recursively: one fixed
  // order of operations, the same on every backend.
  std::function<Value(const std::vector<int>&, const std::vector<int>&)> det =
      [&](const std::vector<int>& rows, const std::vector<int>& cols) -> Value {
    auto at = [&](int i, int j) { return Value{m.comps[cols[j] * n + rows[i]]->clone()}; };
    if (rows.size() == 1) return at(0, 0);
    if (rows.size() == 2)
      return binary(B::Sub, binary(B::Mul, at(0, 0), at(1, 1), loc),
                    binary(B::Mul, at(1, 0), at(0, 1), loc), loc);
    Value sum;
    for (size_t i = 0; i < rows.size(); ++i) {
      std::vector<int> sub_rows;
      for (size_t r = 0; r < rows.size(); ++r)
        if (r != i) sub_rows.push_back(rows[r]);
      std::vector<int> sub_cols(cols.begin() + 1, cols.end());
      Value term = binary(B::Mul, at(static_cast<int>(i), 0), det(sub_rows, sub_cols), loc);
      if (i == 0)
        sum = std::move(term);
      else
        sum = binary(i % 2 ? B::Sub : B::Add, std::move(sum), std::move(term), loc);
    }
    return sum;
  };
  std::vector<int> all;
  for (int k = 0; k < n; ++k) all.push_back(k);
  if (name == "determinant") return det(all, all);
  // inverse: the adjugate divided by the determinant (a singular matrix gives infinities or NaN,
  // as the division does).
  Value d = reusable(det(all, all), loc);
  std::vector<ir::ExprPtr> comps(n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      // inverse[i, j] = (-1)^(i+j) * minor(j, i) / det
      std::vector<int> rows, cols;
      for (int r = 0; r < n; ++r)
        if (r != j) rows.push_back(r);
      for (int c = 0; c < n; ++c)
        if (c != i) cols.push_back(c);
      Value cofactor = det(rows, cols);
      if ((i + j) % 2) cofactor = unary(ast::UnaryOp::Neg, std::move(cofactor), loc);
      comps[j * n + i] = materialize(binary(B::Div, std::move(cofactor), d.copy(), loc));
    }
  return Value::composite(std::move(comps), n, n);
}

Value Lowerer::swizzle(Value v, const std::string& fields, SourceLoc loc) {
  if (v.is_matrix())
    fail(loc, fmt::format("a matrix has no attribute '{}'", fields), "read elements with m[i, j]");
  if (fields.size() > 4) fail(loc, fmt::format("'{}' names more than four components", fields));
  std::vector<int> picks;
  for (char c : fields) {
    int k = field_index(c);
    if (k < 0)
      fail(loc, fmt::format("'{}' is not a component of a vector", fields),
           "name components with x, y, z, w (or r, g, b, a)");
    if (k >= v.rows)
      fail(loc, fmt::format("{} has no component '{}'", v.type_name(), c),
           fmt::format("{} has {} components", v.type_name(), v.rows));
    picks.push_back(k);
  }
  if (picks.size() == 1) return Value{std::move(v.comps[picks[0]])};
  v = reusable(std::move(v), loc);
  std::vector<ir::ExprPtr> comps;
  for (int k : picks) comps.push_back(v.comps[k]->clone());
  return Value::composite(std::move(comps), static_cast<int>(picks.size()), 1);
}

// The index of a component: v[k] or m[i, j], checked against the shape; `flat` is the position in
// `comps` when every index is a constant, else -1, and `index` holds the indices (reusable).
Lowerer::ComponentIndex Lowerer::component_index(const Value& v, const ast::Expr& subscript) {
  std::vector<const ast::Expr*> idx = subscript_indices(subscript);
  if (idx.size() != (v.is_matrix() ? 2u : 1u))
    fail(subscript.loc,
         v.is_matrix() ? fmt::format("{} is indexed with a row and a column", v.type_name())
                       : fmt::format("{} takes one index", v.type_name()),
         v.is_matrix() ? "write m[i, j]" : "write v[k], or v.x");
  ComponentIndex out;
  out.flat = 0;
  for (size_t d = 0; d < idx.size(); ++d) {
    Value x = expr(*idx[d]);
    int extent = d == 0 ? v.rows : v.cols;
    if (x.weak == Weak::Int &&
        static_cast<uint64_t>(x.e->int_bits) >= static_cast<uint64_t>(extent))
      fail(idx[d]->loc,
           fmt::format("index {} is out of range for {}", static_cast<int64_t>(x.e->int_bits),
                       v.type_name()),
           fmt::format("use an index from 0 to {}", extent - 1));
    Value i = reusable(Value{index_value(std::move(x), idx[d]->loc)}, subscript.loc);
    if (out.flat >= 0 && ir::is_const(*i.e))
      out.flat += static_cast<int>(ir::const_as_int(*i.e)) * (d == 0 ? 1 : v.rows);
    else
      out.flat = -1;
    out.index.push_back(std::move(i.e));
  }
  return out;
}

// Whether a run-time index selects component k (of a composite with `rows` rows).
ir::ExprPtr Lowerer::selects(const ComponentIndex& c, int k, int rows, SourceLoc loc) {
  ir::ExprPtr hit;
  int pos[2] = {k % rows, k / rows};
  for (size_t d = 0; d < c.index.size(); ++d) {
    ir::ExprPtr eq =
        ir::make_binary(Op::Eq, c.index[d]->clone(),
                        ir::make_int(Type::i64(), static_cast<uint64_t>(pos[d]), loc), loc);
    hit = hit ? ir::make_binary(Op::LogicalAnd, std::move(hit), std::move(eq), loc) : std::move(eq);
  }
  return hit;
}

Value Lowerer::component(Value v, const ast::Expr& subscript) {
  ComponentIndex c = component_index(v, subscript);
  if (c.flat >= 0) return Value{std::move(v.comps[c.flat])};
  SourceLoc loc = subscript.loc;
  v = reusable(std::move(v), loc);
  // The last component is the default, so an index out of range reads it.
  ir::ExprPtr result = v.comps.back()->clone();
  for (int k = static_cast<int>(v.comps.size()) - 2; k >= 0; --k)
    result =
        ir::make_select(selects(c, k, v.rows, loc), v.comps[k]->clone(), std::move(result), loc);
  return Value{std::move(result)};
}

void Lowerer::assign_composite(const ast::Expr& target, Value v, SourceLoc loc, ir::Block& out) {
  const std::string& name = target.name;
  // All components are computed before any is assigned: v = v.yx swaps.
  bool direct = true;
  for (const auto& c : v.comps) direct &= c->op == Op::Const;
  if (!direct) {
    for (auto& c : v.comps) {
      int t = temp(std::move(c), loc, out);
      c = ir::make_local(t, k_.locals[t].type, loc);
    }
  }
  auto it = composites_.find(name);
  if (it == composites_.end()) {
    CompositeLocal c{{}, v.rows, v.cols};
    for (size_t k = 0; k < v.comps.size(); ++k) {
      std::string part = v.is_matrix() ? fmt::format("{}.{}{}", name, k % v.rows, k / v.rows)
                                       : fmt::format("{}.{}", name, "xyzw"[k]);
      int id = new_local("$" + part, v.comps[k]->type);
      k_.locals[id].name = part;
      out.push_back(ir::make_assign(id, std::move(v.comps[k]), loc));
      c.ids.push_back(id);
    }
    composites_[name] = std::move(c);
    local_decl_[composites_[name].ids[0]] = target.loc;
    return;
  }
  const CompositeLocal& c = it->second;
  if (c.rows != v.rows || c.cols != v.cols)
    fail(target.loc,
         fmt::format("cannot assign {} to '{}', which holds {}", v.type_name(), name,
                     composite_local(name, loc).type_name()),
         "a local keeps the shape of its first assignment; use a new name");
  for (size_t k = 0; k < v.comps.size(); ++k) {
    int id = c.ids[k];
    out.push_back(ir::make_assign(
        id, convert_for_local(Value{std::move(v.comps[k])}, k_.locals[id], target.loc), loc));
  }
}

void Lowerer::assign_component(const ast::Expr& target, Value v, SourceLoc loc, ir::Block& out) {
  const ast::Expr& base = *target.operand;
  if (base.kind != ast::Expr::Kind::Name || !composites_.count(base.name))
    fail(target.loc, "only components of a local vector or matrix can be assigned",
         "assign the whole value, or copy it into a local first");
  Value current = composite_local(base.name, loc);
  const CompositeLocal c = composites_.at(base.name);
  auto set = [&](int k, Value x) {
    int id = c.ids[k];
    out.push_back(
        ir::make_assign(id, convert_for_local(std::move(x), k_.locals[id], target.loc), loc));
  };
  if (target.kind == ast::Expr::Kind::Attribute) {
    if (current.is_matrix())
      fail(target.loc, "a matrix has no named components", "assign elements with m[i, j] = x");
    std::vector<int> picks;
    for (char ch : target.name) {
      int k = field_index(ch);
      if (k < 0 || k >= c.rows)
        fail(target.loc, fmt::format("{} has no component '{}'", current.type_name(), ch),
             "name components with x, y, z, w (or r, g, b, a)");
      for (int p : picks)
        if (p == k) fail(target.loc, fmt::format("'{}' names a component twice", target.name));
      picks.push_back(k);
    }
    if (picks.size() == 1) {
      require_scalar(v, loc, fmt::format("assigning to .{}", target.name));
      return set(picks[0], std::move(v));
    }
    if (!v.is_composite() || v.is_matrix() || v.rows != static_cast<int>(picks.size()))
      fail(loc, fmt::format("cannot assign {} to .{}", v.type_name(), target.name),
           fmt::format("assign a vector of {} components", picks.size()));
    v = reusable(std::move(v), loc);
    for (size_t i = 0; i < picks.size(); ++i) set(picks[i], Value{std::move(v.comps[i])});
    return;
  }
  // v[k] = x, m[i, j] = x: each component takes x where the index selects it.
  require_scalar(v, loc, "assigning one component");
  ComponentIndex index = component_index(current, target);
  if (index.flat >= 0) return set(index.flat, std::move(v));
  v = reusable(std::move(v), loc);
  for (int k = 0; k < static_cast<int>(c.ids.size()); ++k) {
    int id = c.ids[k];
    ir::ExprPtr x = convert_for_local(v.copy(), k_.locals[id], target.loc);
    out.push_back(ir::make_assign(id,
                                  ir::make_select(selects(index, k, c.rows, loc), std::move(x),
                                                  ir::make_local(id, k_.locals[id].type, loc), loc),
                                  loc));
  }
}

bool Lowerer::is_vector_access(int array, const ast::Expr& subscript) const {
  if (array >= static_cast<int>(leaf_types_.size()) || leaf_types_[array]->lanes == 0) return false;
  size_t n = 0;
  for (const auto& a : subscript.args) n += a->kind == ast::Expr::Kind::Tuple ? a->args.size() : 1;
  // A vector local as the one index is a vector of indices (a[c]), not a row.
  if (n == 1 && subscript.args[0]->kind == ast::Expr::Kind::Name &&
      composites_.count(subscript.args[0]->name))
    return false;
  return static_cast<int>(n) + 1 == leaf_types_[array]->rank;
}

Value Lowerer::vector_load(int array, const ast::Expr& subscript,
                           std::vector<ir::ExprPtr>* index_out, ir::Block* out) {
  // Index the array as if it had one dimension fewer, then read each component.
  std::vector<ir::ExprPtr> idx;
  for (const auto& a : subscript.args) {
    if (a->kind == ast::Expr::Kind::Tuple)
      for (const auto& t : a->args) idx.push_back(index_value(expr(*t), t->loc));
    else
      idx.push_back(index_value(expr(*a), a->loc));
  }
  for (auto& i : idx) {
    if (cheap(*i) || !(out ? out : block_)) continue;
    int t = temp(std::move(i), subscript.loc, out ? *out : *block_);
    i = ir::make_local(t, Type::i64(), subscript.loc);
  }
  int lanes = leaf_types_[array]->lanes;
  std::vector<ir::ExprPtr> comps;
  for (int k = 0; k < lanes; ++k) {
    std::vector<ir::ExprPtr> at;
    for (const auto& i : idx) at.push_back(i->clone());
    at.push_back(ir::make_int(Type::i64(), static_cast<uint64_t>(k), subscript.loc));
    comps.push_back(
        ir::make_load(array, k_.params[array].type.dtype, std::move(at), subscript.loc));
  }
  if (index_out) *index_out = std::move(idx);
  return Value::composite(std::move(comps), lanes, 1);
}

void Lowerer::vector_store(int array, std::vector<ir::ExprPtr> idx, Value v, SourceLoc loc,
                           ir::Block& out) {
  ir::Param& p = k_.params[array];
  int lanes = leaf_types_[array]->lanes;
  if (!v.is_composite())  // most likely an argument of the wrong rank
    fail_arg(loc, fmt::format("array argument '{}' has {} dimensions but is indexed with {}; one "
                              "index fewer stores a vector of {} components, not {}",
                              p.name, p.type.rank, p.type.rank - 1, lanes, v.type_name()));
  if (v.is_matrix() || v.rows != lanes)
    fail(loc,
         fmt::format("'{}' holds vectors of {} components; {} cannot be stored there", p.name,
                     lanes, v.type_name()),
         fmt::format("store a vector of {} components, or index one element: {}[..., k]", lanes,
                     p.name));
  for (int k = 0; k < lanes; ++k) {
    std::vector<ir::ExprPtr> at;
    for (const auto& i : idx) at.push_back(i->clone());
    at.push_back(ir::make_int(Type::i64(), static_cast<uint64_t>(k), loc));
    ir::ExprPtr value = convert_for_store(Value{std::move(v.comps[k])}, p.type.dtype, p.name, loc);
    out.push_back(ir::make_store(array, std::move(at), std::move(value), loc));
  }
  p.written = true;
}

}  // namespace tack::sema
