#include "sweep/config_filter.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/suggest.hpp"
#include "core/title_filter.hpp"
#include "sweep/resume.hpp"
#include "sweep/runner.hpp"

namespace opbench {

// --providers and --filter on one config: strict (a name it does not list, a filter that
// matches none of its titles, is an input error).
void filter_config(Prepared& p) {
  filter_providers(p.sw, p.cfg, p.options.providers);
  filter_tables(p.sw, TitleFilter(p.options.filter), p.cfg.path);
}

// --providers and --filter over a suite: each provider named must be one of some config's, and
// a config with none of them, or none of its titles matching, is left out (a line each).
// `first`: the configs before it keep their own (a resumed run's stored) options.
void filter_suite(std::vector<Prepared>& ps, size_t first, std::ostream& log) {
  const std::vector<std::string> names = ps.back().options.providers;
  std::vector<std::string> all;
  for (const auto& p : ps)
    for (const auto& [name, label] : p.cfg.providers) all.push_back(name);
  for (const auto& n : names)
    if (std::find(all.begin(), all.end(), n) == all.end())
      throw InputError("--providers", n, "not a provider of any config of the command" + suggest_names(n, all));
  const TitleFilter filter(ps.back().options.filter);
  std::vector<Prepared> kept;
  for (size_t i = 0; i < ps.size(); ++i) {
    Prepared& p = ps[i];
    if (i < first) {
      filter_config(p);
      kept.push_back(std::move(p));
      continue;
    }
    std::vector<std::string> wanted;
    for (const auto& [name, label] : p.cfg.providers)
      if (std::find(names.begin(), names.end(), name) != names.end()) wanted.push_back(name);
    size_t matching = 0;
    for (const auto& t : p.sw.tables) matching += filter(t.title);
    if (!names.empty() && wanted.empty()) log << "skipping " << p.cfg.path << ": it has none of --providers\n";
    else if (!matching) log << "skipping " << p.cfg.path << ": none of its tables matches --filter\n";
    if ((!names.empty() && wanted.empty()) || !matching) continue;
    filter_providers(p.sw, p.cfg, wanted);
    filter_tables(p.sw, filter, p.cfg.path);
    kept.push_back(std::move(p));
  }
  if (kept.empty())
    throw InputError(filter.empty() ? "--providers" : "--filter",
                     filter.empty() ? join_list(names) : ps.back().options.filter,
                     "leaves no config of the command to measure (see the lines above)");
  ps = std::move(kept);
}

}  // namespace opbench
