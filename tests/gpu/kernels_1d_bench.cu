// Benchmark of our 1d CUDA kernels (act, lrpe_cosine, lrpe_rotate) against their memory floor.
// Standalone (no torch, no gtest).
// Usage: kernels_1d_bench [csv_path] [--quick] [--default-only] [--small] [--seq] [--op act|lrpe_cosine|lrpe_rotate]
// (--seq: softmax over the sequence only, every strategy at n = 256 .. 32768 and the resident
// strategy's tunings, against the one-pass and the two-pass floor; with
// --profile one call per configuration (for Nsight Compute), --n N that n alone.)
// (--small: n = 256 .. 4096, the elementwise acts with a grid of flat-kernel launch shapes,
// lrpe_cosine's backward (none and the elementwise acts) with its flat kernel against the row
// kernel, and for silu the row kernel's blocks per SM x batch rows x prefetch x stores.)
// (--default-only: n = 32768 and each kernel's default configuration only; --op: one op only;
// --configs a,b: only the configurations of those names, e.g. --small --configs default,t512u1.)
//
// 1. Peak bandwidth: a 2 GiB device-to-device cudaMemcpy, bytes read + written, median of reps.
// 2. Cost of one empty kernel launch (event-timed single launch; back-to-back average).
// 3. For b = 12, h = 12, d = 128, bf16, n = 32768 and n = 256: every op x act variant x fwd/bwd,
//    and for softmax over the sequence each strategy (also at n = 4096, to place the switch);
//    at n = 32768 also with and without the L2 prefetch for every kernel (the default picks per
//    variant), and split with one wave of statistics blocks. Each sample: a 256 MiB memset flushes the
//    L2, then CUDA events around the one call; the median of the samples is reported.
//    floor = minimal bytes (OPS.md) / measured peak; % of floor = floor / time. Softmax over the
//    sequence reads its inputs twice: its target is the two-pass floor (2 x inputs + outputs).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/act.h"
#include "kernels/lrpe_cosine.h"
#include "kernels/lrpe_rotate.h"
#include "bench_timer.cuh"
#include "kernels_1d_util.cuh"

using opbench::kernels::Act;
using opbench::kernels::ActArgs;
using opbench::kernels::DType;
using opbench::kernels::LrpeArgs;
using opbench::kernels::SeqStrategy;

