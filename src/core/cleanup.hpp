// Temporaries removed when the command is stopped. A command that writes files (site, export,
// report --out, ...) names each temporary it makes while it exists; SIGINT, SIGTERM or SIGHUP
// then removes the temporaries named and ends the process with exit 130. A temporary a
// process left behind when killed outright (kill -9) carries its process id and is removed by
// the next command that writes the same target (remove_stale). Torch-free.
#pragma once
#include <mutex>
#include <string>

namespace opbench {

// Blocks SIGINT, SIGTERM and SIGHUP in this thread (and every thread started after it) and
// handles them in a thread of their own, as above (a signal the process was started ignoring,
// as nohup does, stays ignored). Call once, before any other thread starts.
void install_cleanup_signals();

// `path` (a file or a folder) is removed if the command is stopped while it is named.
void remove_on_stop(const std::string& path);
void keep_on_stop(const std::string& path);  // named no longer (renamed into place, or removed)

// Held while a thread creates a file or folder, or renames one into place: a stop waits until
// no thread holds it, then holds it until the process ends, so nothing is created again
// once the temporaries are being removed (another thread re-creating a removed folder left it
// behind) and no rename pair is cut in two.
std::unique_lock<std::recursive_mutex> hold_creation();

// Removes the files and folders named `prefix` followed by a process id (digits) in the
// folder of `prefix`, whose process is no longer running: a temporary left by a process that
// was killed.
void remove_stale(const std::string& prefix);

}  // namespace opbench
