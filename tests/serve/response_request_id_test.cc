// Unit tests of the X-Request-Id a response carries: the client's value
// when it is one header of 1 to 128 visible ASCII bytes, else a fresh
// random id that never repeats what was sent.

#ifdef HEARTH_SERVE_FOUND

#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "response_request_id.h"

namespace hearth::serve {
namespace {

bool IsFresh(const std::string& id) {
  return id.size() == 36 && id.rfind("req_", 0) == 0 &&
         id.find_first_not_of("0123456789abcdef", 4) == std::string::npos;
}

TEST_CASE("request ids: a valid client id is echoed as sent", "[serve]") {
  const std::string longest(kMaxClientRequestIdBytes, '~');
  for (const std::string& id : {std::string("a"), std::string("0af7651916cd43dd-8448.eb21:1c8"),
                                longest}) {
    CHECK(ResponseRequestId({id}) == id);
  }
}

TEST_CASE("request ids: anything else gets a fresh id instead", "[serve]") {
  const std::string too_long(kMaxClientRequestIdBytes + 1, 'a');
  const std::string with_nul("a\0b", 3);
  const std::vector<std::vector<absl::string_view>> refused = {
      {},           {""},        {too_long}, {"two words"}, {"tab\there"}, {"caf\xc3\xa9"},
      {with_nul},   {"x\x7f"},   {"a", "b"}, {"a", "a"},
  };
  for (const std::vector<absl::string_view>& sent : refused) {
    const std::string id = ResponseRequestId(sent);
    INFO(id);
    CHECK(IsFresh(id));
  }
}

TEST_CASE("request ids: fresh ids do not repeat", "[serve]") {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(NewRequestId());
  CHECK(seen.size() == 1000);
}

}  // namespace
}  // namespace hearth::serve

#endif  // HEARTH_SERVE_FOUND
