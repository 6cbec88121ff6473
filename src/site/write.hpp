// Writes a site's folder: each page as an HTML file holding its data (the pages open from the
// file system: a browser's script may not read a file beside it), the markdown files, our
// script and style (src/site/assets, built into opbench) and the charting library, Chart.js,
// copied from the system's package (Debian's libjs-chart.js). Torch-free.
//
// The site is written into a new folder beside DIR and renamed into place, so a reader (or a
// failure half-way) never sees half a site; a site DIR held before is replaced whole. DIR must
// be missing, an empty folder or a site opbench wrote (it holds the marker file .opbench-site):
// any other folder is refused, nothing in it touched.
#pragma once
#include <string>

#include "site/pages.hpp"

namespace opbench {

// The charting library's file: $OPBENCH_CHARTJS when set, else Debian's
// /usr/share/javascript/chart.js/chart.min.js.
std::string chart_library_path();

// Throws InputError when DIR is not a folder the site may replace (above); RuntimeFailure when
// the charting library is missing (naming its package) or a file cannot be written.
void write_site(const SiteContent& content, const std::string& dir);

// Refuses (InputError naming --out) a DIR that is no folder a site may take; called before
// anything is read, so that a mistaken --out costs nothing.
void check_site_dir(const std::string& dir);

// The page's HTML: its title, its data as JSON in a script element, and the links to the
// style and the scripts (`root` leads from the page's folder to the site's).
std::string page_html(const SitePage& page, const std::string& root);

}  // namespace opbench
