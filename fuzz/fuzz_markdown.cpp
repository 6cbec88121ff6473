// Fuzz target: the markdown importer (the streaming document parser + import_document). Whatever
// it accepts must store as it reads (store_document, reading the text again as `opbench import`
// does: each run holds in the store the points it counted, as many as the in-memory import
// keeps) and render into a report (render_report) that it accepts again with as many points:
// a document opbench stores is one it can read back.
#include "exchange/import.hpp"
#include "fuzz/fuzz_input.hpp"
#include "report/report.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace opbench;
  fuzz::refusing_bad_input([&] {
    const std::string text = fuzz::text_of(data, size);
    const ImportResult first = import_document(text, "fuzz.md", "");
    ImportResult plan = import_document(text, "fuzz.md", "", PointSink());
    if (plan.runs.size() != first.runs.size()) __builtin_trap();
    Store store(":memory:");
    store_document(store, text, "fuzz.md", "", plan);
    std::vector<RunRecord> runs;
    size_t points = 0;
    for (size_t i = 0; i < first.runs.size(); ++i) {
      const ImportedRun& ir = first.runs[i];
      if (ir.points.size() != plan.runs[i].count || !plan.runs[i].added ||
          store.run(plan.runs[i].run.id)->points != int64_t(ir.count))
        __builtin_trap();  // what the import counts is what the store holds
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
