// SIGINT and SIGTERM during a sweep. The first asks the sweep to finish its table cell and
// stop (`interrupt_requested()` turns true; the run ends interrupted). A second stops the process
// within a moment: `on_second` runs on a thread of its own (it marks the run interrupted),
// then the process exits with 130; a third exits at once. Copies of one signal that one
// sender delivers within a quarter of a second count once: timeout(1) signals the process and
// then its process group, which holds the process again. Torch-free.
#pragma once
#include <atomic>
#include <functional>

namespace opbench {

// Installs the handlers (once per process); `on_second` must not return.
void install_stop_signals(std::function<void()> on_second);
const std::atomic<bool>& interrupt_requested();

}  // namespace opbench
