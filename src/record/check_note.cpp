#include "record/check_note.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "record/check_rule.hpp"

namespace opbench {

namespace {

std::string figure(const char* what, double err, double ref, double tolerance) {
  char buf[160];
  if (ref >= 0)
    std::snprintf(buf, sizeof buf, "%s %.3g (reference code %.3g, tolerance %.3g)", what, err, ref, tolerance);
  else
    std::snprintf(buf, sizeof buf, "%s %.3g (tolerance %.3g)", what, err, tolerance);
  return buf;
}

}  // namespace

std::string check_note(const Result& r, const std::string& dtype) {
  const CheckFigures f = check_figures(r);
  if (f.max_err < 0 && f.ref_err < 0) {  // stored before the reference figures
    char buf[64];
    std::snprintf(buf, sizeof buf, "relative error %.3g over tolerance", f.err);
    return buf;
  }
  auto tol = [&](double ref) {
    try {
      return check_tolerance(dtype, ref);
    } catch (const std::invalid_argument&) {
      return std::nan("");
    }
  };
  return figure("error", f.err, f.ref_err, tol(f.ref_err)) + "; " +
         figure("largest element", f.max_err, f.ref_max_err, tol(f.ref_max_err));
}

}  // namespace opbench
