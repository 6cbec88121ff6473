// The 1d row machinery's kernel arguments (Args, passed by value) and the constants the host
// plan and the kernels share: threads per block, the theta table's size, and how the
// activation is applied (Soft).
#pragma once
#include <cstdint>

namespace opbench::kernels::rows1d {

constexpr int kThreads = 256;
// theta table entries in shared memory: HB heads x U units x V (tiles of HB heads), or one
// piece of <= 256 entries (block strategy).
constexpr int kTab = 1024;
constexpr int kTabPiece = 256;

// How the activation is applied: elementwise, softmax over the row's features, or softmax
// over the sequence with precomputed column statistics.
enum class Soft { elem, feat, seq };

// Kernel arguments, passed by value.
struct Args {
  const void* x = nullptr;
  const void* dout = nullptr;  // bwd: gradient of the output (output-shaped)
  void* out = nullptr;         // fwd: o (output-shaped); bwd: dx (x-shaped)
  const float* theta = nullptr;
  int64_t th_sh = 0, th_sk = 0;
  int64_t offset = 0;
  const float* stats = nullptr;  // softmax over n: per column m + log(l) [, sum(o * g)]
  float* partial = nullptr;      // split strategy: per (b, h, chunk, k) partial statistics
  int64_t B = 0, H = 0, N = 0;
  int D = 0;       // features of a row of x
  int U = 0;       // units per piece
  int xhalf = 0;   // element offset of piece 1 in a row of x (rotate: d / 2)
  int ohalf = 0;   // element offset of piece 1 in a row of the output (cosine: d, rotate: d / 2)
  int64_t xsb = 0, xsh = 0, xss = 0;  // row strides of x and dx
  int64_t osb = 0, osh = 0, oss = 0;  // row strides of o and dout
  int tpr_shift = 0;   // log2 threads covering a whole row
  int tprc_shift = 0;  // log2 threads of a row group (block strategy: a column group)
  int hb_shift = 0;    // log2 heads per tile
  int steps = 1;       // steps of RPT rows per tile
  int64_t tiles_s = 1; // tiles along s
  int h_fast = 0;      // tile order: heads fastest (lrpe) or s fastest (act)
  int64_t ncols = 0;   // B * H * D
  int nchunks = 1;     // split strategy: chunks along s
  bool cs = true;      // streaming stores (st.global.cs) for the outputs
};

// n / d for 32-bit unsigned n by a multiply-high (Granlund-Montgomery): with l = ceil(log2 d)
// and mul = floor(2^32 (2^l - d) / d) + 1, n / d = (umulhi(n, mul) + n) >> l for every n.
struct FastDiv {
  uint32_t d = 1, mul = 1, shift = 0;
  FastDiv() = default;
  explicit FastDiv(uint32_t divisor) : d(divisor < 1 ? 1 : divisor) {
    while ((uint64_t(1) << shift) < d) ++shift;
    mul = uint32_t(((uint64_t(1) << 32) * ((uint64_t(1) << shift) - d)) / d + 1);
  }
#ifdef __CUDACC__
  __device__ __forceinline__ uint32_t div(uint32_t n) const {
    return uint32_t((uint64_t(__umulhi(n, mul)) + n) >> shift);
  }
#endif
};

// Softmax over the sequence, resident strategy (seq_resident.cuh): the launch's geometry, from
// resident_geometry (plan.h). A group is one column group of one (b, h) slab, cut along n into
// G chunks of `rows` rows; item = group * G + chunk; block i takes items i, i + grid, ...
struct ResArgs {
  int stages = 3;          // shared-memory stages per block: chunks in flight
  int sps = 1;             // steps (RPT rows per row group) per chunk
  int64_t rows = 1;        // rows per chunk
  int G = 1;               // chunks per group
  int cgs = 1;             // column groups per row that hold units (groups per slab)
  uint32_t groups = 0;     // B * H * cgs
  uint32_t items = 0;      // groups * G (< 2^31)
  FastDiv div_g, div_cgs, div_h;  // by G, cgs and H
  int ncg = 0;             // statistics per group: its columns
  int step_slots = 0;      // 16-byte slots of one step (a team's threads x units each)
  unsigned* counters = nullptr;  // per group: chunks whose partial statistics are written
  float* partial = nullptr;      // per item: its statistics [stat][ncg] (G > 1)
};

}  // namespace opbench::kernels::rows1d
