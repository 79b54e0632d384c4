// JSON-line helpers shared by the diagnostic programs in this folder (each compiled on its own by run_diag.sh).
#pragma once

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <string>

// printf into a std::string.
inline std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
inline std::string fmt(const char* f, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, f);
  vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

// JSON number that stays valid for inf/nan (printed as strings).
inline std::string num(double v) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  return fmt("%.6g", v);
}

// Strip quotes/backslashes so a library message cannot break the JSON line.
inline std::string clean(const char* s) {
  std::string out;
  for (; s && *s; ++s) out += (*s == '"' || *s == '\\' || *s < 0x20) ? '\'' : *s;
  return out;
}
