// A minimal test harness: CHECK records a failure with its location and goes on, so one run
// reports every broken property; finish() prints a summary and gives the exit code Meson reads.
#pragma once

#include <cstdio>
#include <string>

namespace mnist::testing {

constexpr int kSkipExitCode = 77;  // Meson's SKIP

inline int& failures() {
  static int count = 0;
  return count;
}
inline int& checks() {
  static int count = 0;
  return count;
}

inline bool record(bool ok, const char* expression, const std::string& detail, const char* file,
                   int line) {
  ++checks();
  if (!ok) {
    ++failures();
    std::printf("FAIL %s:%d: %s %s\n", file, line, expression, detail.c_str());
  }
  return ok;
}

inline int finish(const char* name) {
  std::printf("%s: %d checks, %d failed\n", name, checks(), failures());
  return failures() == 0 ? 0 : 1;
}

inline int skip(const char* name, const std::string& why) {
  std::printf("SKIP %s: %s\n", name, why.c_str());
  return kSkipExitCode;
}

}  // namespace mnist::testing

#define CHECK(condition) ::mnist::testing::record((condition), #condition, "", __FILE__, __LINE__)
#define CHECK_MSG(condition, detail) \
  ::mnist::testing::record((condition), #condition, (detail), __FILE__, __LINE__)
