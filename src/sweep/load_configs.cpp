#include "sweep/load_configs.hpp"

#include <set>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "store/store.hpp"
#include "sweep/resume.hpp"

namespace opbench {

namespace {

// A --resume: the run, its stored options and its stored points.
struct Resumed {
  RunInfo run;
  RunOptions stored;
  std::set<std::string> done;
};

Resumed resumed_run(int64_t resume, const std::string& db) {
  const std::string id = std::to_string(resume);
  if (!fs::is_regular_file(db)) throw InputError(db, "--db", "no such database (--resume " + id + " continues a run in it)");
  auto store = Store::open_read_only(db);
  auto run = store->run(resume);
  if (!run) throw InputError("--resume", id, "no run with that id in " + db);
  Resumed r{*run, stored_options(*store, *run), {}};
  for (const auto& k : store->done_keys(run->id)) r.done.insert(k);
  return r;
}

// Which of `paths` a resumed run measured: the one of its path, else of its config's hash.
size_t resumed_index(const std::vector<std::string>& paths, const RunInfo& run, int64_t id) {
  if (paths.size() == 1) return 0;  // its config as given (the run checks the hash)
  for (size_t i = 0; i < paths.size(); ++i)
    if (paths[i] == run.config_path) return i;
  for (size_t i = 0; i < paths.size(); ++i)
    if (load_config(paths[i]).hash == run.config_hash) return i;
  throw InputError("--resume", std::to_string(id), "run " + std::to_string(id) + " measured " + run.config_path +
                                                       ", which this command does not name");
}

}  // namespace

std::vector<Prepared> load_configs(const SweepRequest& a) {
  std::vector<std::string> paths = command_configs(a.configs);
  const bool suite = paths.size() > 1;
  Resumed resumed;
  if (a.resume) {
    resumed = resumed_run(a.resume, a.db);
    paths.erase(paths.begin(), paths.begin() + long(resumed_index(paths, resumed.run, a.resume)));
    RunOptions given = a.shape;
    given.config = suite ? "" : paths.front();
    resumed.stored = resume_options(resumed.stored, given, a.resume, suite);
  }
  std::vector<Prepared> ps;
  for (size_t i = 0; i < paths.size(); ++i) {
    Prepared p;
    p.cfg = load_config(paths[i]);
    p.sw = expand(p.cfg, a.max_points);
    p.options = a.shape;
    p.options.config = paths[i];
    if (i == 0 && a.resume) p.options = resumed.stored, p.done = resumed.done, p.resume = a.resume;
    ps.push_back(std::move(p));
  }
  return ps;
}

}  // namespace opbench
