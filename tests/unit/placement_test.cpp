// Where a process runs: CPU sets in the kernel's list format both ways, this process's
// placement as the kernel gives it, a child spawned pinned to CPUs (and this process left as it
// was), and the text a report prints for a device's placement.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/lines.hpp"
#include "core/placement.hpp"
#include "core/process.hpp"

using namespace opbench;

TEST(Placement, CpuListsBothWays) {
  EXPECT_EQ(cpu_list_text({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(cpu_list_text({}), "");
  EXPECT_EQ(cpu_list_text({5}), "5");
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list(" 4, 1-2\n"), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(parse_cpu_list(""), std::vector<int>{});
  for (const char* bad : {"a", "3-1", "1-", "-1", "1x", "0-99999"}) EXPECT_EQ(parse_cpu_list(bad), std::vector<int>{}) << bad;
}

TEST(Placement, ThisProcessAsTheKernelHasIt) {
  const Placement p = this_placement();
  ASSERT_FALSE(p.cpus.empty());
  EXPECT_EQ(parse_cpu_list(cpu_list_text(p.cpus)), p.cpus);
  EXPECT_FALSE(p.memory.empty());
  EXPECT_EQ(allowed_cpus(p.cpus), p.cpus);
  EXPECT_EQ(allowed_cpus({100000}), std::vector<int>{});  // no such CPU: nothing to pin to
}

TEST(Placement, AChildSpawnedPinnedRunsOnlyThere) {
  const std::vector<int> mine = this_placement().cpus;
  const std::vector<int> one = {mine.back()};
  process::Piped p = process::spawn_piped({"/bin/sh", "-c", "grep Cpus_allowed_list /proc/self/status"}, {}, one);
  ASSERT_GE(p.pid, 0) << p.error;
  LineReader in(p.from);
  std::string line;
  ASSERT_TRUE(in.read_line(line));
  EXPECT_EQ(line.substr(line.find_last_of(" \t") + 1), cpu_list_text(one));
  process::close_piped(p, 5);
  EXPECT_EQ(this_placement().cpus, mine);  // the parent's own CPUs as they were
}

TEST(Placement, AsAReportSaysIt) {
  EXPECT_EQ(placement_text("0-15", "default (local: node 0)", 16, true),
            "pinned to CPUs 0-15, 16 threads, memory default (local: node 0)");
  EXPECT_EQ(placement_text("0-1", "default", 1, false), "CPUs 0-1, 1 thread, memory default");
  EXPECT_EQ(placement_text("", "default", 1, false), "");
}
