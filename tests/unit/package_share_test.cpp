// Packages shared by tables that differ only in an op's shared axes (OpSpec::shared_axes,
// baselines/compiled): the key leaves those axes out, the planner merges the tables' requests
// into one export dynamic over them, a package's name says the ranges it serves and serves no
// point outside them, the loader's check of its metadata, sharing turned off
// ($OPBENCH_AOTI_SHARE=0) and the fallback to one package per table. Fast: the exporter is a
// stand-in (written here) that records its requests and writes an empty zip archive; the real
// export of a shared package is in compiled_test.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "baselines/compiled/compiled.h"
#include "baselines/compiled/exporter.h"
#include "baselines/compiled/package_cache.h"
#include "baselines/compiled/package_name.h"

namespace {

using opbench::CompileOutcome;
using opbench::CompileRequest;
using opbench::Params;
using opbench::Value;
namespace compiled = opbench::compiled;

std::string read(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
void write(const std::string& path, const std::string& text, mode_t mode = 0644) {
  std::ofstream(path) << text;
  ::chmod(path.c_str(), mode);
}
bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}
std::string base_name(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }
std::string dir_name(const std::string& path) { return path.substr(0, path.find_last_of('/')); }
std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

// An empty zip archive: its end-of-central-directory record alone (a whole package to the cache).
const std::string kEmptyZip = std::string("PK\x05\x06", 4) + std::string(18, '\0');

// A stand-in for the exporter's python: `-c` (the probes) goes to the real python; an export
// appends its request's path to $FAKE_LOG and writes an empty zip archive at the request's
// output, or fails, when $FAKE_FAIL_SHARED is set, for a request dynamic over a shared axis.
const char* const kFakeExporter = R"(import json, os, sys
req = json.load(open(sys.argv[2]))
open(os.environ["FAKE_LOG"], "a").write(sys.argv[2] + "\n")
if os.environ.get("FAKE_FAIL_SHARED") and any(a["min"] < a["max"] for a in req.get("shared", [])):
    print("opbench-export: error: fake: no export dynamic over a shared axis", file=sys.stderr)
    sys.exit(1)
open(req["output"], "wb").write(b"PK\x05\x06" + bytes(18))
print("opbench-export: ok")
)";

class Share : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("OPBENCH_PYTHON");
    had_python_ = old != nullptr;
    if (old) old_python_ = old;
    real_python_ = compiled::python();
    char tmpl[] = "/tmp/opbench-share-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ::setenv("OPBENCH_CACHE_DIR", (dir_ + "/cache").c_str(), 1);
    write(dir_ + "/fake_export.py", kFakeExporter);
    write(dir_ + "/python",
          "#!/bin/sh\nif [ \"$1\" = -c ]; then exec '" + real_python_ + "' \"$@\"; fi\nexec '" + real_python_ +
              "' '" + dir_ + "/fake_export.py' \"$@\"\n",
          0755);
    ::setenv("OPBENCH_PYTHON", (dir_ + "/python").c_str(), 1);
    ::setenv("FAKE_LOG", (dir_ + "/exports.log").c_str(), 1);
  }
  void TearDown() override {
    if (had_python_)
      ::setenv("OPBENCH_PYTHON", old_python_.c_str(), 1);
    else
      ::unsetenv("OPBENCH_PYTHON");
    ::unsetenv("OPBENCH_AOTI_SHARE");
    ::unsetenv("FAKE_FAIL_SHARED");
    if (!std::getenv("OPBENCH_TEST_KEEP_CACHE")) std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  // The requests the stand-in exporter was given, in order.
  std::vector<nlohmann::json> exports() const {
    std::vector<nlohmann::json> out;
    for (const std::string& path : lines(read(dir_ + "/exports.log"))) out.push_back(nlohmann::json::parse(read(path)));
    return out;
  }
  // The same tables compiled again: every one served by the cache, no export started.
  std::vector<CompileOutcome> compiled_again(const std::vector<CompileRequest>& requests) const {
    const size_t before = exports().size();
    const std::vector<CompileOutcome> again = opbench::compile_packages(requests, 2, nullptr);
    EXPECT_EQ(again.size(), requests.size());
    for (const CompileOutcome& o : again) EXPECT_TRUE(o.cached);
    EXPECT_EQ(exports().size(), before);
    return again;
  }
  std::string dir_, real_python_, old_python_;
  bool had_python_ = false;
};

