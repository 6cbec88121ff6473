// Runs as JSON text: `opbench export`, `opbench import FILE.json` and `opbench report
// --format json`. Every field the store keeps of a run, its points (samples and rounds
// included) and its compile records, so that export, import into another database and export
// again give the same bytes. Torch-free.
//
// The document: {"format": "opbench-runs", "version": 8, "runs": [RUN...]}; a RUN holds uuid,
// label, source, status, started_at, finished_at, host, git_commit, op, stat, config {path,
// hash, text}, environment {device, gpu, sm_count, memory_bytes, driver, cuda_runtime,
// torch_version, compute_capability, peak_gbps, tuning, state}, timing {flush_l2, rounds,
// interleave, processes, threads, warmup_ms, rep_ms, stop, noise_pct, min_rounds,
// min_samples}, stages {STAGE: seconds} (or null), options [{name, value}], devices [{device,
// gpu, peak_gbps, cells, points, busy_s, cpus, pinned, threads, memory}], notation [{label,
// provider}], compiles [{title, provider, key, seconds, cached, error}] and points [{seq,
// section, title, op, params {axis: value}, x_name, x_value, provider, label, unit, stat,
// value, stats {median, mean, min, max, p20, p80, stdev, count}, samples [...], rounds [...],
// control [...], bytes, gbps, pct_peak, rel_err, max_err, ref_err, ref_max_err, check_failed,
// error, created_at, state, device, stop, precision}]. A number the store holds as NULL (an
// imported point's statistics) is null; an infinite one the string "inf" or "-inf". Versions 1
// to 6 are read too (1 and 2 without devices, up to 4 without stop rules and stages, up to 5
// without the devices' shares and placement, up to 6 without the check's reference figures and
// the control). A run is written and read by its record's codec (record/run_json.hpp), a point
// by its own (record/point_json.hpp); this file holds the document around them.
#pragma once
#include <string>
#include <vector>

#include "record/run_record.hpp"

namespace opbench {

// The document for these runs, pretty-printed (two spaces), ending in a newline.
std::string runs_to_json(const std::vector<RunRecord>& runs);

// The document `opbench export` writes: runs_to_json, refused (InputError) when it could not
// be read back: no run, or more than `max_bytes` (import's kMaxDocumentBytes).
std::string export_document(const std::vector<RunRecord>& runs, long long max_bytes);

// Reads a document; throws InputError(path, "runs[i].field", why) for anything it cannot
// take (not JSON, another format or version, a missing or mistyped field, a run or point the
// store must not take: record/run_check.hpp, a run given twice).
std::vector<RunRecord> runs_from_json(const std::string& text, const std::string& path);

// Whether the text looks like such a document (a JSON object naming the format), so that
// `opbench import` can tell it from a markdown document whatever the file is called.
bool is_runs_json(const std::string& text);

}  // namespace opbench
