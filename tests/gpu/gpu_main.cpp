// main() of the GPU tests that link LibTorch (label gpu): without a CUDA device no test runs
// and the binary exits OPBENCH_TEST_SKIPPED (tests/CMakeLists.txt defines it and gives it to
// ctest as SKIP_RETURN_CODE), so ctest reports the test as skipped, never as passed; with a
// device every test runs, as under gtest_main.
#include <gtest/gtest.h>

#include <iostream>

#ifndef OPBENCH_TEST_SKIPPED
#error "compile with -DOPBENCH_TEST_SKIPPED=<the tests' SKIP_RETURN_CODE>"
#endif

#include "torch/measure/device.hpp"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (!opbench::cuda_present()) {
    std::cout << "no CUDA device: every test skipped\n";
    return OPBENCH_TEST_SKIPPED;
  }
  return RUN_ALL_TESTS();
}