Params tpa(int64_t batch, const std::string& metric = "speed") {
  return Params({{"batch", Value(batch)}, {"head", Value(int64_t(2))}, {"rank", Value(int64_t(2))},
                 {"dim", Value(int64_t(4))}, {"dim_v", Value(int64_t(0))},
                 {"dtype", Value(std::string("fp32"))}, {"mode", Value(std::string("fwd"))},
                 {"metric", Value(metric)}});
}
CompileRequest tpa_request(int64_t batch, std::vector<int64_t> ms, const std::string& metric = "speed") {
  return {"tpa_decode", "torch_compile", tpa(batch, metric), "m", std::move(ms), "cpu"};
}
std::string key(const CompileRequest& r) { return compiled::package_key(r); }

TEST_F(Share, KeyLeavesTheSharedAxesOut) {
  const std::string k8 = key(tpa_request(8, {256}));
  EXPECT_EQ(k8, key(tpa_request(32, {256, 512})));
  EXPECT_EQ(k8, key(tpa_request(32, {256}, "memory")));
  // head is no shared axis of tpa_decode: another key.
  CompileRequest heads = tpa_request(8, {256});
  heads.params.set("head", int64_t(4));
  EXPECT_NE(k8, key(heads));
  // act shares nothing: its batch stays in the key.
  auto act = [](int64_t batch) {
    return CompileRequest{"act", "torch_compile",
                          Params({{"batch", Value(batch)}, {"head", Value(int64_t(2))}, {"dim", Value(int64_t(16))},
                                  {"act", Value(std::string("relu"))}, {"act_dim", Value(int64_t(-1))},
                                  {"dtype", Value(std::string("fp32"))}, {"mode", Value(std::string("fwd"))}}),
                          "n", {8}, "cpu"};
  };
  EXPECT_NE(key(act(1)), key(act(2)));
  const std::string canonical = compiled::make_key(tpa_request(8, {256})).canonical;
  EXPECT_NE(canonical.find("\nshared=batch\n"), std::string::npos) << canonical;
  EXPECT_EQ(canonical.find("batch=8"), std::string::npos) << canonical;
  // Sharing off: one key per batch, neither the shared one (a per-table package is never taken
  // for a shared one, nor the other way round).
  ::setenv("OPBENCH_AOTI_SHARE", "0", 1);
  const std::string own8 = key(tpa_request(8, {256})), own32 = key(tpa_request(32, {256}));
  EXPECT_NE(own8, own32);
  EXPECT_NE(own8, k8);
  EXPECT_NE(own32, k8);
  ::setenv("OPBENCH_AOTI_SHARE", "1", 1);
  EXPECT_EQ(key(tpa_request(8, {256})), k8);
}

