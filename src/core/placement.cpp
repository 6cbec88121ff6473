#include "core/placement.hpp"

#include <dirent.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace opbench {

namespace {

std::vector<int> affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

// The NUMA nodes (sysfs node*/cpulist) holding one of `cpus`, ascending.
std::vector<int> nodes_of(const std::vector<int>& cpus) {
  std::vector<int> out;
  DIR* dir = ::opendir("/sys/devices/system/node");
  if (!dir) return out;
  const std::set<int> mine(cpus.begin(), cpus.end());
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name.rfind("node", 0) != 0 || name.size() == 4 || name.find_first_not_of("0123456789", 4) != std::string::npos)
      continue;
    std::ifstream in("/sys/devices/system/node/" + name + "/cpulist");
    std::string text;
    std::getline(in, text);
    for (int c : parse_cpu_list(text))
      if (mine.count(c)) {
        out.push_back(std::stoi(name.substr(4)));
        break;
      }
  }
  ::closedir(dir);
  std::sort(out.begin(), out.end());
  return out;
}

// get_mempolicy(2) by its system call (no libnuma): the mode and the nodes it names.
std::string memory_policy() {
  int mode = -1;
  unsigned long mask[16] = {0};
  const unsigned long max_node = sizeof mask * 8;
  if (::syscall(SYS_get_mempolicy, &mode, mask, max_node, nullptr, 0UL) != 0) return "";
  static const char* const kModes[] = {"default", "preferred", "bind", "interleave", "local", "preferred-many",
                                       "weighted-interleave"};
  const int base = mode & 0xff;  // the mode flags (static / relative nodes) left out
  std::string name = base >= 0 && base < int(sizeof kModes / sizeof *kModes) ? kModes[base] : "mode " + std::to_string(mode);
  std::vector<int> nodes;
  for (unsigned long n = 0; n < max_node; ++n)
    if (mask[n / (8 * sizeof(unsigned long))] & (1UL << (n % (8 * sizeof(unsigned long))))) nodes.push_back(int(n));
  if (base != 0 && base != 4 && !nodes.empty()) name += " " + cpu_list_text(nodes);
  return name;
}

}  // namespace

Placement this_placement() {
  Placement p;
  p.cpus = affinity_cpus();
  p.nodes = nodes_of(p.cpus);
  p.memory = memory_policy();
  // Under the default or local policy a page lies on the node of the CPU that first touches it.
  if ((p.memory == "default" || p.memory == "local") && !p.nodes.empty())
    p.memory += " (local: node" + std::string(p.nodes.size() > 1 ? "s " : " ") + cpu_list_text(p.nodes) + ")";
  return p;
}

std::string cpu_list_text(const std::vector<int>& cpus) {
  std::ostringstream out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (i) out << ",";
    out << cpus[i];
    if (j > i) out << "-" << cpus[j];
    i = j + 1;
  }
  return out.str();
}

std::vector<int> parse_cpu_list(const std::string& text) {
  std::set<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    item.erase(std::remove_if(item.begin(), item.end(), ::isspace), item.end());
    if (item.empty()) continue;
    const size_t dash = item.find('-');
    try {
      size_t used = 0;
      const int lo = std::stoi(item.substr(0, dash), &used);
      if (used != (dash == std::string::npos ? item.size() : dash)) return {};
      int hi = lo;
      if (dash != std::string::npos) {
        const std::string rest = item.substr(dash + 1);
        hi = std::stoi(rest, &used);
        if (used != rest.size()) return {};
      }
      if (lo < 0 || hi < lo || hi >= CPU_SETSIZE) return {};
      for (int c = lo; c <= hi; ++c) out.insert(c);
    } catch (const std::exception&) {
      return {};
    }
  }
  return {out.begin(), out.end()};
}

std::vector<int> allowed_cpus(const std::vector<int>& wanted) {
  const std::vector<int> mine = affinity_cpus();
  std::vector<int> out;
  for (int c : wanted)
    if (std::binary_search(mine.begin(), mine.end(), c)) out.push_back(c);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string placement_text(const std::string& cpus, const std::string& memory, int threads, bool pinned) {
  if (cpus.empty()) return "";
  std::string out = (pinned ? "pinned to CPUs " : "CPUs ") + cpus;
  if (threads > 0) out += ", " + std::to_string(threads) + (threads == 1 ? " thread" : " threads");
  if (!memory.empty()) out += ", memory " + memory;
  return out;
}

}  // namespace opbench
