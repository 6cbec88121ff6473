// Writes the site's fixture runs (tests/support/site_fixture.hpp) into a new database, at any
// scale: the site's browser test and its scale benchmark (studies/site-bench) build their sites from it.
//   site_fixture_db DB [--commits N] [--ops N] [--tables N] [--xs N] [--providers N] [--samples N]
//                      [--points N]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "site_fixture.hpp"

int main(int argc, char** argv) {
  using namespace opbench;
  if (argc < 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: site_fixture_db DB [--commits N] [--ops N] [--tables N] [--xs N] [--providers N] "
                         "[--samples N] [--points N]\n");
    return 2;
  }
  SiteFixture f;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const long n = std::strtol(argv[i + 1], nullptr, 10);
    if (n < 1) {
      std::fprintf(stderr, "site_fixture_db: %s needs a count of at least 1\n", flag.c_str());
      return 2;
    }
    if (flag == "--commits") f.commits = int(n);
    else if (flag == "--ops") {
      f.ops.clear();
      for (long k = 0; k < n; ++k) f.ops.push_back("op" + std::to_string(k));
    } else if (flag == "--tables") f.tables_per_op = int(n);
    else if (flag == "--xs") {
      f.xs.clear();
      for (long k = 0; k < n; ++k) f.xs.push_back(int64_t(256) << k);
      f.step_x = f.xs.back();
    } else if (flag == "--providers") {
      f.providers.resize(1);
      for (long k = 1; k < n; ++k) f.providers.emplace_back("prov" + std::to_string(k), "p" + std::to_string(k));
    } else if (flag == "--samples") f.samples = int(n), f.rounds = n >= 4 ? 4 : 1;
    else if (flag == "--points") f.max_points = size_t(n);
    else {
      std::fprintf(stderr, "site_fixture_db: unknown option %s\n", flag.c_str());
      return 2;
    }
  }
  f.step_at = f.commits - 1;
  Store store(argv[1]);
  write_site_fixture(store, f);
  std::printf("%s: %d runs\n", argv[1], f.commits * int(f.gpus.size()));
  return 0;
}