TEST_F(Share, NamesSayTheRanges) {
  using compiled::PackageName;
  EXPECT_EQ(compiled::package_name(PackageName{{256, 32768}, {{"batch", {8, 32}}}}), "dyn-256-32768.batch-8-32.pt2");
  EXPECT_EQ(compiled::package_name(PackageName{{256, 256}, {{"batch", {8, 8}}}}), "static-256.batch-8-8.pt2");
  EXPECT_EQ(compiled::package_name(PackageName{{8, 64}, {}}), "dyn-8-64.pt2");
  EXPECT_EQ(compiled::package_name("static-{x}", {{"batch", {8, 8}}}), "static-{x}.batch-8-8.pt2");
  const auto p = compiled::parse_package_name("dyn-256-32768.batch-8-32.pt2");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->x.lo, 256);
  EXPECT_EQ(p->x.hi, 32768);
  ASSERT_EQ(p->shared.count("batch"), 1u);
  EXPECT_EQ(p->shared.at("batch").lo, 8);
  EXPECT_EQ(p->shared.at("batch").hi, 32);
  const auto s = compiled::parse_package_name("static-7.pt2");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->x.lo, 7);
  EXPECT_TRUE(s->shared.empty());
  for (const char* other : {"dyn-256-32768.batch-8-32.log", "dyn-8-64.tmp-123.pt2", "dyn-8-64.batch-8.pt2",
                            "dyn-64-8.pt2", "dyn-8-8.pt2", "dyn-8-64.batch-32-8.pt2", "static-x.pt2",
                            "dyn-8-64.batch-8-32.batch-8-32.pt2", "key.txt", "dyn-8-64-by3.pt2",
                            "dyn-8-64-by16.pt2", "dyn-8-64-by1.pt2", "dyn-8-64-8.pt2", "dyn-8-8-by8.pt2",
                            "dyn-8-64.batch-8-32-by16.pt2"})
    EXPECT_FALSE(compiled::parse_package_name(other).has_value()) << other;
}

TEST_F(Share, ARangesStepIsInItsName) {
  using compiled::PackageName;
  EXPECT_EQ(compiled::step_of({256, 512, 4096, 32768}), 256);
  EXPECT_EQ(compiled::step_of({8, 32}), 8);
  EXPECT_EQ(compiled::step_of({8, 33, 64}), 1);
  EXPECT_EQ(compiled::step_of({96, 160}), 32);  // a power of two, not the gcd
  EXPECT_EQ(compiled::step_of({256}), 1);        // one value: static, no step
  const compiled::Range r = compiled::range_of({256, 1024, 32768});
  EXPECT_EQ(r.lo, 256);
  EXPECT_EQ(r.hi, 32768);
  EXPECT_EQ(r.step, 256);
  const std::string name = "dyn-256-32768-by256.batch-8-32-by8.pt2";
  EXPECT_EQ(compiled::package_name(PackageName{{256, 32768, 256}, {{"batch", {8, 32, 8}}}}), name);
  const auto p = compiled::parse_package_name(name);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->x.step, 256);
  EXPECT_EQ(p->shared.at("batch").step, 8);
  EXPECT_EQ(compiled::package_name(*p), name);
  EXPECT_EQ(compiled::parse_package_name("dyn-256-32768.pt2")->x.step, 1);
}

TEST_F(Share, ASteppedPackageServesTheMultiplesOfItsStepAlone) {
  const std::string dir = dir_ + "/stepped";
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  const std::string stepped = dir + "/dyn-256-1024-by256.batch-8-32-by8.pt2";
  write(stepped, kEmptyZip);
  EXPECT_EQ(compiled::find_package(dir, 768, {{"batch", 16}}), stepped);
  EXPECT_EQ(compiled::find_package(dir, 300, {{"batch", 8}}), "");
  EXPECT_EQ(compiled::find_package(dir, 512, {{"batch", 12}}), "");
  // A plain package of the same ranges serves the rest; where both serve, the stepped one.
  write(dir + "/dyn-256-1024.batch-8-32.pt2", kEmptyZip);
  EXPECT_EQ(compiled::find_package(dir, 300, {{"batch", 12}}), dir + "/dyn-256-1024.batch-8-32.pt2");
  EXPECT_EQ(compiled::find_package(dir, 768, {{"batch", 16}}), stepped);
  const compiled::PackageName by256{{256, 1024, 256}, {{"batch", {8, 32, 8}}}}, plain{{256, 1024}, {{"batch", {8, 32}}}};
  EXPECT_TRUE(by256.narrower_than(plain));
  EXPECT_FALSE(plain.narrower_than(by256));
  const std::map<std::string, std::string> meta = {
      {"opbench_x_name", "m"}, {"opbench_x_min", "256"}, {"opbench_x_max", "1024"}, {"opbench_x_step", "256"},
      {"opbench_shared", "batch"}, {"opbench_shared_batch_min", "8"}, {"opbench_shared_batch_max", "32"},
      {"opbench_shared_batch_step", "8"}};
  Params p = tpa(16);
  p.set("m", int64_t(768));
  EXPECT_EQ(compiled::serve_error(meta, "P", p, {{"batch", 16}}), "");
  p.set("m", int64_t(300));
  EXPECT_EQ(compiled::serve_error(meta, "P", p, {{"batch", 16}}),
            "package P serves m in [256, 1024] (multiples of 256), not m=300");
  p.set("m", int64_t(512));
  EXPECT_EQ(compiled::serve_error(meta, "P", p, {{"batch", 12}}),
            "package P serves batch in [8, 32] (multiples of 8), not batch=12");
}

