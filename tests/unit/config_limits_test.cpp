// Hostile configs: the limits of a config's tree (depth, values with YAML aliases expanded),
// keys given twice, text that is not UTF-8 or holds control characters, timing values that
// are not finite or beyond their maxima, a directory as config, and the cap on the points of
// a sweep (counted before anything is expanded). Each is one InputError naming the file and
// the field, never a crash, a hang or gigabytes of memory. Torch-free.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "config/config.hpp"
#include "core/error.hpp"
#include "points/points.hpp"

using namespace opbench;

namespace {

const std::string kBase = "op: act\nx: {n: [16]}\n";

// The message of the InputError that parsing (and expanding) `text` throws; "" if accepted.
std::string error_of(const std::string& text, const std::string& path = "c.yaml", size_t max_points = kDefaultMaxPoints) {
  try {
    expand(parse_config(text, path), max_points);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

void expect_refused(const std::string& text, const std::string& path, const std::string& part) {
  const std::string msg = error_of(text, path);
  ASSERT_FALSE(msg.empty()) << "accepted: " << text.substr(0, 200);
  EXPECT_EQ(msg.rfind(path, 0), 0u) << msg;
  EXPECT_NE(msg.find(part), std::string::npos) << "'" << part << "' not in: " << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

std::string nested_json(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

}  // namespace

TEST(ConfigLimits, DeepJsonIsAnErrorNotACrash) {
  // 100,000 levels: the parser, the tree's destructor and the messages must all survive it.
  expect_refused("{\"op\": \"act\", \"x\": {\"n\": " + nested_json(100000) + "}}", "c.json", "nested deeper than 64");
  expect_refused(nested_json(100000), "c.json", "nested deeper than 64");
  // 64 levels is within the limit (the schema then refuses the value itself).
  expect_refused("{\"op\": \"act\", \"x\": {\"n\": " + nested_json(60) + "}}", "c.json", "x.n[0]");
}

TEST(ConfigLimits, DeepYamlIsAnError) {
  expect_refused(kBase + "params: {batch: " + nested_json(100) + "}\n", "c.yaml", "c.yaml:3: params.batch[0][0]");
  expect_refused(kBase + "params: {batch: " + nested_json(100) + "}\n", "c.yaml", "nested deeper than 64");
  expect_refused(kBase + "params: {batch: " + nested_json(100000) + "}\n", "c.yaml", "c.yaml");
}

TEST(ConfigLimits, AnAliasInsideWhatItNamesIsAnError) {
  expect_refused(kBase + "params: &p {batch: *p}\n", "c.yaml", "alias");
  expect_refused(kBase + "variants: &v [*v]\n", "c.yaml", "alias");
  expect_refused("&root {op: act, x: {n: [16]}, params: {batch: *root}}\n", "c.yaml", "alias");
}

TEST(ConfigLimits, BillionLaughsStopsAtTheValueBudget) {
  std::string y = "a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n";
  for (int i = 1; i < 10; ++i) {
    y += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) y += std::string(k ? ", " : "") + "*a" + std::to_string(i - 1);
    y += "]\n";
  }
  const auto t0 = std::chrono::steady_clock::now();
  expect_refused(y + kBase, "c.yaml", "more than 1000000 values");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 20.0);
  // Aliases within the budget are fine.
  EXPECT_EQ(error_of("op: act\nx: {n: &xs [16, 32]}\nvariants: [{act: relu, n: *xs}]\n"), "");
}

TEST(ConfigLimits, DuplicateKeysAreErrors) {
  expect_refused("op: lrpe_rotate\nx: {n: [16]}\nop: act\n", "c.yaml", "op: duplicate key (lines 1 and 3)");
  expect_refused(kBase + "timing: {rep_ms: 5, rep_ms: 50}\n", "c.yaml", "timing.rep_ms: duplicate key");
  expect_refused(kBase + "variants: [{act: relu, act: silu}]\n", "c.yaml", "variants[0].act: duplicate key");
  expect_refused(R"({"op": "lrpe_rotate", "x": {"n": [16]}, "op": "act"})", "c.json", "c.json: op: duplicate key");
  expect_refused(R"({"op": "act", "x": {"n": [16]}, "variants": [{"act": "relu"}, {"act": "silu", "act": "relu"}]})",
                 "c.json", "variants[1].act: duplicate key");
  expect_refused("op: act\nx: {n: [16]}\n? [a, b]\n: 1\n", "c.yaml", "a key must be a plain word");
}

TEST(ConfigLimits, TextMustBeUtf8WithoutControlCharacters) {
  expect_refused(kBase + "providers: {torch: \"t\xff\"}\n", "c.yaml", "c.yaml:3: not valid UTF-8");
  expect_refused(kBase + "title: \"a\xc0\xaf\"\n", "c.yaml", "not valid UTF-8");  // an overlong '/'
  expect_refused(std::string("op: act\nx: {n: [16]}\ntitle: \"a\0b\"\n", 31), "c.yaml", "c.yaml:3: control character");
  expect_refused(kBase + "title: \"a\x1b[31m\"\n", "c.yaml", "control character");
  // Escapes that decode to control characters or code fences, in the strings stored with a run.
  expect_refused(kBase + "providers: {torch: \"t\\0o\"}\n", "c.yaml", "providers.torch: column label 't o' holds a control character");
  expect_refused(kBase + "providers: {torch: \"t\\u001bo\"}\n", "c.yaml", "control character");
  expect_refused(R"({"op": "act", "x": {"n": [16]}, "providers": {"torch": "a\u0000b"}})", "c.json", "control character");
  expect_refused(kBase + "title: \"{op}\\n```\"\n", "c.yaml", "title: the title holds a control character");
  expect_refused(kBase + "title: \"{op}-```\"\n", "c.yaml", "title: the title holds a code fence");
  expect_refused(kBase + "providers: {torch: \"~~~\"}\n", "c.yaml", "code fence");
  expect_refused(kBase + "providers: {torch: \"a:b\"}\n", "c.yaml", "providers.torch: column label 'a:b' holds ':'");
  expect_refused(kBase + "providers: {torch: to, cuda: TO}\n", "c.yaml", "providers.cuda: listed twice");
  // UTF-8 itself is fine.
  EXPECT_EQ(error_of(kBase + "title: \"{op}-größe\"\nproviders: {torch: \"τ\"}\n"), "");
}

TEST(ConfigLimits, TimingValuesAreFiniteWithMaxima) {
  expect_refused(kBase + "timing: {rep_ms: .inf}\n", "c.yaml", "timing.rep_ms: must be a number of milliseconds above 0 and at most 60000, got .inf");
  expect_refused(kBase + "timing: {rep_ms: .nan}\n", "c.yaml", "got .nan");
  expect_refused(kBase + "timing: {rep_ms: nan}\n", "c.yaml", "timing.rep_ms: must be a number, got \"nan\"");
  expect_refused(kBase + "timing: {rep_ms: inf}\n", "c.yaml", "timing.rep_ms: must be a number, got \"inf\"");
  expect_refused(kBase + "timing: {warmup_ms: 1e400}\n", "c.yaml", "timing.warmup_ms");
  expect_refused(R"({"op": "act", "x": {"n": [16]}, "timing": {"rep_ms": 1e999}})", "c.json", "not valid JSON");
  expect_refused(kBase + "timing: {rep_ms: 60001}\n", "c.yaml", "at most 60000, got 60001");
  expect_refused(kBase + "timing: {warmup_ms: 0}\n", "c.yaml", "timing.warmup_ms");
  EXPECT_EQ(error_of(kBase + "timing: {warmup_ms: 60000, rep_ms: 0.5}\n"), "");
  // an integer beyond 64 bits is not silently wrapped
  expect_refused(R"({"op": "act", "x": {"n": [18446744073709551615]}})", "c.json", "x.n[0]: must be an integer below 2^63");
  expect_refused(kBase + "params: {batch: 99999999999999999999}\n", "c.yaml", "params.batch: must be an integer");
}

TEST(ConfigLimits, ADirectoryIsNotAConfig) {
  const std::string dir = std::filesystem::temp_directory_path() / ("opbench_cfgdir_" + std::to_string(getpid()) + ".yaml");
  std::filesystem::create_directories(dir);
  try {
    load_config(dir);
    ADD_FAILURE() << "a directory loaded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(dir + ": is a directory"), std::string::npos) << e.what();
  }
  std::filesystem::remove(dir);
}

TEST(ConfigLimits, PointsAreCountedBeforeExpanding) {
  // 10^7 tables: refused at once, without building any.
  std::string many = "op: act\nx: {n: [16]}\nparams: {";
  const char* axes[] = {"batch", "head", "dim"};
  for (int a = 0; a < 3; ++a) {
    many += std::string(a ? ", " : "") + axes[a] + ": [";
    for (int i = 1; i <= 216; ++i) many += std::string(i > 1 ? ", " : "") + std::to_string(2 * i);
    many += "]";
  }
  many += "}\nproviders: [torch]\n";
  Config c = parse_config(many, "c.yaml");
  EXPECT_EQ(count_points(c), size_t(216) * 216 * 216);
  const auto t0 = std::chrono::steady_clock::now();
  expect_refused(many, "c.yaml", "10077696 points (tables x values x providers), more than the limit of 100000");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);

  // 200,000 x values: the cap, not the memory, ends it
  std::string xs = "{\"op\": \"act\", \"x\": {\"n\": [";
  for (int i = 1; i <= 200000; ++i) xs += std::string(i > 1 ? "," : "") + std::to_string(i);
  xs += "]}, \"providers\": [\"torch\"]}";
  expect_refused(xs, "c.json", "200000 points (tables x values x providers), more than the limit of 100000 a sweep (--max-points raises it)");

  // variants with their own x values count as such; the cap is exact
  const std::string v = "op: act\nx: {n: [16, 32]}\nparams: {mode: [fwd, bwd]}\n"
                        "variants: [{act: relu}, {act: silu, n: [1, 2, 3]}]\nproviders: [torch, cuda]\n";
  c = parse_config(v, "c.yaml");
  EXPECT_EQ(count_points(c), size_t(2 * (2 + 3) * 2));
  EXPECT_EQ(expand(c, 20).points.size(), 20u);
  EXPECT_THROW(expand(c, 19), InputError);
}

TEST(ConfigLimits, CountSaturatesInsteadOfOverflowing) {
  Config c;
  c.op = "act";
  c.x_name = "n";
  c.x_values = {16};
  c.providers = {{"torch", "to"}};
  std::vector<Value> many(70000, Value(int64_t(1)));
  for (const char* a : {"batch", "head", "dim", "offset", "l"}) c.params.emplace_back(a, many);
  EXPECT_EQ(count_points(c), SIZE_MAX);
  EXPECT_THROW(expand(c, 1000), InputError);
}

TEST(ConfigLimits, PointsAboveTheCeilingAreRefusedBeforeExpanding) {
  // 2,000 x 1,000 x 2 = 4,000,000 points: refused by its count whatever --max-points says, and at once
  std::string ns, batches;
  for (int i = 1; i <= 2000; ++i) ns += (i > 1 ? ", " : "") + std::to_string(16 * i);
  for (int i = 1; i <= 1000; ++i) batches += (i > 1 ? ", " : "") + std::to_string(i);
  const std::string text = "op: act\nx: {n: [" + ns + "]}\nparams: {batch: [" + batches + "]}\nproviders: {torch: to, torch_compile: toc}\n";
  const std::string msg = error_of(text, "c.yaml", size_t(1e12));
  EXPECT_NE(msg.find("4000000 points"), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::to_string(kMaxPointsCeiling)), std::string::npos) << msg;
  // --max-points at the ceiling already: the message does not offer to raise it
  const std::string at = error_of(text, "c.yaml", kMaxPointsCeiling);
  EXPECT_NE(at.find("any sweep may have"), std::string::npos) << at;
  EXPECT_EQ(at.find("--max-points raises it"), std::string::npos) << at;
}
