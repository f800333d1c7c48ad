// Unit tests of --cors_origins (cors_policy.h): what is an origin, "*" only
// without keys, and which requests get which headers.

#ifdef HEARTH_SERVE_FOUND

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cors_policy.h"

namespace hearth::serve {
namespace {

bool Has(const CorsPolicy::Headers& headers, const std::string& name, const std::string& value) {
  for (const auto& [n, v] : headers) {
    if (n == name && v == value) return true;
  }
  return false;
}

bool HasName(const CorsPolicy::Headers& headers, const std::string& name) {
  for (const auto& h : headers) {
    if (h.first == name) return true;
  }
  return false;
}

TEST_CASE("cors: origin syntax", "[serve]") {
  for (const char* ok : {"https://a.example", "http://127.0.0.1:3000", "http://[::1]:8080",
                         "http://[::1]", "app://x", "https://a-b.c.d:65535"}) {
    INFO(ok);
    CHECK(IsOriginSyntax(ok));
  }
  for (const char* bad : {"", "a.example", "https://", "https://a.example/", "https://a/b",
                          "https://u@a", "https://a:0", "https://a:65536", "https://a:x",
                          "https://a:", "1http://a", "://a", "https://a b", "https://a\r\nX: y",
                          "https://[::1", "https://a?x", "null", "*"}) {
    INFO(bad);
    CHECK(!IsOriginSyntax(bad));
  }
  CHECK(!IsOriginSyntax("https://" + std::string(600, 'a')));
}

TEST_CASE("cors: parsing --cors_origins", "[serve]") {
  absl::StatusOr<CorsPolicy> none = CorsPolicy::Parse("", true);
  REQUIRE(none.ok());
  CHECK(!none->enabled());
  CHECK(none->ResponseHeaders({"https://a.example"}).empty());
  absl::StatusOr<CorsPolicy> two = CorsPolicy::Parse(" https://A.example , http://b:3000,", true);
  REQUIRE(two.ok());
  CHECK(two->enabled());
  CHECK(two->AllowedOrigin({"https://a.example"}) == "https://a.example");
  CHECK(two->AllowedOrigin({"http://b:3000"}) == "http://b:3000");
  for (const char* bad : {"https://a.example/", "null", "a.example", "https://a.example,x"}) {
    INFO(bad);
    absl::Status s = CorsPolicy::Parse(bad, true).status();
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(s.message().find("--cors_origins") != absl::string_view::npos);
  }
  CHECK(CorsPolicy::Parse("*", true).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(CorsPolicy::Parse("https://a,*", true).status().code() ==
        absl::StatusCode::kInvalidArgument);
  absl::StatusOr<CorsPolicy> any = CorsPolicy::Parse("*", false);
  REQUIRE(any.ok());
  CHECK(any->AllowedOrigin({"https://anything.example"}) == "https://anything.example");
  CHECK(!any->AllowedOrigin({"not an origin"}));
}

TEST_CASE("cors: headers for listed, unlisted, doubled and absent origins", "[serve]") {
  absl::StatusOr<CorsPolicy> cors = CorsPolicy::Parse("https://a.example", true);
  REQUIRE(cors.ok());
  const CorsPolicy::Headers listed = cors->ResponseHeaders({"https://a.example"});
  CHECK(Has(listed, "Access-Control-Allow-Origin", "https://a.example"));
  CHECK(Has(listed, "Vary", "Origin"));
  CHECK(HasName(listed, "Access-Control-Expose-Headers"));
  CHECK(!HasName(listed, "Access-Control-Allow-Credentials"));
  const std::vector<std::vector<absl::string_view>> refused = {
      {}, {"https://b.example"}, {"https://A.example"}, {"https://a.example", "https://a.example"},
      {"https://a.example.evil"}, {"null"}};
  for (const auto& origin : refused) {
    const CorsPolicy::Headers h = cors->ResponseHeaders(origin);
    CHECK(Has(h, "Vary", "Origin"));
    CHECK(!HasName(h, "Access-Control-Allow-Origin"));
    CHECK(cors->PreflightHeaders(origin).empty());
  }
  const CorsPolicy::Headers pre = cors->PreflightHeaders({"https://a.example"});
  CHECK(Has(pre, "Access-Control-Allow-Methods", "GET, POST, OPTIONS"));
  CHECK(Has(pre, "Access-Control-Max-Age", "600"));
  for (const auto& [name, value] : pre) {
    if (name != "Access-Control-Allow-Headers") continue;
    for (const char* h : {"Authorization", "Content-Type", "X-Hearth-Class", "X-Request-Id"}) {
      CHECK(value.find(h) != std::string::npos);
    }
  }
}

}  // namespace
}  // namespace hearth::serve

#endif  // HEARTH_SERVE_FOUND
