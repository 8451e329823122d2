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

// Helpers over the parsed tree.
struct Tree {
  const Parsed& p;
  NodeKind kind(NodeId id) const { return p.ast().kind(id); }
  NodeId child(NodeId id, size_t i) const { return p.ast().child(id, i); }
  size_t count(NodeId id) const { return p.ast().children(id).size(); }
  uint8_t op(NodeId id) const { return p.ast().node(id).op; }
  uint16_t flags(NodeId id) const { return p.ast().node(id).flags; }
  std::string name(NodeId id) const { return p.name(id); }
  // "line:col-line:col" of a node's range.
  std::string where(NodeId id) const {
    PresumedLocation b = p.sources.presumed(p.ast().range(id).begin);
    PresumedLocation e = p.sources.presumed(p.ast().range(id).end);
    return std::to_string(b.line) + ":" + std::to_string(b.column) + "-" + std::to_string(e.line) + ":" +
           std::to_string(e.column);
  }
};

// The value of `x = <expression>` in the i-th statement.
NodeId assigned_value(const Parsed& p, size_t i) {
  NodeId assign = p.statement(i);
  REQUIRE(p.ast().kind(assign) == NodeKind::Assign);
  auto children = p.ast().children(assign);
  return children[children.size() - 1];
}

TEST_CASE("parse_file sets the AST root to the Module") {
  Parsed p("x = 1\n");
  CHECK(p.ast().root() == p.parsed->module);
  CHECK(p.ast().kind(p.parsed->module) == NodeKind::Module);
  Parsed empty("");
  CHECK(empty.ast().kind(empty.parsed->module) == NodeKind::Module);
  CHECK(empty.ast().children(empty.parsed->module).empty());
  CHECK(empty.consumer.diagnostics.empty());
}

TEST_CASE("imports") {
  Parsed p("import tessera as ts, numpy\nfrom tessera import dist, op as o\n");
  Tree t{p};
  REQUIRE(p.consumer.diagnostics.empty());
  NodeId import = p.statement(0);
  REQUIRE(t.kind(import) == NodeKind::Import);
  REQUIRE(t.count(import) == 2);
  NodeId first = t.child(import, 0);
  CHECK(t.kind(first) == NodeKind::ImportAlias);
  CHECK(t.name(first) == "ts");
  CHECK(t.name(t.child(first, 0)) == "tessera");
  CHECK(p.ast().node(t.child(import, 1)).payload == UINT32_MAX);  // no `as`
  NodeId from = p.statement(1);
  REQUIRE(t.kind(from) == NodeKind::ImportFrom);
  REQUIRE(t.count(from) == 3);
  CHECK(t.name(t.child(from, 0)) == "tessera");
  CHECK(t.name(t.child(t.child(from, 1), 0)) == "dist");
  CHECK(t.name(t.child(from, 2)) == "o");
}

TEST_CASE("decorators: several per line, calls, seed clauses") {
  Parsed p(
      "@jit @autodiff\n@kernel tile[(128,)] shared(16_KiB)\n@kernel.autotune(space=dict(BM=[128]))\n"
      "def f():\n    pass\n");
  Tree t{p};
  REQUIRE(p.consumer.diagnostics.empty());
  NodeId decorators = t.child(p.statement(0), 0);
  REQUIRE(t.count(decorators) == 4);
  CHECK(t.name(t.child(t.child(decorators, 0), 0)) == "jit");
  CHECK(t.name(t.child(t.child(decorators, 1), 0)) == "autodiff");
  NodeId seed = t.child(decorators, 2);
  REQUIRE(t.count(seed) == 3);  // head + two clauses
  CHECK(t.kind(t.child(seed, 1)) == NodeKind::Subscript);
  CHECK(t.kind(t.child(seed, 2)) == NodeKind::Call);
  NodeId autotune = t.child(t.child(decorators, 3), 0);
  CHECK(t.kind(autotune) == NodeKind::Call);
  CHECK(t.kind(t.child(autotune, 0)) == NodeKind::Attribute);
}

