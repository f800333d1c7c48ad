#include "sim/text_lines.h"

#include <cmath>
#include <cstdlib>

namespace hearth::internal {

std::vector<std::string_view> SplitFields(std::string_view line, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t end = line.find(sep, start);
    if (end == std::string_view::npos) {
      out.push_back(line.substr(start));
      return out;
    }
    out.push_back(line.substr(start, end - start));
    start = end + 1;
  }
}

std::optional<int64_t> ParseInt(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  int64_t v = 0;
  size_t i = 0;
  bool neg = false;
  if (s[0] == '-') {
    neg = true;
    i = 1;
    if (s.size() == 1) return std::nullopt;
  }
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return neg ? -v : v;
}

std::optional<double> ParseNumber(std::string_view s) {
  if (s.empty() || s.size() > 64) return std::nullopt;
  std::string copy(s);
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
// days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

}  // namespace

std::optional<int64_t> ParseDateTimeNanos(std::string_view s) {
  // Fixed layout: 0123456789012345678
  //               YYYY-MM-DD HH:MM:SS
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' ||
      s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  auto num = [&](size_t pos, size_t len) { return ParseInt(s.substr(pos, len)); };
  auto y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2),
       mi = num(14, 2), se = num(17, 2);
  if (!y || !mo || !d || !h || !mi || !se || *mo < 1 || *mo > 12 || *d < 1 ||
      *d > 31 || *h > 23 || *mi > 59 || *se > 60 || *y < 0 || *mo < 0 ||
      *h < 0 || *mi < 0 || *se < 0) {
    return std::nullopt;
  }
  // Exact to the nanosecond: digits beyond the ninth are dropped.
  int64_t nanos = 0;
  if (s.size() > 19) {
    if (s[19] != '.' || s.size() == 20) return std::nullopt;
    int64_t scale = 100'000'000;
    for (size_t i = 20; i < s.size(); ++i, scale /= 10) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      nanos += (s[i] - '0') * scale;
    }
  }
  const int64_t days = DaysFromCivil(*y, *mo, *d);
  return (days * 86400 + *h * 3600 + *mi * 60 + *se) * 1'000'000'000 + nanos;
}

}  // namespace hearth::internal
