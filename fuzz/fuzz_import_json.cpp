// Fuzz target: the JSON run importer (runs_from_json, what `opbench import FILE.json` reads),
// its checks of every run and point included (record/run_check.hpp). Whatever it accepts
// must store as it says (each run holds as many points in a store as the file gives it: no
// point replaces another) and export again (runs_to_json) into text it reads back as the same
// runs: an accepted file round-trips.
#include "store/whole_run.hpp"
#include "exchange/runs_json.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace opbench;
  fuzz::refusing_bad_input([&] {
    std::vector<RunRecord> runs = runs_from_json(fuzz::text_of(data, size), "fuzz.json");
    const std::string text = runs_to_json(runs);
    std::vector<RunRecord> again;
    try {
      again = runs_from_json(text, "export.json");
    } catch (const InputError&) {
      __builtin_trap();  // an export of accepted input that cannot be read back
    }
    if (runs_to_json(again) != text) __builtin_trap();
    Store store(":memory:");
    const std::vector<bool> added = insert_new_runs(store, runs);
    for (size_t i = 0; i < runs.size(); ++i)
      if (!added[i] || store.run(runs[i].run.id)->points != int64_t(runs[i].points.size())) __builtin_trap();
  });
  return 0;
}