TEST_CASE("parameters: kinds, annotations and defaults") {
  Parsed p("def f(a: i32, b=1, *args, c, d: f32 = 2.0, **kw) -> f32:\n    return a\n");
  Tree t{p};
  REQUIRE(p.consumer.diagnostics.empty());
  NodeId def = p.statement(0);
  NodeId params = t.child(def, 1);
  REQUIRE(t.count(params) == 6);
  auto kind = [&](size_t i) { return static_cast<ParameterKind>(t.op(t.child(params, i))); };
  CHECK(kind(0) == ParameterKind::Normal);
  CHECK(kind(1) == ParameterKind::Normal);
  CHECK(kind(2) == ParameterKind::VarPositional);
  CHECK(kind(3) == ParameterKind::KeywordOnly);
  CHECK(kind(4) == ParameterKind::KeywordOnly);
  CHECK(kind(5) == ParameterKind::VarKeyword);
  CHECK(t.kind(t.child(t.child(params, 0), 0)) == NodeKind::Name);  // annotation
  CHECK_FALSE(t.child(t.child(params, 0), 1).valid());              // no default
  CHECK(t.kind(t.child(t.child(params, 4), 1)) == NodeKind::FloatLiteral);
  CHECK(t.name(t.child(params, 5)) == "kw");
  CHECK(t.kind(t.child(def, 2)) == NodeKind::Name);  // -> f32
  CHECK(t.kind(t.child(def, 3)) == NodeKind::Suite);

  Parsed marker("def g(x, *, y): pass\n");
  Tree m{marker};
  NodeId ps = m.child(marker.statement(0), 1);
  REQUIRE(m.count(ps) == 3);
  CHECK(static_cast<ParameterKind>(m.op(m.child(ps, 1))) == ParameterKind::KeywordMarker);
  CHECK(marker.ast().node(m.child(ps, 1)).payload == UINT32_MAX);
  CHECK(static_cast<ParameterKind>(m.op(m.child(ps, 2))) == ParameterKind::KeywordOnly);
}

TEST_CASE("class, type alias, if/elif/else, for, while, with") {
  Parsed p(
      "class C(B):\n    x = 1\n"
      "type V = f32[n]\n"
      "if a:\n    pass\nelif b:\n    pass\nelse:\n    pass\n"
      "for i, j in r:\n    break\n"
      "while c:\n    continue\n"
      "with a(1), b() as z:\n    pass\n");
  Tree t{p};
  REQUIRE(p.consumer.diagnostics.empty());
  NodeId cls = p.statement(0);
  REQUIRE(t.kind(cls) == NodeKind::ClassDef);
  CHECK(t.name(cls) == "C");
  CHECK(t.kind(t.child(cls, 1)) == NodeKind::Tuple);

  NodeId alias = p.statement(1);
  REQUIRE(t.kind(alias) == NodeKind::TypeAlias);
  CHECK(t.name(alias) == "V");
  CHECK(t.kind(t.child(alias, 0)) == NodeKind::Subscript);

  NodeId if_ = p.statement(2);
  REQUIRE(t.kind(if_) == NodeKind::If);
  NodeId elif = t.child(if_, 2);
  REQUIRE(t.kind(elif) == NodeKind::If);
  CHECK(t.kind(t.child(elif, 2)) == NodeKind::Suite);

  NodeId for_ = p.statement(3);
  REQUIRE(t.kind(for_) == NodeKind::For);
  CHECK(t.kind(t.child(for_, 0)) == NodeKind::Tuple);
  CHECK(t.kind(t.child(t.child(for_, 2), 0)) == NodeKind::Break);

  NodeId while_ = p.statement(4);
  REQUIRE(t.kind(while_) == NodeKind::While);
  CHECK(t.kind(t.child(t.child(while_, 1), 0)) == NodeKind::Continue);

  NodeId with = p.statement(5);
  REQUIRE(t.kind(with) == NodeKind::With);
  REQUIRE(t.count(with) == 3);  // two items and the body
  CHECK_FALSE(t.child(t.child(with, 0), 1).valid());
  CHECK(t.name(t.child(t.child(with, 1), 1)) == "z");
  CHECK(t.kind(t.child(with, 2)) == NodeKind::Suite);
}

