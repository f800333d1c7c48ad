#include "hearth/request/request_spec.h"

namespace hearth {

std::string_view RequestKindName(RequestKind kind) {
  switch (kind) {
    case RequestKind::kGenerate: return "generate";
    case RequestKind::kEmbed: return "embed";
  }
  return "unknown";
}

std::string_view PoolingName(Pooling pooling) {
  switch (pooling) {
    case Pooling::kLast: return "last";
    case Pooling::kMean: return "mean";
  }
  return "unknown";
}

}  // namespace hearth
