// Fuzz target: the config loader (parse_config) and the expansion of what it accepts, for one
// syntax: OPBENCH_FUZZ_CONFIG_PATH names the file (".yaml" or ".json"), as the loader picks
// the syntax by extension. Accepted configs are expanded under a small points cap.
#include "config/config.hpp"
#include "fuzz/fuzz_input.hpp"
#include "points/points.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace opbench;
  fuzz::refusing_bad_input([&] {
    const Config cfg = parse_config(fuzz::text_of(data, size), OPBENCH_FUZZ_CONFIG_PATH);
    const Sweep sw = expand(cfg, 2000);
    if (sw.points.size() > count_points(cfg)) __builtin_trap();  // the cap counts every point
  });
  return 0;
}
