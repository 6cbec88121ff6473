// Fuzz target: the markdown importer (parse_document + import_document). Whatever it
// accepts must render into a report (render_report) that it accepts again with as many
// points: a document opbench stores is one it can read back.
#include "exchange/import.hpp"
#include "fuzz/fuzz_input.hpp"
#include "report/report.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace opbench;
  fuzz::refusing_bad_input([&] {
    const ImportResult first = import_document(fuzz::text_of(data, size), "fuzz.md", "");
    std::vector<ReportRun> runs;
    size_t points = 0;
    for (const auto& ir : first.runs) {
      runs.push_back({ir.run, ir.points});
      runs.back().run.id = int64_t(runs.size());
      points += ir.points.size();
    }
    const std::string report = render_report(runs);
    size_t again = 0;
    try {
      for (const auto& ir : import_document(report, "report.md", "").runs) again += ir.points.size();
    } catch (const InputError&) {
      __builtin_trap();  // a report of accepted input that cannot be read back
    }
    if (again != points) __builtin_trap();
  });
  return 0;
}
