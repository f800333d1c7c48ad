// Each component's snippets are compiled and linked into one executable;
// running it lists them, so the CTest log shows what was checked.
namespace hearth_doc_snippets {
int PrintSummary();
}  // namespace hearth_doc_snippets

int main() { return hearth_doc_snippets::PrintSummary() > 0 ? 0 : 1; }
