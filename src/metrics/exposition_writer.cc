#include "metrics/exposition_writer.h"

#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "internal/utf8.h"

namespace hearth::metrics_internal {
namespace {

constexpr int32_t kReplacementCharacter = 0xFFFD;

// HELP text escapes backslash and newline; label values also double quotes.
void AppendEscaped(std::string* out, absl::string_view v, bool quotes) {
  for (char c : v) {
    if (c == '\\') {
      out->append("\\\\");
    } else if (c == '\n') {
      out->append("\\n");
    } else if (quotes && c == '"') {
      out->append("\\\"");
    } else {
      out->push_back(c);
    }
  }
}

}  // namespace

bool ValidMetricName(absl::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

std::string Label(absl::string_view key, absl::string_view value) {
  std::string out = absl::StrCat(key, "=\"");
  // Validated names never need it, but a report or stats a host built
  // itself may hold anything: one invalid byte would fail the whole scrape.
  std::string clean;
  const std::string_view text(value.data(), value.size());
  for (size_t pos = 0; pos < text.size();) {
    const int32_t cp = internal::NextCodePoint(text, &pos);
    if (cp < 0 || internal::IsControlCodePoint(cp)) {
      internal::AppendCodePoint(kReplacementCharacter, &clean);
    } else {
      internal::AppendCodePoint(cp, &clean);
    }
  }
  AppendEscaped(&out, clean, /*quotes=*/true);
  out.push_back('"');
  return out;
}

std::string JoinLabels(absl::string_view a, absl::string_view b) {
  if (a.empty()) return std::string(b);
  if (b.empty()) return std::string(a);
  return absl::StrCat(a, ",", b);
}

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, ec == std::errc() ? end : buf);
}

void ExpositionWriter::Family(absl::string_view name, absl::string_view type,
                              absl::string_view help) {
  absl::StrAppend(&out_, "# HELP ", name, " ");
  AppendEscaped(&out_, help, /*quotes=*/false);
  absl::StrAppend(&out_, "\n# TYPE ", name, " ", type, "\n");
}

void ExpositionWriter::Sample(absl::string_view name, absl::string_view labels,
                              double value) {
  out_.append(name.data(), name.size());
  if (!labels.empty()) absl::StrAppend(&out_, "{", labels, "}");
  absl::StrAppend(&out_, " ", FormatValue(value), "\n");
}

void ExpositionWriter::Sample(absl::string_view name, absl::string_view labels,
                              uint64_t value) {
  // Integers exactly: a double would round token counts past 2^53.
  out_.append(name.data(), name.size());
  if (!labels.empty()) absl::StrAppend(&out_, "{", labels, "}");
  absl::StrAppend(&out_, " ", value, "\n");
}

void ExpositionWriter::Histogram(absl::string_view name,
                                 absl::string_view labels,
                                 const LatencyHistogram& h) {
  const std::string bucket = absl::StrCat(name, "_bucket");
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= LatencyHistogram::kNumBounds; ++i) {
    cumulative += h.BucketCount(i);
    const double le = i < LatencyHistogram::kNumBounds
                          ? LatencyHistogram::kBounds[i]
                          : INFINITY;
    Sample(bucket, JoinLabels(labels, Label("le", FormatValue(le))),
           cumulative);
  }
  Sample(absl::StrCat(name, "_sum"), labels, h.sum());
  Sample(absl::StrCat(name, "_count"), labels, h.count());
}

}  // namespace hearth::metrics_internal