TEST_CASE("assignments: tuple, chained, augmented, annotated") {
  Parsed p("s0, s1 = s1, s0\na = b = 0\nx += 1\ny @= m\nz: f32 = 1.0\nw: f16\n");
  Tree t{p};
  REQUIRE(p.consumer.diagnostics.empty());
  NodeId swap = p.statement(0);
  REQUIRE(t.count(swap) == 2);
  CHECK(t.kind(t.child(swap, 0)) == NodeKind::Tuple);
  CHECK(t.kind(t.child(swap, 1)) == NodeKind::Tuple);
  CHECK(t.count(p.statement(1)) == 3);  // two targets and the value
  CHECK(t.kind(p.statement(2)) == NodeKind::AugAssign);
  CHECK(static_cast<BinaryOperator>(t.op(p.statement(2))) == BinaryOperator::Add);
  CHECK(static_cast<BinaryOperator>(t.op(p.statement(3))) == BinaryOperator::MatMul);
  NodeId ann = p.statement(4);
  REQUIRE(t.kind(ann) == NodeKind::AnnAssign);
  CHECK(t.kind(t.child(ann, 2)) == NodeKind::FloatLiteral);
  CHECK_FALSE(t.child(p.statement(5), 2).valid());
}

TEST_CASE("one-line suites and semicolons") {
  Parsed p("if i < s: smem[i] += smem[i + s]\nx = 1; y = 2;\n");
  Tree t{p};
  REQUIRE(p.consumer.diagnostics.empty());
  NodeId then = t.child(p.statement(0), 1);
  REQUIRE(t.kind(then) == NodeKind::Suite);
  CHECK(t.kind(t.child(then, 0)) == NodeKind::AugAssign);
  CHECK(p.ast().children(p.parsed->module).size() == 3);
}

TEST_CASE("precedence: unary minus, power, not, comparisons, conditional, lambda") {
  Parsed p(
      "a = -x**2\nb = not a == b\nc = a < b < c\nd = (a < b) < c\ne = a if c else b\n"
      "f = lambda x, y=1: x\ng = a or b and c\n");
  Tree t{p};
  REQUIRE(p.consumer.diagnostics.empty());
  NodeId neg = assigned_value(p, 0);
  REQUIRE(t.kind(neg) == NodeKind::UnaryOp);
  CHECK(static_cast<UnaryOperator>(t.op(neg)) == UnaryOperator::Neg);
  CHECK(static_cast<BinaryOperator>(t.op(t.child(neg, 0))) == BinaryOperator::Pow);

  NodeId not_ = assigned_value(p, 1);
  CHECK(static_cast<UnaryOperator>(t.op(not_)) == UnaryOperator::Not);
  CHECK(t.kind(t.child(not_, 0)) == NodeKind::Compare);

  NodeId chain = assigned_value(p, 2);
  CHECK((t.flags(chain) & 1) == 1);
  CHECK(t.kind(t.child(chain, 0)) == NodeKind::Compare);
  NodeId grouped = assigned_value(p, 3);
  CHECK((t.flags(grouped) & 1) == 0);

  NodeId ifexp = assigned_value(p, 4);
  REQUIRE(t.kind(ifexp) == NodeKind::IfExp);
  CHECK(t.name(t.child(ifexp, 0)) == "c");  // condition first
  CHECK(t.name(t.child(ifexp, 1)) == "a");
  CHECK(t.name(t.child(ifexp, 2)) == "b");

  NodeId lambda = assigned_value(p, 5);
  REQUIRE(t.kind(lambda) == NodeKind::Lambda);
  CHECK(t.count(t.child(lambda, 0)) == 2);
  CHECK(t.kind(t.child(lambda, 1)) == NodeKind::Name);

  NodeId bools = assigned_value(p, 6);
  CHECK(static_cast<BoolOperator>(t.op(bools)) == BoolOperator::Or);
  CHECK(static_cast<BoolOperator>(t.op(t.child(bools, 1))) == BoolOperator::And);
}

