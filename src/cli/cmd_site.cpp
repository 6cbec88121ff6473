// opbench site: a static site of the runs of databases and JSON exports, and of the diff and
// versus documents CI produced (src/site/): it opens from the file system, no server, no network.
#include <iostream>

#include "cli/cli.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "site/input.hpp"
#include "site/pages.hpp"
#include "site/write.hpp"

namespace opbench {

namespace {

bool inside(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

// The site's folder against the files the command reads, the one place this command checks
// it: --out must not be a database (nor its -wal, -shm or -journal file) or a JSON file read,
// nor lie inside one; and no file read may lie inside --out, which the site replaces whole.
// InputError naming --out otherwise.
void check_site_out(const std::string& out, const std::vector<std::string>& dbs, const std::vector<std::string>& jsons) {
  const std::string dir = fs::resolved(out);
  check_out_path(out, "--out", dbs);
  std::vector<std::string> inputs = jsons;
  for (const auto& db : dbs)
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) inputs.push_back(db + suffix);
  for (const auto& file : inputs) {
    const std::string f = fs::resolved(file);
    if (f == dir || inside(dir, f))
      throw InputError("--out", out, "is or lies inside " + file + ", which the site is built from: name a folder");
    if (inside(f, dir))
      throw InputError("--out", out, "holds " + file + ", which the site is built from and would replace: name another folder");
  }
}

}  // namespace

void add_site_command(CLI::App& app, Cli& cli) {
  struct Opts {
    std::vector<std::string> dbs, jsons;
    std::string out;
    double threshold_pct = kDefaultThresholdPct;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "site", "write a static site of the runs (every op, table, GPU and commit) that opens from the file system");
  cmd->add_option("--db", o->dbs, "a database to show (repeatable; default " + cli.db + " when no --json is given)")
      ->check(db_arg());
  cmd->add_option("--json", o->jsons,
                  "a runs export (opbench export), or a diff or versus document (opbench diff|versus --format json) to "
                  "show as a page (repeatable)")
      ->check(file_arg());
  cmd->add_option("--out", o->out, "the site's folder: new, empty, or a site written before (replaced whole)")->required();
  cmd->add_option("--threshold", o->threshold_pct,
                  threshold_help("the smallest change that counts in the latest verdicts and the history steps",
                                 kDefaultThresholdPct))
      ->check(finite_range(0, 1000));
  cmd->callback([o, &cli] {
    if (o->dbs.empty() && o->jsons.empty()) o->dbs.push_back(cli.db);
    check_site_out(o->out, o->dbs, o->jsons);
    check_site_dir(o->out);
    std::vector<std::unique_ptr<Store>> stores;
    for (const auto& db : o->dbs) stores.push_back(open_existing_store(db));
    const SiteInput in = read_site_input(std::move(stores), o->jsons);
    SiteOptions opt;
    opt.threshold = o->threshold_pct / 100;
    const SiteContent content = build_site_content(in, opt);
    write_site(content, o->out);
    std::cerr << "site: " << content.pages.size() << " pages (" << in.runs.size() << " runs, "
              << in.documents.size() << " documents) in " << o->out << "\n";
    std::cout << o->out << "/index.html\n";
    cli.status = kExitOk;
  });
}

}  // namespace opbench
