#include "hearth/common/names.h"

#include <string>

#include <catch2/catch.hpp>

namespace hearth {
namespace {

using namespace std::string_literals;

std::string Refusal(const std::string& name) {
  return std::string(ValidateName(name, "f").message());
}

TEST_CASE("ValidateName accepts any printable UTF-8 up to 256 bytes", "[names]") {
  for (const std::string& name :
       {"a"s, " "s, "carol \"c\""s, "back\\slash"s, "x\",user=\"y"s, "_other "s, "\u00e9"s,
        "e\u0301"s, "\u5bb6\u65cf"s, "\U0001F469\u200D\U0001F467"s, "\u202Eevil"s,
        "\U0010FFFF"s, "\uFFFD"s, std::string(256, 'x'), std::string(254, 'y') + "\u00e9"}) {
    INFO(name);
    CHECK(ValidateName(name, "f").ok());
  }
}

TEST_CASE("ValidateName refuses what breaks labels, JSON or messages, saying what", "[names]") {
  struct Case {
    std::string name;
    std::string why;
  };
  const Case cases[] = {
      {"", "it is empty"},
      {std::string(257, 'x'), "longer than 256 bytes"},
      // A multi-byte character may not make the name longer either.
      {std::string(255, 'y') + "\u00e9", "longer than 256 bytes"},
      {"a\xff", "byte 1 is not valid UTF-8"},
      {"\x80", "byte 0 is not valid UTF-8"},
      {"a\xe2\x82", "byte 1 is not valid UTF-8"},
      {"\xc0\xaf", "byte 0 is not valid UTF-8"},           // overlong '/'
      {"\xe0\x80\xaf", "byte 0 is not valid UTF-8"},       // overlong, 3 bytes
      {"\xed\xa0\x80", "byte 0 is not valid UTF-8"},       // surrogate U+D800
      {"\xf4\x90\x80\x80", "byte 0 is not valid UTF-8"},   // above U+10FFFF
      {"\xf8\x88\x80\x80\x80", "byte 0 is not valid UTF-8"},
      {"a\0b"s, "byte 1 is the control character U+0000"},
      {"a\tb", "U+0009"},
      {"a\nb", "U+000A"},
      {"\x1b[31m", "U+001B"},
      {"a\x7f", "U+007F"},
      {"a\xc2\x85", "U+0085"},
      {"a\u2028", "U+2028"},
      {"a\u2029", "U+2029"},
  };
  for (const Case& c : cases) {
    INFO(c.why);
    const absl::Status s = ValidateName(c.name, "users[3].name");
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(s.message()), Catch::StartsWith("users[3].name is \""));
    CHECK_THAT(std::string(s.message()), Catch::Contains(c.why));
    CHECK_THAT(std::string(s.message()),
               Catch::EndsWith("a name is 1 to 256 bytes of UTF-8 without control characters"));
  }
}

TEST_CASE("ValidateName quotes a bounded, escaped start of the name", "[names]") {
  CHECK_THAT(Refusal("a\xff"), Catch::Contains("is \"a\\xff\" (2 bytes)"));
  const std::string message = Refusal(std::string(10 << 20, 'x'));
  CHECK_THAT(message, Catch::Contains("\"... (10485760 bytes)"));
  CHECK(message.size() < 300);
}

}  // namespace
}  // namespace hearth
