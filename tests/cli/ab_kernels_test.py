#!/usr/bin/env python3
"""tests/gpu/ab_table.py (the table of a kernel change against its base) on synthetic benchmark
CSVs, and tests/gpu/ab_kernels.sh's refusals of bad input (before it builds anything).

The table: a row beyond the threshold and twice the rounds' spread is faster or slower, within
either it is same; rows one side lacks are named; both benchmarks' CSV forms (ms, median_ms) are
read; the geometric mean covers the rows both sides have. Bad input exits 2 with one line naming
the file: no CSV on a side, no time column, other key columns, a time that is no positive number.
ab_kernels.sh exits 2, creating no build folder, without arguments, for an unknown option, an
unknown benchmark, a revision git does not know, or rounds that are no positive number. End to end
in a scratch repository with a stand-in nvcc (a "compiled" benchmark writes the time its kernel
source states): the base from git, the working tree as the head, built side by side, run in turn
for every round, the table saying slower; a commit against itself says same and reuses its build
(one build when both sides are one commit);
a build that fails exits 1 naming its log.

No pytest: run it (ctest runs it, CPU). Exit status 0 when every check passes; prints each failure.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
TABLE = os.path.join(ROOT, "tests", "gpu", "ab_table.py")
AB = os.path.join(ROOT, "tests", "gpu", "ab_kernels.sh")
failures = []

ONE_D = "op,mode,act,strategy,config,n,ms,min_ms\n"
TPA = "kernel,config,version,median_ms,p10_ms,p90_ms\n"


def check(what, ok):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def write(folder, name, text):
    with open(os.path.join(folder, name), "w") as f:
        f.write(text)


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def table(folder, *extra):
    return run([sys.executable, TABLE, folder, *extra])


def row_of(out, key):
    return next((line for line in out.splitlines() if line.startswith("| " + key + " |")), "")


def verdicts():
    d = tempfile.mkdtemp(prefix="ab-table-")
    # resident forward: 2% slower, rounds within 0.1%; split: 0.5% faster (under the threshold);
    # block: 7% faster but its base rounds spread 4% (under twice the spread); resident backward
    # only in base, cosine only in head.
    base = [("act,fwd,softmax_n,split,default,4096", 1.000, 1.001), ("act,fwd,softmax_n,resident,default,4096", 2.0, 2.002),
            ("act,fwd,softmax_n,block,default,4096", 1.0, 1.04), ("act,bwd,softmax_n,resident,default,4096", 3.0, 3.0)]
    head = [("act,fwd,softmax_n,split,default,4096", 0.995, 0.996), ("act,fwd,softmax_n,resident,default,4096", 2.04, 2.041),
            ("act,fwd,softmax_n,block,default,4096", 0.95, 0.951), ("lrpe_cosine,fwd,softmax_n,split,default,4096", 1.0, 1.0)]
    for side, rows in (("base", base), ("head", head)):
        for r in (0, 1):
            write(d, f"{side}{r + 1}.csv", ONE_D + "".join(f"{k},{v[r]},{v[r]}\n" for k, *v in rows))
    rc, out, err = table(d)
    check(f"the table is made ({rc}: {err})", rc == 0)
    check("2% slower beyond the spread is slower", row_of(out, "act | fwd | softmax_n | resident").endswith("| slower |"))
    check("0.5% is same", row_of(out, "act | fwd | softmax_n | split").endswith("| same |"))
    check("5% within twice a 4% spread is same", row_of(out, "act | fwd | softmax_n | block").endswith("| same |"))
    check("a row only in base", row_of(out, "act | bwd | softmax_n | resident").endswith("| only base |"))
    check("a row only in head", row_of(out, "lrpe_cosine | fwd").endswith("| only head |"))
    check("the median of the rounds", "| 2.00100 | 2.04050 |" in row_of(out, "act | fwd | softmax_n | resident"))
    check("summary counts", "5 rows: 1 slower, 2 same, 1 only base, 1 only head" in out)
    rc, out, _ = table(d, "--min-pct", "0.1")
    check("a lower threshold turns 0.5% faster", row_of(out, "act | fwd | softmax_n | split").endswith("| faster |"))


def tpa_form():
    d = tempfile.mkdtemp(prefix="ab-table-")
    write(d, "base1.csv", TPA + "tpa,b=8 m=32768 bf16,cuda_bn dflt c32,0.0600,0.059,0.061\n")
    write(d, "head1.csv", TPA + "tpa,b=8 m=32768 bf16,cuda_bn dflt c32,0.0564,0.056,0.057\n")
    rc, out, err = table(d)
    check(f"median_ms CSVs read ({rc}: {err})", rc == 0 and row_of(out, "tpa | b=8 m=32768 bf16").endswith("| faster |"))
    check("geomean over shared rows", "geomean head/base 0.9400" in out)


def bad_inputs():
    cases = {
        "no head CSV": {"base1.csv": ONE_D + "act,fwd,softmax_n,split,default,256,1,1\n"},
        "no time column": {"base1.csv": "op,n\nact,1\n", "head1.csv": "op,n\nact,1\n"},
        "key columns differ": {"base1.csv": ONE_D + "act,fwd,softmax_n,split,default,256,1,1\n",
                               "head1.csv": TPA + "tpa,x,y,1,1,1\n"},
        "a time that is no number": {"base1.csv": ONE_D + "act,fwd,softmax_n,split,default,256,nan,1\n",
                                     "head1.csv": ONE_D + "act,fwd,softmax_n,split,default,256,1,1\n"},
        "a short row": {"base1.csv": ONE_D + "act,fwd,1\n", "head1.csv": ONE_D},
    }
    for what, files in cases.items():
        d = tempfile.mkdtemp(prefix="ab-table-")
        for name, text in files.items():
            write(d, name, text)
        rc, out, err = table(d)
        check(f"{what}: exit 2 with one line ({rc}, {err!r})",
              rc == 2 and err.startswith("ab_table: ") and err.count("\n") == 1 and out == "")
    rc, _, err = table(os.path.join(tempfile.mkdtemp(), "missing"))
    check(f"a missing folder: exit 2 ({rc})", rc == 2 and "usage" in err)


def script_refusals():
    ab_dir = os.path.join(tempfile.mkdtemp(prefix="ab-kernels-"), "builds")
    env = dict(os.environ, AB_DIR=ab_dir)
    cases = {
        "no arguments": [],
        "an unknown option": ["HEAD", "--fast", "--", "kernels_1d_bench"],
        "no benchmark": ["HEAD", "--"],
        "an unknown benchmark": ["HEAD", "--", "kernels_9d_bench"],
        "a test, not a benchmark": ["HEAD", "--", "kernels_1d_test"],
        "an unknown revision": ["no-such-revision-xyz", "--", "kernels_1d_bench"],
        "an unknown head revision": ["HEAD", "--head", "no-such-revision-xyz", "--", "kernels_1d_bench"],
        "rounds that are no number": ["HEAD", "--rounds", "0", "--", "kernels_1d_bench"],
    }
    for what, args in cases.items():
        rc, out, err = run(["bash", AB, *args], env=env)
        check(f"ab_kernels.sh, {what}: exit 2 with one line ({rc}, {err!r})",
              rc == 2 and err.startswith("ab_kernels: ") and err.count("\n") == 1)
        check(f"ab_kernels.sh, {what}: no build folder", not os.path.exists(ab_dir))


# A stand-in nvcc: compiling copies the source into the object (and fails when it says FAIL);
# linking writes a benchmark that writes a CSV with the time its inputs state (TIME=...).
FAKE_NVCC = r"""#!/usr/bin/env bash
out="" src="" ins=()
while [ $# -gt 0 ]; do
  case $1 in -o) out=$2; shift 2 ;; -c) src=$2; shift 2 ;; *.o|*.a) ins+=("$1"); shift ;; *) shift ;; esac