TEST_CASE("calls, keyword arguments, subscripts, slices, generic call") {
  Parsed p(
      "a = f(x, k=1, *r, **kw)\nb = A[:, k0:k0+BK]\nc = x[::2]\n"
      "d = tshared.alloc[f16](BM, BK, swizzle=\"xor\")\ne = cp_async.shared.global(s1, X[t:t+128])\n");
  Tree t{p};
  REQUIRE(p.consumer.diagnostics.empty());
  NodeId call = assigned_value(p, 0);
  REQUIRE(t.count(call) == 5);
  CHECK(t.kind(t.child(call, 2)) == NodeKind::KeywordArgument);
  CHECK(t.name(t.child(call, 2)) == "k");
  CHECK(t.kind(t.child(call, 3)) == NodeKind::StarArgument);
  CHECK(t.kind(t.child(call, 4)) == NodeKind::DoubleStarArgument);

  NodeId index = t.child(assigned_value(p, 1), 1);
  REQUIRE(t.kind(index) == NodeKind::Tuple);
  CHECK(t.kind(t.child(index, 0)) == NodeKind::Slice);
  CHECK_FALSE(t.child(t.child(index, 0), 0).valid());
  CHECK(t.kind(t.child(t.child(index, 1), 1)) == NodeKind::BinaryOp);

  NodeId step = t.child(assigned_value(p, 2), 1);
  REQUIRE(t.kind(step) == NodeKind::Slice);
  CHECK_FALSE(t.child(step, 0).valid());
  CHECK_FALSE(t.child(step, 1).valid());
  CHECK(t.kind(t.child(step, 2)) == NodeKind::IntLiteral);

  NodeId generic = assigned_value(p, 3);
  REQUIRE(t.kind(generic) == NodeKind::Call);
  CHECK(t.kind(t.child(generic, 0)) == NodeKind::Subscript);
  CHECK(t.count(generic) == 4);

  NodeId keyword_attr = t.child(assigned_value(p, 4), 0);
  CHECK(t.name(keyword_attr) == "global");
  CHECK(t.name(t.child(keyword_attr, 0)) == "shared");
}

TEST_CASE("displays and comprehensions") {
  Parsed p("a = [1, 2]\nb = (1,)\nc = {\"k\": 1}\nd = [i for i in r if i if j]\ne = sum(x for x in y)\n");
  Tree t{p};
  REQUIRE(p.consumer.diagnostics.empty());
  CHECK(t.kind(assigned_value(p, 0)) == NodeKind::List);
  CHECK(t.kind(assigned_value(p, 1)) == NodeKind::Tuple);
  NodeId dict = assigned_value(p, 2);
  REQUIRE(t.kind(dict) == NodeKind::Dict);
  CHECK(t.kind(t.child(dict, 0)) == NodeKind::DictEntry);
  NodeId comp = assigned_value(p, 3);
  REQUIRE(t.kind(comp) == NodeKind::ListComp);
  NodeId clause = t.child(comp, 1);
  REQUIRE(t.kind(clause) == NodeKind::Comprehension);
  CHECK(t.count(clause) == 4);  // target, iterable, two conditions
  CHECK(t.kind(t.child(assigned_value(p, 4), 1)) == NodeKind::GeneratorExp);
}

TEST_CASE("strings: concatenation and f-strings") {
  Parsed p("a = 'x' \"y\"\nb = f'cuda:{i!r:>3}' 'z'\n");
  Tree t{p};
  REQUIRE(p.consumer.diagnostics.empty());
  NodeId joined = assigned_value(p, 0);
  REQUIRE(t.kind(joined) == NodeKind::StringLiteral);
  CHECK(p.values.strings[p.ast().node(joined).payload] == "xy");
  NodeId fstring = assigned_value(p, 1);
  REQUIRE(t.kind(fstring) == NodeKind::FString);
  REQUIRE(t.count(fstring) == 3);
  CHECK(t.kind(t.child(fstring, 0)) == NodeKind::FStringText);
  NodeId field = t.child(fstring, 1);
  REQUIRE(t.kind(field) == NodeKind::FormattedValue);
  CHECK(t.op(field) == 'r');
  CHECK(p.values.strings[p.ast().node(field).payload] == ">3");
  CHECK(t.name(t.child(field, 0)) == "i");
  CHECK(t.where(t.child(field, 0)) == "2:13-2:14");  // the field's own position
  CHECK(t.kind(t.child(fstring, 2)) == NodeKind::FStringText);
}

