// Sampling textures. On a target with hardware textures (TargetRules::hardware_textures),
// tex.sample(u, v[, w]) is one Op::TextureSample, the texture unit's filtering (coarser weights);
// elsewhere, and for textures made with interp="linear_exact", it becomes loads and arithmetic,
// with the hardware's rules (normalized coordinates, texel centres at (i + 0.5) / size,
// clamp-to-edge addressing, linear filtering along x, then y, then z), written once so that every
// backend without hardware textures gives the same bits.
#include <fmt/format.h>

#include "sema/lowerer.hpp"

namespace tack::sema {

using ir::Op;
using ir::Type;

bool Lowerer::is_texture(int param) const {
  return param >= 0 && param < static_cast<int>(leaf_types_.size()) && leaf_types_[param]->texture;
}

void Lowerer::reject_texture(int param, SourceLoc loc) const {
  if (!is_texture(param)) return;
  const std::string& name = k_.params[param].name;
  fail(loc, fmt::format("'{}' is a texture: kernels read it only by sampling", name),
       fmt::format("write {}.sample(u, v{}) with coordinates in [0, 1]", name,
                   k_.params[param].type.rank == 3 ? ", w" : ""));
}

Value Lowerer::texture_sample(int tex, const ast::Expr& call) {
  SourceLoc loc = call.loc;
  const ir::Param& p = k_.params[tex];
  int dims = p.type.rank;
  std::string usage = fmt::format("write {}.sample(u, v{})", p.name, dims == 3 ? ", w" : "");
  if (call.args.size() != static_cast<size_t>(dims) || !call.keywords.empty())
    fail(loc, fmt::format("a {}-D texture is sampled with {} coordinates", dims, dims), usage);
  if (!block_) fail(loc, "a texture cannot be sampled here", "sample it inside the loop's body");
  if (target_.hardware_textures && !leaf_types_[tex]->exact) {
    k_.params[tex].texture = true;
    std::vector<ir::ExprPtr> coords;
    for (int d = 0; d < dims; ++d) {
      Value c = expr(*call.args[d]);
      require_scalar(c, call.args[d]->loc, "a texture coordinate");
      coords.push_back(ir::make_cast(materialize(std::move(c)), Type::scalar(DType::F32)));
    }
    auto e = std::make_unique<ir::Expr>(Op::TextureSample, Type::scalar(DType::F32), loc);
    e->index = tex;
    e->operands = std::move(coords);
    return Value{std::move(e)};
  }
  ir::Block& out = *block_;
  Type f32 = Type::scalar(DType::F32), i64 = Type::i64();
  auto local = [&](int t) { return ir::make_local(t, k_.locals[t].type, loc); };
  auto keep = [&](ir::ExprPtr e) { return temp(std::move(e), loc, out); };

  // Per axis (x is the array's last dimension): the two texel indices and the weight of the
  // second. Coordinate c covers size texels: x = c * size - 0.5, i0 = floor(x), t = x - i0.
  struct Axis {
    int i0, i1, t;
  };
  std::vector<Axis> axes;
  for (int d = 0; d < dims; ++d) {
    Value c = expr(*call.args[d]);
    require_scalar(c, call.args[d]->loc, "a texture coordinate");
    ir::ExprPtr coord = ir::make_cast(materialize(std::move(c)), f32);
    int dim = dims - 1 - d;
    int size = keep(ir::make_array_dim(tex, dim, loc));
    int x = keep(ir::make_binary(
        Op::Sub, ir::make_binary(Op::Mul, std::move(coord), ir::make_cast(local(size), f32), loc),
        ir::make_float(f32, 0.5, loc), loc));
    std::vector<ir::ExprPtr> floor_args;
    floor_args.push_back(local(x));
    int fl = keep(ir::make_call(ir::Builtin::Floor, f32, std::move(floor_args), loc));
    int t = keep(ir::make_binary(Op::Sub, local(x), local(fl), loc));
    auto clamp_index = [&](ir::ExprPtr i) {
      ir::ExprPtr last = ir::make_binary(Op::Sub, local(size), ir::make_int(i64, 1, loc), loc);
      return keep(ir::make_binary(
          Op::Min, ir::make_binary(Op::Max, std::move(i), ir::make_int(i64, 0, loc), loc),
          std::move(last), loc));
    };
    int base = keep(ir::make_cast(local(fl), i64));
    int i0 = clamp_index(local(base));
    int i1 = clamp_index(ir::make_binary(Op::Add, local(base), ir::make_int(i64, 1, loc), loc));
    axes.push_back({i0, i1, t});
  }
  // The 2^dims corner texels, blended along x, then y, then z: a * (1 - t) + b * t.
  std::function<ir::ExprPtr(int, std::vector<int>&)> blend =
      [&](int d, std::vector<int>& pick) -> ir::ExprPtr {
    if (d < 0) {
      std::vector<ir::ExprPtr> idx;
      for (int k = dims - 1; k >= 0; --k) idx.push_back(local(pick[k]));
      return ir::make_load(tex, DType::F32, std::move(idx), loc);
    }
    pick[d] = axes[d].i0;
    ir::ExprPtr a = blend(d - 1, pick);
    pick[d] = axes[d].i1;
    ir::ExprPtr b = blend(d - 1, pick);
    ir::ExprPtr keep_a = ir::make_binary(
        Op::Mul, std::move(a),
        ir::make_binary(Op::Sub, ir::make_float(f32, 1.0, loc), local(axes[d].t), loc), loc);
    return ir::make_binary(Op::Add, std::move(keep_a),
                           ir::make_binary(Op::Mul, std::move(b), local(axes[d].t), loc), loc);
  };
  std::vector<int> pick(dims);
  return Value{blend(dims - 1, pick)};
}

}  // namespace tack::sema
