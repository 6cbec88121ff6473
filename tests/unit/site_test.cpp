// The site (src/site): built from a few runs (two GPUs, three commits, a planted step), its
// files and the data of its pages; the documents it takes; the folders it refuses.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "diff/diff.hpp"
#include "site/input.hpp"
#include "site/pages.hpp"
#include "site/write.hpp"
#include "site_fixture.hpp"
#include "temp_db.hpp"

using namespace opbench;
using json = nlohmann::ordered_json;
namespace stdfs = std::filesystem;

namespace {

std::string read(const stdfs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The data a page holds (the JSON of its #opbench-data element).
json page_data(const stdfs::path& p) {
  const std::string html = read(p);
  const std::string open = "<script id=\"opbench-data\" type=\"application/json\">";
  const size_t a = html.find(open), b = html.find("</script>", a);
  EXPECT_NE(a, std::string::npos) << p;
  return json::parse(html.substr(a + open.size(), b - a - open.size()));
}

stdfs::path fresh_dir(const std::string& name) {
  stdfs::path d = stdfs::temp_directory_path() / ("opbench_site_" + std::to_string(getpid()) + "_" + name);
  stdfs::remove_all(d);
  return d;
}

struct Built {
  std::string db;
  stdfs::path dir;
};

// The fixture in a database, and its site.
Built build(const std::string& name, const std::vector<std::string>& jsons = {}) {
  Built b{fresh_db_path("site", name + ".db"), fresh_dir(name)};
  {
    Store store(b.db);
    write_site_fixture(store, SiteFixture{});
  }
  std::vector<std::unique_ptr<Store>> stores;
  stores.push_back(Store::open_read_only(b.db));
  const SiteInput in = read_site_input(std::move(stores), jsons);
  write_site(build_site_content(in, SiteOptions{}), b.dir.string());
  return b;
}

const std::string kStepped = fixture_title("act", "speed", 0);

}  // namespace

TEST(Site, WritesEveryPageAndAsset) {
  const Built b = build("files");
  for (const char* f : {"index.html", "assets/site.js", "assets/site.css", "assets/chart.min.js", ".opbench-site"})
    EXPECT_TRUE(stdfs::is_regular_file(b.dir / f)) << f;
  EXPECT_EQ(read(b.dir / "assets/chart.min.js"), read(chart_library_path()));
  EXPECT_NE(read(b.dir / "assets/site.js").find("renderTable"), std::string::npos);
  // a page and a markdown table per title (2 ops x (2 speed + 1 memory) tables)
  for (const auto& op : {"act", "lrpe_cosine"})
    for (const auto& [metric, t] : std::vector<std::pair<std::string, int>>{{"speed", 0}, {"speed", 1}, {"memory", 2}}) {
      const std::string title = fixture_title(op, metric, t);
      EXPECT_TRUE(stdfs::is_regular_file(b.dir / "tables" / (title + ".html"))) << title;
      const std::string md = read(b.dir / "tables" / (title + ".md"));
      EXPECT_NE(md.find("\n" + title + ":\n"), std::string::npos) << md;  // the reference format's title line
      EXPECT_NE(md.find("## NVIDIA H100 80GB HBM3"), std::string::npos);
      EXPECT_NE(md.find("## NVIDIA H200"), std::string::npos);
    }
  // a diff page per op and GPU (the latest run against the one before it), and one per op
  // across its two GPUs at equal peaks
  size_t diffs = 0;
  for (const auto& e : stdfs::directory_iterator(b.dir / "diffs")) diffs += e.path().extension() == ".html";
  EXPECT_EQ(diffs, 6u);
  // the pages load the assets from the site's folder, nothing from elsewhere
  const std::string html = read(b.dir / "tables" / (kStepped + ".html"));
  EXPECT_NE(html.find("src=\"../assets/chart.min.js\""), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos);
}

TEST(Site, IndexListsOpsGpusRunsAndLatestVerdicts) {
  const Built b = build("index");
  const json d = page_data(b.dir / "index.html");
  EXPECT_EQ(d["kind"], "index");
  EXPECT_EQ(d["counts"]["runs"], 6);
  EXPECT_EQ(d["counts"]["gpus"], 2);
  EXPECT_EQ(d["counts"]["tables"], 6);
  ASSERT_EQ(d["ops"].size(), 2u);
  EXPECT_EQ(d["ops"][0]["op"], "act");
  EXPECT_EQ(d["ops"][0]["tables"][0]["page"], "tables/" + kStepped + ".html");
  EXPECT_EQ(d["ops"][0]["tables"][0]["regressed"], 2);  // the planted step, on each GPU
  ASSERT_EQ(d["verdicts"].size(), 4u);  // (op, GPU)
  size_t slower = 0;
  for (const auto& v : d["verdicts"]) {
    EXPECT_EQ(v["base"]["label"], "c1");
    EXPECT_EQ(v["head"]["label"], "c2");
    EXPECT_TRUE(stdfs::is_regular_file(b.dir / v["page"].get<std::string>()));
    if (v["op"] != "act") {
      EXPECT_EQ(v["counts"]["SLOWER"], 0);
      continue;
    }
    EXPECT_EQ(v["counts"]["SLOWER"], 1) << v.dump();
    EXPECT_EQ(v["top"][0]["title"], kStepped);
    EXPECT_EQ(v["top"][0]["x"], 4096);
    EXPECT_EQ(v["top"][0]["provider"], "cuda");
    ++slower;
  }
  EXPECT_EQ(slower, 2u);
  EXPECT_EQ(d["runs"].size(), 6u);
}

TEST(Site, IndexComparesEachOpsGpusAtEqualPeaks) {
  const Built b = build("across");
  const json d = page_data(b.dir / "index.html");
  ASSERT_EQ(d["across"].size(), 2u);  // one per op: its first GPU against its second
  for (const auto& v : d["across"]) {
    EXPECT_EQ(v["base_gpu"], "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(v["gpu"], "NVIDIA H200");
    EXPECT_EQ(v["base"]["label"], "c2");  // the latest run on each GPU
    EXPECT_EQ(v["head"]["label"], "c2");
    const std::string page = v["page"].get<std::string>();
    EXPECT_NE(page.find("-to-"), std::string::npos) << page;
    const json diff = page_data(b.dir / page);
    EXPECT_EQ(diff["origin"], "gpus");
    EXPECT_EQ(diff["normalize"]["by"], "peak");
    EXPECT_DOUBLE_EQ(diff["normalize"]["peak_ratio"].get<double>(), 4200.0 / 3000.0);
  }
}

TEST(Site, TablePageHoldsLatestLinesFloorsAndTheStep) {
  const Built b = build("table");
  const json d = page_data(b.dir / "tables" / (kStepped + ".html"));
  EXPECT_EQ(d["kind"], "table");
  EXPECT_EQ(d["markdown"], kStepped + ".md");
  EXPECT_EQ(d["views"], json::array({"value", "gbps", "pct"}));
  ASSERT_EQ(d["gpus"].size(), 2u);
  for (const auto& g : d["gpus"]) {
    EXPECT_EQ(g["run"]["label"], "c2");  // the latest run on each GPU
    ASSERT_TRUE(g["floor"].is_array());
    EXPECT_EQ(g["floor"].size(), 3u);  // a floor value per x
  }
  EXPECT_EQ(d["latest"].size(), 4u);  // 2 providers x 2 GPUs
  EXPECT_EQ(d["runs"].size(), 6u);    // the history's columns: every run holding the table
  size_t stepped = 0;
  for (const auto& s : d["series"]) {
    std::vector<std::string> steps;
    for (const auto& e : s["entries"]) steps.push_back(e[5]);
    const bool planted = s["x"] == 4096 && s["provider"] == "cuda";
    EXPECT_EQ(s["regression"], planted) << s.dump();
    if (!planted) continue;
    EXPECT_EQ(steps, (std::vector<std::string>{"", "", "up"}));
    EXPECT_NEAR(s["entries"][2][6].get<double>(), 0.5, 0.05);  // the level's change
    ++stepped;
  }
  EXPECT_EQ(stepped, 2u);
  // a memory table shows values only, and no floor
  const json m = page_data(b.dir / "tables" / (fixture_title("act", "memory", 2) + ".html"));
  EXPECT_EQ(m["views"], json::array({"value"}));
  EXPECT_TRUE(m["gpus"][0]["floor"].is_null());
}

TEST(Site, DiffDocumentsBecomePages) {
  const std::string db = fresh_db_path("site", "doc.db");
  {
    Store store(db);
    write_site_fixture(store, SiteFixture{});
  }
  auto store = Store::open_read_only(db);
  DiffOptions opt;
  const RunInfo b = store->select("1"), h = store->select("5");
  const std::string diff = diff_json(diff_runs({b, store->points(b.id)}, {h, store->points(h.id)}, opt));
  const stdfs::path file = stdfs::temp_directory_path() / ("opbench_site_" + std::to_string(getpid()) + "_ci-diff.json");
  std::ofstream(file) << diff;
  const Built built = build("docs", {file.string()});
  const json index = page_data(built.dir / "index.html");
  ASSERT_EQ(index["documents"].size(), 1u);
  EXPECT_EQ(index["documents"][0]["kind"], "diff");
  EXPECT_EQ(index["documents"][0]["name"], "opbench_site_" + std::to_string(getpid()) + "_ci-diff");
  const json page = page_data(built.dir / index["documents"][0]["page"].get<std::string>());
  EXPECT_EQ(page["kind"], "diff");
  EXPECT_EQ(page["origin"], "diff");
  EXPECT_EQ(page["links"][kStepped], "tables/" + kStepped + ".html");
  EXPECT_FALSE(page["points"].empty());
}

TEST(Site, RefusesJsonThatIsNoRunsOrDocument) {
  const stdfs::path file = stdfs::temp_directory_path() / ("opbench_site_" + std::to_string(getpid()) + "_bad.json");
  std::ofstream(file) << R"({"base": {}, "head": {}, "points": [{"title": "t", "x": "4096"}], "summary": []})";
  try {
    read_site_input({}, {file.string()});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), file.string());
    EXPECT_EQ(e.field(), "points[0].x");
  }
  std::ofstream(file) << R"({"format": "something else"})";
  EXPECT_THROW(read_site_input({}, {file.string()}), InputError);
  EXPECT_THROW(build_site_content(SiteInput{}, SiteOptions{}), InputError);  // nothing to show
}

TEST(Site, ReplacesItsOwnFolderOnlyAndKeepsRunsOnce) {
  const Built b = build("replace");
  std::ofstream(b.dir / "stale.html") << "old";
  {
    std::vector<std::unique_ptr<Store>> stores;
    stores.push_back(Store::open_read_only(b.db));
    stores.push_back(Store::open_read_only(b.db));  // the same runs twice: shown once
    const SiteInput in = read_site_input(std::move(stores), {});
    EXPECT_EQ(in.runs.size(), 6u);
    write_site(build_site_content(in, SiteOptions{}), b.dir.string());
  }
  EXPECT_FALSE(stdfs::exists(b.dir / "stale.html"));  // replaced whole
  EXPECT_TRUE(stdfs::exists(b.dir / "index.html"));
  const stdfs::path other = fresh_dir("other");
  stdfs::create_directories(other);
  std::ofstream(other / "notes.txt") << "mine";
  EXPECT_THROW(check_site_dir(other.string()), InputError);
  EXPECT_THROW(check_site_dir((other / "notes.txt").string()), InputError);
  EXPECT_EQ(read(other / "notes.txt"), "mine");
  for (const auto& e : stdfs::directory_iterator(b.dir.parent_path()))  // no folder left half-written
    EXPECT_EQ(e.path().filename().string().find(b.dir.filename().string() + ".new-"), std::string::npos);
}
