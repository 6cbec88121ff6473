// The correctness check's rule (docs/measurement.md, "Checks"). A provider's output is compared
// with the op's reference computation run in a wider dtype than the storage dtype (the truth),
// by two figures: the normwise error ||out - ref|| / ||ref|| and the largest element's error
// max|out - ref| / max|ref|. Each passes when it is within max(the dtype's floor, 2 x the same
// figure of the reference code itself run in the storage dtype), the rule flash-attention's
// tests use; the output passes when both do. The normwise error sees an output that is broadly
// less accurate (a wrong scale, precision lost); the largest element's sees a local fault (one
// wrong element, a block left unwritten) that a norm over millions of elements dilutes.
// Torch-free: the sweep and the LibTorch check read it (a failed check in words:
// record/check_note.hpp).
#pragma once
#include <string>

#include "record/result.hpp"

namespace opbench {

// The figures of one output against the truth, and the reference code's own (-1: not known).
struct CheckFigures {
  double err = -1, max_err = -1;          // the provider's output
  double ref_err = -1, ref_max_err = -1;  // the reference code run in the storage dtype
};

// The smallest tolerance for a storage dtype (bf16, fp16, fp32): 2^-7, 2^-10 and 2^-16.
// Throws std::invalid_argument for another dtype.
double check_floor(const std::string& dtype);
// max(check_floor(dtype), 2 x the reference code's figure); the floor alone when that is unknown.
double check_tolerance(const std::string& dtype, double reference_figure);
// Both figures within their tolerances (a NaN never is).
bool check_passes(const std::string& dtype, const CheckFigures& f);

// The figures a result carries, and back.
CheckFigures check_figures(const Result& r);
void set_check(Result& r, const CheckFigures& f, bool failed);

}  // namespace opbench
