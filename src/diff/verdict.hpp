// The verdict on one point measured twice (base, then head): did it get slower? Torch-free.
//
// The rule (lower is better for both metrics: time in ms, peak memory in MiB):
//   1. Errors first. Head failed (value -1): ERROR (a regression when base worked). Base failed,
//      head works: FIXED. Neither side has a value (NaN), or base is <= 0: UNSURE.
//   2. ratio = head / base of the shown values (the run's statistic, e.g. the median time).
//      The threshold T (default 5%) is the smallest change that matters: a point can only
//      be SLOWER when ratio > 1 + T, FASTER when ratio < 1 - T. Where both sides kept samples
//      the change of the shown values must also exceed kResolvableTicks ticks of the clock that
//      took them (timer_tick: the smallest step between distinct sample values, 32 ns for CUDA
//      events on an H100 or H200): a 2.9 us call one or two ticks apart in two processes is
//      SAME, whatever the threshold says of the ratio.
//   3. The change must also be real. Memory points (peak bytes: a deterministic measurement)
//      need nothing more. Speed points where both sides kept samples: the change is confirmed
//      by either of two kinds of evidence, and then only if the rounds do not veto it:
//      a. A clear change, whatever the spread of either side. The clear margin M is the
//         threshold, or kClearChange (5%) where the threshold is smaller (at a threshold of 0,
//         which asks whether a point is slower at all, a change of 1-2% is still one near the
//         threshold). Clear: the distribution-free 95% interval of the ratio of medians lies
//         wholly beyond 1 +- M (each median's interval from order statistics at 97.5%, so that
//         both hold together at >= 95%: [lo_head / hi_base, hi_head / lo_base]; both sides with
//         >= 5 samples); or the ratio is beyond 1 +- M and every sample of one side lies
//         beyond every sample of the other, with enough samples a side that such a separation
//         is significant on its own (Mann-Whitney U at its smallest p < 0.05: e.g. 4 against
//         4, 3 against 5).
//      b. A change near the threshold must also leave the noise. With >= 5 samples a side,
//         all of: Mann-Whitney U (two-sided, normal approximation with tie and continuity
//         corrections) p < 0.05; the interval of the ratio of medians excludes 1 on the side
//         of the change; the shift of the medians exceeds the noise of both runs
//         (|median_h - median_b| > max(half p20-p80 width of base, of head)). With fewer
//         samples on a side: the shift of the shown values exceeds the noise of every side
//         that can show one (half its p20-p80 width with >= 5 samples, half its range with
//         2-4); when no side can show its noise (a sample each) it is not confirmed.
//      The rounds (Result::rounds: the samples of one round share one placement of the flush
//      buffer and the inputs, and placement moves a short call by more than its samples
//      scatter, so the round, not the sample, is the unit of evidence): the medians of the
//      rounds, a side without rounds counting as one, must pass a Mann-Whitney U test
//      (p < 0.05) in the direction of the change where the two round counts can reach that p
//      (four rounds a side and more); otherwise every round of one side must lie beyond every
//      round of the other. With a single round a side they can neither confirm nor veto.
//      One side without samples (an imported document's value against a measured point):
//      the shift must exceed the measured side's noise as in b, or every one of its >= 5
//      samples must lie beyond the clear margin from the value. No samples on either side: the
//      threshold alone decides.
//   4. So: beyond the threshold and confirmed -> SLOWER / FASTER; within the threshold ->
//      SAME; beyond the threshold but not confirmed (inside the noise, not significant, the
//      rounds disagreeing) -> UNSURE. A change near the threshold inside the noise of either
//      side is therefore never a regression, and a large clean change always is one.
//   5. The machine's drift. Where both sides carry a control (Result::control: a fixed
//      workload timed in each round, in the round's process, right before the point's samples;
//      a CPU's speed points), a SLOWER or FASTER must also hold against it: each sample divided
//      by its round's control median and the shown value by the median of the controls, the
//      pair judged again by rules 1-4 must give the same verdict; and the change against the
//      control must exceed the threshold by as much as the machine drifted over these rounds,
//      the larger of the control's move between the sides and its spread (max / min) across the
//      rounds of either side (a point does not follow the machine exactly: on a loaded 2-core
//      machine its time moved 0.6 to 3 times as much as the control's). Otherwise UNSURE, with
//      the reason (Judgement::reason). So the whole machine slower is no regression, one
//      provider slower on a steady machine is, and a machine too unsteady to resolve a change
//      of the threshold's size says UNSURE. In a paired comparison (rule 7) the rounds' spread
//      cancels in the pairs, and the drift is the control's move between the sides alone.
//      A provider is also judged as a whole over its points against the control
//      (diff/provider_verdict.hpp).
//   6. The host. Where either side's host share (Result::host_share: the host's time to queue
//      one call over the GPU's time per sample) is kHostBound or more, a SLOWER or FASTER is
//      UNSURE, with the reason: such a call's time is, or can become, the host's launch path,
//      which differs between processes of the same code by more than any threshold.
//   7. Paired rounds. Where the two runs are the sides of one paired comparison (`opbench ab`:
//      the same cells measured on the same device by both sides, round r of one beside round r
//      of the other, judge's `paired`) and the point holds the same number of rounds (>= 2) on
//      both sides, rule 3's evidence is the pairs instead: the ratios of the round medians,
//      head over base, round by round, whose geometric mean must itself pass the threshold and
//      whose 95% interval (Student's t over the log ratios, as the stop rule's) must lie wholly
//      beyond half of it: above 1 + T/2 for SLOWER, below 1 - T/2 for FASTER (the threshold of
//      rule 2 still applies to the shown values). The pooled medians can pass the threshold
//      where the pairs do not (rounds of unequal sample counts at two levels), and an interval
//      that barely leaves 1 on a call of 10-20 us is what placement and process offsets give
//      the same code about once in a suite of 720 points. Whatever moved both
//      sides of a round together (the chip's clock, its temperature, another tenant) cancels in
//      the pair; what the pairs show is the code's change and each round's own noise. Where
//      each side spread its rounds over P >= 2 worker processes (round r in process r mod P),
//      the unit is the pair of processes, not the round: the interval is over the P means of
//      their log ratios (P - 1 degrees of freedom, measure/stop_rule.hpp), so that an offset
//      one process carries through all its rounds (a few hundred ns on a short GPU call) is
//      evidence of nothing but that process; a change every process shows still decides.
//   8. The device (diff/device_verdict.hpp, applied by diff after this rule): a SLOWER or FASTER
//      between two physical GPUs that the calibration shift of the two devices explains for the
//      point's kind is DEVICE, not a regression.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "measure/stop_rule.hpp"
#include "store/store.hpp"

