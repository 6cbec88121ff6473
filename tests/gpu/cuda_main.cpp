// main() of the CUDA kernel tests CMake builds (tests/gpu/*_test.cu, label gpu): without a
// CUDA device no test runs and the binary exits OPBENCH_TEST_SKIPPED (tests/CMakeLists.txt
// defines it and gives it to ctest as SKIP_RETURN_CODE), so ctest reports the test as skipped;
// with a device every test runs, as under gtest_main. (build_kernels.sh links the same tests
// with gtest_main: there each test skips itself.)
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <iostream>

#ifndef OPBENCH_TEST_SKIPPED
#error "compile with -DOPBENCH_TEST_SKIPPED=<the tests' SKIP_RETURN_CODE>"
#endif

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::cout << "no CUDA device: every test skipped\n";
    return OPBENCH_TEST_SKIPPED;
  }
  return RUN_ALL_TESTS();
}
