// opbench compile CONFIG: build the AOTInductor packages a config's compiled baselines need,
// in parallel, with a progress line. `sweep` runs the same step before measuring.
#include <unistd.h>

#include <iostream>
#include <map>
#include <set>
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
  std::map<std::string, std::set<std::string>> compiled;  // title -> its compiled providers (one pass)
  for (const auto& p : sw.points)
    if (p.provider == "torch_compile" || p.provider == "torch_naive_compile") compiled[p.title].insert(p.provider);
  for (const auto& t : sw.tables) {
    for (const auto& prov : compiled[t.title]) {
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

std::vector<CompileOutcome> run_compile_jobs(const std::vector<CompileJob>& jobs, int parallel, bool tty,
                                             std::ostream& log) {
  std::vector<CompileRequest> reqs;
  for (const auto& j : jobs) reqs.push_back(j.request);
  if (reqs.empty()) return {};
  size_t failed = 0;
  auto outcomes = compile_packages(reqs, parallel, [&](size_t done, size_t total, const CompileOutcome& o) {
    if (!o.error.empty()) ++failed;
    if (tty)
      log << "\r\033[Kcompile [" << done << "/" << total << "] " << (o.cached ? "cached " : "built ") << o.key
          << std::flush;
    if (!o.error.empty()) log << (tty ? "\n" : "") << "compile failed: " << o.key << ": " << o.error << "\n";
  });
  double total_s = 0;
  size_t cached = 0;
  for (const auto& o : outcomes) {
    total_s += o.seconds;
    cached += o.cached;
  }
  if (tty) log << "\r\033[K";
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
    std::string config, device;
    int jobs = 0;
    size_t max_points = kDefaultMaxPoints;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("compile", "build the AOTInductor packages a config's torch_compile providers need");
  cmd->add_option("config", o->config, "the sweep config")->required();
  cmd->add_option("--device", o->device, "cpu, cuda or cuda:N (default: cuda when present)");
  cmd->add_option("--jobs", o->jobs, "exporter processes at a time (default: half the cores)");
  cmd->add_option("--max-points", o->max_points, "refuse a config of more points than this")
      ->check(positive_count())
      ->capture_default_str();
  cmd->callback([o, &cli] {
    Config cfg = load_config(o->config);
    Sweep sw = expand(cfg, o->max_points);
    std::string device = o->device.empty() ? default_device() : o->device;
    std::string why = compiled::unavailable(device);
    if (!why.empty()) throw RuntimeFailure("torch_compile is unavailable: " + why);
    auto jobs = compile_jobs(sw, device);
    if (jobs.empty()) {
      std::cout << cfg.path << ": no compiled provider in this config\n";
      cli.status = kExitOk;
      return;
    }
    auto outcomes = run_compile_jobs(jobs, o->jobs > 0 ? o->jobs : default_compile_jobs(), isatty(2), std::cerr);
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
