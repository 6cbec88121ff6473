// The GPU's state through NVML (clocks, temperature, power, clock event reasons) and the CPUs
// local to it. The driver's NVML library (libnvidia-ml.so.1) is opened at run time on first
// use: nothing is linked, so opbench starts where there is no driver, and where the library,
// the device or a reading is missing the state comes back unknown (or without that reading).
// Thread-safe.
#pragma once
#include <string>
#include <vector>

#include "record/device_identity.hpp"
#include "record/device_state.hpp"

namespace opbench {

// The state of the GPU on PCI bus `pci_bus_id` (as cudaDeviceGetPCIBusId writes it, e.g.
// "0000:3B:00.0"); `sm_default_mhz` is the clock throttling is measured against (the device's
// default SM clock; when 0, NVML's maximum SM clock).
DeviceState nvml_state(const std::string& pci_bus_id, double sm_default_mhz);

// Which physical GPU is on that bus: its UUID, serial, VBIOS, enforced power limit, application
// clocks and ECC mode, each where NVML gives it (the bus id always). NVML's query API has no
// reading of clocks locked by `nvidia-smi -lgc`; their effect shows in the calibration's clock
// under load and in the state's clock event reasons.
DeviceIdentity nvml_identity(const std::string& pci_bus_id);

// The CPUs NVML names as local to that GPU (nvmlDeviceGetCpuAffinity: its NUMA node's, or the
// socket's), ascending; empty where NVML, the device or the reading is missing.
std::vector<int> nvml_cpu_affinity(const std::string& pci_bus_id);

}  // namespace opbench