namespace opbench {

enum class Verdict { Slower, Error, Unsure, Device, Faster, Same, Fixed };

const char* verdict_name(Verdict v);  // "SLOWER", "ERROR", ...

struct Judgement {
  Verdict verdict = Verdict::Unsure;
  bool regression = false;  // SLOWER, or ERROR where base worked
  double ratio = 0;         // head / base (NaN when undefined)
  bool tested = false;      // both sides had samples: the tests of rule 3 ran
  double p_value = 0;       // Mann-Whitney U, two-sided (NaN when not tested)
  double ci_lo = 0, ci_hi = 0;  // 95% interval of the ratio of medians (NaN when not tested)
  double noise = 0;         // the noise band the shift was held against, in the point's unit (NaN: none)
  size_t rounds_base = 0, rounds_head = 0;  // rounds each side had (0 unless both kept samples)
  double round_p = 0;  // Mann-Whitney U on the round medians (NaN: one round a side, or no samples)
  // The control workload's median over head's rounds / over base's, and how far the machine
  // drifted over them (rule 5: the larger of that move and of the control's spread across the
  // rounds of either side, as a fraction); NaN: a side without a control.
  double control_ratio = 0, control_drift = 0;
  // head's median over base's with every sample divided by its round's control median (NaN: a
  // side without a control): the change a provider is judged on as a whole (provider_verdict.hpp)
  double against = 0;
  std::string reason;  // why a change past the threshold is UNSURE or DEVICE (the control, the host, the device; "" none)
  size_t pairs = 0;  // rule 7: the paired rounds judged (0: the runs are not paired, or the rounds differ)
  size_t pair_units = 0;  // rule 7: what the interval is over: the pairs, or the pairs of processes
};

constexpr size_t kMinSamples = 5;
// Rule 2: a change of the shown values of this many clock ticks or fewer is not one.
constexpr double kResolvableTicks = 2;
constexpr size_t kTickSamples = 20;  // the fewest samples of a side a tick is read from
// The smallest change that is clear whatever the spread (rule 3a), when the threshold is smaller.
constexpr double kClearChange = 0.05;
constexpr double kAlpha = 0.05;
// Rule 6: the host share from which a call's time may be the host's. The same host-bound
// LibTorch call ran 2.6 times slower in one process than in another
// (docs/findings/2026-11-26-seed-suite-h100.md), so a
// call whose host needs half of the GPU's time per sample can turn host-bound in another.
constexpr double kHostBound = 0.5;

// `paired_processes`: 0 where the runs are not paired; N >= 1 where they are the two sides of one
// paired comparison whose rounds each side spread over N worker processes (rule 7).
Judgement judge(const StoredPoint& base, const StoredPoint& head, double threshold, int paired_processes = 0);

// Rule 7's evidence: the paired interval (measure/stop_rule.hpp) of the two sides' round
// medians over `processes` pairs of processes; none (no ratios) unless both sides hold the same
// number of rounds, two or more.
PairedInterval paired_evidence(const Result& base, const Result& head, int processes = 1);

// The metric of a point: its "metric" axis, else from its unit (ms: speed, MiB: memory), else "".
std::string point_metric(const StoredPoint& p);

// Building blocks, exposed for tests.
// Two-sided p-value of the Mann-Whitney U test of a against b (1 when every value ties).
double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b);
// (median_interval: measure/stop_rule.hpp, which the stop rule shares)
// Half the p20-p80 width of the samples (0 for fewer than 2).
double half_spread(std::vector<double> v);
double median_of(std::vector<double> v);
// The clock's tick in the samples: within each side, the smallest step between two distinct
// values (steps below a millionth of the value are the storage's rounding, not the clock's),
// where the side holds kTickSamples samples or more whose values repeat (no more distinct values
// than half the samples: scattered values are no clock's steps); the smaller of the two sides'
// ticks; 0 when neither side shows one (a side of one value shows none: the step between two
// steady sides is the change itself, not a tick).
double timer_tick(const std::vector<double>& a, const std::vector<double>& b);
// The median of each round of r (Result::rounds), or r's one median when it has no rounds or
// counts that do not add up to its samples.
std::vector<double> round_medians(const Result& r);
// What the round medians of base and head show by the rule above: whether head's lie above
// (up) or below (down) base's, and the test's p-value (NaN when both sides have one round).
struct RoundEvidence {
  bool up = false, down = false;
  double p = std::nan("");
  bool single = false;  // one round a side: the rounds neither confirm nor veto
};
RoundEvidence round_evidence(const std::vector<double>& base, const std::vector<double>& head);
// Whether n1 values against n2, every one beyond every other, are significant on their own:
// the smallest p-value of the Mann-Whitney U test at these counts is below kAlpha.
bool separation_decides(size_t n1, size_t n2);

}  // namespace opbench
