// The pages of a site as data: what each page shows, as the JSON its script renders, and the
// markdown files beside them. Built from the runs alone: no op is known by name, every table
// is a title of the points, every GPU the name its runs recorded. Torch-free.
//
// - index.html: the runs, GPUs and ops present; each op's tables; the latest verdicts (per op
//   and GPU, the latest run against the one before it on that GPU, judged as `opbench diff`
//   judges); across GPU models (per op, the latest run on its first GPU against the latest on
//   each other, as `opbench diff --normalize peak` judges: which points use the other GPU
//   worse); the diff and versus documents given. Every line links to its page.
// - tables/<title>.html: the latest run on each GPU, a line per provider over x, the
//   bandwidth floor where the run measured its peak, and the GPUs side by side in a table (time
//   and % of peak per GPU, drawn from the same data); each point's history across runs per GPU
//   (as `opbench history`: levels and change points); tables/<title>.md the same latest runs
//   as a markdown report in the reference format (report/report.hpp).
// - diffs/<name>.html: one diff's or versus' verdicts, from the latest verdicts or a document.
// - runs/<id>.md: each run's report, as `opbench report` writes it.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "diff/threshold.hpp"
#include "site/input.hpp"

namespace opbench {

struct SiteOptions {
  double threshold = kDefaultThreshold;  // the smallest change that counts (diffs and history steps), a fraction
};

struct SitePage {
  std::string path;   // under the site's folder: "index.html", "tables/NAME.html", "diffs/NAME.html"
  std::string title;  // the page's title
  nlohmann::ordered_json data;  // what the page's script renders (data.kind: index, table, diff)
};

struct SiteFile {
  std::string path, text;  // under the site's folder
};

struct SiteContent {
  std::vector<SitePage> pages;  // the index first
  std::vector<SiteFile> files;
};

// Throws InputError when the input holds no run and no document.
SiteContent build_site_content(const SiteInput& in, const SiteOptions& opt);

}  // namespace opbench