done
if [ -n "$src" ]; then
  ! grep -q FAIL "$src" && cat "$src" > "$out"
else
  t=$(cat "${ins[@]}" | sed -n 's/.*TIME=\([0-9.]*\).*/\1/p' | head -1)
  printf '#!/usr/bin/env bash\nprintf "op,n,ms\\nact,256,%s\\n" > "$1"\n' "$t" > "$out"
  chmod +x "$out"
fi
"""


def scratch_repo():
    """A repository with the build and A/B scripts, one kernel (TIME=1.00, committed) and a
    benchmark; the stand-in nvcc's folder."""
    d = tempfile.mkdtemp(prefix="ab-repo-")
    for sub in ("tests/gpu", "kernels", "src/measure", "bin"):
        os.makedirs(os.path.join(d, sub))
    for name in ("build_kernels.sh", "ab_kernels.sh", "ab_table.py"):
        with open(os.path.join(ROOT, "tests", "gpu", name)) as f:
            write(os.path.join(d, "tests", "gpu"), name, f.read())
    write(os.path.join(d, "kernels"), "k.cu", "// TIME=1.00\n")
    write(os.path.join(d, "src", "measure"), "flush.cu", "// flush\n")
    write(os.path.join(d, "tests", "gpu"), "fake_bench.cu", "// a benchmark\n")
    write(os.path.join(d, "bin"), "nvcc", FAKE_NVCC)
    os.chmod(os.path.join(d, "bin", "nvcc"), 0o755)
    write(d, ".gitignore", "/bin/\n/ab/\n")
    git = ["git", "-C", d, "-c", "user.name=t", "-c", "user.email=t@t"]
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        run(git + cmd)
    return d


