#include <doctest/doctest.h>

#include "frontend/lex/lexer.h"
#include "frontend/parse/parse.h"

namespace tessera {
namespace {

struct Parsed {
  SourceManager sources;
  CollectingDiagnosticConsumer consumer;
  DiagnosticEngine diags{sources, consumer};
  ValueStores values;
  FileId file;
  std::optional<ParsedFile> parsed;

  explicit Parsed(std::string text) {
    file = sources.add_file("t.tsr", std::move(text));
    parsed.emplace(lex_and_parse(file, sources, values, diags));
    diags.flush();
  }
  const Ast& ast() const { return parsed->ast; }
  NodeId statement(size_t i) const { return ast().child(parsed->module, i); }
  std::string name(NodeId id) const {
    return std::string(values.identifiers.name(IdentifierId{ast().node(id).payload}));
  }
};

TEST_CASE("a kernel parses into FunctionDef with decorators, parameters and body") {
  Parsed p("@kernel\ndef k(x: f32[n], y: mut f32[n]):\n    y[0] = x[0]\n");
  CHECK(p.consumer.diagnostics.empty());
  NodeId def = p.statement(0);
  REQUIRE(p.ast().kind(def) == NodeKind::FunctionDef);
  CHECK(p.name(def) == "k");
  auto children = p.ast().children(def);
  CHECK(p.ast().kind(children[0]) == NodeKind::Decorators);
  CHECK(p.ast().children(children[0]).size() == 1);
  CHECK(p.ast().children(children[1]).size() == 2);
  CHECK_FALSE(children[2].valid());  // no return type
  NodeId y = p.ast().child(children[1], 1);
  CHECK(p.ast().kind(p.ast().child(y, 0)) == NodeKind::MutType);
  // The function's range starts at the decorator and ends at the last statement.
  CHECK(p.sources.presumed(p.ast().range(def).begin).line == 1);
  CHECK(p.sources.presumed(p.ast().range(def).end).line == 3);
}

TEST_CASE("without decorators a function's range starts at 'def'") {
  Parsed p("x = 1\ndef f(a):\n    return a\n");
  NodeId def = p.statement(1);
  CHECK(p.sources.presumed(p.ast().range(def).begin).line == 2);
  CHECK(p.sources.presumed(p.ast().range(def).begin).column == 1);
}

TEST_CASE("binary operators follow Python precedence") {
  Parsed p("r = a + b * c ** -d\n");
  NodeId value = p.ast().child(p.statement(0), 1);
  REQUIRE(p.ast().kind(value) == NodeKind::BinaryOp);
  CHECK(static_cast<BinaryOperator>(p.ast().node(value).op) == BinaryOperator::Add);
  NodeId product = p.ast().child(value, 1);
  CHECK(static_cast<BinaryOperator>(p.ast().node(product).op) == BinaryOperator::Mul);
  NodeId power = p.ast().child(product, 1);
  CHECK(static_cast<BinaryOperator>(p.ast().node(power).op) == BinaryOperator::Pow);
  CHECK(p.ast().kind(p.ast().child(power, 1)) == NodeKind::UnaryOp);
}

TEST_CASE("policies in a type subscript become PolicyType nodes") {
  Parsed p("def f(x: ts.Tensor[\"B\", ts.bf16 @accum(ts.f32) @saturate]): pass\n");
  CHECK(p.consumer.diagnostics.empty());
  NodeId parameter = p.ast().child(p.ast().child(p.statement(0), 1), 0);
  NodeId annotation = p.ast().child(parameter, 0);
  REQUIRE(p.ast().kind(annotation) == NodeKind::Subscript);
  NodeId index = p.ast().child(annotation, 1);
  REQUIRE(p.ast().kind(index) == NodeKind::Tuple);
  NodeId element = p.ast().child(index, 1);
  REQUIRE(p.ast().kind(element) == NodeKind::PolicyType);
  CHECK(p.ast().children(element).size() == 3);  // base + 2 policies
}

TEST_CASE("parse_type_fragment parses dtype strings") {
  SourceManager sources;
  CollectingDiagnosticConsumer consumer;
  DiagnosticEngine diags(sources, consumer);
  ValueStores values;
  Ast ast;
  FileId file = sources.add_file("t.tsr", "\"bf16 @accum(f32)\"");
  SourceOffset begin = sources.file_begin(file) + 1;
  NodeId type = parse_type_fragment(SourceRange{begin, begin + 16}, ast, values, diags);
  diags.flush();
  REQUIRE(type.valid());
  CHECK(ast.kind(type) == NodeKind::PolicyType);
  CHECK(consumer.diagnostics.empty());

  FileId bad = sources.add_file("u.tsr", "bf16 @@");
  NodeId none = parse_type_fragment(SourceRange{sources.file_begin(bad), sources.file_end(bad)}, ast, values, diags);
  diags.flush();
  CHECK_FALSE(none.valid());
  CHECK_FALSE(consumer.diagnostics.empty());
}

TEST_CASE("parse_expression_fragment parses one expression") {
  SourceManager sources;
  CollectingDiagnosticConsumer consumer;
  DiagnosticEngine diags(sources, consumer);
  ValueStores values;
  Ast ast;
  FileId file = sources.add_file("t.tsr", "a + 1");
  NodeId e =
      parse_expression_fragment(SourceRange{sources.file_begin(file), sources.file_end(file)}, ast, values, diags);
  REQUIRE(e.valid());
  CHECK(ast.kind(e) == NodeKind::BinaryOp);
}

TEST_CASE("syntax errors are recovered so later statements still parse") {
  Parsed p("x = (1 +)\ny = 2\nz = = 3\nw = 4\n");
  CHECK(p.diags.error_count() == 2);
  size_t statements = p.ast().children(p.parsed->module).size();
  CHECK(statements == 4);
  CHECK(p.ast().kind(p.statement(0)) == NodeKind::ErrorStmt);
  CHECK(p.ast().kind(p.statement(1)) == NodeKind::Assign);
  CHECK(p.ast().kind(p.statement(3)) == NodeKind::Assign);
}

TEST_CASE("the AST dump is stable and shows ranges") {
  Parsed p("x = 1\n");
  std::string dump = dump_ast(p.ast(), p.sources, p.values);
  CHECK(dump ==
        "Module [1:1-1:6]\n"
        "  Assign [1:1-1:6]\n"
        "    Name x [1:1-1:2]\n"
        "    IntLiteral 1 [1:5-1:6]\n");
}

}  // namespace
}  // namespace tessera
