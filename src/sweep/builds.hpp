// The builds `opbench ab` measures with. A side names a revision of the source tree; its measure
// binary is this opbench's own when the revision is the tree's HEAD (the running build, the
// tree's uncommitted changes included), else the binary of that commit built into a cache of
// builds: the commit's files (`git archive`) configured with the running build's own settings
// (opbench-build.json beside its binary: generator, build type, compilers, CUDA code, torch's
// Python, prefix path) and built once (`opbench-measure` alone), in a folder keyed by the
// commit and those settings, so that a new toolchain or torch never reuses an old build. A
// build is published by a marker written last; concurrent `ab` commands take a lock on it, and a
// build cut short (no marker) is built again. Torch-free.
#pragma once
#include <iosfwd>
#include <string>

namespace opbench {

// What the running build was configured with: opbench-build.json, its text and a key of it.
struct BuildSettings {
  std::string path;  // the file read
  std::string text;  // its JSON
  std::string key;   // a hash of the settings and the toolchain: the builds made with them
};
// The settings of the build whose binaries lie in `binary_dir`. InputError naming the file when
// it is missing (an opbench not built by CMake) or cannot be read.
BuildSettings build_settings(const std::string& binary_dir);

// A revision as given, and the commit it names.
struct Revision {
  std::string given, commit;
};
// InputError naming `option` (BASE, HEAD) when `given` names no commit of the tree at `source_dir`.
Revision resolve_revision(const std::string& source_dir, const std::string& given, const std::string& option);

// The tree's HEAD commit, "-dirty" added when it has uncommitted changes ("" outside git).
std::string tree_commit(const std::string& source_dir);

// A side's measure binary and the commit its run records.
struct SideBinary {
  std::string binary, commit;
  enum How { running, cached, built, given } how = running;
  double build_seconds = 0;
  int protocol = 0;  // the worker protocol it speaks (worker_protocol_of; 0: not asked yet)
};

// The worker protocol the measure binary `binary` speaks (sweep/worker_protocol.hpp): what
// `BINARY sweep - --print-worker-protocol` prints, or protocol 1 when it refuses the option (a build
// from before protocol 2) or prints no number.
int worker_protocol_of(const std::string& binary);
// How a side got its binary, in words ("this build", "built in 152 s", ...).
std::string side_binary_text(const SideBinary& b);

struct BuildCacheOptions {
  std::string source_dir;   // the running build's tree (its git repository)
  std::string running;      // the running measure binary
  std::string running_commit;  // the commit it was built from (tree_commit of its own tree)
  std::string cache_dir;    // where builds are kept
  BuildSettings settings;   // the running build's
  int jobs = 0;             // for the build (0: every core)
};
// The folder of builds when none is given: $OPBENCH_BUILDS, else build-ab/ in the tree.
std::string default_build_cache(const std::string& source_dir);

// The measure binary of `rev`: the running one when it is the running build's commit, built
// from a tree without uncommitted changes (opt.running_commit), else the
// cache's, built there first when it is not (progress and the build's last lines on `log`).
// InputError naming `option` when the commit does not build (nothing is measured or stored),
// RuntimeFailure when the cache cannot be written.
SideBinary side_binary(const Revision& rev, const std::string& option, const BuildCacheOptions& opt, std::ostream& log);

}  // namespace opbench
