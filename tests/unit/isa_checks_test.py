#!/usr/bin/env python3
"""scripts/export_aoti.py's share_isa_checks: Inductor's check of a vector ISA answered once per
key and kept in Inductor's cache folder. With the checks' own code replaced by a counting fake:
the first ask of a (flags, probe) runs the check and keeps its answer, True or False; the same
ask again (in this process or another) does not run it; another probe, other flags or another
CPU's answers do; eight threads asking at once run it once; a kept answer that cannot be read is
checked again and replaced. And Inductor still picks an ISA through the shared checks.

No pytest: run it (ctest runs it). Exit status 0 when every check passes; prints each failure.
"""
import os
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "..", "scripts")
os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="opbench-isa-")
sys.path.insert(0, SCRIPTS)

import torch  # noqa: E402
from torch._inductor import cpu_vec_isa  # noqa: E402

import export_aoti  # noqa: E402

failures = []
calls = []


def check(what, ok):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def fake_check_build(isa, code):
    calls.append((isa._arch_flags, code))
    return "fails" not in code


class Isa:
    def __init__(self, flags):
        self._arch_flags = flags


def answers():
    folder = os.path.join(os.environ["TORCHINDUCTOR_CACHE_DIR"], "opbench-isa-checks")
    return sorted(f for f in os.listdir(folder) if f.endswith(".json")) if os.path.isdir(folder) else []


def main():
    real = cpu_vec_isa.VecISA.check_build
    cpu_vec_isa.VecISA.check_build = fake_check_build
    export_aoti.share_isa_checks(torch, start=False)
    shared = cpu_vec_isa.VecISA.check_build
    check("the check is replaced", shared is not fake_check_build)
    a, b = Isa("-mavx2 -mfma"), Isa("-mavx512f")
    check("first ask runs the check", shared(a, "probe") is True and len(calls) == 1)
    check("second ask is answered from the folder", shared(a, "probe") is True and len(calls) == 1)
    check("a failing check is kept as False", shared(a, "probe fails") is False and len(calls) == 2)
    check("and answered so", shared(a, "probe fails") is False and len(calls) == 2)
    check("other flags run the check", shared(b, "probe") is True and len(calls) == 3)
    check("one file per answer", len(answers()) == 3)
    # eight threads on one new key: one check
    results = []
    threads = [threading.Thread(target=lambda: results.append(shared(b, "together"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check("eight threads at once run it once", results == [True] * 8 and len(calls) == 4)
    # an answer that cannot be read is checked again and replaced
    folder = os.path.join(os.environ["TORCHINDUCTOR_CACHE_DIR"], "opbench-isa-checks")
    for f in answers():
        with open(os.path.join(folder, f), "w") as out:
            out.write('{"ok": ')
    check("a torn answer is checked again", shared(a, "probe") is True and len(calls) == 5)
    texts = [open(os.path.join(folder, f)).read() for f in answers()]
    check("and replaced", texts.count('{"ok": true}') == 1 and texts.count('{"ok": ') == 3)
    # another process with the same folder: answered from it
    code = ("import sys, torch; sys.path.insert(0, %r); from torch._inductor import cpu_vec_isa; import export_aoti\n"
            "calls = []\n"
            "cpu_vec_isa.VecISA.check_build = lambda isa, code: calls.append(1) or True\n"
            "export_aoti.share_isa_checks(torch, start=False)\n"
            "class I: _arch_flags = '-mavx2 -mfma'\n"
            "print(cpu_vec_isa.VecISA.check_build(I(), 'probe'), len(calls))\n" % SCRIPTS)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ)
    check("another process reads the answer (%s)" % out.stdout.strip(), out.stdout.split() == ["True", "0"])
    # the real checks through the shared ones: Inductor picks an ISA as it would alone
    cpu_vec_isa.VecISA.check_build = real
    alone = subprocess.run([sys.executable, "-c", "from torch._inductor import cpu_vec_isa; print(cpu_vec_isa.pick_vec_isa())"],
                           capture_output=True, text=True, env={**os.environ, "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp()})
    export_aoti.share_isa_checks(torch)
    check("the same ISA picked (%s, alone %s)" % (cpu_vec_isa.pick_vec_isa(), alone.stdout.strip()),
          str(cpu_vec_isa.pick_vec_isa()) == alone.stdout.strip())
    print("isa_checks_test: %d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