TEST_CASE("types: mut, policies at top level and in Tensor[...], ? dimensions") {
  Parsed p(
      "def f(a: mut f16[M, ?], b: fp8_e4m3 @accum(f32) @stochastic_round,\n"
      "      c: ts.Tensor[\"B\", fp6 @accum(fp32)]) -> bf16 @accum(f32):\n    pass\n");
  Tree t{p};
  REQUIRE(p.consumer.diagnostics.empty());
  NodeId def = p.statement(0);
  NodeId params = t.child(def, 1);
  NodeId a = t.child(t.child(params, 0), 0);
  REQUIRE(t.kind(a) == NodeKind::MutType);
  NodeId dims = t.child(t.child(a, 0), 1);
  CHECK(t.kind(t.child(dims, 1)) == NodeKind::DynamicDim);

  NodeId b = t.child(t.child(params, 1), 0);
  REQUIRE(t.kind(b) == NodeKind::PolicyType);
  REQUIRE(t.count(b) == 3);
  CHECK(t.name(t.child(b, 0)) == "fp8_e4m3");
  CHECK(t.kind(t.child(b, 1)) == NodeKind::Policy);
  CHECK(t.kind(t.child(t.child(b, 1), 0)) == NodeKind::Call);
  CHECK(t.name(t.child(t.child(b, 2), 0)) == "stochastic_round");

  NodeId c = t.child(t.child(params, 2), 0);
  NodeId element = t.child(t.child(c, 1), 1);
  CHECK(t.kind(element) == NodeKind::PolicyType);

  CHECK(t.kind(t.child(def, 2)) == NodeKind::PolicyType);

  // Outside a type, '@' is a matrix product.
  Parsed e("x = a @ accum(f32)\n");
  Tree u{e};
  NodeId product = assigned_value(e, 0);
  REQUIRE(u.kind(product) == NodeKind::BinaryOp);
  CHECK(static_cast<BinaryOperator>(u.op(product)) == BinaryOperator::MatMul);
}

TEST_CASE("node ranges") {
  Parsed p("@kernel\ndef k(x: f32[n]):\n    y = x[0] + 1\n");
  Tree t{p};
  NodeId def = p.statement(0);
  CHECK(t.where(def) == "1:1-3:17");
  CHECK(t.where(t.child(def, 1)) == "2:6-2:17");
  NodeId assign = t.child(t.child(def, 3), 0);
  CHECK(t.where(assign) == "3:5-3:17");
  CHECK(t.where(t.child(assign, 1)) == "3:9-3:17");
}

TEST_CASE("parse_type_fragment on \"bf16 @accum(f32)\" gives a PolicyType") {
  SourceManager sources;
  CollectingDiagnosticConsumer consumer;
  DiagnosticEngine diags(sources, consumer);
  ValueStores values;
  Ast ast;
  FileId file = sources.add_file("t.tsr", "bf16 @accum(f32)");
  NodeId type = parse_type_fragment(SourceRange{sources.file_begin(file), sources.file_end(file)}, ast, values, diags);
  diags.flush();
  REQUIRE(type.valid());
  CHECK(consumer.diagnostics.empty());
  REQUIRE(ast.kind(type) == NodeKind::PolicyType);
  REQUIRE(ast.children(type).size() == 2);
  NodeId base = ast.child(type, 0);
  CHECK(ast.kind(base) == NodeKind::Name);
  CHECK(values.identifiers.name(IdentifierId{ast.node(base).payload}) == "bf16");
  NodeId policy = ast.child(type, 1);
  REQUIRE(ast.kind(policy) == NodeKind::Policy);
  NodeId call = ast.child(policy, 0);
  REQUIRE(ast.kind(call) == NodeKind::Call);
  CHECK(values.identifiers.name(IdentifierId{ast.node(ast.child(call, 0)).payload}) == "accum");
  CHECK(ast.range(type).begin == sources.file_begin(file));
}

