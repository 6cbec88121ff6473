// Fuzz target: the run selector parser, alone and through Store::select on an in-memory
// database holding a few runs.
#include "fuzz/fuzz_input.hpp"
#include "store/selector.hpp"
#include "store/store.hpp"

namespace {

opbench::Store& store() {
  static opbench::Store s(":memory:");
  static const bool filled = [] {
    for (const char* label : {"base", "head", ""}) {
      opbench::RunInfo r;
      r.label = label;
      r.env.gpu = "NVIDIA H100 80GB HBM3";
      s.begin_run(r);
    }
    return true;
  }();
  (void)filled;
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace opbench;
  const std::string text = fuzz::text_of(data, size);
  fuzz::refusing_bad_input([&] {
    const RunSelector sel = parse_selector(text, "fuzz.db");
    if (sel.kind == RunSelector::Id && sel.id < 1) __builtin_trap();
  });
  fuzz::refusing_bad_input([&] { store().select(text); });
  return 0;
}
