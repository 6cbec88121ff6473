#include "sweep/worker.hpp"

#include <unistd.h>

#include <map>

#include "core/error.hpp"
#include "core/lines.hpp"
#include "measure/stages.hpp"
#include "sweep/watch.hpp"

namespace opbench {

WorkerHello worker_hello(Executor& ex, const Config& cfg, const std::string& device) {
  WorkerHello h;
  h.device = device;
  h.config_hash = cfg.hash;
  h.env = ex.environment();
  for (const auto& [provider, label] : cfg.providers) {
    const std::string why = ex.unavailable(cfg.op, provider);
    if (!why.empty()) h.unavailable.emplace_back(provider, why);
  }
  return h;
}

namespace {

class Server {
 public:
  Server(Executor& ex, const Sweep& sw, const Timing& timing, const WorkerLoop& loop)
      : ex_(ex), timing_(timing), loop_(loop), watch_(0, {}) {
    for (const auto& p : sw.points) by_key_[p.key()] = &p;
  }

  int run() {
    LineReader in(loop_.in);
    std::string line;
    while (in.read_line(line)) {
      StageLedger::process().take();  // the wait for this request: no one's time
      if (stopped()) {
        write_all(loop_.out, declined_line());
        return 130;
      }
      ParentRequest request;
      std::string why;
      try {
        request = parse_request(line, "the parent");
      } catch (const InputError& e) {
        write_all(loop_.out, error_line(e.what()));
        continue;
      }
      if (request.measure) {
        if (!write_all(loop_.out, measure_one(*request.measure))) return 0;
        continue;
      }
      CellPoints points;
      if (!lookup(request.cell, points, why)) {
        write_all(loop_.out, error_line(why));
        continue;
      }
      const CellResult got = measure_cell(ex_, points, timing_, guard());
      if (!write_all(loop_.out, cell_reply_line(points, got, StageLedger::process().take())))
        return 0;  // the parent is gone
      if (stopped()) return 130;
    }
    return 0;
  }

 private:
  bool stopped() const { return loop_.stop && loop_.stop->load(); }

  // One round of one point for a parent spreading its rounds over processes; unguarded here,
  // since the parent watches the call (a hung one ends the parent, and this process with it).
  std::string measure_one(const MeasureRequest& m) {
    CellPoints points;
    std::string why;
    if (!lookup({m.key}, points, why)) return error_line(why);
    if (m.new_round) ex_.new_round();
    Timing t = timing_;
    t.warmup_ms = m.warmup_ms;
    t.rep_ms = m.rep_ms;
    t.max_point_s = m.max_point_s;
    t.estimate_ms = m.estimate_ms;
    CellResult got;
    got.results.push_back(ex_.measure(*points.front(), t));
    got.abandoned.push_back(false);
    got.state = ex_.device_state();
    return cell_reply_line(points, got, StageLedger::process().take());
  }

  bool lookup(const std::vector<std::string>& keys, CellPoints& points, std::string& why) const {
    for (const auto& key : keys) {
      auto it = by_key_.find(key);
      if (it == by_key_.end()) {
        why = "no point of this sweep has the key '" + key + "'";
        return false;
      }
      points.push_back(it->second);
    }
    if (points.empty()) why = "an empty cell";
    return !points.empty();
  }

  // A call that never returns: its point is reported, and the process ends (the parent starts
  // another worker on the device).
  MeasureGuard guard() {
    return [this](const Point& p, double seconds, const std::function<void()>& measure) {
      return watch_.within(seconds + loop_.hang_grace_s, measure, [this, &p] {
        write_all(loop_.out, hung_line(p.key(), hung_error(timing_, loop_.hang_grace_s)));
        _exit(kExitRuntime);
      });
    };
  }

  Executor& ex_;
  const Timing& timing_;
  const WorkerLoop& loop_;
  std::map<std::string, const Point*> by_key_;
  Watch watch_;
};

}  // namespace

int serve_cells(Executor& ex, const Sweep& sw, const Timing& timing, const WorkerLoop& loop) {
  return Server(ex, sw, timing, loop).run();
}

}  // namespace opbench
