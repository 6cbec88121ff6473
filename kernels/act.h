// act: activation of x (b, h, n, d), optionally softmax along the features (act_dim -1) or the
// sequence (act_dim -2). Our CUDA kernels, torch-free launch API (kernels/act/).
//   forward  o = f(x)                      bytes 2|x| (none: 0, the caller returns x itself)
//   backward dx = f'(x) applied to do      bytes 3|x| (none: 0, the caller returns do itself)
// softmax over the sequence reads its inputs twice: fwd 3|x|, bwd 5|x|
// (kernels/rows1d/softmax_seq.cuh).
// For act none these functions copy x (or do) into out when out is a different buffer.
#pragma once
#include "args1d.h"

namespace opbench::kernels {

// Bytes of workspace the call needs (softmax over n with the split or resident strategy), else 0.
size_t act_workspace_bytes(const ActArgs& a, bool backward);
// o = act(x): a.x -> a.out.
void act_forward(const ActArgs& a);
// dx from x and do: a.x, a.dout -> a.out.
void act_backward(const ActArgs& a);

}  // namespace opbench::kernels
