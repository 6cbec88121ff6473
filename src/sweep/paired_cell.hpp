// One table cell measured by two sides of a comparison (`opbench ab`: two builds, or one build
// with two environments) on one device, their rounds interleaved: in round r each provider
// (starting with provider r mod k, as a sweep's cell) is measured by both sides back to back,
// the side that goes first alternating from round to round (base first in even rounds, head
// first in odd ones). A provider's two sides stop together, so that both hold the same rounds,
// round r of one paired with round r of the other (diff's paired rule, diff/verdict.hpp): they
// take another round while the stop rule (measure/stop_rule.hpp) asks one for either side,
// except that under stop: noise the pair stops as soon as its paired interval (the geometric
// mean of the round ratios, stop_rule.hpp's paired_interval) is narrower than the noise target
// after min_rounds rounds: the comparison is then as precise as each side's median would have
// to be. It also stops once that interval has decided the comparison's verdict to be SAME
// (`same_within`, the diff's threshold as a fraction): the interval wholly within 1 -/+ the
// threshold and the ratio of the two pooled medians within half of it (stop "decided"); a pair
// that may have changed keeps taking rounds, as each side's rule asks. Before every round but
// the first, each side places its memory anew (Executor::new_round).
//
// Where each side spreads its rounds over P worker processes (Timing::processes: round r in
// the side's process r mod P), at least P rounds are taken, the pair stops only after a whole
// number of turns through the processes (each pair of processes as many rounds), its interval
// is over the P pairs of processes (as diff's rule 7), and within each pair of processes the
// side that goes first still alternates. Torch-free.
#pragma once
#include <array>

#include "sweep/cell.hpp"

namespace opbench {

constexpr size_t kBase = 0, kHead = 1;

// The cell's results for each side (kBase, kHead), each pooled over its rounds as a cell measured
// alone is (pool_rounds), with its side's device state after the cell.
std::array<CellResult, 2> measure_paired_cell(const std::array<Executor*, 2>& sides, const CellPoints& points,
                                              const Timing& timing, double same_within = 0);

// The side that goes first in round `round` (0-based) of rounds spread over `processes`
// processes: alternating from turn to turn within each process, and from round to round
// within a turn (with an even count of processes, alternating from round to round alone would
// start round r and round r + P alike).
inline size_t first_side(int round, int processes = 1) {
  const int flip = processes % 2 == 0 ? round / processes + round % processes : round;
  return flip % 2 == 0 ? kBase : kHead;
}

}  // namespace opbench
