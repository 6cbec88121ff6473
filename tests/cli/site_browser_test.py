"""The site in a browser: headless Chromium (scripts/site_browser.py) opens the site of the fixture
runs (two GPUs, three commits, a planted step; tests/support/site_fixture.hpp) from the file system, and
finds no console error on the index, a table page and a diff page; the table page's lines of every
provider and GPU, its floors, the planted step marked and the two GPUs side by side; the diff page's
filters; the page of the two GPUs at equal peaks (its peaks and the points that scale worst); and
screenshots that are not blank.

usage: site_browser_test.py OPBENCH SITE_FIXTURE_DB OUT_DIR  (screenshots go to OUT_DIR)
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from site_browser import Browser  # noqa: E402

STEPPED = "act-speed-fwd-t0-bf16"
GPUS = {"NVIDIA H100 80GB HBM3", "NVIDIA H200"}
PROVIDERS = {"cuda", "torch"}
failures, passes = [], []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    (passes if ok else failures).append(what)


def distinct_colours(png):
    from PIL import Image  # matplotlib's dependency, in .venv
    with Image.open(png) as img:
        colours = img.convert("RGB").getcolors(maxcolors=1 << 24)
    return len(colours or [])


def build_site(opbench, fixture_db, work):
    db, site = os.path.join(work, "fixture.db"), os.path.join(work, "site")
    subprocess.run([fixture_db, db], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([opbench, "site", "--db", db, "--out", site], check=True, stdout=subprocess.DEVNULL)
    return site


def index_page(b, site, out):
    b.open(os.path.join(site, "index.html"))
    check(b.errors() == [], "index: no console error %s" % b.errors())
    tables = b.evaluate("[...document.querySelectorAll('a[href^=\"tables/\"]')].map(a => a.textContent)")
    check(STEPPED in tables and len(set(tables)) == 6, "index: links every table (%d)" % len(set(tables)))
    diffs = b.evaluate("document.querySelectorAll('a[href^=\"diffs/\"]').length")
    check(diffs >= 4, "index: links a diff per op and GPU (%d)" % diffs)
    slower = b.evaluate("document.querySelectorAll('.badge.v-SLOWER').length")
    check(slower >= 2, "index: shows the planted step's SLOWER verdicts (%d)" % slower)
    across = b.evaluate("document.querySelectorAll('table.across a[href^=\"diffs/\"]').length")
    check(across >= 1, "index: links each op's GPUs at equal peaks (%d)" % across)
    shot = b.screenshot(os.path.join(out, "site-index.png"))
    n = distinct_colours(shot)
    check(n > 20, "index: screenshot is not blank (%d colours)" % n)


def table_page(b, site, out):
    b.open(os.path.join(site, "tables", STEPPED + ".html"))
    check(b.errors() == [], "table: no console error %s" % b.errors())
    lines = b.evaluate("window.opbench.lines")
    drawn = {(l["provider"], l["gpu"]) for l in lines if l["kind"] == "line" and l["points"] == 3}
    want = {(p, g) for p in PROVIDERS for g in GPUS}
    check(drawn == want, "table: a line of 3 points per provider and GPU %s" % sorted(drawn))
    floors = {l["gpu"] for l in lines if l["kind"] == "floor" and l["points"] == 3}
    check(floors == GPUS, "table: a floor per GPU %s" % sorted(floors))
    check(b.evaluate("window.opbench.x") == 4096, "table: the history shows the stepped x")
    hist = b.evaluate("window.opbench.history")
    series = {(h["provider"], h["gpu"]) for h in hist if h["kind"] == "history" and h["points"] == 3}
    check(series == want, "table: a history line per provider and GPU %s" % sorted(series))
    marked = {h["gpu"] for h in hist if h["kind"] == "history" and h["provider"] == "cuda"
              and [s["step"] for s in h["steps"]] == ["up"]}
    check(marked == GPUS, "table: the planted step is marked on each GPU %s" % sorted(marked))
    rows = b.evaluate("[...document.querySelectorAll('table.steps tbody tr')].map(r => r.textContent)")
    check(len(rows) == 2 and all("up" in r and "n=4096" in r for r in rows), "table: the change points listed %s" % rows)
    side = b.evaluate("window.opbench.sideBySide")
    check(side == {"gpus": 2, "rows": 6}, "table: the two GPUs side by side, a row per provider and x %s" % side)
    heads = b.evaluate("[...document.querySelectorAll('table.side-by-side th')].map(t => t.textContent)")
    check(sum("% of peak" in h for h in heads) == 2, "table: each GPU's %% of peak %s" % heads)
    shot = b.screenshot(os.path.join(out, "site-table.png"))
    n = distinct_colours(shot)
    check(n > 50, "table: screenshot is not blank (%d colours)" % n)
    b.evaluate("document.querySelector('button[data-view=\"gbps\"]').click()")
    gbps = b.evaluate("window.opbench.lines.filter(l => l.kind === 'line' && l.points === 3).length")
    check(b.evaluate("window.opbench.view") == "gbps" and gbps == 4 and b.errors() == [], "table: the GB/s view draws")


def diff_page(b, site):
    page = [f for f in sorted(os.listdir(os.path.join(site, "diffs"))) if f.startswith("act-")][0]
    b.open(os.path.join(site, "diffs", page))
    check(b.errors() == [], "diff: no console error %s" % b.errors())
    total = b.evaluate("window.opbench.rows")
    b.evaluate("(() => { const s = document.querySelector('main select'); s.value = 'SLOWER';"
               " s.dispatchEvent(new Event('change')); })()")
    check(b.evaluate("window.opbench.rows") == 1 and total > 1, "diff: SLOWER only leaves the planted point")
    b.evaluate("(() => { const s = document.querySelectorAll('main select')[1]; s.value = 'torch';"
               " s.dispatchEvent(new Event('change')); })()")
    check(b.evaluate("window.opbench.rows") == 0, "diff: one provider (torch) has no SLOWER point")


def gpus_page(b, site):
    pages = [f for f in sorted(os.listdir(os.path.join(site, "diffs"))) if f.startswith("act-") and "-to-" in f]
    check(len(pages) == 1, "gpus: one page of act's two GPUs %s" % pages)
    # without the page the checks below fail on the missing file's empty document
    b.open(os.path.join(site, "diffs", pages[0] if pages else "act-missing.html"))
    check(b.errors() == [], "gpus: no console error %s" % b.errors())
    peaks = b.evaluate("document.querySelector('p.normalized') ? document.querySelector('p.normalized').textContent : ''")
    check("base 3000 GB/s, head 4200 GB/s" in peaks, "gpus: states both peaks '%s'" % peaks)
    check((b.evaluate("window.opbench.scaling") or 0) > 0, "gpus: lists the points that scale worst")


def main():
    opbench, fixture_db, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="opbench-site-browser-") as work:
        site = build_site(opbench, fixture_db, work)
        with Browser() as b:
            index_page(b, site, out)
            table_page(b, site, out)
            diff_page(b, site)
            gpus_page(b, site)
    print("checks: %d passed, %d failed" % (len(passes), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
