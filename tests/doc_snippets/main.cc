// Each component's snippets are compiled and linked into one executable;
// running it lists them, so the CTest log shows what was checked.
// Examples marked to run (the README's iteration contract) run after that.
namespace hearth_doc_snippets {
int PrintSummary();
int RunSnippets();
}  // namespace hearth_doc_snippets

int main() {
  const bool compiled = hearth_doc_snippets::PrintSummary() > 0;
  return compiled && hearth_doc_snippets::RunSnippets() == 0 ? 0 : 1;
}
