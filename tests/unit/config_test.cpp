// Config parsing and every bad-input case: one message naming the file and the field.
#include <gtest/gtest.h>

#include <fstream>

#include "config/config.hpp"
#include "core/error.hpp"
#include "points/points.hpp"

using namespace opbench;

static const char* kGood = R"(
op: lrpe_cosine
x: {n: [256, 512]}
params:
  batch: 2
  head: 3
  dim: 16
  dtype: bf16
  mode: [fwd, bwd]
  metric: [speed, memory]
variants:
  - {act: none}
  - {act: softmax, act_dim: 1}
providers: {torch: to, cuda: tr}
timing: {warmup_ms: 5, rep_ms: 20, stat: p20, flush_l2: false}
)";

TEST(Config, ParsesYaml) {
  Config c = parse_config(kGood, "a.yaml");
  EXPECT_EQ(c.op, "lrpe_cosine");
  EXPECT_EQ(c.x_name, "n");
  EXPECT_EQ(c.x_values, (std::vector<int64_t>{256, 512}));
  ASSERT_EQ(c.params.size(), 6u);
  EXPECT_EQ(c.params[4].first, "mode");
  EXPECT_EQ(c.params[4].second.size(), 2u);
  ASSERT_EQ(c.variants.size(), 2u);
  EXPECT_EQ(std::get<int64_t>(c.variants[1][1].second), 1);
  ASSERT_EQ(c.providers.size(), 2u);
  EXPECT_EQ(c.providers[0], (std::pair<std::string, std::string>{"torch", "to"}));
  EXPECT_EQ(c.timing.stat, "p20");
  EXPECT_EQ(c.timing.flush_l2, L2Flush::none);
  EXPECT_DOUBLE_EQ(c.timing.rep_ms, 20);
  EXPECT_EQ(c.hash.size(), 16u);
}

TEST(Config, JsonAndYamlAreOneSchema) {
  const char* json = R"({"op": "lrpe_cosine", "x": {"n": [256, 512]},
    "params": {"batch": 2, "head": 3, "dim": 16, "dtype": "bf16", "mode": ["fwd", "bwd"],
               "metric": ["speed", "memory"]},
    "variants": [{"act": "none"}, {"act": "softmax", "act_dim": 1}],
    "providers": {"torch": "to", "cuda": "tr"},
    "timing": {"warmup_ms": 5, "rep_ms": 20, "stat": "p20", "flush_l2": false}})";
  Config a = parse_config(kGood, "a.yaml"), b = parse_config(json, "a.json");
  EXPECT_EQ(a.x_values, b.x_values);
  EXPECT_EQ(a.params, b.params);
  EXPECT_EQ(a.variants, b.variants);
  EXPECT_EQ(a.providers, b.providers);
  EXPECT_EQ(expand(a).points.size(), expand(b).points.size());
}

// Each bad input: the message names the file and the field.
struct Bad {
  const char* text;
  const char* field;
};