TEST_F(Share, APackageServesThePointsOfItsRangesAlone) {
  const std::string dir = dir_ + "/pkgs";
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  write(dir + "/dyn-256-1024.batch-8-32.pt2", kEmptyZip);
  write(dir + "/dyn-256-1024.pt2", kEmptyZip);  // one table's package (no shared axis)
  const compiled::SharedPoint b8{{"batch", 8}}, b32{{"batch", 32}}, b16{{"batch", 16}}, b64{{"batch", 64}};
  const std::string shared = dir + "/dyn-256-1024.batch-8-32.pt2";
  // Both tables' points, and a batch between theirs.
  for (const auto& point : {b8, b32, b16})
    for (int64_t m : {256, 512, 1024}) EXPECT_EQ(compiled::find_package(dir, m, point), shared) << m;
  const auto table8 = compiled::cached_packages(dir, {256, 512, 1024}, b8);
  const auto table32 = compiled::cached_packages(dir, {256, 512, 1024}, b32);
  ASSERT_EQ(table8.size(), 3u);
  ASSERT_EQ(table32.size(), 3u);
  EXPECT_EQ(table8.at(512), shared);
  EXPECT_EQ(table32.at(1024), shared);
  // Outside its ranges: no package.
  EXPECT_EQ(compiled::find_package(dir, 512, b64), "");
  EXPECT_EQ(compiled::find_package(dir, 2048, b8), "");
  EXPECT_TRUE(compiled::cached_packages(dir, {256, 2048}, b8).empty());
  EXPECT_TRUE(compiled::cached_packages(dir, {256}, b64).empty());
  // A package naming no batch range serves no point with one, and the shared one no point without.
  EXPECT_EQ(compiled::find_package(dir, 512, {}), dir + "/dyn-256-1024.pt2");
  ::unlink((dir + "/dyn-256-1024.pt2").c_str());
  EXPECT_EQ(compiled::find_package(dir, 512, {}), "");
  // The narrowest package covering a point is taken.
  write(dir + "/dyn-256-1024.batch-8-8.pt2", kEmptyZip);
  EXPECT_EQ(compiled::find_package(dir, 512, b8), dir + "/dyn-256-1024.batch-8-8.pt2");
  EXPECT_EQ(compiled::find_package(dir, 512, b32), shared);
}

