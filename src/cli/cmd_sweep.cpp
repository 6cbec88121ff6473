// opbench sweep CONFIG: run every point of a config and store it; print the run's report.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "measure/executor.hpp"
#include "report/report.hpp"
#include "sweep/runner.hpp"

namespace opbench {

namespace {

std::atomic<bool> g_stop{false};

void on_sigint(int) {
  if (g_stop.load()) _exit(130);  // a second Ctrl-C: stop now (committed points stay)
  g_stop.store(true);
}

std::string shell_line(const std::string& cmd) {
  std::string out;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, f)) out += buf;
    pclose(f);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// The commit of the source tree being measured (OPBENCH_GIT_COMMIT overrides, for a copy of
// the tree without .git), with "-dirty" when it has uncommitted changes.
std::string git_commit() {
  if (const char* c = std::getenv("OPBENCH_GIT_COMMIT")) return c;
  std::string dir = OPBENCH_SOURCE_DIR;
  std::string head = shell_line("git -C '" + dir + "' rev-parse HEAD 2>/dev/null");
  if (head.empty()) return "";
  std::string dirty = shell_line("git -C '" + dir + "' status --porcelain --untracked-files=no 2>/dev/null");
  return dirty.empty() ? head : head + "-dirty";
}

std::string hostname() {
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s + ",") {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  return out;
}

}  // namespace

void add_sweep_command(CLI::App& app, Cli& cli) {
  struct Opts {
    std::string config, label, device, providers, out, filter;
    bool dry_run = false, no_report = false;
    int64_t resume = 0;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("sweep", "run a sweep config, store every point, print its report");
  cmd->add_option("config", o->config, "the sweep config (.yaml, .yml or .json)")->required();
  cmd->add_option("--db", cli.db, "the SQLite database")->capture_default_str();
  cmd->add_option("--label", o->label, "a label for the run (select it later with label:TEXT)");
  cmd->add_option("--device", o->device, "cpu, cuda or cuda:N (default: cuda when present)");
  cmd->add_option("--providers", o->providers, "only these providers (comma-separated)");
  cmd->add_option("--filter", o->filter, "only tables whose title matches this regular expression");
  cmd->add_flag("--dry-run", o->dry_run, "list the tables and points; run and store nothing");
  cmd->add_option("--resume", o->resume, "continue run RUN: skip its stored points");
  cmd->add_option("--out", o->out, "also write the report to this file");
  cmd->add_flag("--no-report", o->no_report, "do not print the report at the end");
  cmd->callback([o, &cli] {
    Config cfg = load_config(o->config);
    Sweep sw = expand(cfg);
    filter_providers(sw, cfg, split_list(o->providers));
    filter_tables(sw, TitleFilter(o->filter), cfg.path);
    std::string device = o->device.empty() ? default_device() : o->device;
    TorchExecutor ex(device);
    const std::string no_flush = ex.device().flush_unsupported(cfg.timing.flush_l2);
    if (!no_flush.empty()) throw InputError(cfg.path, "timing.flush_l2", no_flush);
    drop_unavailable(sw, ex, std::cerr);

    if (o->dry_run) {
      std::cout << cfg.path << ": " << cfg.op << " on " << device << ", " << sw.tables.size() << " tables, "
                << sw.points.size() << " points\n";
      for (const auto& t : sw.tables) {
        size_t n = 0;
        for (const auto& p : sw.points) n += p.title == t.title;
        std::cout << "  [" << t.section << "] " << t.title << ": " << n << " points\n";
      }
      cli.status = kExitOk;
      return;
    }
    if (sw.points.empty()) throw InputError(cfg.path, "providers", "no provider can run here (see the lines above)");

    ensure_parent_dir(cli.db);
    Store store(cli.db);
    SweepOptions opt;
    opt.label = o->label;
    opt.resume = o->resume;
    opt.progress = isatty(STDERR_FILENO);
    opt.host = hostname();
    opt.git_commit = git_commit();
    opt.stop = &g_stop;
    // The compiled baselines' packages: built (or found cached) before any point is timed,
    // their export times recorded with the run.
    auto jobs = compile_jobs(sw, device);
    if (!jobs.empty()) {
      opt.before_measure = [&](int64_t run_id) {
        auto outcomes = run_compile_jobs(jobs, default_compile_jobs(), opt.progress, std::cerr);
        for (size_t i = 0; i < outcomes.size(); ++i)
          store.add_compile({run_id, jobs[i].title, jobs[i].request.provider, outcomes[i].key, outcomes[i].seconds,
                             outcomes[i].cached, outcomes[i].error});
      };
    }
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);

    SweepOutcome r = run_sweep(cfg, sw, ex, store, opt, std::cerr);
    std::cerr << "run " << r.run_id << ": " << r.measured << " points measured";
    if (r.skipped) std::cerr << ", " << r.skipped << " already stored";
    if (r.failed) std::cerr << ", " << r.failed << " failed";
    if (r.check_failed) std::cerr << ", " << r.check_failed << " over the check's tolerance";
    std::cerr << " (" << cli.db << ")\n";
    if (r.interrupted) {
      std::cerr << "interrupted: continue with `opbench sweep " << o->config << " --db " << cli.db
                << " --resume " << r.run_id << "`\n";
      cli.status = 130;
      return;
    }
    if (!o->no_report || !o->out.empty()) {
      ReportRun rr{*store.run(r.run_id), store.points(r.run_id)};
      std::string text = render_report({rr});
      if (!o->no_report) write_output(text, "");
      if (!o->out.empty()) write_output(text, o->out);
    }
    cli.status = kExitOk;
  });
}

}  // namespace opbench
