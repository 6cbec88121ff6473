#include "sweep/worker.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>

#include "core/error.hpp"
#include "core/lines.hpp"
#include "measure/stages.hpp"
#include "sweep/resume.hpp"
#include "sweep/watch.hpp"

namespace opbench {

WorkerConfig read_worker_config(const std::string& path, size_t max_points, const std::vector<std::string>& providers) {
  WorkerConfig c{load_config(path), {}, {}};
  c.sw = expand(c.cfg, max_points);
  if (!providers.empty()) {
    std::vector<Point> kept;
    for (auto& p : c.sw.points)
      if (std::find(providers.begin(), providers.end(), p.provider) != providers.end()) kept.push_back(p);
    c.sw.points = std::move(kept);
  }
  c.providers = sweep_providers(c.cfg, c.sw);  // only what the sweep measures
  return c;
}

WorkerConfig told_worker_config(const WorkerConfigLine& line) {
  WorkerConfig c;
  c.cfg.path = line.name;
  c.cfg.op = line.op;
  c.cfg.timing = timing_from_block(line.timing, line.name);
  c.providers = line.providers;
  return c;
}

WorkerHello worker_hello(Executor& ex, const std::vector<WorkerConfig>& configs, const std::string& device,
                         int protocol) {
  WorkerHello h;
  h.protocol = protocol;
  h.device = device;
  h.env = ex.environment();
  h.placement = this_placement();
  for (const auto& c : configs) {
    ConfigHello ch;
    ch.hash = c.cfg.hash;
    for (const auto& provider : c.providers) {
      const std::string why = ex.unavailable(c.cfg.op, provider);
      if (!why.empty()) ch.unavailable.emplace_back(provider, why);
    }
    h.configs.push_back(ch);
  }
  return h;
}

namespace {

class Server {
 public:
  Server(Executor& ex, const std::vector<WorkerConfig>& configs, const WorkerLoop& loop)
      : ex_(ex), configs_(configs), loop_(loop), by_key_(configs.size()), watch_(0, {}) {
    for (size_t c = 0; c < configs.size(); ++c)
      for (const auto& p : configs[c].sw.points) by_key_[c][p.key()] = &p;
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
      if (!find_points(request.config, request.cell, request.points, points, why)) {
        write_all(loop_.out, error_line(why));
        continue;
      }
      const Timing& timing = configs_[request.config].cfg.timing;
      const CellResult got = measure_cell(ex_, points, timing, guard(timing));
      if (!write_all(loop_.out, cell_reply_line(points, got, StageLedger::process().take(), ex_.take_calibration())))
        return 0;  // the parent is gone
      if (stopped()) return 130;
    }
    return 0;
  }

 private:
  bool stopped() const { return loop_.interrupt && loop_.interrupt->load(); }

  // One round of one point for a parent spreading its rounds over processes; unguarded here,
  // since the parent watches the call (a hung one ends the parent, and this process with it).
  std::string measure_one(const MeasureRequest& m) {
    CellPoints points;
    std::string why;
    const std::vector<Point> held = m.point ? std::vector<Point>{*m.point} : std::vector<Point>{};
    const std::vector<std::string> keys = m.point ? std::vector<std::string>{} : std::vector<std::string>{m.key};
    if (!find_points(m.config, keys, held, points, why)) return error_line(why);
    if (m.new_round) ex_.new_round();
    Timing t = configs_[m.config].cfg.timing;
    t.warmup_ms = m.warmup_ms;
    t.rep_ms = m.rep_ms;
    t.max_point_s = m.max_point_s;
    t.estimate_ms = m.estimate_ms;
    t.check = m.check;
    CellResult got;
    got.results.push_back(ex_.measure(*points.front(), t));
    ex_.yield_memory();  // the device's other processes measure next
    got.abandoned.push_back(false);
    got.state = recent_state();
    return cell_reply_line(points, got, StageLedger::process().take(), ex_.take_calibration());
  }

  // The device's state for a round's answer: read at most once a second (a round is
  // answered many times a second, and a reading costs NVML calls), else the last one read.
  DeviceState recent_state() {
    const auto now = std::chrono::steady_clock::now();
    if (!state_read_ || now - *state_read_ >= std::chrono::seconds(1)) {
      state_ = ex_.device_state();
      state_read_ = now;
    }
    return state_;
  }

  // A request's points: those it holds, else those of config `config` it names by `keys`.
  bool find_points(size_t config, const std::vector<std::string>& keys, const std::vector<Point>& held,
                   CellPoints& points, std::string& why) const {
    if (config >= by_key_.size()) {
      why = "no config " + std::to_string(config) + " (this worker has " + std::to_string(by_key_.size()) + ")";
      return false;
    }
    for (const Point& p : held) points.push_back(&p);
    for (const auto& key : keys) {
      auto it = by_key_[config].find(key);
      if (it == by_key_[config].end()) {
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
  MeasureGuard guard(const Timing& timing) {
    return [this, &timing](const Point& p, double seconds, const std::function<void()>& measure) {
      return watch_.within(seconds + loop_.hang_grace_s, measure, [this, &p, &timing] {
        write_all(loop_.out, hung_line(p.key(), hung_error(timing, loop_.hang_grace_s)));
        _exit(kExitRuntime);
      });
    };
  }

  Executor& ex_;
  const std::vector<WorkerConfig>& configs_;
  const WorkerLoop& loop_;
  std::vector<std::map<std::string, const Point*>> by_key_;  // per config
  Watch watch_;
  DeviceState state_;
  std::optional<std::chrono::steady_clock::time_point> state_read_;
};

}  // namespace

int serve_cells(Executor& ex, const std::vector<WorkerConfig>& configs, const WorkerLoop& loop) {
  return Server(ex, configs, loop).run();
}

}  // namespace opbench