TEST_F(Share, TheLoaderChecksThePackagesRanges) {
  const std::map<std::string, std::string> meta = {
      {"opbench_x_name", "m"}, {"opbench_x_min", "256"}, {"opbench_x_max", "1024"}, {"opbench_shared", "batch"},
      {"opbench_shared_batch_min", "8"}, {"opbench_shared_batch_max", "32"}};
  auto at = [](int64_t batch, int64_t m) {
    Params p = tpa(batch);
    p.set("m", m);
    return p;
  };
  EXPECT_EQ(compiled::serve_error(meta, "P", at(8, 256), {{"batch", 8}}), "");
  EXPECT_EQ(compiled::serve_error(meta, "P", at(32, 1024), {{"batch", 32}}), "");
  EXPECT_EQ(compiled::serve_error(meta, "P", at(64, 512), {{"batch", 64}}), "package P serves batch in [8, 32], not batch=64");
  EXPECT_EQ(compiled::serve_error(meta, "P", at(8, 2048), {{"batch", 8}}), "package P serves m in [256, 1024], not m=2048");
  // One table's package (with sharing off) for a shared point: refused.
  const std::map<std::string, std::string> own = {{"opbench_x_name", "m"}, {"opbench_x_min", "256"}, {"opbench_x_max", "1024"}};
  EXPECT_EQ(compiled::serve_error(own, "P", at(8, 512), {}), "");
  EXPECT_NE(compiled::serve_error(own, "P", at(8, 512), {{"batch", 8}}).find("names no range of batch"), std::string::npos);
  // The x axis the package names: a table swept over another axis is checked on that one.
  const std::map<std::string, std::string> offsets = {{"opbench_x_name", "offset"}, {"opbench_x_min", "4"}, {"opbench_x_max", "4"}};
  Params p = at(8, 512);
  p.set("offset", int64_t(4));
  EXPECT_EQ(compiled::serve_error(offsets, "P", p, {}), "");
  p.set("offset", int64_t(1));
  EXPECT_EQ(compiled::serve_error(offsets, "P", p, {}), "package P serves offset in [4, 4], not offset=1");
}

TEST_F(Share, TwoTablesAreOneExport) {
  size_t calls = 0;
  const std::vector<CompileOutcome> out = opbench::compile_packages(
      {tpa_request(8, {256, 512}), tpa_request(32, {256, 512}), tpa_request(32, {256, 512}, "memory")}, 2,
      [&](size_t, size_t, const CompileOutcome&) { ++calls; });
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(calls, 3u);
  for (const CompileOutcome& o : out) {
    EXPECT_EQ(o.error, "");
    EXPECT_FALSE(o.cached);
    EXPECT_EQ(base_name(o.path), "dyn-256-512-by256.batch-8-32-by8.pt2");
    EXPECT_EQ(o.path, out[0].path);
  }
  const std::vector<nlohmann::json> reqs = exports();
  ASSERT_EQ(reqs.size(), 1u);
  const nlohmann::json& r = reqs[0];
  EXPECT_EQ(r["shared"], nlohmann::json::parse(R"([{"name": "batch", "min": 8, "max": 32, "step": 8, "values": [8, 32]}])"));
  EXPECT_FALSE(r["params"].contains("batch"));
  EXPECT_EQ(r["x_min"], 256);
  EXPECT_EQ(r["x_max"], 512);
  EXPECT_EQ(r["x_step"], 256);
  EXPECT_FALSE(r.contains("static_output"));  // a failure falls back per table instead
  // Every (m, batch) point's shapes: ak is (b, m, h).
  const nlohmann::json& ak = r["args"][1];
  EXPECT_EQ(ak["name"], "ak");
  EXPECT_EQ(ak["shapes"].size(), 4u);
  EXPECT_EQ(ak["shapes"]["256,8"], nlohmann::json::parse("[8, 256, 2]"));
  EXPECT_EQ(ak["shapes"]["512,32"], nlohmann::json::parse("[32, 512, 2]"));
  EXPECT_EQ(ak["dynamic"], nlohmann::json::parse("[0, 1]"));
  EXPECT_EQ(r["args"][3]["dynamic"], nlohmann::json::parse("[0]"));  // bq (b, 1, r, d)
  // Built once: both tables cached now.
  const std::vector<CompileOutcome> again = compiled_again({tpa_request(32, {256, 512}), tpa_request(8, {512})});
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[1].path, out[0].path);
  EXPECT_EQ(exports().size(), 1u);
}