TEST_CASE("parse_type_fragment: plain and mut types, and errors at the end of the type") {
  SourceManager sources;
  CollectingDiagnosticConsumer consumer;
  DiagnosticEngine diags(sources, consumer);
  ValueStores values;
  Ast ast;
  FileId plain = sources.add_file("a.tsr", "f32");
  NodeId type =
      parse_type_fragment(SourceRange{sources.file_begin(plain), sources.file_end(plain)}, ast, values, diags);
  REQUIRE(type.valid());
  CHECK(ast.kind(type) == NodeKind::Name);
  FileId mut = sources.add_file("b.tsr", "mut f16[n]");
  type = parse_type_fragment(SourceRange{sources.file_begin(mut), sources.file_end(mut)}, ast, values, diags);
  REQUIRE(type.valid());
  CHECK(ast.kind(type) == NodeKind::MutType);
  diags.flush();
  CHECK(consumer.diagnostics.empty());

  FileId bad = sources.add_file("c.tsr", "bf16 @");
  type = parse_type_fragment(SourceRange{sources.file_begin(bad), sources.file_end(bad)}, ast, values, diags);
  diags.flush();
  CHECK_FALSE(type.valid());
  REQUIRE(consumer.diagnostics.size() == 1);
  CHECK(consumer.diagnostics[0].kind == diag::ParseSyntaxError);
  CHECK(consumer.diagnostics[0].message.find("found end of the type") != std::string::npos);
}

TEST_CASE("parse_expression_fragment: one expression, errors at the end of the field") {
  SourceManager sources;
  CollectingDiagnosticConsumer consumer;
  DiagnosticEngine diags(sources, consumer);
  ValueStores values;
  Ast ast;
  FileId file = sources.add_file("t.tsr", "a if b else c");
  NodeId e =
      parse_expression_fragment(SourceRange{sources.file_begin(file), sources.file_end(file)}, ast, values, diags);
  REQUIRE(e.valid());
  CHECK(ast.kind(e) == NodeKind::IfExp);

  FileId part = sources.add_file("u.tsr", "x = f(1, 2)");
  SourceOffset begin = sources.file_begin(part) + 4;
  e = parse_expression_fragment(SourceRange{begin, begin + 7}, ast, values, diags);
  REQUIRE(e.valid());
  CHECK(ast.kind(e) == NodeKind::Call);
  CHECK(ast.range(e) == SourceRange{begin, begin + 7});

  FileId bad = sources.add_file("v.tsr", "a +");
  e = parse_expression_fragment(SourceRange{sources.file_begin(bad), sources.file_end(bad)}, ast, values, diags);
  diags.flush();
  CHECK_FALSE(e.valid());
  REQUIRE(consumer.diagnostics.size() == 1);
  CHECK(consumer.diagnostics[0].message == "expected expression, found end of the f-string field");
  CHECK(consumer.diagnostics[0].range.begin == sources.file_end(bad));
}

TEST_CASE("syntax error kinds: unexpected indent, missing block, reserved keyword") {
  Parsed indent("x = 1\n    y = 2\n");
  REQUIRE(indent.consumer.diagnostics.size() == 1);
  CHECK(indent.consumer.diagnostics[0].kind == diag::ParseUnexpectedIndent);

  Parsed block("def f():\nreturn 1\n");
  REQUIRE(block.consumer.diagnostics.size() == 1);
  CHECK(block.consumer.diagnostics[0].kind == diag::ParseExpectedIndentedBlock);

  Parsed reserved("yield x\n");
  REQUIRE(reserved.consumer.diagnostics.size() == 1);
  CHECK(reserved.consumer.diagnostics[0].kind == diag::ParseUnsupportedKeyword);
  CHECK(reserved.consumer.diagnostics[0].message ==
        "'yield' is a reserved Python keyword that Tessera does not support");
}

