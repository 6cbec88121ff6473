// opbench compile CONFIG: build the AOTInductor packages a config's compiled baselines need,
// in parallel, with a progress line. `sweep` runs the same step before measuring.
#include <unistd.h>

#include <iostream>
#include <map>
#include <thread>

#include "baselines/compiled/compiled.h"
#include "cli/cli.hpp"
#include "core/error.hpp"
#include "sweep/points.hpp"
#include "sweep/runner.hpp"

namespace opbench {

std::vector<CompileJob> compile_jobs(const Sweep& sw, const std::string& device) {
  std::vector<CompileJob> jobs;
  std::map<std::string, bool> seen;  // one request per package (speed and memory share one)
  for (const auto& t : sw.tables) {
    std::map<std::string, bool> providers;
    for (const auto& p : sw.points)
      if (p.title == t.title && (p.provider == "torch_compile" || p.provider == "torch_naive_compile"))
        providers[p.provider] = true;
    for (const auto& [prov, _] : providers) {
      CompileRequest r;
      r.op = sw.op->name;
      r.provider = prov;
      r.params = t.params;
      r.params.erase("metric");
      r.x_name = sw.op->x_axes.front();
      r.x_values = t.x_values;
      r.device = device;
      std::string key = prov + "|" + r.device;
      for (const auto& [k, v] : r.params.values()) key += "|" + k + "=" + to_string(v);
      if (seen[key]) continue;
      seen[key] = true;
      jobs.push_back({t.title, r});
    }
  }
  return jobs;
}

std::vector<CompileOutcome> run_compile_jobs(const std::vector<CompileJob>& jobs, int parallel, ProgressMode mode,
                                             std::ostream& log) {
  std::vector<CompileRequest> reqs;
  for (const auto& j : jobs) reqs.push_back(j.request);
  if (reqs.empty()) return {};
  size_t failed = 0;
  Progress progress(mode, log, reqs.size(), 0, "packages");
  progress.begin("compiling", 0);
  auto outcomes = compile_packages(reqs, parallel, [&](size_t done, size_t, const CompileOutcome& o) {
    if (!o.error.empty()) {
      ++failed;
      progress.note("compile failed: " + o.key + ": " + o.error);
    }
    const std::string what = (o.cached ? "cached " : o.error.empty() ? "built " : "failed ") + o.key +
                             (o.cached ? "" : " (" + format_duration(o.seconds) + ")");
    progress.end(what, done, 1);
    progress.begin(what, done);
  });
  progress.finish();
  double total_s = 0;
  size_t cached = 0;
  for (const auto& o : outcomes) {
    total_s += o.seconds;
    cached += o.cached;
  }
  log << "compiled baselines: " << outcomes.size() << " packages (" << cached << " cached, " << failed
      << " failed), " << int(total_s) << " s of export time\n";
  return outcomes;
}

int default_compile_jobs() {
  unsigned n = std::thread::hardware_concurrency();
  return int(std::max(1u, n / 2));
}

void add_compile_command(CLI::App& app, Cli& cli) {
  struct Opts {
    std::string config, device, progress = "auto";
    int jobs = 0;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("compile", "build the AOTInductor packages a config's torch_compile providers need");
  cmd->add_option("config", o->config, "the sweep config")->required();
  cmd->add_option("--device", o->device, "cpu, cuda or cuda:N (default: cuda when present)");
  cmd->add_option("--jobs", o->jobs, "exporter processes at a time (default: half the cores)");
  cmd->add_option("--progress", o->progress, "auto (a bar on a terminal, else a line per package), bar, lines or none")
      ->check(CLI::IsMember({"auto", "bar", "lines", "none"}))
      ->capture_default_str();
  cmd->callback([o, &cli] {
    Config cfg = load_config(o->config);
    Sweep sw = expand(cfg);
    std::string device = o->device.empty() ? default_device() : o->device;
    std::string why = compiled::unavailable(device);
    if (!why.empty()) throw RuntimeFailure("torch_compile is unavailable: " + why);
    auto jobs = compile_jobs(sw, device);
    if (jobs.empty()) {
      std::cout << cfg.path << ": no compiled provider in this config\n";
      cli.status = kExitOk;
      return;
    }
    auto outcomes = run_compile_jobs(jobs, o->jobs > 0 ? o->jobs : default_compile_jobs(),
                                     parse_progress(o->progress, isatty(2)), std::cerr);
    bool failed = false;
    for (size_t i = 0; i < outcomes.size(); ++i) {
      std::cout << (outcomes[i].error.empty() ? (outcomes[i].cached ? "cached " : "built  ") : "FAILED ")
                << jobs[i].request.provider << " " << jobs[i].title << " (" << int(outcomes[i].seconds) << " s) "
                << outcomes[i].path << "\n";
      failed = failed || !outcomes[i].error.empty();
    }
    cli.status = failed ? kExitRuntime : kExitOk;
  });
}

}  // namespace opbench
