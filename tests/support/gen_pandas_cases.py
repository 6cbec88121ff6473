#!/usr/bin/env python3
"""Generate tests/data/pandas_cases.txt: DataFrames rendered by real pandas.

Each case is a float DataFrame shaped like a Triton benchmark table (first column the
x axis, then one column per provider) with the default RangeIndex, and the exact text of
`df.to_string()` (what Triton prints under the "title:" line). tests/unit/report_test.cpp
rebuilds every frame as an opbench::Table and checks that format_pandas() gives the same
text, so the C++ renderer is held to pandas itself.

Usage: python3 tests/support/gen_pandas_cases.py [OUTPUT [SEED [COUNT]]]   (needs pandas, numpy)
The output is deterministic for a given pandas version; the committed fixture uses the
default seed and count (a larger run with another seed is a useful one-off cross-check).

File format (UTF-8, one item per line):
    case <id>
    columns <name> <name> ...          first name = x-axis column
    row <v> <v> ...                   repr() of each float: exact round trip
    expect <k>                        then k lines of to_string() output
    end
"""
import math
import random
import sys

import numpy as np
import pandas as pd

SEED = 20240611
NAMES = ["tr", "to", "toc", "trb", "trbh", "trbn", "ton", "tonc", "cuda", "triton_sp",
         "torch_compile_naive", "x", "µs", "a_rather_long_provider"]


def rand_value(rng, kind):
    """One cell value of the given column kind."""
    if kind == "time":  # milliseconds, 0.001 .. 1e5, full precision
        return 10 ** rng.uniform(-3, 5)
    if kind == "time_short":  # few significant decimals
        return round(10 ** rng.uniform(-3, 5), rng.randint(0, 4))
    if kind == "mib":  # MiB: multiples of powers of two, up to ~2e6
        return rng.randint(1, 1 << 20) / (1 << rng.randint(0, 12)) * rng.choice([1, 1, 2])
    if kind == "int":
        return float(rng.choice([1, 9, 18, 144, 2304, 32768, 999999, 1000000, 1000001]))
    if kind == "tie":  # exact binary values whose 7th decimal is a 5: ties at precision 6
        return rng.randint(0, 1 << 16) / 128.0 + rng.choice([0.0078125, 0.0234375, 0.5])
    if kind == "tiny":
        return 10 ** rng.uniform(-9, -5)
    if kind == "huge":
        return 10 ** rng.uniform(5.5, 9) * rng.choice([1, -1])
    if kind == "huge_int":
        return float(rng.randint(1_000_001, 99_999_999))
    if kind == "mixed":
        return rng.choice([0.0, -0.0, -1.0, 1.0, 0.5, 1e-06, 1e6, 999999.9999996,
                           0.0000005, 0.00000049, 12345.6789, 0.1 + 0.2])
    raise ValueError(kind)


def make_column(rng, nrows):
    kind = rng.choice(["time", "time", "time_short", "mib", "mib", "int", "tie", "tiny",
                       "huge", "huge_int", "mixed"])
    vals = [rand_value(rng, kind) for _ in range(nrows)]
    # Errors are stored as -1, missing values as NaN; sprinkle both (and rarely inf).
    for i in range(nrows):
        r = rng.random()
        if r < 0.08:
            vals[i] = -1.0
        elif r < 0.14:
            vals[i] = math.nan
        elif r < 0.15:
            vals[i] = rng.choice([math.inf, -math.inf])
    if nrows and rng.random() < 0.05:
        vals = [math.nan] * nrows
    return vals


def x_axis(rng, nrows):
    style = rng.choice(["pow2", "pow2", "linear", "random"])
    if style == "pow2":
        start = rng.randint(0, 8)
        return [float(2 ** (start + i)) for i in range(nrows)]
    if style == "linear":
        step = rng.choice([1, 16, 128, 1000])
        return [float(step * (i + 1)) for i in range(nrows)]
    return sorted(round(rng.uniform(1, 1e5), rng.randint(0, 3)) for _ in range(nrows))


def fixed_cases():
    """Hand-picked frames: the reference shapes and the edge cases named in the docs."""
    nan = math.nan
    yield ["n", "tr", "to", "toc"], [
        [256.0, 0.043131, 0.014025, 0.300839],
        [512.0, 0.050825, 0.022934, 0.096720],
        [32768.0, 2.839868, 0.830730, 1.009366]]
    yield ["n", "tr", "to"], [[256.0, 44.55, 18.0], [512.0, 89.1, 36.0]]
    yield ["n", "tr", "to"], [[256.0, -1.0, 0.5], [512.0, nan, -1.0]]
    yield ["n", "tr"], [[256.0, nan], [512.0, nan]]
    yield ["n", "tr"], [[256.0, 1e-7], [512.0, -1.0]]
    yield ["n", "tr"], [[256.0, 1234567.5], [512.0, 0.123456]]
    yield ["n", "tr"], [[256.0, 2000000.0], [512.0, 3.0]]
    yield ["n", "tr"], [[256.0, 0.0], [512.0, -0.0]]
    yield ["n", "tr"], [[256.0, math.inf], [512.0, -math.inf]]
    yield ["n", "tr", "to"], []  # no rows
    yield ["m"], [[float(i)] for i in range(12)]
    yield ["n", "a_rather_long_provider", "µs"], [[1.0, 1.0, 2.5]]


def render(f, case_id, names, rows):
    df = pd.DataFrame([list(r) for r in rows], columns=names, dtype="float64")
    text = df.to_string()
    f.write(f"case {case_id}\n")
    f.write("columns " + " ".join(names) + "\n")
    for r in rows:
        f.write("row " + " ".join(repr(float(v)) for v in r) + "\n")
    lines = text.split("\n")
    f.write(f"expect {len(lines)}\n")
    for line in lines:
        f.write(line + "\n")
    f.write("end\n")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/data/pandas_cases.txt"
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else SEED
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 400
    rng = random.Random(seed)
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        f.write(f"# generated by tests/support/gen_pandas_cases.py with pandas {pd.__version__}, "
                f"numpy {np.__version__}; do not edit by hand\n")
        case_id = 0
        for names, rows in fixed_cases():
            case_id += 1
            render(f, case_id, names, rows)
        for _ in range(count):
            case_id += 1
            nrows = rng.choice([1, 2, 3, 8, 8, 8, 10, 12, 17])
            ncols = rng.randint(1, 7)
            names = [rng.choice(["n", "m", "seq_len"])] + rng.sample(NAMES, ncols)
            cols = [x_axis(rng, nrows)] + [make_column(rng, nrows) for _ in range(ncols)]
            rows = [[c[i] for c in cols] for i in range(nrows)]
            render(f, case_id, names, rows)


if __name__ == "__main__":
    main()
