// A check shared by the tests of runs measured on several devices: one device of a stored run,
// by its name (with its host where the run spans hosts), GPU model and peak bandwidth.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "record/run.hpp"

namespace opbench {

inline void expect_device(const RunDevice& d, const std::string& device, const std::string& gpu, double peak_gbps) {
  EXPECT_EQ(d.device, device);
  EXPECT_EQ(d.gpu, gpu);
  EXPECT_EQ(d.peak_gbps, peak_gbps);
}

}  // namespace opbench
