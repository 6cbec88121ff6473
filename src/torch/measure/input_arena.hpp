// A speed point's inputs on a GPU, carved from one allocation at a random lead: the caching
// allocator hands a process the same few blocks for a cell's inputs round after round, so
// without it every round of one process read its inputs from the same physical pages, and a
// page placement that favoured or slowed a call counted once per process, not once per round.
// The lead moves them by a multiple of 64 KiB over 64 MiB, drawn anew for each round's inputs.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <random>
#include <vector>

namespace opbench {

struct TensorShape {
  std::vector<int64_t> sizes;
  at::ScalarType dtype;
};

// A lead drawn from `rng`: 0 to 64 MiB in steps of 64 KiB.
int64_t random_lead(std::mt19937_64& rng);

// Contiguous tensors of these shapes on the device of `opts`, in one allocation: the first at
// `lead` bytes, each next at the following multiple of 512 bytes. Each keeps the allocation
// alive; its values are unset.
std::vector<at::Tensor> carve_tensors(const std::vector<TensorShape>& shapes, const at::TensorOptions& opts,
                                      int64_t lead);

}  // namespace opbench
