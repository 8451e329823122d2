#include "frontend/parse/parse.h"

#include "frontend/lex/lexer.h"
#include "frontend/parse/parser.hpp"

namespace tessera {

namespace {

NodeId run_parser(const TokenizedBuffer& tokens, Ast& ast, ValueStores& values, DiagnosticEngine& diags,
                  parse::StartSymbol start) {
  parse::ParserContext context(tokens, ast, values, diags, start);
  parse::Parser parser(context);
  int status = parser.parse();
  return status == 0 ? context.result : NodeId{};
}

}  // namespace

NodeId parse_file(const TokenizedBuffer& tokens, Ast& ast, ValueStores& values, DiagnosticEngine& diags) {
  ast.reserve(ast.size() + tokens.size());  // roughly one node per token
  NodeId module = run_parser(tokens, ast, values, diags, parse::StartSymbol::File);
  if (!module.valid()) {
    // The parser gave up (an error it could not recover from): keep an empty
    // module so that later phases and dumps still have a root.
    SourceRange whole{tokens.size() ? tokens.tokens().front().range.begin : 0,
                      tokens.size() ? tokens.tokens().back().range.end : 0};
    internal_check(diags.has_errors(), "parse", "parser failed without reporting an error");
    module = ast.add(NodeKind::Module, whole);
  }
  ast.set_root(module);
  return module;
}

NodeId parse_type_fragment(SourceRange range, Ast& ast, ValueStores& values, DiagnosticEngine& diags) {
  TokenizedBuffer tokens = lex_fragment(range, diags.sources(), values, diags);
  return run_parser(tokens, ast, values, diags, parse::StartSymbol::Type);
}

NodeId parse_expression_fragment(SourceRange range, Ast& ast, ValueStores& values, DiagnosticEngine& diags) {
  TokenizedBuffer tokens = lex_fragment(range, diags.sources(), values, diags);
  return run_parser(tokens, ast, values, diags, parse::StartSymbol::Expression);
}

ParsedFile lex_and_parse(FileId file, const SourceManager& sources, ValueStores& values, DiagnosticEngine& diags) {
  ParsedFile parsed{lex_file(file, sources, values, diags), Ast(), NodeId{}};
  parsed.module = parse_file(parsed.tokens, parsed.ast, values, diags);
  return parsed;
}

}  // namespace tessera
