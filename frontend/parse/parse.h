// Entry points of the parser.
#pragma once

#include "frontend/ast/ast.h"
#include "support/diagnostics/diagnostics.h"
#include "frontend/lex/tokenized_buffer.h"

namespace tessera {

// Parses a lexed file into `ast`, sets the AST's root and returns the Module
// node. Syntax errors are reported and recovered from (the module then holds
// ErrorStmt nodes); the result is always a valid Module.
NodeId parse_file(const TokenizedBuffer& tokens, Ast& ast, ValueStores& values, DiagnosticEngine& diags);

// Parses the source text in `range` (inside a loaded file) as one type with
// its policies, e.g. the contents of `dtype="bf16 @accum(f32)"`. Returns the
// invalid id after a syntax error (already reported).
NodeId parse_type_fragment(SourceRange range, Ast& ast, ValueStores& values, DiagnosticEngine& diags);

// Parses the source text in `range` as one expression (f-string fields).
NodeId parse_expression_fragment(SourceRange range, Ast& ast, ValueStores& values, DiagnosticEngine& diags);

// Lexes and parses a loaded file: the usual front half of every command.
struct ParsedFile {
  TokenizedBuffer tokens;
  Ast ast;
  NodeId module;
};
ParsedFile lex_and_parse(FileId file, const SourceManager& sources, ValueStores& values, DiagnosticEngine& diags);

}  // namespace tessera
