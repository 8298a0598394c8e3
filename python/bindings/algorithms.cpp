// tack._tack.algorithms: the C++ tack::algorithms, for the thin wrappers of tack.algorithms.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cmath>

#include "ext.hpp"

namespace tack::python {

// A Python int for integer results (u64 ones stay positive), a float for float ones.
nb::object host_number(const Scalar& s) {
  if (is_float(s.dtype)) return nb::float_(s.value);
  if (s.dtype == DType::Bool) return nb::bool_(s.int_value != 0);
  if (s.dtype == DType::U64)
    return nb::steal(PyLong_FromUnsignedLongLong(static_cast<uint64_t>(s.int_value)));
  return nb::int_(s.int_value);
}

void bind_algorithm_sorts(nb::module_& m);

void bind_algorithms(nb::module_& parent) {
  nb::module_ m = parent.def_submodule("algorithms", "tack::algorithms (see tack.algorithms)");
  namespace al = tack::algorithms;
  m.def("sum", [](const Array& a) { return host_number(al::sum(a)); });
  m.def("min", [](const Array& a) { return host_number(al::min(a)); });
  m.def("max", [](const Array& a) { return host_number(al::max(a)); });
  m.def("absmax", [](const Array& a) { return host_number(al::absmax(a)); });
  m.def("count_nonzero", [](const Array& a) { return al::count_nonzero(a); });
  m.def("dot", [](const Array& a, const Array& b) { return host_number(al::dot(a, b)); });
  m.def("mean", [](const Array& a) { return al::mean(a); });
  m.def("var", [](const Array& a, int64_t ddof) { return al::var(a, ddof); });
  m.def("std", [](const Array& a, int64_t ddof) { return al::stddev(a, ddof); });
  m.def("norm", [](const Array& a, double ord) { return al::norm(a, ord); });
  m.def("inclusive_scan",
        [](const Array& src, Array& dst) { return host_number(al::inclusive_scan(src, dst)); });
  m.def("exclusive_scan",
        [](const Array& src, Array& dst) { return host_number(al::exclusive_scan(src, dst)); });
  m.def("scan_dtype", [](nb::handle t) { return dtype_object(al::scan_dtype(to_dtype(t))); });
  m.def("histogram",
        [](const Array& data, int64_t bins, std::optional<std::pair<double, double>> range) {
          al::Histogram h = al::histogram(data, bins, range);
          return nb::make_tuple(h.counts, h.edges);
        });
  bind_algorithm_sorts(m);
}

namespace {

algorithms::Op to_op(const std::string& op) {
  if (op == "sum") return algorithms::Op::Sum;
  if (op == "min") return algorithms::Op::Min;
  if (op == "max") return algorithms::Op::Max;
  throw ValueError("tack.algorithms: op='" + op + "' is not one of 'sum', 'min' and 'max'");
}

nb::tuple pair(std::pair<Array, Array> p) {
  return nb::make_tuple(std::move(p.first), std::move(p.second));
}

}  // namespace

void bind_algorithm_sorts(nb::module_& m) {
  namespace al = tack::algorithms;
  m.def("argsort", &al::argsort);
  m.def("sort", &al::sort);
  m.def("sort_by_key", [](const Array& k, const Array& v) { return pair(al::sort_by_key(k, v)); });
  m.def("gather", &al::gather);
  m.def("unique", [](const Array& k) { return pair(al::unique(k)); });
  m.def("reduce_by_key", [](const Array& k, const Array& v, const std::string& op) {
    return pair(al::reduce_by_key(k, v, to_op(op)));
  });
  m.def("segmented_reduce", [](const Array& v, const Array& o, const std::string& op) {
    return al::segmented_reduce(v, o, to_op(op));
  });
  m.def("segmented_scan", &al::segmented_scan);
  m.def("concat", &al::concat);
  m.def("copy", [](const Array& src, Array& dst) { al::copy(src, dst); });
  m.def("fill", [](Array& dst, double value, int64_t begin, int64_t end) {
    al::fill(dst, value, begin, end);
  });
}

}  // namespace tack::python
