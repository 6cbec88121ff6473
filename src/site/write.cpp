// A site's folder on disk (write.hpp). Torch-free.
#include "site/write.hpp"

#include <unistd.h>

#include <cstdlib>

#include "core/error.hpp"
#include "core/cleanup.hpp"
#include "core/fs.hpp"
#include "site/assets.hpp"

namespace opbench {

namespace {

const char* const kMarker = ".opbench-site";
const char* const kDebianChartJs = "/usr/share/javascript/chart.js/chart.min.js";

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

// JSON inside a script element: every '<' escaped, so no text of the data can close it.
std::string script_json(const nlohmann::ordered_json& data) {
  const std::string text = data.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + 64);
  for (char c : text) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

bool holds_nothing(const std::string& dir) {
  for (const auto& name : fs::list_dir(dir))
    if (name != "." && name != "..") return false;
  return true;
}

// The folder the site is written into before it takes DIR's place, beside DIR: the prefix,
// then this process's id.
std::string sibling_prefix(const std::string& dir, const char* what) {
  std::string base = dir;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  return base + "." + what + "-";
}
std::string sibling(const std::string& dir, const char* what) {
  return sibling_prefix(dir, what) + std::to_string(::getpid());
}

void write_files(const SiteContent& content, const std::string& root) {
  std::string library;
  const std::string lib_path = chart_library_path();
  if (!fs::read_file(lib_path, &library))
    throw RuntimeFailure("the charting library " + lib_path +
                         " cannot be read: install Debian's libjs-chart.js (scripts/bootstrap does), or set OPBENCH_CHARTJS "
                         "to a copy of Chart.js 3 (chart.min.js)");
  fs::write_file(root + "/assets/chart.min.js", library);
  fs::write_file(root + "/assets/site.js", kSiteScript);
  fs::write_file(root + "/assets/site.css", kSiteStyle);
  for (const auto& page : content.pages) {
    const bool nested = page.path.find('/') != std::string::npos;
    fs::write_file(root + "/" + page.path, page_html(page, nested ? "../" : ""));
  }
  for (const auto& file : content.files) fs::write_file(root + "/" + file.path, file.text);
  fs::write_file(root + "/" + kMarker, "A site written by opbench site: the command replaces this folder whole.\n");
}

}  // namespace

std::string chart_library_path() {
  const char* env = std::getenv("OPBENCH_CHARTJS");
  return env && *env ? env : kDebianChartJs;
}

void check_site_dir(const std::string& dir) {
  if (dir.empty()) throw InputError("--out", dir, "must name a folder, got an empty string");
  if (!fs::exists(dir)) return;
  if (!fs::is_directory(dir)) throw InputError("--out", dir, "is a file, not a folder");
  if (!holds_nothing(dir) && !fs::exists(dir + "/" + kMarker))
    throw InputError("--out", dir,
                     "holds files and no site opbench wrote (no .opbench-site in it): name a new or empty folder");
}

std::string page_html(const SitePage& page, const std::string& root) {
  std::string html;
  html += "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  html += "<title>" + html_escape(page.title) + "</title>\n";
  html += "<link rel=\"stylesheet\" href=\"" + root + "assets/site.css\">\n</head>\n<body>\n";
  html += "<noscript>This page is drawn by its script: allow JavaScript to see it.</noscript>\n";
  html += "<div id=\"app\" data-root=\"" + root + "\"></div>\n";
  html += "<script id=\"opbench-data\" type=\"application/json\">" + script_json(page.data) + "</script>\n";
  html += "<script src=\"" + root + "assets/chart.min.js\"></script>\n";
  html += "<script src=\"" + root + "assets/site.js\"></script>\n</body>\n</html>\n";
  return html;
}

namespace {

// The site in `fresh` moved into `dir`, the folder this process works in (it cannot be renamed
// away from under it): what was in it removed, then each entry of the site moved in.
void move_into_current(const std::string& fresh, const std::string& dir) {
  for (const auto& name : fs::list_dir(dir))
    if (name != "." && name != "..") fs::remove_tree(dir + "/" + name);
  for (const auto& name : fs::list_dir(fresh))
    if (name != "." && name != "..") fs::rename_path(fresh + "/" + name, dir + "/" + name);
  fs::remove_tree(fresh);
}

}  // namespace

void write_site(const SiteContent& content, const std::string& out) {
  check_site_dir(out);
  // Through links to the folder they name (a server may publish the link's target), "." and
  // ".." as the folders they are.
  const std::string dir = fs::resolved(out);
  const std::string fresh = sibling(dir, "new"), old = sibling(dir, "old");
  fs::make_parent_dirs(fresh);
  remove_stale(sibling_prefix(dir, "new"));  // left by a process that was killed
  remove_stale(sibling_prefix(dir, "old"));
  remove_on_stop(fresh);
  try {
    fs::remove_tree(fresh);
    fs::make_dirs(fresh);
    write_files(content, fresh);
    const auto creating = hold_creation();  // the old site out and the new one in, uncut
    if (fs::exists(dir) && fs::same_file(dir, ".")) {
      move_into_current(fresh, dir);
    } else {
      if (fs::exists(dir)) fs::rename_path(dir, old);
      fs::rename_path(fresh, dir);
    }
  } catch (...) {
    fs::remove_tree(fresh);
    if (!fs::exists(dir) && fs::exists(old)) fs::rename_path(old, dir);
    keep_on_stop(fresh);
    throw;
  }
  keep_on_stop(fresh);
  fs::remove_tree(old);
}

}  // namespace opbench