TEST_CASE("checks made in actions: targets, parameters, keywords, policies") {
  Parsed p(
      "f() = 1\ndef g(a, a): pass\nh(k=1, k=2)\nh(k=1, 2)\nh(x.y=1)\ndef i(a=1, b): pass\n"
      "def j(*a, *b): pass\ndef k(*): pass\ndef l(**kw, a): pass\nprint x\ndef m(a: f32 @ 3): pass\n");
  std::vector<DiagnosticKind> kinds;
  for (const Diagnostic& d : p.consumer.diagnostics) kinds.push_back(d.kind);
  CHECK(kinds == std::vector<DiagnosticKind>{diag::ParseInvalidAssignmentTarget, diag::ParseDuplicateParameter,
                                             diag::ParseDuplicateKeywordArgument, diag::ParsePositionalAfterKeyword,
                                             diag::ParseInvalidKeywordArgument, diag::ParseNonDefaultAfterDefault,
                                             diag::ParseDuplicateStarParameter, diag::ParseBareStarWithoutNamed,
                                             diag::ParseParameterAfterKwargs, diag::ParseJuxtaposedNames,
                                             diag::ParseInvalidPolicy});
  REQUIRE(p.consumer.diagnostics.size() >= 3);
  CHECK(p.consumer.diagnostics[1].notes.size() == 1);  // first appears here
  CHECK(p.consumer.diagnostics[2].notes.size() == 1);
}

TEST_CASE("recovery: a bad line becomes an ErrorStmt, a bad block header skips its block") {
  Parsed p("a = (1 +)\ndef f(x)\n    return x\nb = 2\n");
  Tree t{p};
  CHECK(p.diags.error_count() == 2);
  REQUIRE(p.ast().children(p.parsed->module).size() == 3);
  CHECK(t.kind(p.statement(0)) == NodeKind::ErrorStmt);
  CHECK(t.kind(p.statement(1)) == NodeKind::ErrorStmt);
  CHECK(t.kind(p.statement(2)) == NodeKind::Assign);
  CHECK(t.where(p.statement(2)) == "4:1-4:6");
}

TEST_CASE("recovery: the ErrorStmt of a bad def starts at 'def'") {
  Parsed p("a = 1\n\ndef f(x)\n    return x\n");
  Tree t{p};
  REQUIRE(t.kind(p.statement(1)) == NodeKind::ErrorStmt);
  CHECK(t.where(p.statement(1)).substr(0, 4) == "3:1-");
}

TEST_CASE("recovery: an error on the line after an error is reported") {
  Parsed p("u = 2 3\nfor in x:\n    pass\n");
  CHECK(p.diags.error_count() == 2);
}

TEST_CASE("an augmented assignment to a tuple is an error") {
  Parsed p("a, b += 1\n");
  REQUIRE(p.consumer.diagnostics.size() == 1);
  CHECK(p.consumer.diagnostics[0].kind == diag::ParseInvalidAssignmentTarget);
}

TEST_CASE("an annotated assignment to a tuple is an error") {
  Parsed p("a, b: i32 = 1, 2\n");
  REQUIRE(p.consumer.diagnostics.size() == 1);
  CHECK(p.consumer.diagnostics[0].kind == diag::ParseInvalidAnnotationTarget);
}

TEST_CASE("the tree is never deeper than the nesting limit") {
  std::string deep = "x = " + std::string(2 * kMaxNestingDepth, '-') + "1\n";
  Parsed p(deep);
  REQUIRE(p.consumer.diagnostics.size() == 1);
  CHECK(p.consumer.diagnostics[0].kind == diag::ParseNestingTooDeep);
  Parsed fits("x = " + std::string(kMaxNestingDepth - 10, '-') + "1\n");
  CHECK(fits.consumer.diagnostics.empty());
}

}  // namespace
}  // namespace tessera
