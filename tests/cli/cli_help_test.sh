#!/usr/bin/env bash
# A command line that helps: usage lines name `opbench`, a mistyped flag or command gets the
# closest valid one, errors about unknown names list the valid ones, --help states each
# command's --threshold default, --filter narrows sweep and report.
# Usage: cli_help_test.sh OPBENCH SOURCE_DIR
set -u
bin=$1; src=$2
. "$(dirname "$0")/cli_lib.sh"
one_line() { [ "$(wc -l <"$work/err")" = 1 ] && echo "ok   $1-one-line" || { echo "FAIL $1 not one line"; cat "$work/err"; fails=$((fails+1)); }; }

# usage lines
check help 0 "$bin" --help
contains help-usage "$work/out" "Usage: opbench [OPTIONS] SUBCOMMAND"
check sweep-help 0 "$bin" sweep --help
contains sweep-help-usage "$work/out" "Usage: opbench sweep [OPTIONS] config"
contains sweep-help-filter "$work/out" "--filter"

# near-miss flags and commands
check flag-typo 2 "$bin" sweep "$src/configs/quick.yaml" --provider torch
contains flag-typo-msg "$work/err" "opbench sweep: unknown option --provider; did you mean --providers? (see opbench sweep --help)"
one_line flag-typo
check flag-typo-eq 2 "$bin" report --tresh=5
contains flag-typo-eq-msg "$work/err" "opbench report: unknown option --tresh"
check flag-typo-history 2 "$bin" history t --threshhold 3
contains flag-typo-history-msg "$work/err" "did you mean --threshold?"
check flag-unknown 2 "$bin" diff 1 2 --frobnicate
contains flag-unknown-msg "$work/err" "opbench diff: unknown option --frobnicate (see opbench diff --help)"
check command-typo 2 "$bin" histroy t
contains command-typo-msg "$work/err" "unknown command 'histroy' (did you mean 'history'? one of: sweep, report,"
one_line command-typo
check command-missing 2 "$bin"
check bad-value 2 "$bin" report --show bytes
contains bad-value-msg "$work/err" "opbench report: --show: bytes not in {value,gbps,pct} (see opbench report --help)"

# --threshold: the same default for diff and history, versus's stated
check diff-help 0 "$bin" diff --help
contains diff-help-threshold "$work/out" "(default 5, as for diff and history; versus defaults to 0)"
check history-help 0 "$bin" history --help
contains history-help-threshold "$work/out" "(default 5, as for diff and history; versus defaults to 0)"
check versus-help 0 "$bin" versus --help
contains versus-help-threshold "$work/out" "(default 0 here, unlike diff and history's 5"

# unknown names in a config: the valid ones, and the closest
printf 'op: act\nx: {n: [8]}\nparams: {batchsize: 1}\n' >"$work/axis.yaml"
check unknown-axis 2 "$bin" sweep "$work/axis.yaml" --dry-run
contains unknown-axis-msg "$work/err" "axis.yaml: params.batchsize: unknown axis for act (did you mean 'batch'? one of: batch, head, n, dim,"
one_line unknown-axis
printf 'op: act\nx: {n: [8]}\ntimng: {rounds: 2}\n' >"$work/key.yaml"
check unknown-key 2 "$bin" sweep "$work/key.yaml" --dry-run
contains unknown-key-msg "$work/err" "key.yaml: timng: unknown key (did you mean 'timing'? one of:"
check unknown-provider-flag 2 "$bin" sweep "$src/configs/quick.yaml" --providers torhc --dry-run
contains unknown-provider-flag-msg "$work/err" "--providers: torhc: not a provider of"
contains unknown-provider-flag-near "$work/err" "(did you mean 'torch'?"

# --filter: sweep and report keep the tables whose title matches
check sweep-filter 0 "$bin" sweep "$src/configs/quick.yaml" --dry-run --filter 'speed-fwd.*act_silu'
grep -c '^  \[' "$work/out" >"$work/n"
[ "$(cat "$work/n")" = 1 ] && echo "ok   sweep-filter-one-table" || { echo "FAIL sweep-filter kept $(cat "$work/n") tables"; cat "$work/out"; fails=$((fails+1)); }
contains sweep-filter-title "$work/out" "lrpe_rotate-speed-fwd-batch2-head4-dim64-act_silu-fp32"
check sweep-filter-none 2 "$bin" sweep "$src/configs/quick.yaml" --dry-run --filter nothing-like-this
contains sweep-filter-none-msg "$work/err" "--filter: nothing-like-this: matches no table title of"
check sweep-filter-bad 2 "$bin" sweep "$src/configs/quick.yaml" --dry-run --filter '('
printf '# H100\n```\nt-speed-a:\n     n   to\n0  1.0  2.0\n\nt-memory-a:\n     n   to\n0  1.0  3.0\n```\n' >"$work/d.md"
check import 0 "$bin" import "$work/d.md" --db "$work/r.db"
check report-filter 0 "$bin" report --db "$work/r.db" --filter memory
contains report-filter-kept "$work/out" "t-memory-a:"
grep -q "t-speed-a:" "$work/out" && { echo "FAIL report-filter kept t-speed-a"; fails=$((fails+1)); } || echo "ok   report-filter-dropped"
check report-filter-none 2 "$bin" report --db "$work/r.db" --filter fwd
contains report-filter-none-msg "$work/err" "(2 titles: t-speed-a, t-memory-a)"

# run selectors name what the database holds
check bad-label 2 "$bin" report --db "$work/r.db" --run label:nope
contains bad-label-msg "$work/err" "no run has that label"

echo "cli_help_test: $fails failed"
[ "$fails" = 0 ]
