// The options that shape a run (which config, device or devices, providers, label, title filter,
// shard), as stored with it:
// `--resume` measures the rest of a run with them, and the resume command repeats them, so
// that continuing a run never adds points of a provider or a device it did not have.
// Torch-free.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "core/text.hpp"
#include "store/store.hpp"
#include "points/points.hpp"
#include "record/run_options.hpp"

namespace opbench {

// As a run's options rows (written once, when the run starts).
std::vector<std::pair<std::string, std::string>> option_rows(const RunOptions& s);
// A run's shape: its stored options; for a run that has none (an older opbench wrote it),
// its device and the providers of its notation.
RunOptions stored_options(const Store& store, const RunInfo& run);

// The shape a `--resume` measures with: the stored one. An option given on the command line
// (non-empty in `given`) must agree with it: InputError naming the option otherwise. In a
// `suite` (the options given shape its other configs too) the providers given must include the
// run's rather than equal them.
RunOptions resume_options(const RunOptions& stored, const RunOptions& given, int64_t run_id, bool suite = false);

// The command that continues a run: every shaping option, the database, --resume ID.
std::string resume_command(const RunOptions& s, const std::string& db, int64_t run_id);
// The command that sweeps `configs` with the shaping options of `s` (its config left out).
std::string sweep_command(const std::vector<std::string>& configs, const RunOptions& s, const std::string& db);

// The providers a sweep measures (those of its points), in the config's column order.
std::vector<std::string> sweep_providers(const Config& cfg, const Sweep& sw);

// "cuda" is "cuda:0"; any other name as it is.
std::string canonical_device(const std::string& device);

// `s` quoted for a POSIX shell where it needs quoting.
std::string shell_quote(const std::string& s);

}  // namespace opbench
