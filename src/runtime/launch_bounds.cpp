#include "runtime/launch_bounds.hpp"

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>

#include "tack/error.hpp"

namespace tack::detail {
namespace {

// Ranges in 64 bits with overflow checks: an index whose exact value leaves the 64-bit range is
// reported as such rather than wrapped into range. (Kept to plain integers: 128-bit values
// copied through the stack cost more than the whole check should.)
struct Range {  // no initializers: arrays of them are filled before use, on every launch
  int64_t lo, hi;
  bool empty;  // a loop variable of a loop that runs no iteration
  bool known;  // false: the exact bounds leave the 64-bit range
};

// The values start, start + step, ... before stop (Python's range), as [lo, hi]. The last value
// lies between start and stop, so it fits; the difference is taken unsigned, as at the launch.
Range range_of(int64_t start, int64_t stop, int64_t step) {
  auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  uint64_t count = 0;
  if (step > 0 && stop > start) count = (u(stop) - u(start) - 1) / u(step) + 1;
  if (step < 0 && start > stop) count = (u(start) - u(stop) - 1) / (0 - u(step)) + 1;
  if (count == 0) return {0, 0, true, true};
  auto last = static_cast<int64_t>(u(start) + (count - 1) * u(step));
  return {std::min(start, last), std::max(start, last), false, true};
}

int64_t value_of(const ir::Expr& e, const ir::HostValues& values) {
  return e.op == ir::Op::Const ? static_cast<int64_t>(e.int_bits) : ir::eval_host(e, values);
}

// offset + sum(coef * var) over the variables' ranges.
Range combine(int64_t offset, const std::pair<int, int64_t>* terms, size_t n, const Range* vars) {
  Range r{offset, offset, false, true};
  for (size_t t = 0; t < n; ++t) {
    auto [var, c] = terms[t];
    const Range& v = vars[var];
    int64_t a, b;
    bool over = __builtin_mul_overflow(c, c >= 0 ? v.lo : v.hi, &a) |
                __builtin_mul_overflow(c, c >= 0 ? v.hi : v.lo, &b) |
                __builtin_add_overflow(r.lo, a, &r.lo) | __builtin_add_overflow(r.hi, b, &r.hi);
    if (over) return {0, 0, false, false};
  }
  return r;
}

bool fits(const Range& r, DType t) {
  if (!r.known) return false;
  int bits = dtype_bits(t);
  if (bits == 64) return is_signed(t) || r.lo >= 0;
  int64_t lo = is_signed(t) ? -(int64_t{1} << (bits - 1)) : 0;
  int64_t hi = is_signed(t) ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
  return r.lo >= lo && r.hi <= hi;
}

std::string shape_text(const int64_t* shape, int rank) {
  std::string out = "(";
  for (int i = 0; i < rank; ++i) out += fmt::format("{}{}", i ? ", " : "", shape[i]);
  return out + (rank == 1 ? ",)" : ")");
}

// A small array on the stack for the usual handful of entries.
template <typename T, size_t N = 16>
struct Scratch {
  T small[N];
  std::unique_ptr<T[]> large;
  explicit Scratch(size_t n) {
    if (n > N) large.reset(new T[n]);
  }
  T* data() { return large ? large.get() : small; }
};

}  // namespace

IndexRangeCheck::IndexRangeCheck(ir::IndexProof proof) : proof_(std::move(proof)) {
  for (size_t a = 0; a < proof_.accesses.size(); ++a) {
    const ir::ProvenAccess& access = proof_.accesses[a];
    for (size_t i = 0; i < access.dims.size(); ++i) {
      Check c;
      c.access = static_cast<int>(a);
      c.array = access.array;
      c.dim = access.dims[i];
      c.form = form_of(access.indices[i].value);
      for (const auto& f : access.indices[i].fits) c.fits.push_back({form_of(f.value), f.type});
      checks_.push_back(std::move(c));
    }
  }
  simple_ = true;
  std::vector<int> simple_form_of(forms_.size(), -1);
  for (const Check& c : checks_) {
    const Form& f = forms_[static_cast<size_t>(c.form)];
    const ir::ProvenAccess& a = proof_.accesses[static_cast<size_t>(c.access)];
    simple_ = f.constant && f.terms.size() == 1 && c.fits.empty() && a.guards.empty() &&
              proof_.vars[static_cast<size_t>(f.terms[0].first)].parallel_dim >= 0;
    if (!simple_) break;
    int& id = simple_form_of[static_cast<size_t>(c.form)];
    if (id < 0) {
      id = static_cast<int>(simple_forms_.size());
      simple_forms_.push_back({proof_.vars[static_cast<size_t>(f.terms[0].first)].parallel_dim,
                               f.offset, f.terms[0].second});
    }
    simple_checks_.push_back({c.array, c.dim, id});
  }
}

int IndexRangeCheck::form_of(const ir::Linear& l) {
  Form f;
  f.linear = &l;
  f.constant = l.offset->op == ir::Op::Const;
  for (const auto& t : l.terms) f.constant = f.constant && t.coef->op == ir::Op::Const;
  if (f.constant) {
    f.offset = static_cast<int64_t>(l.offset->int_bits);
    for (const auto& t : l.terms)
      f.terms.push_back({t.var, static_cast<int64_t>(t.coef->int_bits)});
    for (size_t i = 0; i < forms_.size(); ++i)
      if (forms_[i].constant && forms_[i].offset == f.offset && forms_[i].terms == f.terms)
        return static_cast<int>(i);
  }
  forms_.push_back(std::move(f));
  return static_cast<int>(forms_.size()) - 1;
}

void IndexRangeCheck::run(const ir::Kernel& k, const ir::HostValues& values,
                          const LaunchArgs& launch, int column_offset) const {
  if (checks_.empty()) return;
  for (int64_t c : launch.count)
    if (c == 0) return;  // an empty launch performs no access
  if (simple_ && simple_forms_.size() <= 16) {
    int64_t his[16];
    bool all_in = true;
    for (size_t f = 0; f < simple_forms_.size(); ++f) {
      const SimpleForm& c = simple_forms_[f];
      auto d = static_cast<size_t>(c.parallel_dim);
      auto last = static_cast<int64_t>(static_cast<uint64_t>(launch.start[d]) +
                                       static_cast<uint64_t>(launch.count[d] - 1) *
                                           static_cast<uint64_t>(launch.step[d]));
      int64_t a, b, lo;
      bool over = __builtin_mul_overflow(c.coef, launch.start[d], &a) |
                  __builtin_mul_overflow(c.coef, last, &b) |
                  __builtin_add_overflow(c.offset, std::min(a, b), &lo) |
                  __builtin_add_overflow(c.offset, std::max(a, b), &his[f]);
      all_in &= !over && lo >= 0;
    }
    for (const SimpleCheck& c : simple_checks_)
      all_in &= his[c.form] < launch.params[static_cast<size_t>(c.array)].shape[c.dim];
    if (all_in) return;  // else the general path below finds and reports the access
  }
  run_general(k, values, launch, column_offset);
}

void IndexRangeCheck::run_general(const ir::Kernel& k, const ir::HostValues& values,
                                  const LaunchArgs& launch, int column_offset) const {
  Scratch<Range> var_scratch(proof_.vars.size());
  Range* vars = var_scratch.data();
  for (size_t i = 0; i < proof_.vars.size(); ++i) {
    const ir::RangedVar& v = proof_.vars[i];
    if (v.parallel_dim >= 0) {
      auto d = static_cast<size_t>(v.parallel_dim);
      // The last value lies between start and stop, so it fits.
      auto last = static_cast<int64_t>(static_cast<uint64_t>(launch.start[d]) +
                                       static_cast<uint64_t>(launch.count[d] - 1) *
                                           static_cast<uint64_t>(launch.step[d]));
      vars[i] = {launch.start[d], last, false, true};
    } else {
      vars[i] = range_of(value_of(*v.start, values), value_of(*v.stop, values),
                         value_of(*v.step, values));
    }
  }
  Scratch<Range> form_scratch(forms_.size());
  Range* ranges = form_scratch.data();
  for (size_t i = 0; i < forms_.size(); ++i) {
    const Form& f = forms_[i];
    if (f.constant) {
      ranges[i] = combine(f.offset, f.terms.data(), f.terms.size(), vars);
      continue;
    }
    Scratch<std::pair<int, int64_t>> terms(f.linear->terms.size());
    for (size_t t = 0; t < f.linear->terms.size(); ++t)
      terms.data()[t] = {f.linear->terms[t].var, value_of(*f.linear->terms[t].coef, values)};
    ranges[i] =
        combine(value_of(*f.linear->offset, values), terms.data(), f.linear->terms.size(), vars);
  }
  for (const Check& c : checks_) {
    const int64_t* shape = launch.params[static_cast<size_t>(c.array)].shape;
    const Range& r = ranges[c.form];
    if (r.known && r.lo >= 0 && r.hi < shape[c.dim]) continue;
    const ir::ProvenAccess& a = proof_.accesses[static_cast<size_t>(c.access)];
    bool runs = true;
    for (int g : a.guards) runs = runs && !vars[g].empty;
    // The generated code wraps a narrower value: not an index this check can reason about.
    for (const auto& [form, type] : c.fits) runs = runs && fits(ranges[form], type);
    if (!runs) continue;
    const ir::Param& p = k.params[static_cast<size_t>(a.array)];
    throw IndexError(fmt::format(
        "{}:{}:{}: in kernel '{}': this call would {} '{}' at indices {} in dimension {}, "
        "but its shape is {}: the launch was refused and nothing ran (make the loop's range "
        "match the arrays, or pass arrays large enough for it)",
        k.file, a.loc.line, a.loc.col + column_offset, k.name,
        a.is_store ? "store to" : "load from", p.name,
        r.known ? fmt::format("{} to {}", r.lo, r.hi) : std::string("beyond the 64-bit range"),
        c.dim, shape_text(shape, p.type.rank)));
  }
}

}  // namespace tack::detail