TEST_F(Share, SharingOffMakesOnePackagePerTable) {
  ::setenv("OPBENCH_AOTI_SHARE", "0", 1);
  const std::vector<CompileOutcome> out =
      opbench::compile_packages({tpa_request(8, {256, 1024}), tpa_request(32, {256, 1024})}, 2, nullptr);
  ASSERT_EQ(out.size(), 2u);
  for (const CompileOutcome& o : out) {
    EXPECT_EQ(o.error, "");
    EXPECT_EQ(base_name(o.path), "dyn-256-1024-by256.pt2");
  }
  EXPECT_NE(out[0].key, out[1].key);
  EXPECT_NE(dir_name(out[0].path), dir_name(out[1].path));
  const std::vector<nlohmann::json> reqs = exports();
  ASSERT_EQ(reqs.size(), 2u);
  for (const auto& r : reqs) {
    EXPECT_TRUE(r["shared"].empty());
    EXPECT_TRUE(r["params"].contains("batch"));
    EXPECT_TRUE(r["args"][1]["shapes"].contains("256"));
    EXPECT_EQ(r["args"][1]["dynamic"], nlohmann::json::parse("[1]"));
  }
  // Sharing on again: the per-table packages are not the shared one.
  ::unsetenv("OPBENCH_AOTI_SHARE");
  const std::vector<CompileOutcome> shared =
      opbench::compile_packages({tpa_request(8, {256, 1024}), tpa_request(32, {256, 1024})}, 2, nullptr);
  EXPECT_FALSE(shared.at(0).cached);
  EXPECT_EQ(base_name(shared[0].path), "dyn-256-1024-by256.batch-8-32-by8.pt2");
  EXPECT_EQ(exports().size(), 3u);
}

TEST_F(Share, AFailedSharedExportFallsBackToOnePackagePerTable) {
  ::setenv("FAKE_FAIL_SHARED", "1", 1);
  testing::internal::CaptureStderr();
  const std::vector<CompileOutcome> out =
      opbench::compile_packages({tpa_request(8, {300, 600}), tpa_request(32, {300, 600})}, 2, nullptr);
  const std::string err = testing::internal::GetCapturedStderr();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].error, "");
  EXPECT_EQ(out[1].error, "");
  EXPECT_EQ(base_name(out[0].path), "dyn-300-600-by4.batch-8-8.pt2");
  EXPECT_EQ(base_name(out[1].path), "dyn-300-600-by4.batch-32-32.pt2");
  EXPECT_EQ(out[0].key, out[1].key);
  EXPECT_NE(err.find("warning: "), std::string::npos) << err;
  EXPECT_NE(err.find("dynamic over batch failed (fake: no export dynamic over a shared axis)"), std::string::npos)
      << err;
  const std::vector<nlohmann::json> reqs = exports();
  ASSERT_EQ(reqs.size(), 3u);  // the shared one, then one per batch (in either order)
  EXPECT_EQ(reqs[0]["shared"][0]["values"], nlohmann::json::parse("[8, 32]"));
  std::set<int64_t> batches;
  for (size_t i = 1; i < reqs.size(); ++i) {
    ASSERT_EQ(reqs[i]["shared"][0]["values"].size(), 1u);
    batches.insert(reqs[i]["shared"][0]["values"][0].get<int64_t>());
    EXPECT_TRUE(reqs[i].contains("static_output"));  // x's own fallback, as for one table
  }
  EXPECT_EQ(batches, (std::set<int64_t>{8, 32}));
  // The per-table packages are found again, each for its own table alone.
  const std::vector<CompileOutcome> again = compiled_again({tpa_request(8, {300, 600}), tpa_request(32, {300, 600})});
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[1].path, out[1].path);
  EXPECT_EQ(exports().size(), 3u);
}

TEST_F(Share, ABadSwitchIsOneLine) {
  ::setenv("OPBENCH_AOTI_SHARE", "yes", 1);
  const std::vector<CompileOutcome> out = opbench::compile_packages({tpa_request(8, {256})}, 1, nullptr);
  EXPECT_EQ(out.at(0).error, "OPBENCH_AOTI_SHARE must be 0 or 1, not 'yes'");
  EXPECT_TRUE(exports().empty());
}

}  // namespace
