// JsonSchemaToGrammar on llama.cpp's converter (schema_grammar.h).

#include <exception>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "absl/strings/string_view.h"
#include "error_param.h"
#include "json-schema-to-grammar.h"
#include "schema_grammar.h"

namespace hearth::serve {
namespace {

// The converter's reasons can quote the schema (a pattern, a $ref); the
// error repeats at most this much of them.
constexpr size_t kMaxReasonBytes = 240;

std::string Reason(absl::string_view what) {
  absl::ConsumePrefix(&what, "JSON schema conversion failed:\n");
  std::string reason = absl::StrReplaceAll(what, {{"\n", "; "}});
  if (reason.size() > kMaxReasonBytes) reason = absl::StrCat(reason.substr(0, kMaxReasonBytes), "...");
  return reason.empty() ? "no reason given" : reason;
}

absl::Status Refused(absl::string_view field, absl::string_view why) {
  return WithParam(absl::InvalidArgumentError(absl::StrCat(
                       "'", field, "' is not a JSON schema llama.cpp's converter supports: ",
                       Reason(why))),
                   field);
}

}  // namespace

absl::StatusOr<std::string> JsonSchemaToGrammar(const std::string& schema,
                                                absl::string_view field) {
  // The boundary with llama.cpp's C++: whatever it throws stops here.
  try {
    return json_schema_to_grammar(common_json::parse(schema));
  } catch (const std::exception& e) {
    return Refused(field, e.what());
  } catch (...) {
    return Refused(field, "");
  }
}

bool HasJsonSchemaConverter() { return true; }

}  // namespace hearth::serve
