// Tests of the "did you mean" helper (src/core/suggest.cpp) and of the messages that use it:
// unknown config keys, axes, ops, providers, title axes, --providers and run labels name the
// valid choices and the closest one. Torch-free.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "config/config.hpp"
#include "core/error.hpp"
#include "core/suggest.hpp"
#include "store/store.hpp"
#include "points/points.hpp"
#include "sweep/runner.hpp"

using namespace opbench;

namespace {

std::string config_error(const std::string& text) {
  try {
    expand(parse_config(text, "c.yaml"));
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(Suggest, EditDistance) {
  EXPECT_EQ(edit_distance("providers", "providers"), 0u);
  EXPECT_EQ(edit_distance("provider", "providers"), 1u);
  EXPECT_EQ(edit_distance("porviders", "providers"), 1u);  // a swap
  EXPECT_EQ(edit_distance("Torch", "torch"), 0u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
}

TEST(Suggest, ClosestName) {
  const std::vector<std::string> flags = {"--db", "--label", "--device", "--providers", "--dry-run", "--resume"};
  EXPECT_EQ(closest_name("--provider", flags), "--providers");
  EXPECT_EQ(closest_name("--dryrun", flags), "--dry-run");
  EXPECT_EQ(closest_name("--devcie", flags), "--device");
  EXPECT_EQ(closest_name("--frobnicate", flags), "");
  EXPECT_EQ(closest_name("swep", {"sweep", "report", "runs"}), "sweep");
  EXPECT_EQ(closest_name("x", {"sweep"}), "");
  EXPECT_EQ(suggest_names("tr", {"to", "toc"}), " (did you mean 'to'? one of: to, toc)");
  EXPECT_EQ(suggest_names("zzz", {"to", "toc"}), " (one of: to, toc)");
  EXPECT_EQ(suggest_names("zzz", {}), "");
}

TEST(Suggest, ConfigErrorsNameTheChoices) {
  auto e = config_error("op: act\nx: {n: [8]}\nparmas: {batch: 1}\n");
  EXPECT_NE(e.find("c.yaml: parmas: unknown key (did you mean 'params'? one of: "), std::string::npos) << e;
  EXPECT_NE(e.find("timing"), std::string::npos) << e;
  e = config_error("op: act\nx: {n: [8]}\nparams: {batchh: 1}\n");
  EXPECT_NE(e.find("params.batchh: unknown axis for act (did you mean 'batch'?"), std::string::npos) << e;
  EXPECT_NE(e.find("act_dim"), std::string::npos) << e;
  e = config_error("op: act\nx: {n: [8]}\ntiming: {rep: 5}\n");
  EXPECT_NE(e.find("timing.rep: unknown key (did you mean 'rep_ms'?"), std::string::npos) << e;
  e = config_error("op: akt\nx: {n: [8]}\n");
  EXPECT_NE(e.find("unknown op 'akt' (did you mean 'act'? one of: act, lrpe_cosine"), std::string::npos) << e;
  e = config_error("op: act\nx: {n: [8]}\nproviders: {torhc: to}\n");
  EXPECT_NE(e.find("unknown provider 'torhc' for act (did you mean 'torch'?"), std::string::npos) << e;
  e = config_error("op: act\nx: {n: [8]}\nparams: {act: relux}\n");
  EXPECT_NE(e.find("unknown act 'relux' (did you mean 'relu'?"), std::string::npos) << e;
  e = config_error("op: act\nx: {n: [8]}\ntitle: \"{op}-{mdoe}\"\n");
  EXPECT_NE(e.find("unknown axis {mdoe} in the template (did you mean 'mode'?"), std::string::npos) << e;
}

TEST(Suggest, ProvidersFlag) {
  Config cfg = parse_config("op: act\nx: {n: [8]}\nproviders: {torch: to, torch_compile: toc}\n", "c.yaml");
  Sweep sw = expand(cfg);
  try {
    filter_providers(sw, cfg, {"torch_compiled"});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("(did you mean 'torch_compile'? one of: torch, torch_compile)"), std::string::npos)
        << e.what();
  }
}

TEST(Suggest, RunSelectors) {
  auto path = std::filesystem::temp_directory_path() / ("opbench_suggest_" + std::to_string(getpid()) + ".db");
  std::filesystem::remove(path);
  Store s(path.string());
  for (const char* label : {"main", "pr-12"}) {
    RunInfo r;
    r.label = label;
    r.env.gpu = "NVIDIA H100 80GB HBM3";
    s.begin_run(r);
  }
  auto msg = [&](const std::string& sel) {
    try {
      s.select(sel);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg("label:mian").find("no run has that label (did you mean 'main'? one of: main, pr-12)"), std::string::npos)
      << msg("label:mian");
  EXPECT_NE(msg("gpu:a100").find("(GPUs: NVIDIA H100 80GB HBM3)"), std::string::npos) << msg("gpu:a100");
  std::filesystem::remove(path);
}
