// The figures of one pass of the device calibration's micro-suite (measure/calibrate.h says how
// each is taken; record/device_identity.hpp names them and keeps a device's passes). Plain data.
#pragma once

namespace opbench {

struct CalibrationSample {
  double launch_us = 0, sync_us = 0, chase_ns = 0, l2_gbps = 0, dram_gbps = 0, narrow_gbps = 0, sm_mhz = 0;
  bool operator==(const CalibrationSample& o) const;  // record/device_identity.cpp
};

}  // namespace opbench
