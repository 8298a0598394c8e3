// Loading a kernels file lazily (lang/load.hpp): the top level at once, each function when first
// looked up, with the same result as parsing the whole file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "lang/load.hpp"
#include "lang/parser.hpp"
#include "tack/error.hpp"

namespace tack::lang {
namespace {

std::shared_ptr<const SourceFile> file(const std::string& text) {
  return std::make_shared<const SourceFile>("kernels.py", text);
}

// The statements' first lines and function names, "line:name" ("line:" for other statements).
std::string outline(const std::string& text) {
  std::string out;
  for (const TopLevelStatement& s : split_top_level(text)) {
    if (!out.empty()) out += ' ';
    out += std::to_string(s.first_line);
    out += ':';
    out += s.function;
  }
  return out;
}

TEST(SplitTopLevel, FindsEachStatementAndItsFunction) {
  const std::string text =
      "import tack\n"                                 // 1
      "N = tack.constant(\n"                          // 2
      "4)\n"                                          // 3
      "# a comment\n"                                 // 4
      "@tack.kernel\n"                                // 5
      "@other(x=')')\n"                               // 6
      "def add(x, out):\n"                            // 7
      "    '''A docstring\n"                          // 8
      "def inside(): at column 0, in the string\n"    // 9
      "'''\n"                                         // 10
      "# a comment at column 0 in the body\n"         // 11
      "    for i in range(x.shape[0]):\n"             // 12
      "        out[i] = x[i] + \\\n"                  // 13
      "1\n"                                           // 14
      "\n"                                            // 15
      "def helper(a): return a  # def fake(): ...\n"  // 16
      "M = [1,\n"                                     // 17
      "2]\n"                                          // 18
      "@tack.func\n"                                  // 19
      "class Point:\n"                                // 20
      "    pass\n"                                    // 21
      "if __name__ == \"__main__\":\n"                // 22
      "    print('def x(): \\' # (')\n";              // 23
  EXPECT_EQ(outline(text), "1: 2: 5:add 16:helper 17: 19: 22:");
  const std::vector<TopLevelStatement> s = split_top_level(text);
  ASSERT_EQ(s.size(), 7u);
  EXPECT_EQ(text.substr(s[2].begin, s[2].end - s[2].begin).substr(0, 12), "@tack.kernel");
  EXPECT_EQ(s[2].end, s[3].begin);
  EXPECT_EQ(s.back().end, text.size());
}

TEST(SplitTopLevel, GivesUpOnTextItCannotSplit) {
  for (const char* text :
       {"x = (1,\n", "s = '''open\n", "s = 'no end\nt = 1\n", "@tack.kernel\n"}) {
    SCOPED_TRACE(text);
    EXPECT_TRUE(split_top_level(text).empty());
  }
  EXPECT_TRUE(split_top_level("").empty());
  EXPECT_EQ(outline("\r\ndef f():\r\n    pass\r\n"), "2:f");
}

TEST(StatementAt, FindsADefinitionAtAnyIndentation) {
  const std::string text =
      "import tack\n"                               // 1
      "def outer():\n"                              // 2
      "    @tack.kernel\n"                          // 3
      "    def inner(x, out):\n"                    // 4
      "        '''Lines of a string\n"              // 5
      "at column 0 do not end it'''\n"              // 6
      "\n"                                          // 7
      "        for i in range(x.shape[0]):  # (\n"  // 8
      "            out[i] = x[i]\n"                 // 9
      "    return inner\n"                          // 10
      "x = 1\n";                                    // 11
  auto at = [&](int line) { return std::string(statement_at(text, line).value_or("<none>")); };
  EXPECT_EQ(at(3),
            "    @tack.kernel\n    def inner(x, out):\n        '''Lines of a string\n"
            "at column 0 do not end it'''\n\n        for i in range(x.shape[0]):  # (\n"
            "            out[i] = x[i]\n");
  EXPECT_EQ(at(2).substr(0, 12), "def outer():");
  EXPECT_EQ(at(2).size(), text.size() - std::string("import tack\n").size() - 6);
  EXPECT_EQ(at(11), "x = 1\n");
  EXPECT_EQ(at(7), "<none>");   // a blank line starts nothing
  EXPECT_EQ(at(40), "<none>");  // past the end
}

// A statement's text is read up to where the next one begins: what follows, even text that cannot
// be split (an unterminated string), is not read, so that a kernel near the top of a long file
// costs its own lines (Python's first call reads each kernel's definition this way).
TEST(StatementAt, ReadsNoFurtherThanTheNextStatement) {
  const std::string text =
      "@tack.kernel\n"        // 1
      "def k(out):\n"         // 2
      "    out[0] = 1\n"      // 3
      "x = 1\n"               // 4
      "s = '''not closed\n";  // 5
  EXPECT_EQ(statement_at(text, 1).value_or("<none>"),
            "@tack.kernel\ndef k(out):\n    out[0] = 1\n");
  EXPECT_EQ(statement_at(text, 4).value_or("<none>"), "x = 1\n");
  EXPECT_FALSE(statement_at(text, 5).has_value());
  EXPECT_TRUE(split_top_level(text).empty());
}

const std::string kTwoKernels =
    "import tack\n"
    "C = tack.constant(3)\n"
    "@tack.kernel\n"
    "def good(x, out):\n"
    "    for i in range(x.shape[0]):\n"
    "        out[i] = helper(x[i])\n"
    "\n"
    "@tack.func\n"
    "def helper(v):\n"
    "    return v * C\n"
    "\n"
    "@tack.kernel\n"
    "def broken(x, out):\n"
    "    for i in range(x.shape[0]):\n"
    "        out[i] = x[i] +\n";

TEST(LoadModule, ParsesAFunctionWhenItIsFirstLookedUp) {
  auto m = load_module(file(kTwoKernels));
  const ast::FunctionDef* good = m->function("good");
  ASSERT_NE(good, nullptr);
  EXPECT_EQ(good->loc.line, 4);
  EXPECT_EQ(m->kind_of(*good), FunctionKind::Kernel);
  const ast::FunctionDef* helper = m->function("helper");
  ASSERT_NE(helper, nullptr);
  EXPECT_EQ(m->kind_of(*helper), FunctionKind::Func);
  EXPECT_EQ(m->lookup("C").kind, Symbol::Kind::Constant);
  EXPECT_EQ(m->lookup("missing").kind, Symbol::Kind::Unknown);
  // The broken kernel fails when it is reached, at its own line of the file.
  try {
    m->function("broken");
    FAIL() << "no error for the broken kernel";
  } catch (const CompileError& e) {
    EXPECT_EQ(e.line(), 15);
    EXPECT_EQ(e.file(), "kernels.py");
  }
}

TEST(LoadModule, ErrorsOfTheTopLevelAndDuplicatesAreReportedAtOnce) {
  EXPECT_THROW(load_module(file("import tack\nC = tack.constant('x')\ndef f():\n    pass\n")),
               CompileError);
  try {
    load_module(file("import tack\ndef f():\n    pass\ndef f():\n    pass\n"));
    FAIL() << "no error for a function defined twice";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("defined twice"), std::string::npos) << e.what();
  }
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Lines before the first statement (comments, blank lines) count: the top level's classes and
// constants, parsed without the functions, keep the lines they have in the file.
TEST(LoadModule, TheTopLevelKeepsItsLinesAfterLeadingComments) {
  const char* text =
      "# a comment\n"
      "\n"
      "import tack\n"
      "@tack.data_oriented\n"
      "class Scale:\n"
      "    @tack.func\n"
      "    def apply(self, x):\n"
      "        return x\n"
      "@tack.kernel\n"
      "def k(s, a):\n"
      "    for i in range(a.shape[0]):\n"
      "        a[i] = s.apply(a[i])\n";
  auto lazy = load_module(file(text));
  const ast::FunctionDef* apply = lazy->function("Scale.apply");
  ASSERT_NE(apply, nullptr);
  EXPECT_EQ(apply->loc.line, 7);
  EXPECT_EQ(lazy->function("k")->loc.line, 10);
  try {
    load_module(file("# a comment\n\nimport tack\nC = tack.constant('x')\ndef f():\n    pass\n"));
    FAIL() << "no error for the bad constant";
  } catch (const CompileError& e) {
    EXPECT_EQ(e.line(), 4);
  }
}

// A form feed resets the indentation (Python's rule, and the lexer's): a decorator after one is at
// the top level. The scanner counted the form feed as indentation and lost the kernel (fuzzer).
TEST(LoadModule, AFormFeedResetsTheIndentation) {
  const char* text =
      "import tack\n"
      "\n"
      "\f@tack.kernel\n"
      "def k(x, out):\n"
      "    for i in range(x.shape[0]):\n"
      "        out[i] = x[i]\n"
      "  \fdef g():\n"
      "\f    pass\n";
  EXPECT_EQ(outline(text), "1: 3:k 7:g");
  auto lazy = load_module(file(text));
  ResolvedModule whole(parse_module(file(text)));
  EXPECT_EQ(lazy->kernel_names(), whole.kernel_names());
  const ast::FunctionDef* k = lazy->function("k");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->loc.line, whole.function("k")->loc.line);
  EXPECT_EQ(k->loc.col, whole.function("k")->loc.col);
  EXPECT_TRUE(statement_at(text, 3).has_value());
}

// Decorators that name the function itself, or two functions each other: the lazy load parsed
// them again for each lookup until the stack overflowed (fuzzer). They are not Tack's decorators,
// so the functions are plain ones, as in the whole parse.
TEST(LoadModule, FunctionsDecoratedWithThemselvesLoadAsTheWholeParse) {
  for (const char* text : {"@e\ndef e():l", "@g\ndef f():\n    pass\n@f\ndef g():\n    pass\n"}) {
    SCOPED_TRACE(text);
    auto lazy = load_module(file(text));
    ResolvedModule whole(parse_module(file(text)));
    EXPECT_EQ(lazy->kernel_names(), whole.kernel_names());
    EXPECT_EQ(lazy->func_names(), whole.func_names());
    const ast::FunctionDef* f = lazy->function(text[1] == 'e' ? "e" : "f");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(lazy->kind_of(*f), FunctionKind::Plain);
  }
}

// A carriage return alone is blank space to the lexer, so "\r@dec" at the start of a line is a
// decorator there; the scanner took the line for a blank one, left the decorator with the statement
// above and its function without it (fuzzer, CI: "expected 'def' after the decorator, found the end
// of the file"). And the headers of a main guard's elif and else clauses are skipped up to their
// ':' whatever lines they cross, so a decorator or a def there is none to the whole parse. And a
// def the scanner does not read as one ("def\ff", a form feed after the keyword) stays in the top
// level, whose functions came before the others in kernel_names(); and a name with letters beyond
// ASCII is the lexer's whole name, refused as the whole parse refuses it. Each file is loaded as
// the whole parse loads it.
TEST(LoadModule, LinesTheScannerCannotReadAsTheLexerLoadAsTheWholeParse) {
  for (const char* text :
       {"x = 1\n\r@e\ndef f(): pass", "import tack\n\r@tack.kernel\ndef k(a):\n    a[0] = 1\n",
        "if __name__ == '__main__': pass\nelif (\n1):\n    pass\n"
        "@tack.kernel\ndef k(a):\n    a[0] = 1\n",
        "import tack\nif __name__ == '__main__': pass\nelif 1\n"
        "@tack.kernel\ndef k(a): pass\n",
        "import tack\n@tack.kernel\ndef k(a): pass\n@tack.kernel\ndef\ff(a): pass\n",
        "import tack\n@tack.kernel\ndef f\xc3\xa9(a): pass\n@tack.kernel\ndef k(a): pass\n"}) {
    SCOPED_TRACE(text);
    std::unique_ptr<ResolvedModule> whole;
    try {
      whole = std::make_unique<ResolvedModule>(parse_module(file(text)));
    } catch (const CompileError&) {
      EXPECT_THROW(load_module(file(text))->kernel_names(), CompileError);
      continue;
    }
    auto lazy = load_module(file(text));
    EXPECT_EQ(lazy->kernel_names(), whole->kernel_names());
    EXPECT_EQ(lazy->func_names(), whole->func_names());
    for (const char* name : {"f", "k"}) {
      const ast::FunctionDef* a = lazy->function(name);
      const ast::FunctionDef* b = whole->function(name);
      ASSERT_EQ(a == nullptr, b == nullptr) << name;
      if (a) {
        EXPECT_EQ(a->loc.line, b->loc.line) << name;
      }
    }
  }
  EXPECT_FALSE(statement_at("x = 1\n\r@e\ndef f(): pass", 2).has_value());
}

// Every kernels file of the tests loads to the same module as the whole parse.
TEST(LoadModule, TheTestKernelsFilesLoadAsTheWholeParse) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(TACK_TEST_KERNELS_DIR)) {
    if (entry.path().extension() != ".py") continue;
    SCOPED_TRACE(entry.path().string());
    ++files;
    auto source = std::make_shared<const SourceFile>(entry.path().string(), read(entry.path()));
    EXPECT_FALSE(split_top_level(source->text()).empty());
    auto lazy = load_module(source);
    ResolvedModule whole(parse_module(source));
    EXPECT_EQ(lazy->kernel_names(), whole.kernel_names());
    EXPECT_EQ(lazy->func_names(), whole.func_names());
    std::vector<std::string> names = whole.kernel_names();
    for (const std::string& f : whole.func_names()) names.push_back(f);
    for (const std::string& name : names) {
      const ast::FunctionDef* a = lazy->function(name);
      const ast::FunctionDef* b = whole.function(name);
      ASSERT_NE(a, nullptr) << name;
      EXPECT_EQ(a->loc.line, b->loc.line) << name;
      EXPECT_EQ(a->loc.col, b->loc.col) << name;
      EXPECT_EQ(a->params.size(), b->params.size()) << name;
      EXPECT_EQ(a->body.size(), b->body.size()) << name;
      EXPECT_EQ(lazy->source_of(*a).line(a->loc.line), whole.source_of(*b).line(b->loc.line));
    }
  }
  EXPECT_GT(files, 5);
}

}  // namespace
}  // namespace tack::lang
