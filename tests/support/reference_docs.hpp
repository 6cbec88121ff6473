// The reference-format documents the tests read: tests/data/reference/*.md (the published
// figures in their text format, and opbench's own reports of committed results; several GPUs,
// every op; tests/data/README.md says how each was made). They are part of the repository: a
// test that finds none fails, it never skips. Needs the compile definition OPBENCH_TEST_DATA.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifndef OPBENCH_TEST_DATA
#error "compile with -DOPBENCH_TEST_DATA=\"<repository>/tests/data\""
#endif

inline std::filesystem::path reference_dir() { return std::filesystem::path(OPBENCH_TEST_DATA) / "reference"; }

// Every document, sorted by name; empty (with a test failure) when the folder holds none.
inline std::vector<std::filesystem::path> reference_docs() {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(reference_dir(), ec))
    if (e.path().extension() == ".md") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  if (out.empty()) ADD_FAILURE() << "no reference documents under " << reference_dir();
  return out;
}

// One document's text; fails the test when it cannot be read.
inline std::string reference_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) ADD_FAILURE() << "cannot read " << p;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
