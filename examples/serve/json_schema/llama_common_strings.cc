// The three string helpers of llama.cpp's common/common.cpp that its schema
// converter calls (why they are here, and not linked: common.h), with the
// same behaviour.

#include <string>
#include <vector>

#include "common.h"

std::string string_join(const std::vector<std::string>& values, const std::string& separator) {
  std::string joined;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) joined += separator;
    joined += values[i];
  }
  return joined;
}

// "a,,b" by "," is {"a", "", "b"}; "" is {""}.
std::vector<std::string> string_split(const std::string& str, const std::string& delimiter) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t end = str.find(delimiter); end != std::string::npos;
       end = str.find(delimiter, start)) {
    parts.push_back(str.substr(start, end - start));
    start = end + delimiter.size();
  }
  parts.push_back(str.substr(start));
  return parts;
}

std::string string_repeat(const std::string& str, size_t n) {
  std::string repeated;
  repeated.reserve(str.size() * n);
  for (size_t i = 0; i < n; ++i) repeated += str;
  return repeated;
}
