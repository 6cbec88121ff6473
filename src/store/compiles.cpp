// The compiled packages a run built or found cached before measuring (store.hpp). Torch-free.
#include "store/statement.hpp"
#include "store/store.hpp"

namespace opbench {

void Store::add_compile(const CompileRecord& c) {
  Stmt s(db_,
         "INSERT INTO compiles(run_id, title, provider, package_key, seconds, cached, error)"
         " VALUES(:run_id, :title, :provider, :package_key, :seconds, :cached, :error)");
  s.bind(":run_id", c.run_id).bind(":title", c.title).bind(":provider", c.provider).bind(":package_key", c.key)
      .bind(":seconds", c.seconds).bind(":cached", int64_t(c.cached)).bind(":error", c.error);
  s.step();
}

std::vector<CompileRecord> Store::compiles(int64_t run_id) const {
  std::vector<CompileRecord> out;
  Stmt s(db_,
         "SELECT run_id, title, provider, package_key, seconds, cached, error FROM compiles"
         " WHERE run_id=:run_id ORDER BY id");
  s.bind(":run_id", run_id);
  while (s.step())
    out.push_back({s.i64("run_id"), s.text("title"), s.text("provider"), s.text("package_key"), s.f64("seconds"),
                   s.i64("cached") != 0, s.text("error")});
  return out;
}

}  // namespace opbench