def end_to_end():
    d = scratch_repo()
    env = dict(os.environ, PATH=os.path.join(d, "bin") + os.pathsep + os.environ["PATH"],
               AB_DIR=os.path.join(d, "ab"), JOBS="2")
    ab = ["bash", os.path.join(d, "tests", "gpu", "ab_kernels.sh")]
    write(os.path.join(d, "kernels"), "k.cu", "// TIME=1.10\n")  # the working tree's change
    rc, out, err = run(ab + ["HEAD", "--rounds", "3", "--", "fake_bench"], env=env)
    check(f"end to end: both sides built, run and compared ({rc}: {err})", rc == 0)
    check("the change is slower", "| act | 256 | 1.00000 | 1.10000 | 1.1000 | 3 / 3 | slower |" in out)
    runs = sorted(os.listdir(os.path.join(d, "ab", "run")))
    check(f"every round's CSV and log, and the table ({runs})",
          runs == ["ab.md"] + [f"{s}{r}.{e}" for s in ("base", "head") for r in (1, 2, 3) for e in ("csv", "log")])
    rc, out, err = run(ab + ["HEAD", "--head", "HEAD", "--", "fake_bench"], env=env)
    check(f"a commit against itself is same ({rc}: {err})", rc == 0 and out.rstrip().endswith(
        "1 rows: 1 same; geomean head/base 1.0000 (threshold 1% and twice the rounds' spread)"))
    commit = run(["git", "-C", d, "rev-parse", "HEAD"])[1].strip()
    builds = sorted(b for b in os.listdir(os.path.join(d, "ab")) if not b.endswith(".log"))
    check(f"builds by commit, reused ({builds})", builds == sorted([commit, "run", "src-" + commit, "tree"]))
    fresh = dict(env, AB_DIR=os.path.join(d, "ab2"))  # one commit on both sides, from scratch
    rc, out, err = run(ab + ["HEAD", "--head", "HEAD", "--", "fake_bench"], env=fresh)
    check(f"one commit on both sides from scratch ({rc}: {err})", rc == 0 and "| 1.00000 | 1.00000 |" in out)
    builds = sorted(b for b in os.listdir(os.path.join(d, "ab2")) if not b.endswith(".log"))
    check(f"one extraction and one build of it ({builds})", builds == sorted([commit, "run", "src-" + commit]))
    write(os.path.join(d, "kernels"), "k.cu", "// FAIL\n")
    rc, out, err = run(ab + ["HEAD", "--", "fake_bench"], env=env)
    check(f"a failed build: exit 1 naming its log ({rc}: {err!r})",
          rc == 1 and "the head build failed (its log: " in err)


if __name__ == "__main__":
    verdicts()
    tpa_form()
    bad_inputs()
    script_refusals()
    end_to_end()
    print(f"ab_kernels_test: {len(failures)} failure(s)")
    sys.exit(1 if failures else 0)
