// The options that shape a run (which config, device or devices, providers, label, title
// filter, shard), as the store keeps them with it (the run_options table, one row a name).
// Torch-free.
#pragma once
#include <string>
#include <vector>

namespace opbench {

struct RunOptions {
  std::string config;                  // the config's path as given
  std::string device;                  // cpu, cuda:N ("" when measured on several devices)
  std::vector<std::string> providers;  // the providers the run measures, in column order
  std::string label;
  std::string filter;                  // --filter: the regular expression on table titles ("" all)
  std::vector<std::string> devices;    // --devices: the devices of its workers (empty: one device)
  std::string shard;                   // --shard: "i/N" ("" the whole sweep)
};

}  // namespace opbench
