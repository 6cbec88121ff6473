#include "record/check_rule.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace opbench {

// bf16 and fp16: twice the unit roundoff (2^-8, 2^-11). An output computed accurately and
// rounded once to the storage dtype is within one unit of the truth element by element and
// within about 0.4 of one in the norm; the factor two leaves room for a kernel that rounds
// twice (an intermediate stored in the storage dtype) or evaluates in fast float32 arithmetic
// just before its rounding. fp32: 2^-16, 256 units of roundoff: float32 kernels use the
// hardware's approximate exp, sin and cos (__expf: a few ulp; __sinf: 2^-21.4 absolute) and
// reassociate long reductions, which a float32 reference code does not, while every fault the
// check is for (a wrong element, scale or block) is orders of magnitude larger.
double check_floor(const std::string& dtype) {
  if (dtype == "bf16") return std::ldexp(1.0, -7);
  if (dtype == "fp16") return std::ldexp(1.0, -10);
  if (dtype == "fp32") return std::ldexp(1.0, -16);
  throw std::invalid_argument("unknown dtype '" + dtype + "'");
}

double check_tolerance(const std::string& dtype, double reference_figure) {
  const double floor = check_floor(dtype);
  return reference_figure >= 0 ? std::max(floor, 2 * reference_figure) : floor;
}

bool check_passes(const std::string& dtype, const CheckFigures& f) {
  return f.err <= check_tolerance(dtype, f.ref_err) && f.max_err <= check_tolerance(dtype, f.ref_max_err);
}

CheckFigures check_figures(const Result& r) { return {r.rel_err, r.max_err, r.ref_err, r.ref_max_err}; }

void set_check(Result& r, const CheckFigures& f, bool failed) {
  r.rel_err = f.err;
  r.max_err = f.max_err;
  r.ref_err = f.ref_err;
  r.ref_max_err = f.ref_max_err;
  r.check_failed = failed;
}

}  // namespace opbench
