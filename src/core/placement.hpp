// Where a measuring process runs on the host: the CPUs it may run on, the NUMA nodes they
// belong to and its memory policy, read from the kernel (sched_getaffinity, get_mempolicy,
// sysfs); and CPU sets as the kernel writes them ("0-7,16-23"). A sweep's workers are pinned to
// the CPUs local to their GPU and report their placement, which the run records per device.
// Linux, torch-free.
#pragma once
#include <string>
#include <vector>

namespace opbench {

struct Placement {
  std::vector<int> cpus;  // the CPUs the process may run on, ascending (empty: unknown)
  std::vector<int> nodes;  // the NUMA nodes of those CPUs (empty: unknown)
  std::string memory;     // the memory policy: "default", "local", "bind 0", "interleave 0-1" ...
  int threads = 0;        // LibTorch's intra-op threads (filled by who knows them; 0 unknown)
};

// This process's placement now (threads left 0).
Placement this_placement();

// "0-3,8,10-11" for {0, 1, 2, 3, 8, 10, 11}; "" for none.
std::string cpu_list_text(const std::vector<int>& cpus);
// The kernel's list format back into CPUs, ascending; empty for text it cannot read.
std::vector<int> parse_cpu_list(const std::string& text);

// The CPUs of `wanted` this process may run on (its own affinity), ascending: what a child can
// be pinned to. Empty when none of them is allowed (or `wanted` is empty).
std::vector<int> allowed_cpus(const std::vector<int>& wanted);

// "CPUs 0-15 (node 0), 16 threads, memory default": one device's placement in a document.
std::string placement_text(const std::string& cpus, const std::string& memory, int threads, bool pinned);

}  // namespace opbench