namespace {

__global__ void empty_kernel() {}

// Median (and min) milliseconds of `reps` samples of f, each after an L2 flush.
struct Timer {
  opbench::bench::FlushTimer t;
  template <class F>
  std::pair<double, double> time(F f, int reps, int warmup = 3) {
    std::vector<double> v = t.sorted_samples(f, reps, warmup);
    return {v[v.size() / 2], v.front()};
  }
};

enum class Op { act, cos, rot };
const char* op_name(Op o) { return o == Op::act ? "act" : o == Op::cos ? "lrpe_cosine" : "lrpe_rotate"; }

struct Variant {
  Act act;
  bool seq;
  SeqStrategy st;
  const char* name;
};

// Minimal bytes in units of |x| (OPS.md): inputs read once, outputs written once. two_pass:
// softmax over n reads its inputs twice.
double floor_units(Op op, bool bwd, Act act, bool seq, bool two_pass) {
  const double needx = act != Act::none ? 1 : 0;
  double in = 0, out = 0;
  switch (op) {
    case Op::act:  // x [, do] -> o or dx; none moves nothing (the provider returns x or do)
      if (act == Act::none) return 0;
      in = bwd ? 2 : 1, out = 1;
      break;
    case Op::cos:  // fwd x -> (cos, sin) halves 2|x|; bwd do (2|x|) [+ x] -> dx
      in = bwd ? 2 + needx : 1, out = bwd ? 1 : 2;
      break;
    case Op::rot:  // fwd x -> o; bwd do [+ x] -> dx
      in = bwd ? 1 + needx : 1, out = 1;
      break;
  }
  return (seq && two_pass ? 2 * in : in) + out;
}

struct Row {
  std::string op, mode, act, strat, config;
  int64_t n;
  double ms, min_ms, floor_ms, pct, floor2_ms, pct2;
};

// A named tuning configuration (kernels/args1d.h Tuning1d); "default" leaves every field at
// its default (the ops' own per-variant choices).
struct Config {
  std::string name;
  opbench::kernels::Tuning1d t;
};
template <class F>
Config config(std::string name, F set) {
  Config c{std::move(name), {}};
  set(c.t);
  return c;
}

// The rows as CSV (none without a path); 3 when the file cannot be written.
int write_csv(const char* csv, const std::vector<Row>& rows, double peak) {
  if (!csv) return 0;
  FILE* f = std::fopen(csv, "w");
  if (!f) {
    std::fprintf(stderr, "kernels_1d_bench: cannot write %s\n", csv);
    return 3;
  }
  std::fprintf(f, "op,mode,act,strategy,config,n,ms,min_ms,floor_ms,pct_floor,floor2_ms,pct_floor2,peak_GBps\n");
  for (const Row& r : rows)
    std::fprintf(f, "%s,%s,%s,%s,%s,%lld,%.5f,%.5f,%.5f,%.2f,%.5f,%.2f,%.1f\n", r.op.c_str(),
                 r.mode.c_str(), r.act.c_str(), r.strat.c_str(), r.config.c_str(), (long long)r.n,
                 r.ms, r.min_ms, r.floor_ms, r.pct, r.floor2_ms, r.pct2, peak / 1e9);
  std::fclose(f);
  return 0;
}

// One call of an op at b, h, n, d = B, H, n, D on the given buffers (x, g: do, o, thd: theta,
// ws: the workspace, grown to what the call needs).
struct Bufs {
  void *x, *g, *o;
  float* th;
  k1d::DevBuf* ws;
};
std::function<void()> make_call(Op op, Act act, bool seq, SeqStrategy st, bool bwd, int64_t B,
                                int64_t H, int64_t n, int64_t D, DType dt, const Bufs& b) {
  if (op == Op::act) {
    ActArgs aa;
    aa.dtype = dt, aa.act = act, aa.act_dim = seq ? -2 : -1;
    aa.b = B, aa.h = H, aa.n = n, aa.d = D, aa.x = b.x, aa.dout = b.g, aa.out = b.o;
    aa.strategy = st;
    aa.workspace_bytes = opbench::kernels::act_workspace_bytes(aa, bwd);
    aa.workspace = aa.workspace_bytes ? b.ws->get(aa.workspace_bytes) : nullptr;
    if (bwd) return [aa] { opbench::kernels::act_backward(aa); };
    return [aa] { opbench::kernels::act_forward(aa); };
  }
  LrpeArgs la;
  la.dtype = dt, la.act = act, la.act_dim = seq ? 1 : -1;
  la.b = B, la.n = n, la.h = H, la.d = D, la.offset = 0;
  la.x = b.x, la.theta = b.th, la.theta_sh = op == Op::rot ? D / 2 : D, la.theta_sk = 1;
  la.dout = b.g, la.out = b.o, la.strategy = st;
  const bool rot = op == Op::rot;
  la.workspace_bytes = rot ? opbench::kernels::lrpe_rotate_workspace_bytes(la, bwd)
                           : opbench::kernels::lrpe_cosine_workspace_bytes(la, bwd);
  la.workspace = la.workspace_bytes ? b.ws->get(la.workspace_bytes) : nullptr;
  if (rot) {
    if (bwd) return [la] { opbench::kernels::lrpe_rotate_backward(la); };
    return [la] { opbench::kernels::lrpe_rotate_forward(la); };
  }
  if (bwd) return [la] { opbench::kernels::lrpe_cosine_backward(la); };
  return [la] { opbench::kernels::lrpe_cosine_forward(la); };
}

// --seq: softmax over the sequence, every strategy at n = 256 .. 32768 (block up to 4096), and
// at n = 32768 the resident strategy's tunings (column groups, stages, stage size, threads).
// Rows: % of the one-pass floor (pct) and of the two-pass floor (pct2).
// profile: one flushed call per configuration (for Nsight Compute); only_n: that n alone.
void seq_sweep(Timer& tm, double peak, const std::string& only_op, const std::string& only_configs,
               bool profile, int64_t only_n, std::vector<Row>& rows) {
  const int64_t B = 12, H = 12, D = 128;
  const DType dt = DType::bf16;
  using T1 = opbench::kernels::Tuning1d;
  for (int64_t n : {256, 512, 1024, 2048, 4096, 8192, 16384, 32768}) {
    if (only_n > 0 && n != only_n) continue;
    const int64_t nx = B * H * n * D;
    const double xbytes = double(nx) * k1d::esize(dt);
    k1d::DevBuf X, G, O, TH, WS;
    Bufs bufs{X.get(size_t(nx) * 2), G.get(size_t(2 * nx) * 2), O.get(size_t(2 * nx) * 2), nullptr, &WS};
    k1d::fill(bufs.x, dt, nx, 11);
    k1d::fill(bufs.g, dt, 2 * nx, 12);
    const std::vector<float> th = k1d::rotary_theta(H, D);
    bufs.th = static_cast<float*>(TH.get(th.size() * 4));
    K1D_CHECK(cudaMemcpy(bufs.th, th.data(), th.size() * 4, cudaMemcpyHostToDevice));
    const int reps = n >= 8192 ? 25 : 100;
    for (Op op : {Op::act, Op::cos, Op::rot}) {
      if (!only_op.empty() && only_op != op_name(op)) continue;
      for (bool bwd : {false, true})
        for (SeqStrategy st : {SeqStrategy::block, SeqStrategy::split, SeqStrategy::resident}) {
          if (st == SeqStrategy::block && n > 4096) continue;
          std::vector<Config> configs = {config("default", [](T1&) {})};
          if (st == SeqStrategy::resident && (n == 32768 || (n == 4096 && only_configs.empty()))) {
            for (int cg : {1, 2, 4, 8})
              configs.push_back(config("cg" + std::to_string(cg), [cg](T1& t) { t.res_cg = cg; }));
            configs.push_back(config("whole", [](T1& t) { t.res_teams = 0; }));
            configs.push_back(config("whole_cg2", [](T1& t) { t.res_teams = 0, t.res_cg = 2; }));
            configs.push_back(config("st2", [](T1& t) { t.res_stages = 2; }));
            configs.push_back(config("st4kb48", [](T1& t) { t.res_stages = 4, t.res_stage_kb = 48; }));
            configs.push_back(config("kb32", [](T1& t) { t.res_stage_kb = 32; }));
            configs.push_back(config("kb48", [](T1& t) { t.res_stage_kb = 48; }));
            configs.push_back(config("st2kb96", [](T1& t) { t.res_stages = 2, t.res_stage_kb = 96; }));
            configs.push_back(config("t256kb32", [](T1& t) { t.res_threads = 256, t.res_stage_kb = 32; }));
            configs.push_back(config("t256kb16st4", [](T1& t) { t.res_threads = 256, t.res_stage_kb = 16, t.res_stages = 4; }));
          }
          for (const Config& cf : configs) {
            if (!only_configs.empty() && only_configs.find("," + cf.name + ",") == std::string::npos) continue;
            opbench::kernels::tuning_1d() = cf.t;
            Row r;
            r.op = op_name(op), r.mode = bwd ? "bwd" : "fwd", r.act = "softmax_n", r.n = n;
            r.strat = opbench::kernels::seq_strategy_name(st);
            r.config = cf.name;
            r.floor_ms = floor_units(op, bwd, Act::softmax, true, false) * xbytes / peak * 1e3;
            r.floor2_ms = floor_units(op, bwd, Act::softmax, true, true) * xbytes / peak * 1e3;
            try {
              const std::function<void()> call = make_call(op, Act::softmax, true, st, bwd, B, H, n, D, dt, bufs);
              if (profile) {
                r.ms = r.min_ms = tm.t.sample(call, 0);
              } else {
                auto [ms, mn] = tm.time(call, reps);
                r.ms = ms, r.min_ms = mn;
              }
            } catch (const opbench::kernels::KernelError& e) {
              std::printf("%-12s %s %-9s %-12s n=%-6lld n/a: %s\n", r.op.c_str(), r.mode.c_str(),
                          r.strat.c_str(), r.config.c_str(), (long long)n, e.what());
              K1D_CHECK(cudaGetLastError());
              continue;
            }
            r.pct = 100.0 * r.floor_ms / r.ms;
            r.pct2 = 100.0 * r.floor2_ms / r.ms;
            rows.push_back(r);
            std::printf("%-12s %s %-9s %-12s n=%-6lld %9.4f ms (min %.4f)  1-pass floor %.4f ms %6.1f%%  2-pass %6.1f%%\n",
                        r.op.c_str(), r.mode.c_str(), r.strat.c_str(), r.config.c_str(), (long long)n,
                        r.ms, r.min_ms, r.floor_ms, r.pct, r.pct2);
            std::fflush(stdout);
          }
          opbench::kernels::tuning_1d() = T1{};
        }
    }
  }
  // Summary: per op and mode, the default of each strategy at every n, then n = 32768's tunings.
  std::printf("\nSEQ SUMMARY (ms; resident: %% of the one-pass floor)\n");
  std::printf("%-12s %-4s %6s %9s %9s %9s %7s\n", "op", "mode", "n", "block", "split", "resident", "%");
  for (const char* opn : {"act", "lrpe_cosine", "lrpe_rotate"})
    for (const char* mode : {"fwd", "bwd"})
      for (int64_t n : {256, 512, 1024, 2048, 4096, 8192, 16384, 32768}) {
        double v[3] = {0, 0, 0}, pct = 0;
        bool any = false;
        for (const Row& r : rows)
          if (r.op == opn && r.mode == mode && r.n == n && r.config == "default") {
            const int k = r.strat == "block" ? 0 : r.strat == "split" ? 1 : 2;
            v[k] = r.ms, any = true;
            if (k == 2) pct = r.pct;
          }
        if (any)
          std::printf("%-12s %-4s %6lld %9.4f %9.4f %9.4f %6.1f%%\n", opn, mode, (long long)n, v[0], v[1], v[2], pct);
      }
  for (const Row& r : rows)
    if (r.strat == "resident" && r.config != "default")
      std::printf("  n=%-5lld %-12s %s %-12s %9.4f ms %6.1f%%\n", (long long)r.n, r.op.c_str(), r.mode.c_str(),
                  r.config.c_str(), r.ms, r.pct);
}

}  // namespace

