// Normalised catalogue keys: lower case without spaces, '-', '_' and '.'.

#ifndef HEARTH_SRC_SIM_CATALOG_LOOKUP_H_
#define HEARTH_SRC_SIM_CATALOG_LOOKUP_H_

#include <cctype>
#include <string>
#include <string_view>

namespace hearth::internal {

inline std::string CatalogKey(std::string_view name) {
  std::string key;
  for (char c : name) {
    if (c == ' ' || c == '-' || c == '_' || c == '.') continue;
    key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return key;
}

}  // namespace hearth::internal

#endif  // HEARTH_SRC_SIM_CATALOG_LOOKUP_H_
