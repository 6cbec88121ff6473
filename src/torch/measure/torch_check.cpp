#include "torch/measure/torch_check.hpp"

#include <c10/util/Exception.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "torch/measure/torch_executor.hpp"

namespace opbench {

at::ScalarType reference_dtype(const at::Device& device, at::ScalarType storage) {
  if (device.is_cpu() || storage == at::kFloat || storage == at::kDouble) return at::kDouble;
  return at::kFloat;
}

namespace {

double ratio(double num, double den) { return den > 0 ? num / den : num; }

// The errors of one output against its reference of the truth: the difference made once in the
// reference's dtype, both of its norms read back in one copy.
OutputErrors errors_of(const at::Tensor& out, const at::Tensor& ref, double ref_norm, double ref_max) {
  if (ref.numel() == 0) return {};
  const at::Tensor diff = at::sub(out, ref);
  const at::Tensor norms =
      at::stack({at::linalg_vector_norm(diff, 2), at::linalg_vector_norm(diff, INFINITY)}).to(at::kCPU, at::kDouble);
  return {ratio(norms[0].item<double>(), ref_norm), ratio(norms[1].item<double>(), ref_max)};
}

// The max of two figures, NaN winning (a NaN output never passes).
double worst(double a, double b) { return std::isnan(a) || std::isnan(b) ? std::nan("") : std::max(a, b); }

}  // namespace

Truth make_truth(const std::vector<at::Tensor>& ref) {
  Truth t;
  std::vector<at::Tensor> scales;  // each output's norm and largest magnitude (0 for an empty one)
  for (const at::Tensor& r : ref) {
    const at::Tensor wide = r.to(at::promote_types(at::kFloat, r.scalar_type()));
    t.outputs.push_back(wide);
    const at::Tensor none = at::zeros({}, wide.options());
    scales.push_back(wide.numel() ? at::linalg_vector_norm(wide, 2) : none);
    scales.push_back(wide.numel() ? at::linalg_vector_norm(wide, INFINITY) : none);
  }
  if (scales.empty()) return t;
  const at::Tensor host = at::stack(scales).to(at::kCPU, at::kDouble);
  for (size_t i = 0; i < t.outputs.size(); ++i) {
    t.norm.push_back(host[2 * i].item<double>());
    t.max.push_back(host[2 * i + 1].item<double>());
  }
  return t;
}

OutputErrors output_errors(const std::vector<at::Tensor>& out, const Truth& truth) {
  const std::vector<at::Tensor>& ref = truth.outputs;
  if (out.size() != ref.size())
    throw std::runtime_error("check: " + std::to_string(out.size()) + " outputs, the reference gives " +
                             std::to_string(ref.size()));
  OutputErrors all;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].sizes() != ref[i].sizes())
      throw std::runtime_error("check: output shape " + std::string(c10::str(out[i].sizes())) +
                               " differs from the reference's " + c10::str(ref[i].sizes()));
    const OutputErrors e = errors_of(out[i], ref[i], truth.norm[i], truth.max[i]);
    all.norm = worst(all.norm, e.norm);
    all.max = worst(all.max, e.max);
  }
  return all;
}

void ReferenceCheck::release() {
  truth_ = Truth();
  forms_.clear();
  key_.clear();
}

// The inputs in the reference's dtype: every floating tensor upcast (the float32 theta too on
// the CPU), the values unchanged.
static Inputs upcast(const Inputs& in, at::ScalarType wide) {
  auto up = [&](const at::Tensor& t) {
    return t.defined() && at::isFloatingType(t.scalar_type()) && t.scalar_type() != wide ? t.to(wide) : t;
  };
  Inputs out;
  for (const auto& t : in.tensors) out.tensors.push_back(up(t));
  out.grad_out = up(in.grad_out);
  return out;
}

// The reference code's own error: the largest of the reference's and of the op's other forms
// of it (Provider::reference_form), each run in the storage dtype. A form that cannot run here
// (out of memory) adds nothing.
void ReferenceCheck::widen_by_forms(const Point& point, const Inputs& inputs, const Truth& truth) {
  for (const Provider& form : all_providers()) {
    if (form.op != point.op || !form.reference_form) continue;
    try {
      const OutputErrors e = output_errors(form.prepare(point.params, inputs)(), truth);
      forms_[form.name] = e;
      own_.norm = std::max(own_.norm, e.norm);
      own_.max = std::max(own_.max, e.max);
    } catch (const std::exception&) {
    }
  }
}

void ReferenceCheck::compute(const Provider& reference, const Point& point, const Inputs& inputs,
                             const at::Device& device) {
  release();
  try {
    const at::ScalarType wide = reference_dtype(device, scalar_type(point.params.s("dtype")));
    Truth truth = make_truth(reference.prepare(point.params, upcast(inputs, wide))());
    own_ = output_errors(reference.prepare(point.params, inputs)(), truth);
    forms_[reference.name] = own_;
    widen_by_forms(point, inputs, truth);
    truth_ = std::move(truth);
  } catch (const std::exception&) {
    // Out of memory in the wider dtype, or a reference that cannot take these inputs: the
    // cell's points stay unchecked (the provider's own failure, if any, shows in its measure).
    release();
  }
}

bool ReferenceCheck::check(const Point& point, const std::string& cell_key, const Inputs& inputs,
                           const at::Device& device, const Call& call, bool plain, Result& r) {
  const Provider* reference = find_reference(point.op);
  if (!reference || !checked_.insert(cell_key + "|" + point.provider).second) return false;
  if (key_ != cell_key) {
    compute(*reference, point, inputs, device);
    key_ = cell_key;
  }
  if (truth_.empty()) return false;
  const auto form = plain ? forms_.find(point.provider) : forms_.end();
  const OutputErrors got = form != forms_.end() ? form->second : output_errors(call(), truth_);
  const CheckFigures f{got.norm, got.max, own_.norm, own_.max};
  set_check(r, f, !check_passes(point.params.s("dtype"), f));
  return true;
}

}  // namespace opbench
