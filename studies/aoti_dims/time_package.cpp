// Times one tpa_decode AOTInductor package with LibTorch's package loader (torch 2.11's Python
// loader crashes on CUDA packages): time_package PKG B M [CALLS]. Each call follows a 256 MiB
// write (L2 flushed, as do_bench does) and is timed by CUDA events around it; prints the
// output's norm (the forms must agree) and the median, p10 and p90 in us.
#include <ATen/cuda/CUDAEvent.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: time_package PKG B M [CALLS]\n");
    return 2;
  }
  const int64_t b = std::atoll(argv[2]), m = std::atoll(argv[3]), h = 32, r = 16, d = 128;
  const int calls = argc > 4 ? std::atoi(argv[4]) : 300;
  torch::inductor::AOTIModelPackageLoader loader(argv[1]);
  torch::manual_seed(0);
  const auto bf16 = torch::TensorOptions().dtype(torch::kBFloat16).device(torch::kCUDA);
  const std::vector<at::Tensor> in = {torch::randn({b, 1, h, r}, bf16), torch::randn({b, m, h}, bf16),
                                      torch::randn({b, m, h}, bf16),    torch::randn({b, 1, r, d}, bf16),
                                      torch::randn({b, m, d}, bf16),    torch::randn({b, m, d}, bf16)};
  const std::vector<at::Tensor> out = loader.run(in);
  std::printf("norm %.6f ", out.at(0).to(torch::kFloat).norm().item<double>());
  for (int i = 0; i < 20; ++i) loader.run(in);
  at::Tensor flush = torch::empty({256 << 20}, torch::TensorOptions().dtype(torch::kInt8).device(torch::kCUDA));
  std::vector<float> us;
  for (int i = 0; i < calls; ++i) {
    flush.zero_();
    at::cuda::CUDAEvent start(cudaEventDefault), stop(cudaEventDefault);
    start.record();
    loader.run(in);
    stop.record();
    stop.synchronize();
    us.push_back(1000 * start.elapsed_time(stop));
  }
  std::sort(us.begin(), us.end());
  std::printf("median_us %.1f p10 %.1f p90 %.1f\n", us[us.size() / 2], us[us.size() / 10], us[us.size() * 9 / 10]);
  return 0;
}
