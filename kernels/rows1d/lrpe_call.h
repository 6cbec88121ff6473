// The 1d row machinery's Call of an lrpe op (lrpe_cosine: pieces of d, output rows of 2d;
// lrpe_rotate: halves of d), with the checks of the arguments the two ops share.
#pragma once
#include <string>

#include "kernels/args1d.h"
#include "kernels/common.h"
#include "kernels/rows1d/plan.h"

namespace opbench::kernels::rows1d {

// The Call of an lrpe op (cosine: pieces of d, output rows of 2d; rotate: halves of d).
// Validates the arguments the two ops share; throws KernelError with a one-line reason.
inline Call lrpe_call(const LrpeArgs& a, bool bwd, bool rotate) {
  const char* op = rotate ? "lrpe_rotate" : "lrpe_cosine";
  const std::string o = op;
  if (a.b < 1 || a.n < 1 || a.h < 1)
    throw KernelError(o + ": b, n and h must be >= 1 (got b=" + std::to_string(a.b) + ", n=" +
                      std::to_string(a.n) + ", h=" + std::to_string(a.h) + ")");
  if (rotate ? (a.d < 2 || a.d > 256 || a.d % 2 != 0) : (a.d < 1 || a.d > 256))
    throw KernelError(o + (rotate ? ": d must be even and in [2, 256], got "
                                  : ": d must be in [1, 256], got ") +
                      std::to_string(a.d));
  if (a.offset < 0) throw KernelError(o + ": offset must be >= 0, got " + std::to_string(a.offset));
  if (a.theta == nullptr) throw KernelError(o + ": null theta pointer");
  if (a.theta_sh < 0 || a.theta_sk < 0)
    throw KernelError(o + ": theta strides must be >= 0 (0 broadcasts)");
  bool seq = false;
  if (a.act == Act::softmax) {
    if (a.act_dim == 1 || a.act_dim == -3) seq = true;
    else if (a.act_dim != -1 && a.act_dim != 3)
      throw KernelError(o + ": act_dim must be -1 (features) or 1 (sequence) for softmax, got " +
                        std::to_string(a.act_dim));
  }
  Call c;
  c.op = op;
  c.dtype = a.dtype;
  c.act = a.act;
  c.seq = seq;
  c.bwd = bwd;
  c.x = a.x;
  c.dout = a.dout;
  c.out = a.out;
  c.theta = a.theta;
  c.th_sh = a.theta_sh;
  c.th_sk = a.theta_sk;
  c.offset = a.offset;
  c.B = a.b, c.H = a.h, c.N = a.n, c.D = int(a.d);
  c.lrpe_layout = true;
  c.piece = rotate ? int(a.d / 2) : int(a.d);
  c.xhalf = rotate ? int(a.d / 2) : 0;
  c.ohalf = rotate ? int(a.d / 2) : int(a.d);
  c.orow_len = rotate ? int(a.d) : int(2 * a.d);
  c.ws = a.workspace;
  c.ws_bytes = a.workspace_bytes;
  c.strategy = a.strategy;
  c.stream = a.stream;
  return c;
}

}  // namespace opbench::kernels::rows1d
