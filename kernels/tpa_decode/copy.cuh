// tpa_decode device helpers: global -> shared copies of the kernels' tiles (rows of bk, bv, ak,
// av with padded shared-memory rows, rows past the valid ones zeroed) and of flat blocks (the q
// inputs), through cp.async where the widths allow.
#pragma once
#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/tpa_decode/ptx.cuh"

namespace opbench::kernels::tpa {

// Rows [0, rows) of a tile whose rows are 2^lg_cpr 16-byte chunks (2^lg_cpr divides nthr),
// global (row stride ss) -> shared (row stride ds), asynchronously: a thread keeps one column
// and its rows step by nthr >> lg_cpr.
template <typename T>
__device__ __forceinline__ void copy_rows16(T* dst, int ds, const T* src, int64_t ss, int rows,
                                            int lg_cpr, int tid, int nthr) {
  const int c = (tid & ((1 << lg_cpr) - 1)) * (16 / static_cast<int>(sizeof(T)));
  const int rstep = nthr >> lg_cpr;
  int r = tid >> lg_cpr;
  const T* sp = src + r * ss + c;
  const int64_t sstep = rstep * ss;
  uint32_t d = smem_u32(dst + r * ds + c);
  const uint32_t dstep = static_cast<uint32_t>(rstep * ds * sizeof(T));
  for (; r < rows; r += rstep, sp += sstep, d += dstep)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(sp));
}

// Rows [0, rows) x columns [0, cols) of a tile, global (row stride ss) -> shared (row stride
// ds); rows >= valid are written as zeros. Asynchronous unless w == 0. lg_cpr >= 0 (chunks_log2):
// a full-width row is 2^lg_cpr chunks of w bytes and 2^lg_cpr divides nthr; when this row is
// that wide (a block's last head group may be narrower) a thread keeps one column and its rows
// step by nthr >> lg_cpr (shifts only: this runs once per tile and stream).
template <typename T>
__device__ __forceinline__ void load_rows(T* dst, int ds, const T* src, int64_t ss, int valid,
                                          int rows, int cols, int w, int lg_cpr, int tid,
                                          int nthr) {
  if (lg_cpr >= 0 && cols * static_cast<int>(sizeof(T)) == w << lg_cpr) {
    if (w == 16 && valid >= rows) {  // the common case: whole tiles of 16-byte chunks
      copy_rows16(dst, ds, src, ss, rows, lg_cpr, tid, nthr);
      return;
    }
    const int c = (tid & ((1 << lg_cpr) - 1)) * (w / static_cast<int>(sizeof(T)));
    const int rstep = nthr >> lg_cpr;
    int r = tid >> lg_cpr;
    const T* sp = src + r * ss + c;
    const int64_t sstep = rstep * ss;
    for (; r < rows; r += rstep, sp += sstep) {
      const bool ok = r < valid;
      cp_async(dst + r * ds + c, ok ? sp : src, w, ok ? w : 0);
    }
    return;
  }
  if (w == 0) {
    const int n = rows * cols;
    for (int i = tid; i < n; i += nthr) {
      const int rr = i / cols, c = i % cols;
      dst[rr * ds + c] = rr < valid ? src[rr * ss + c] : Storage<T>::from_f(0.f);
    }
    return;
  }
  const int epc = w / static_cast<int>(sizeof(T));
  const int cpr = cols / epc;
  const int n = rows * cpr;
  for (int i = tid; i < n; i += nthr) {
    const int rr = i / cpr, c = (i % cpr) * epc;
    const bool ok = rr < valid;
    cp_async(dst + rr * ds + c, src + (ok ? rr : 0) * ss + c, w, ok ? w : 0);
  }
}

// A flat block of nbytes, global -> shared, asynchronously (every copy in flight at once; the
// caller commits the group). `dst` is 16-byte aligned; the widest cp.async that the source and
// size allow, plain copies otherwise.
__device__ __forceinline__ void copy_flat_async(void* dst, const void* src, int nbytes, int tid,
                                                int nthr) {
  const uintptr_t bits = reinterpret_cast<uintptr_t>(src) | static_cast<uintptr_t>(nbytes);
  const int w = bits % 16 == 0 ? 16 : bits % 8 == 0 ? 8 : bits % 4 == 0 ? 4 : 0;
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  if (w == 0) {  // 2-byte elements at odd offsets: plain copies (rare shapes only)
    for (int i = tid; i < nbytes / 2; i += nthr)
      reinterpret_cast<uint16_t*>(d)[i] = reinterpret_cast<const uint16_t*>(s)[i];
    return;
  }
  for (int i = tid * w; i < nbytes; i += nthr * w) cp_async(d + i, s + i, w, w);
}

}  // namespace opbench::kernels::tpa
