"""Loaded by every Python process started with this folder on PYTHONPATH (studies/aoti-trace):
appends each subprocess the process ran (the compiler and linker calls AOTInductor makes by
absolute path among them) to $AOTI_TRACE_LOG, one JSON line each: the process, the seconds from
start to exit, the exit status and the command; and, at exit, the Inductor settings the compile
used. Without AOTI_TRACE_LOG it does nothing."""
import atexit
import json
import os
import subprocess
import time

_LOG = os.environ.get("AOTI_TRACE_LOG")


def _write(record):
    with open(_LOG, "a") as f:
        f.write(json.dumps(record) + "\n")


def _hook():
    start, wait = subprocess.Popen.__init__, subprocess.Popen.wait

    def traced_start(self, args, *rest, **kw):
        self._trace_t0 = time.time()
        self._trace_cmd = args if isinstance(args, str) else " ".join(map(str, args))
        return start(self, args, *rest, **kw)

    def traced_wait(self, *rest, **kw):
        rc = wait(self, *rest, **kw)
        if hasattr(self, "_trace_t0") and not getattr(self, "_trace_done", False):
            self._trace_done = True
            _write({"pid": os.getpid(), "seconds": round(time.time() - self._trace_t0, 3), "rc": rc,
                    "command": self._trace_cmd})
        return rc

    subprocess.Popen.__init__, subprocess.Popen.wait = traced_start, traced_wait


def _settings():
    try:
        import torch._inductor.config as config
    except Exception:
        return
    names = ("compile_wrapper_opt_level", "precompile_headers", "emit_multi_arch_kernel", "embed_kernel_binary",
             "package_cpp_only")
    _write({"pid": os.getpid(), "settings": {n: getattr(config.aot_inductor, n, None) for n in names}})


if _LOG:
    _hook()
    atexit.register(_settings)