int main(int argc, char** argv) {
  const char* csv = nullptr;
  bool quick = false, default_only = false, small = false, seq = false, profile = false;
  int64_t only_n = 0;
  std::string only_op, only_configs;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else if (std::strcmp(argv[i], "--default-only") == 0) default_only = true;
    else if (std::strcmp(argv[i], "--small") == 0) small = true;
    else if (std::strcmp(argv[i], "--seq") == 0) seq = true;
    else if (std::strcmp(argv[i], "--profile") == 0) profile = true;
    else if (std::strcmp(argv[i], "--n") == 0 && i + 1 < argc) only_n = std::atoll(argv[++i]);
    else if (std::strcmp(argv[i], "--op") == 0 && i + 1 < argc) only_op = argv[++i];
    else if (std::strcmp(argv[i], "--configs") == 0 && i + 1 < argc) only_configs = "," + std::string(argv[++i]) + ",";
    else csv = argv[i];
  }
  if (!k1d::have_gpu()) {
    std::fprintf(stderr, "kernels_1d_bench: no CUDA device\n");
    return 3;
  }
  cudaDeviceProp prop{};
  K1D_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount,
              prop.l2CacheSize >> 20);
  Timer tm;

  // 1. Peak bandwidth: 2 GiB device-to-device copy, read + write counted.
  double peak;  // bytes per second
  {
    const size_t bytes = size_t(2) << 30;
    void *s = nullptr, *d = nullptr;
    K1D_CHECK(cudaMalloc(&s, bytes));
    K1D_CHECK(cudaMalloc(&d, bytes));
    k1d::fill(s, DType::f32, int64_t(bytes / 4), 1);
    auto [ms, mn] = tm.time([&] { K1D_CHECK(cudaMemcpyAsync(d, s, bytes, cudaMemcpyDeviceToDevice)); },
                            quick ? 5 : 15);
    peak = 2.0 * double(bytes) / (ms * 1e-3);
    std::printf("peak: 2 GiB D2D copy %.3f ms (min %.3f) -> %.1f GB/s (read + write)\n", ms, mn,
                peak / 1e9);
    K1D_CHECK(cudaFree(s));
    K1D_CHECK(cudaFree(d));
  }

  // 2. Empty kernel launch.
  {
    auto [ms, mn] = tm.time([&] { empty_kernel<<<1, 32>>>(); }, 200, 10);
    cudaEvent_t a, b;
    K1D_CHECK(cudaEventCreate(&a));
    K1D_CHECK(cudaEventCreate(&b));
    const int k = 1000;
    K1D_CHECK(cudaEventRecord(a));
    for (int i = 0; i < k; ++i) empty_kernel<<<1, 32>>>();
    K1D_CHECK(cudaEventRecord(b));
    K1D_CHECK(cudaEventSynchronize(b));
    K1D_CHECK(cudaGetLastError());
    float tot = 0;
    K1D_CHECK(cudaEventElapsedTime(&tot, a, b));
    std::printf("empty kernel: single launch (event-timed median) %.2f us; back-to-back %.2f us per launch\n",
                ms * 1e3, tot * 1e3 / k);
  }

  std::vector<Row> rows;
  if (seq) {
    seq_sweep(tm, peak, only_op, only_configs, profile, only_n, rows);
    return write_csv(csv, rows, peak);
  }

  // 3. The sweep.
  const int64_t B = 12, H = 12, D = 128;
  const DType dt = DType::bf16;
  const Variant variants[] = {
      {Act::none, false, SeqStrategy::automatic, "none"},
      {Act::relu, false, SeqStrategy::automatic, "relu"},
      {Act::sigmoid, false, SeqStrategy::automatic, "sigmoid"},
      {Act::silu, false, SeqStrategy::automatic, "silu"},
      {Act::softmax, false, SeqStrategy::automatic, "softmax_d"},
      {Act::softmax, true, SeqStrategy::automatic, "softmax_n"},
      {Act::softmax, true, SeqStrategy::block, "softmax_n"},
      {Act::softmax, true, SeqStrategy::split, "softmax_n"},
      {Act::softmax, true, SeqStrategy::resident, "softmax_n"},
  };
  std::vector<int64_t> sizes = {32768, 4096, 1024, 256};
  if (small) sizes = {256, 512, 1024, 2048, 4096};
  for (int64_t n : sizes) {
    if (default_only && n != 32768) continue;
    const int64_t nx = B * H * n * D;
    const double xbytes = double(nx) * k1d::esize(dt);
    k1d::DevBuf X, G, O, TH, WS;
    void* x = X.get(size_t(nx) * 2);
    void* g = G.get(size_t(2 * nx) * 2);
    void* o = O.get(size_t(2 * nx) * 2);
    k1d::fill(x, dt, nx, 11);
    k1d::fill(g, dt, 2 * nx, 12);
    const std::vector<float> th = k1d::rotary_theta(H, D);
    float* thd = static_cast<float*>(TH.get(th.size() * 4));
    K1D_CHECK(cudaMemcpy(thd, th.data(), th.size() * 4, cudaMemcpyHostToDevice));
    const int reps = quick ? 5 : (n >= 8192 ? 25 : 200);
    for (Op op : {Op::act, Op::cos, Op::rot})
      for (const Variant& v : variants)
        if (only_op.empty() || only_op == op_name(op))
        for (bool bwd : {false, true}) {
          // n = 4096: where block and split cross over; n = 4096 and 1024 also for act's
          // elementwise and feature-softmax kernels (where torch was faster in the harness)
          const bool act_rows = op == Op::act && !v.seq;
          // --small: act's elementwise variants and lrpe_cosine's silu backward only (the small
          // calls where torch was close in the harness)
          const bool elem = v.act == Act::relu || v.act == Act::sigmoid || v.act == Act::silu;
          const bool small_case = !v.seq && ((elem && op == Op::act) || (op == Op::cos && bwd && (elem || v.act == Act::none)));
          if (small && !small_case) continue;
          if (!small && n == 4096 && !v.seq && !act_rows) continue;
          if (!small && n == 1024 && !act_rows) continue;
          // Configurations: the default, then (n = 32768) the ones it was chosen against.
          using T1 = opbench::kernels::Tuning1d;
          std::vector<Config> configs = {config("default", [](T1&) {})};
          const bool flat = op == Op::act && !v.seq && v.act != Act::softmax;
          if (n == 32768 && !default_only) {
            if (!flat) {
              configs.push_back(config("prefetch", [](T1& t) { t.prefetch = 1; }));
              configs.push_back(config("no_prefetch", [](T1& t) { t.prefetch = 0; }));
            }
            if (v.seq && v.st == SeqStrategy::split)
              configs.push_back(config("1_wave", [](T1& t) { t.prefetch = 1, t.split_waves = 1; }));
            if (op != Op::act && !v.seq)
              configs.push_back(config("no_batch_rows", [](T1& t) { t.batch_rows = 0; }));
            if (!v.seq) configs.push_back(config("plain_stores", [](T1& t) { t.stream_stores = 0; }));
            if (v.act == Act::softmax && !v.seq) {
              configs.push_back(config("steps1", [](T1& t) { t.max_steps = 1; }));
              configs.push_back(config("steps4", [](T1& t) { t.max_steps = 4; }));
            }
          }
          if (flat && (n == 32768 || n == 256) && !default_only && !small) {
            configs.push_back(config("flat1", [](T1& t) { t.flat_units = 1; }));
            configs.push_back(config("flat4", [](T1& t) { t.flat_units = 4; }));
          }
          // K1D_BENCH_GRID=1: more configurations (the flat kernel's grid also at n = 32768,
          // the row kernels' below)
          static const bool grid = std::getenv("K1D_BENCH_GRID") != nullptr;
          if (flat && (small || (grid && n == 32768)))  // threads x units per thread x stores
            for (int th : {128, 256, 512})
              for (int u : {1, 2, 4})
                for (int cs = 0; cs < 2; ++cs) {
                  configs.push_back(config("t" + std::to_string(th) + "u" + std::to_string(u) + (cs ? "" : "_plain"),
                                           [&](T1& t) { t.flat_threads = th, t.flat_units = u, t.stream_stores = cs; }));
                }
          if (small && op == Op::cos) {  // the flat backward against the row kernel
            configs.push_back(config("flat", [](T1& t) { t.flat_lrpe = 1; }));
            configs.push_back(config("rows", [](T1& t) { t.flat_lrpe = 0; }));
          }
          // lrpe_cosine silu, row kernel: blocks per SM the tiles keep (48: one step per tile at
          // these sizes; fewer: longer tiles, up to 16 steps) x batch rows x prefetch x stores
          if (small && op == Op::cos && v.act == Act::silu)
            for (int bps : {48, 8, 4, 2})
              for (int br = 0; br < 2; ++br)
                for (int pf = 0; pf < 2; ++pf)
                  for (int cs = 0; cs < 2; ++cs)
                    configs.push_back(config("b" + std::to_string(bps) + (br ? "_br" : "_nobr") + (pf ? "_pf" : "_nopf") + (cs ? "" : "_plain"),
                                             [&](T1& t) { t.flat_lrpe = 0, t.tile_blocks_per_sm = bps, t.max_steps = 16, t.batch_rows = br, t.prefetch = pf, t.stream_stores = cs; }));
          if (act_rows && v.act == Act::softmax && !default_only)  // against act's own kernel
            configs.push_back(config("row_kernel", [](T1& t) { t.feat_kernel = 0; }));
          if (op != Op::act && !v.seq && n == 256 && !default_only)
            configs.push_back(config("no_batch_rows", [](T1& t) { t.batch_rows = 0; }));
          // K1D_BENCH_GRID=1: tiles of 1..16 steps x batch rows x prefetch, row kernels.
          if (grid && !flat && !v.seq && (n == 32768 || n == 256) && !(op == Op::act && v.act == Act::none))
            for (int ms : {1, 2, 4, 8, 16})
              for (int br = 0; br < (op == Op::act ? 1 : 2); ++br)
                for (int pf = 0; pf < 2; ++pf) {
                  const std::string name = "s" + std::to_string(ms) +
                                           (op == Op::act ? "" : br ? "_br" : "_nobr") +
                                           (pf ? "_pf" : "_nopf");
                  configs.push_back(config(name, [&](T1& t) {
                    t.max_steps = ms, t.prefetch = pf;
                    if (op != Op::act) t.batch_rows = br;
                  }));
                }
          for (const Config& cf : configs) {
          if (!only_configs.empty() && only_configs.find("," + cf.name + ",") == std::string::npos) continue;
          opbench::kernels::tuning_1d() = cf.t;
          Row r;
          r.op = op_name(op), r.mode = bwd ? "bwd" : "fwd", r.act = v.name, r.n = n;
          r.strat = v.seq ? opbench::kernels::seq_strategy_name(v.st) : "-";
          r.config = cf.name;
          if (op == Op::act && v.act == Act::none) {
            // The provider returns x (fwd) or do (bwd) itself: no kernel, floor 0.
            r.ms = r.min_ms = r.floor_ms = r.floor2_ms = 0;
            r.pct = r.pct2 = 100;
            if (cf.name == "default") rows.push_back(r);
            continue;
          }
          const Bufs bufs{x, g, o, thd, &WS};
          const std::function<void()> call = make_call(op, v.act, v.seq, v.st, bwd, B, H, n, D, dt, bufs);
          auto [ms, mn] = tm.time(call, reps);
          r.ms = ms, r.min_ms = mn;
          r.floor_ms = floor_units(op, bwd, v.act, v.seq, false) * xbytes / peak * 1e3;
          r.floor2_ms = floor_units(op, bwd, v.act, v.seq, true) * xbytes / peak * 1e3;
          r.pct = 100.0 * r.floor_ms / ms;
          r.pct2 = 100.0 * r.floor2_ms / ms;
          rows.push_back(r);
          std::printf("%-12s %s %-10s %-9s %-11s n=%-6lld %9.4f ms (min %.4f) floor %.4f ms %6.1f%%  2-pass floor %.4f ms %6.1f%%\n",
                      r.op.c_str(), r.mode.c_str(), r.act.c_str(), r.strat.c_str(), r.config.c_str(),
                      (long long)n, r.ms, r.min_ms, r.floor_ms, r.pct, r.floor2_ms, r.pct2);
          std::fflush(stdout);
          }
        }
    opbench::kernels::tuning_1d() = opbench::kernels::Tuning1d{};
  }
  if (int rc = write_csv(csv, rows, peak)) return rc;
  // Summary (n = 32768): % of the floor (softmax over n: of its two-pass floor), default
  // configuration first, then the alternatives measured against it (name ms (%)).
  auto alternatives = [&](const Row& r, bool seq) {
    std::string alt;
    for (const Row& q : rows)
      if (q.n == r.n && q.op == r.op && q.mode == r.mode && q.act == r.act && q.strat == r.strat &&
          q.config != "default") {
        char buf[96];
        std::snprintf(buf, sizeof buf, " | %s %.4f (%.1f%%)", q.config.c_str(), q.ms, seq ? q.pct2 : q.pct);
        alt += buf;
      }
    return alt;
  };
  std::printf("\nSUMMARY b12 h12 d128 bf16 n=32768, peak %.0f GB/s. ms and %% of floor (softmax_n: of the 2-pass floor)\n",
              peak / 1e9);
  std::printf("%-12s %-4s %-10s %-9s %8s %8s %7s | alternatives\n", "op", "mode", "act", "strategy",
              "floor", "ms", "%");
  for (const Row& r : rows) {
    if (r.n != 32768 || r.config != "default" || (r.op == "act" && r.act == "none")) continue;
    const bool seq = r.act == "softmax_n";
    const double pct = seq ? r.pct2 : r.pct;
    std::printf("%-12s %-4s %-10s %-9s %8.4f %8.4f %6.1f%%%s%s\n", r.op.c_str(), r.mode.c_str(),
                r.act.c_str(), r.strat.c_str(), seq ? r.floor2_ms : r.floor_ms, r.ms, pct,
                (seq ? pct < 90 : pct < 95) ? " <" : "", alternatives(r, seq).c_str());
  }
  std::printf("n=4096 and n=256 (launch-bound; one empty launch above), default configuration:\n");
  for (const Row& r : rows) {
    if (r.n == 32768 || r.config != "default" || (r.op == "act" && r.act == "none")) continue;
    std::printf("  n=%-5lld %-12s %-4s %-10s %-9s %8.4f ms%s\n", (long long)r.n, r.op.c_str(), r.mode.c_str(),
                r.act.c_str(), r.strat.c_str(), r.ms, alternatives(r, false).c_str());
  }
  return 0;
}
