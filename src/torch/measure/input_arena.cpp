#include "torch/measure/input_arena.hpp"

#include <c10/core/ScalarType.h>

namespace opbench {

constexpr int64_t kLeadStep = int64_t(64) << 10;  // 64 KiB
constexpr int64_t kLeadSteps = 1024;              // up to 64 MiB
constexpr int64_t kTensorAlign = 512;             // the caching allocator's own rounding

int64_t random_lead(std::mt19937_64& rng) { return int64_t(rng() % kLeadSteps) * kLeadStep; }

static int64_t aligned(int64_t bytes) { return (bytes + kTensorAlign - 1) / kTensorAlign * kTensorAlign; }

static int64_t bytes_of(const TensorShape& s) {
  int64_t n = 1;
  for (int64_t d : s.sizes) n *= d;
  return n * int64_t(c10::elementSize(s.dtype));
}

std::vector<at::Tensor> carve_tensors(const std::vector<TensorShape>& shapes, const at::TensorOptions& opts,
                                      int64_t lead) {
  std::vector<int64_t> offsets;
  int64_t end = lead;
  for (const auto& s : shapes) {
    offsets.push_back(end);
    end += aligned(bytes_of(s));
  }
  at::Tensor arena = at::empty({std::max<int64_t>(end, 1)}, opts.dtype(at::kByte));
  char* base = static_cast<char*>(arena.data_ptr());
  std::vector<at::Tensor> out;
  for (size_t i = 0; i < shapes.size(); ++i)
    out.push_back(at::for_blob(base + offsets[i], shapes[i].sizes)
                      .options(opts.dtype(shapes[i].dtype))
                      .deleter([arena](void*) {})
                      .make_tensor());
  return out;
}

}  // namespace opbench