static void expect_bad(const std::string& text, const std::string& field, const std::string& path = "bad.yaml") {
  try {
    Config c = parse_config(text, path);
    expand(c);
    FAIL() << "accepted: " << text;
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind(path, 0), 0u) << msg;
    EXPECT_NE(msg.find(field), std::string::npos) << "field '" << field << "' not in: " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(Config, WhatTheConfigLeavesTheDeviceDecides) {
  const std::string base = "op: act\nx: {n: [16]}\n";
  Timing cpu = parse_config(base, "a.yaml").timing, gpu = cpu;
  EXPECT_EQ(cpu.interleave, Timing::kDeviceDefault);
  EXPECT_EQ(cpu.processes, Timing::kDeviceDefault);
  resolve_device_defaults(cpu, "cpu");
  resolve_device_defaults(gpu, "cuda:1");
  EXPECT_EQ(cpu.flush_l2, L2Flush::none);  // warm, as torch.utils.benchmark
  EXPECT_EQ(cpu.interleave, Timing::kCpuInterleave);
  EXPECT_EQ(cpu.processes, Timing::kCpuProcesses);
  EXPECT_EQ(gpu.flush_l2, L2Flush::write);  // do_bench's
  EXPECT_EQ(gpu.interleave, 1);
  EXPECT_EQ(gpu.processes, 1);
  // What the config says stands, on either device.
  Timing given = parse_config(base + "timing: {flush_l2: write, interleave: 3, processes: 2}\n", "a.yaml").timing;
  resolve_device_defaults(given, "cpu");
  EXPECT_EQ(given.flush_l2, L2Flush::write);
  EXPECT_EQ(given.interleave, 3);
  EXPECT_EQ(given.processes, 2);
  resolve_device_defaults(given, "cuda");
  EXPECT_EQ(given.processes, 2);
}

TEST(Config, InterleaveAndProcessesAreBounded) {
  const std::string base = "op: act\nx: {n: [16]}\n";
  for (const char* bad : {"interleave: 0", "interleave: 1001", "interleave: 2.5", "interleave: many", "processes: 0",
                          "processes: 65", "processes: [2]"}) {
    const std::string key = std::string("timing.") + std::string(bad).substr(0, std::string(bad).find(':'));
    try {
      parse_config(base + "timing: {" + bad + "}\n", "a.yaml");
      ADD_FAILURE() << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(parse_config(base + "timing: {interleave: 1000, processes: 64}\n", "a.yaml").timing.processes, 64);
}

TEST(Config, FlushModes) {
  const std::string base = "op: act\nx: {n: [16]}\n";
  EXPECT_EQ(parse_config(base, "a.yaml").timing.flush_l2, L2Flush::device);  // the device decides
  EXPECT_EQ(parse_config(base + "timing: {flush_l2: true}\n", "a.yaml").timing.flush_l2, L2Flush::write);
  EXPECT_EQ(parse_config(base + "timing: {flush_l2: write}\n", "a.yaml").timing.flush_l2, L2Flush::write);
  EXPECT_EQ(parse_config(base + "timing: {flush_l2: read}\n", "a.yaml").timing.flush_l2, L2Flush::read);
  EXPECT_EQ(parse_config(base + "timing: {flush_l2: none}\n", "a.yaml").timing.flush_l2, L2Flush::none);
  EXPECT_EQ(parse_config(R"({"op": "act", "x": {"n": [16]}, "timing": {"flush_l2": "read"}})", "a.json")
                .timing.flush_l2,
            L2Flush::read);
}

TEST(Config, Rounds) {
  const std::string base = "op: act\nx: {n: [16]}\n";
  EXPECT_EQ(parse_config(base, "a.yaml").timing.rounds, 16);  // stop: noise, at most
  EXPECT_EQ(parse_config(base + "timing: {stop: budget}\n", "a.yaml").timing.rounds, 8);
  EXPECT_EQ(parse_config(base + "timing: {rounds: 1}\n", "a.yaml").timing.rounds, 1);
  EXPECT_EQ(parse_config(base + "timing: {rounds: 7}\n", "a.yaml").timing.rounds, 7);
  expect_bad(base + "timing: {rounds: 0}\n", "timing.rounds");
  expect_bad(base + "timing: {rounds: 101}\n", "timing.rounds");
  expect_bad(base + "timing: {rounds: 2.5}\n", "timing.rounds");
  expect_bad(base + "timing: {rounds: many}\n", "timing.rounds");
}

TEST(Config, StopRule) {
  const std::string base = "op: act\nx: {n: [16]}\n";
  const Timing d = parse_config(base, "a.yaml").timing;
  EXPECT_EQ(d.stop_rule, StopRule::noise);
  EXPECT_DOUBLE_EQ(d.noise_pct, 0.5);
  EXPECT_EQ(d.min_rounds, 4);
  EXPECT_EQ(d.min_samples, 5);
  const Timing t =
      parse_config(base + "timing: {stop: noise, noise: 1.5, min_rounds: 6, min_samples: 20, rounds: 30}\n", "a.yaml")
          .timing;
  EXPECT_DOUBLE_EQ(t.noise_pct, 1.5);
  EXPECT_EQ(t.min_rounds, 6);
  EXPECT_EQ(t.min_samples, 20);
  EXPECT_EQ(t.rounds, 30);
  EXPECT_EQ(parse_config(base + "timing: {stop: budget, rounds: 3}\n", "a.yaml").timing.stop_rule, StopRule::budget);
  expect_bad(base + "timing: {stop: never}\n", "timing.stop");
  expect_bad(base + "timing: {stop: 1}\n", "timing.stop");
  expect_bad(base + "timing: {noise: 0}\n", "timing.noise");
  expect_bad(base + "timing: {noise: 101}\n", "timing.noise");
  expect_bad(base + "timing: {noise: low}\n", "timing.noise");
  expect_bad(base + "timing: {min_rounds: 0}\n", "timing.min_rounds");
  expect_bad(base + "timing: {min_samples: 1.5}\n", "timing.min_samples");
  // a contradiction: more rounds required than a point is measured in
  expect_bad(base + "timing: {rounds: 4, min_rounds: 8}\n", "timing.min_rounds");
  expect_bad(base + "timing: {stop: budget, min_rounds: 9}\n", "timing.min_rounds");
  EXPECT_EQ(parse_config(base + "timing: {rounds: 8, min_rounds: 8}\n", "a.yaml").timing.min_rounds, 8);
}

TEST(Config, Threads) {
  const std::string base = "op: act\nx: {n: [16]}\n";
  EXPECT_EQ(parse_config(base, "a.yaml").timing.threads, Timing::kDeviceDefault);  // the device decides
  EXPECT_EQ(parse_config(base + "timing: {threads: 1}\n", "a.yaml").timing.threads, 1);
  EXPECT_EQ(parse_config(base + "timing: {threads: 0}\n", "a.yaml").timing.threads, 0);  // LibTorch's own
  expect_bad(base + "timing: {threads: -1}\n", "timing.threads");
  expect_bad(base + "timing: {threads: 2000}\n", "timing.threads");
  expect_bad(base + "timing: {threads: all}\n", "timing.threads");
}

TEST(Config, StoredTimingIsReadLeniently) {
  // A stored config whose op no longer exists still gives its timing; the keys it spells out.
  auto t = stored_timing("op: retired\nx: {n: [16]}\ntiming: {rounds: 3, flush_l2: read}\n", "old.yaml");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->timing.rounds, 3);
  EXPECT_EQ(t->timing.flush_l2, L2Flush::read);
  EXPECT_EQ(t->given, (std::set<std::string>{"flush_l2", "rounds"}));
  t = stored_timing("op: act\n", "old.yaml");
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->given.empty());
  EXPECT_EQ(t->timing.rounds, Timing::kNoiseRounds);  // this build's defaults for what it leaves out
  EXPECT_FALSE(stored_timing("op: [", "old.yaml").has_value());
  EXPECT_FALSE(stored_timing("op: act\ntiming: {rounds: 0}\n", "old.yaml").has_value());
}

TEST(Config, BadInput) {
  const std::string base = "op: act\nx: {n: [16]}\n";
  expect_bad("op: nope\nx: {n: [1]}\n", "op");
  expect_bad("x: {n: [1]}\n", "op");
  expect_bad(base + "bogus: 1\n", "bogus");
  expect_bad(base + "params: {batch: two}\n", "params.batch");
  expect_bad(base + "params: {batch: 0}\n", "params.batch");
  expect_bad(base + "params: {batch: -3}\n", "params.batch");
  expect_bad(base + "params: {batch: []}\n", "params.batch");
  expect_bad(base + "params: {batch: [2, 0]}\n", "params.batch[1]");
  expect_bad("op: act\nx: {n: [16, 16]}\n", "x.n[1]");  // a value twice: one point, counted twice
  expect_bad(base + "params: {batch: [2, 3, 2]}\n", "params.batch[2]");
  expect_bad(base + "variants: [{n: [8, 8]}]\n", "variants[0].n[1]");
  expect_bad(base + "params: {dtype: fp8}\n", "params.dtype");
  expect_bad(base + "params: {act: gelu}\n", "params.act");
  expect_bad(base + "params: {colour: 3}\n", "params.colour");
  expect_bad(base + "providers: {triton: tr}\n", "providers.triton");
  expect_bad(base + "providers: [torch, torch]\n", "providers[1]");
  expect_bad("op: act\nx: {n: []}\n", "x.n");
  expect_bad("op: act\nx: {n: [1], dim: [2]}\n", "x");
  expect_bad("op: act\nx: {m: [1]}\n", "x.m");
  expect_bad("op: act\nx: {n: [0]}\n", "x.n");
  expect_bad(base + "params: {act: softmax, act_dim: 3}\n", "params.act_dim");
  expect_bad("op: lrpe_rotate\nx: {n: [8]}\nparams: {dim: 15}\n", "params.dim");
  expect_bad("op: lrpe_cosine_md\nx: {n: [8]}\nparams: {md: 4}\n", "params.md");
  expect_bad("op: lrpe_cosine_md\nx: {n: [8]}\nparams: {md: 3, dim: 64, theta_dim: 16}\n", "params.theta_dim");
  expect_bad("op: tpa_decode\nx: {m: [8]}\nparams: {mode: bwd}\n", "params.mode");
  expect_bad(base + "timing: {stat: mode}\n", "timing.stat");
  expect_bad(base + "timing: {rep_ms: -1}\n", "timing.rep_ms");
  expect_bad(base + "timing: {flush_l2: 3}\n", "timing.flush_l2");
  expect_bad(base + "timing: {flush_l2: memset}\n", "timing.flush_l2");
  expect_bad(base + "timing: {warm: 3}\n", "timing.warm");
  expect_bad(base + "variants: []\n", "variants");
  expect_bad(base + "variants: [{act: relu, bad: 1}]\n", "variants[0].bad");
  expect_bad(base + "params: {act: relu}\nvariants: [{act: silu}]\n", "variants[0].act");
  expect_bad(base + "title: 'x-{nope}'\n", "title");
  expect_bad(base + "params: {mode: [fwd, bwd]}\ntitle: same\n", "title");
  expect_bad("op: [unclosed\n", "not valid YAML");
  expect_bad(base + "---\nop: tpa_decode\n", "a second YAML document");
  expect_bad(base + "...\nop: tpa_decode\n", "a second YAML document");
  expect_bad("op: act\nx: {n: [!!str 16]}\n", "x.n[0]");
  expect_bad("op: act\nx: {n: [!foo 64]}\n", "x.n[0]");
  expect_bad("op: act\nx: !!map {n: [16]}\n", "x");
  EXPECT_NO_THROW(parse_config("---\n" + base, "a.yaml"));  // one document, its start marked
  EXPECT_NO_THROW(parse_config("---\n" + base + "...\n# the end\n", "a.yaml"));  // and its end
  expect_bad("{\"op\": ", "not valid JSON", "bad.json");
  expect_bad("op: act\n", "x");
  expect_bad("op: act\n", "x", "bad.txt");
}

TEST(Config, UnreadableFile) {
  try {
    load_config("/nonexistent/dir/c.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/c.yaml"), std::string::npos);
  }
}

TEST(Config, EveryShippedConfigLoads) {
  std::vector<std::string> names = {"quick"};
  for (const OpSpec* op : all_ops()) names.push_back(op->name);  // each op's reference config
  for (const auto& name : names) {
    std::string path = std::string(OPBENCH_SOURCE_DIR) + "/configs/" + name + ".yaml";
    Config c = load_config(path);
    Sweep s = expand(c);
    EXPECT_GT(s.points.size(), 0u) << path;
  }
}
