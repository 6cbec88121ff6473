// `opbench sweep --dry-run`: what each config (this shard of it) measures, table by table, and
// the time it should take; nothing is measured or written.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "sweep/prepared.hpp"

namespace opbench {

// Lists each config's tables and points (those `db` stores already counted) and its estimated
// time on `device`, the cells spread over `devices` devices.
void print_dry_run(const std::vector<Prepared>& configs, const std::string& db, const std::string& device,
                   size_t devices);

}  // namespace opbench
