// Unit tests of hearth-serve's HTTP boundary: the credentials a request
// presents (RFC 9110 section 11), raw header fields, a key's rights to work
// classes and its view of the pages, the ids clients are shown, and the
// Retry-After a refusal is sent with.

#ifdef HEARTH_SERVE_FOUND

#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/escaping.h"
#include "household_config.h"
#include "household_directory.h"
#include "openai_response.h"
#include "page_views.h"
#include "public_request_ids.h"
#include "raw_head.h"
#include "request_credentials.h"

namespace hearth::serve {
namespace {

using Values = std::vector<absl::string_view>;

TEST_CASE("credentials: Bearer is case-insensitive and spaces or tabs separate it", "[serve]") {
  for (const char* value : {"Bearer sk-ana", "bearer sk-ana", "BEARER sk-ana", "BeArEr sk-ana",
                            "Bearer\tsk-ana", "Bearer  \t sk-ana", "  Bearer sk-ana\t "}) {
    absl::StatusOr<std::string> key = PresentedKey(Values{value}, {});
    INFO(value);
    REQUIRE(key.ok());
    CHECK(*key == "sk-ana");
  }
  CHECK(*PresentedKey({}, Values{" sk-ana "}) == "sk-ana");
  CHECK(*PresentedKey(Values{"Bearer sk-ana"}, Values{"sk-ana"}) == "sk-ana");
  CHECK(PresentedKey({}, {})->empty());
  // Basic: base64("ana:sk-ana"), the key as the password.
  CHECK(*PresentedKey(Values{"Basic YW5hOnNrLWFuYQ=="}, {}) == "sk-ana");
  CHECK(*PresentedKey(Values{"basic OnNrLWFuYQ=="}, {}) == "sk-ana");
}

TEST_CASE("credentials: anything but a whole token68 is refused, never cut or decoded", "[serve]") {
  const std::string nul = std::string("Bearer sk-ana") + '\0' + "garbage";
  for (const std::string& value :
       {std::string("Bearer sk-ana-lap%74op"), nul, std::string("Bearer sk ana"),
        std::string("Bearer"), std::string("Bearer "), std::string("Bearersk-ana"),
        std::string("Bearer:sk-ana"), std::string("Token sk-ana"), std::string("sk-ana"),
        std::string("Bearer sk-ana,x"), std::string("Bearer =abc"), std::string("Bearer a=b"),
        std::string("Basic !!!"), std::string("Basic c2stYW5h"),  // base64 "sk-ana": no colon
        std::string("Bearer sk-\xc3\xa9")}) {
    absl::StatusOr<std::string> key = PresentedKey(Values{value}, {});
    INFO(absl::CEscape(value));
    REQUIRE_FALSE(key.ok());
    CHECK(key.status().code() == absl::StatusCode::kUnauthenticated);
    // The message never quotes what was presented.
    CHECK(key.status().message().find("sk-") == absl::string_view::npos);
  }
  CHECK_FALSE(PresentedKey({}, Values{"sk-ana%00"}).ok());
  CHECK_FALSE(PresentedKey(Values{"Bearer a", "Bearer a"}, {}).ok());
  CHECK_FALSE(PresentedKey({}, Values{"a", "a"}).ok());
  CHECK_FALSE(PresentedKey(Values{"Bearer sk-ana"}, Values{"sk-ben"}).ok());
}

TEST_CASE("credentials: IsToken68 accepts exactly the RFC 9110 token68 alphabet", "[serve]") {
  // Property over every byte: a one-byte key is a token68 exactly when the
  // byte is one of token68's characters other than '='.
  const std::string alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/";
  for (int b = 0; b < 256; ++b) {
    const std::string one(1, static_cast<char>(b));
    INFO(b);
    CHECK(IsToken68(one) == (alphabet.find(static_cast<char>(b)) != std::string::npos));
    // After a first character '=' is padding, also allowed.
    CHECK(IsToken68("k" + one) == (IsToken68(one) || b == '='));
  }
  CHECK(IsToken68("abc=="));
  CHECK_FALSE(IsToken68("=="));
  CHECK_FALSE(IsToken68("a=b"));
  CHECK_FALSE(IsToken68(""));
}

TEST_CASE("raw head: values are the bytes sent, and a malformed head is refused", "[serve]") {
  absl::StatusOr<httplib::Headers> h = ParseRawHeaderFields(
      "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization:  Bearer sk-ana-lap%74op \r\n"
      "x-hearth-class: vo%69ce\r\nX-Empty:\r\n\r\nbody bytes");
  REQUIRE(h.ok());
  CHECK(RawHeaderValues(*h, "authorization") == Values{"Bearer sk-ana-lap%74op"});
  CHECK(RawHeaderValues(*h, "X-Hearth-Class") == Values{"vo%69ce"});
  CHECK(RawHeaderValues(*h, "X-Empty") == Values{""});
  CHECK(h->size() == 4);
  const std::string nul = std::string("GET / HTTP/1.1\r\nA: b") + '\0' + "c\r\n\r\n";
  for (const std::string& head :
       {nul, std::string("GET / HTTP/1.1\r\nA: b\nC: d\r\n\r\n"),
        std::string("GET / HTTP/1.1\r\nA : b\r\n\r\n"), std::string("GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n"),
        std::string("GET / HTTP/1.1\r\nA: b\rc\r\n\r\n"), std::string("GET / HTTP/1.1\r\nno colon\r\n\r\n"),
        std::string("GET / HTTP/1.1\r\n: b\r\n\r\n"), std::string("GET / HTTP/1.1\r\nA: b\r\n")}) {
    INFO(absl::CEscape(head));
    absl::StatusOr<httplib::Headers> bad = ParseRawHeaderFields(head);
    CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  }
}

constexpr char kHousehold[] = R"(
[[member]]
name = "ana"
[[member]]
name = "ben"
[[key]]
key = "sk-ana"
member = "ana"
[[key]]
key = "sk-ben"
member = "ben"
default_class = "documents"
[[key]]
key = "sk-ben-voice"
member = "ben"
default_class = "documents"
allowed_classes = ["documents", "voice"]
[[key]]
key = "sk-admin"
role = "admin"
[[key]]
key = "sk-scrape"
role = "metrics"
[[alias]]
model = "m-voice"
class = "voice"
)";

std::vector<std::string> Allowed(const HouseholdConfig& c, const Caller& caller) {
  std::vector<std::string> out;
  for (size_t i = 0; i < c.classes.size(); ++i) {
    if (caller.allowed_classes[i]) out.push_back(c.classes[i].name);
  }
  return out;
}

TEST_CASE("rights: a key may use its default class and lower ones unless it lists its own",
          "[serve]") {
  absl::StatusOr<HouseholdConfig> c = ParseHouseholdToml(kHousehold, "h.toml");
  REQUIRE(c.ok());
  HouseholdDirectory d(*c, "m");
  Caller ana = *d.AuthenticateKey("sk-ana");
  CHECK(Allowed(*c, ana) ==
        std::vector<std::string>{"chat", "agent", "documents", "embedding", "maintenance"});
  CHECK(Allowed(*c, *d.AuthenticateKey("sk-ben")) ==
        std::vector<std::string>{"documents", "maintenance"});
  CHECK(Allowed(*c, *d.AuthenticateKey("sk-ben-voice")) ==
        std::vector<std::string>{"voice", "documents"});
  // Every path to a class obeys: the header, the alias, both.
  for (auto [model, header] : {std::pair{"m", "voice"}, std::pair{"m-voice", ""},
                               std::pair{"m-voice", "chat"}, std::pair{"m", "embedding"}}) {
    Caller ben = *d.AuthenticateKey("sk-ben");
    absl::Status s = d.ResolveClass(model, header, ben);
    INFO(model << " " << header);
    CHECK(s.code() == absl::StatusCode::kPermissionDenied);
    CHECK(ErrorFor(s).status == 403);
  }
  Caller ben = *d.AuthenticateKey("sk-ben");
  CHECK(d.ResolveClass("m", "maintenance", ben).ok());
  Caller voice = *d.AuthenticateKey("sk-ben-voice");
  CHECK(d.ResolveClass("m-voice", "", voice).ok());
  CHECK(c->classes[voice.work_class.value()].name == "voice");
  // Keys of no member read pages and make no calls.
  for (const char* key : {"sk-admin", "sk-scrape"}) {
    Caller nobody = *d.AuthenticateKey(key);
    CHECK_FALSE(nobody.user.valid());
    CHECK(d.ResolveClass("m", "", nobody).code() == absl::StatusCode::kPermissionDenied);
    CHECK(MayCall(nobody).code() == absl::StatusCode::kPermissionDenied);
  }
  CHECK(MayReadStatus(*d.AuthenticateKey("sk-admin")).ok());
  CHECK(MayReadStatus(*d.AuthenticateKey("sk-scrape")).code() ==
        absl::StatusCode::kPermissionDenied);
}

TEST_CASE("rights: each bad [[key]] is an error naming the field, never the key", "[serve]") {
  const std::string base = "[[member]]\nname = \"ana\"\n[[key]]\n";
  const char* bad[][2] = {
      {"key = \"sk ana\"\nmember = \"ana\"", "token68"},
      {"key = \"sk-ana%74\"\nmember = \"ana\"", "token68"},
      {"key = \"sk-ana\"\nmember = \"ana\"\nrole = \"root\"", "role"},
      {"key = \"sk-ana\"\nrole = \"member\"", "member"},
      {"key = \"sk-ana\"\nmember = \"ana\"\nallowed_classes = []", "allowed_classes"},
      {"key = \"sk-ana\"\nmember = \"ana\"\nallowed_classes = [\"vox\"]", "allowed_classes[0]"},
      {"key = \"sk-ana\"\nmember = \"ana\"\nallowed_classes = [1]", "allowed_classes"},
      {"key = \"sk-ana\"\nmember = \"ana\"\nallowed_classes = [\"voice\"]", "default_class"},
      {"key = \"sk-ana\"\nmember = \"ana\"\nallowed_classes = \"voice\"", "allowed_classes"},
  };
  for (const auto& [table, field] : bad) {
    absl::StatusOr<HouseholdConfig> c = ParseHouseholdToml(base + table, "h.toml");
    INFO(table);
    REQUIRE_FALSE(c.ok());
    CHECK(c.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(c.status().message().find(field) != absl::string_view::npos);
    CHECK(c.status().message().find("sk-ana") == absl::string_view::npos);
    CHECK(c.status().message().find("sk ana") == absl::string_view::npos);
  }
}

TEST_CASE("public ids: random, resolvable only by their owner, forgotten oldest first",
          "[serve]") {
  PublicRequestIds ids(/*capacity=*/4);
  std::set<std::string> seen;
  for (uint64_t i = 1; i <= 4; ++i) {
    std::string shown = ids.Issue(RequestId(i), UserId(i % 2));
    CHECK(shown.size() == PublicRequestIds::kIdChars);
    CHECK(shown.find_first_not_of("0123456789abcdef") == std::string::npos);
    // Nothing of the sequential id shows.
    CHECK(shown != std::to_string(i));
    seen.insert(shown);
    CHECK(ids.Resolve(shown, UserId(i % 2)) == RequestId(i));
    // Another member's id reads exactly as one never issued.
    CHECK(ids.Resolve(shown, UserId((i + 1) % 2)) == std::nullopt);
    CHECK(ids.PublicOf(RequestId(i)) == shown);
  }
  CHECK(seen.size() == 4);
  CHECK(ids.Resolve("0123456789abcdef01234567", UserId(0)) == std::nullopt);
  CHECK(ids.Resolve("", UserId(0)) == std::nullopt);
  const std::string first = ids.PublicOf(RequestId(1));
  ids.Issue(RequestId(5), UserId(1));
  CHECK(ids.Resolve(first, UserId(1)) == std::nullopt);
  CHECK(ids.PublicOf(RequestId(1)).empty());
  CHECK(ids.PublicOf(RequestId(2)).size() == PublicRequestIds::kIdChars);
}

TEST_CASE("pages: a member sees the totals, its own entry and its own requests only",
          "[serve]") {
  absl::StatusOr<HouseholdConfig> c = ParseHouseholdToml(kHousehold, "h.toml");
  REQUIRE(c.ok());
  HouseholdDirectory d(*c, "m");
  PublicRequestIds ids;
  EngineSnapshot s;
  s.members = {{"ana", 1}, {"ben", 1}};
  s.running = {{7, "ana", "chat", 10, 2, 1}, {8, "ben", "documents", 20, 3, 2}};
  s.report.users.resize(2);
  s.report.users[0].name = "ana";
  s.report.users[1].name = "ben";
  const std::string ana_id = ids.Issue(RequestId(7), UserId(0));
  const std::string ben_id = ids.Issue(RequestId(8), UserId(1));

  nlohmann::json ana = StatusView(*d.AuthenticateKey("sk-ana"), s, 2, ids);
  REQUIRE(ana["members"].size() == 1);
  CHECK(ana["members"][0]["name"] == "ana");
  REQUIRE(ana["running"].size() == 1);
  CHECK(ana["running"][0]["id"] == ana_id);
  CHECK(ana["viewer"]["member"] == "ana");
  CHECK(ana["viewer"]["role"] == "member");
  const std::string text = ana.dump();
  CHECK(text.find("ben") == std::string::npos);
  CHECK(text.find(ben_id) == std::string::npos);

  nlohmann::json admin = StatusView(*d.AuthenticateKey("sk-admin"), s, 2, ids);
  CHECK(admin["members"].size() == 2);
  REQUIRE(admin["running"].size() == 2);
  CHECK(admin["running"][1]["id"] == ben_id);

  MetricsReport own = MetricsView(*d.AuthenticateKey("sk-ana"), s.report);
  REQUIRE(own.users.size() == 1);
  CHECK(own.users[0].name == "ana");
  CHECK(MetricsView(*d.AuthenticateKey("sk-scrape"), s.report).users.size() == 2);
}

TEST_CASE("refusals: Retry-After is at most 60 s, and a longer wait says do not retry", "[serve]") {
  auto header = [](const HttpError& e, const std::string& name) {
    for (const auto& [n, v] : ErrorHeaders(e)) {
      if (n == name) return v;
    }
    return std::string();
  };
  for (int wait : {1, 5, 59, 60, 61, 436, 86400}) {
    HttpError e = ErrorFor(absl::ResourceExhaustedError("token quota"), wait);
    INFO(wait);
    CHECK(e.status == 429);
    CHECK(std::stoi(header(e, "Retry-After")) == std::min(wait, kMaxRetryAfterS));
    CHECK(header(e, "x-should-retry") == (wait > kMaxRetryAfterS ? "false" : ""));
  }
  CHECK(header(ErrorFor(absl::UnauthenticatedError("x")), "WWW-Authenticate") ==
        "Bearer realm=\"hearth-serve\"");
}

}  // namespace
}  // namespace hearth::serve

#endif  // HEARTH_SERVE_FOUND
