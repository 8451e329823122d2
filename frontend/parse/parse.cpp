#include "frontend/parse/parse.h"

#include "support/diagnostics/internal_error.h"
#include "frontend/lex/lexer.h"
#include "frontend/parse/parser_context.h"

namespace tessera {

namespace {

// The nesting limit (Ast::add) is checked while nodes are made; report the
// first place it cut off, if any.
void report_nesting_limit(Ast& ast, DiagnosticEngine& diags) {
  if (std::optional<SourceRange> range = ast.take_too_deep()) {
    diags.emit<diag::ParseNestingTooDeep>(*range, static_cast<unsigned>(kMaxNestingDepth));
  }
}

NodeId run_parser(const TokenizedBuffer& tokens, Ast& ast, ValueStores& values, DiagnosticEngine& diags,
                  parse::StartSymbol start) {
  // Most inputs are well formed: parse them with the fast parser, holding back
  // its diagnostics. If it meets a syntax error, drop its work and parse again
  // with the checked parser, whose error messages list exactly the tokens that
  // could follow.
  Ast::Mark mark = ast.mark();
  CollectingDiagnosticConsumer held;
  DiagnosticOptions options = diags.options();
  options.error_limit = 0;
  DiagnosticEngine probe(diags.sources(), held, options);
  parse::ParserContext fast(tokens, ast, values, probe, start);
  int status = parse::run_fast_parser(fast);
  if (status == 0 && fast.syntax_errors == 0 && !probe.has_errors()) {
    probe.flush();
    for (Diagnostic& d : held.diagnostics) diags.report(std::move(d));
    report_nesting_limit(ast, diags);
    return fast.result;
  }
  ast.rollback(mark);
  parse::ParserContext checked(tokens, ast, values, diags, start);
  status = parse::run_checked_parser(checked);
  report_nesting_limit(ast, diags);
  return status == 0 ? checked.result : NodeId{};
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
