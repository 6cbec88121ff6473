// Goes on with a run in a fresh process image: the same command line with `--resume RUN`
// (a sweep whose call never returned cannot take that call back; its point is stored as
// failed, and the sweep starts again from the points stored). The pid stays, so the run's
// lock stays this process's. Torch-free.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace opbench {

// This process's command line with any --resume removed and `--resume RUN` appended.
std::vector<std::string> resume_arguments(const std::vector<std::string>& argv, int64_t run_id);
// Executes /proc/self/exe with resume_arguments() of /proc/self/cmdline; exits 3 if it cannot.
[[noreturn]] void reexec_resuming(int64_t run_id);

}  // namespace opbench
