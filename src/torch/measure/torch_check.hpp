// The correctness check of speed points on LibTorch (the rule: check_rule.hpp). Once per table
// cell the op's reference provider (Provider::reference) runs on the cell's inputs upcast to a
// wider dtype, which gives the truth, and on the inputs as they are, which gives the reference
// code's own error in the storage dtype; each provider's output is then held against the truth
// once per cell. Untimed: it runs between a provider's prepare and its timing.
#pragma once
#include <ATen/ATen.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "record/check_rule.hpp"
#include "record/point.hpp"
#include "torch/providers/provider.hpp"

namespace opbench {

// The dtype the reference computes in: float64 on the CPU, and wherever the storage dtype is
// float32 (a float32 reference of float32 outputs would be another rounding of the same
// kind); float32 for bf16 and fp16 on a GPU.
at::ScalarType reference_dtype(const at::Device& device, at::ScalarType storage);

// The errors of a provider's outputs against the reference's (OutputErrors::norm, ::max).
struct OutputErrors {
  double norm = 0, max = 0;
};

// Reference outputs made ready for many comparisons: each in its dtype for the errors (at least
// float32) with its norm and largest magnitude computed once, so that a comparison reads each
// element of the output and the reference once and waits on the device once.
struct Truth {
  std::vector<at::Tensor> outputs;
  std::vector<double> norm, max;  // ||ref|| and max|ref|, per output
  bool empty() const { return outputs.empty(); }
};
Truth make_truth(const std::vector<at::Tensor>& ref);

// The normwise error ||out - ref|| / ||ref|| and the largest element's max|out - ref| / max|ref|
// (plain differences where ref is all zeros), each the largest over the outputs, computed in
// ref's dtype (at least float32). Throws std::runtime_error when the outputs' count or shapes
// differ from ref's.
OutputErrors output_errors(const std::vector<at::Tensor>& out, const Truth& ref);

class ReferenceCheck {
 public:
  // Checks the output of `call` (the point's provider, prepared on `inputs`, the inputs of the
  // cell `cell_key`) once per cell and provider: sets the result's check figures. Nothing for
  // a point already checked, an op without a reference provider, or a cell whose reference
  // could not be computed (out of memory in the wider dtype): the point stays unchecked.
  // A `plain` call (no fault planted in it) of the reference provider or of one of the op's
  // other reference forms is not called again: its figures are the reference code's own,
  // computed on these inputs and on this device a moment before. Returns whether the
  // provider's computation has run here just now (its first call's lazy work is done).
  bool check(const Point& point, const std::string& cell_key, const Inputs& inputs, const at::Device& device,
             const Call& call, bool plain, Result& r);
  // Frees the truth (before a memory point, whose peak counts everything allocated).
  void release();

 private:
  void compute(const Provider& reference, const Point& point, const Inputs& inputs, const at::Device& device);
  void widen_by_forms(const Point& point, const Inputs& inputs, const Truth& truth);
  std::string key_;                 // the cell whose truth is held ("" none)
  Truth truth_;                     // its reference outputs in the wider dtype (empty: unavailable)
  OutputErrors own_;                // the reference code's own errors in the storage dtype
  std::map<std::string, OutputErrors> forms_;  // each reference form's errors, by provider
  std::set<std::string> checked_;   // "cell key|provider" checked so far
};

}  // namespace opbench
