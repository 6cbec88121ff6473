// Fuzz target: the JSON run importer (runs_from_json, what `opbench import FILE.json` reads).
// Whatever it accepts must export again (runs_to_json) into text it reads back as the same
// runs: an accepted file round-trips.
#include "exchange/runs_json.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace opbench;
  fuzz::refusing_bad_input([&] {
    const std::vector<RunRecord> runs = runs_from_json(fuzz::text_of(data, size), "fuzz.json");
    const std::string text = runs_to_json(runs);
    std::vector<RunRecord> again;
    try {
      again = runs_from_json(text, "export.json");
    } catch (const InputError&) {
      __builtin_trap();  // an export of accepted input that cannot be read back
    }
    if (runs_to_json(again) != text) __builtin_trap();
  });
  return 0;
}
