// The lexer: source text -> TokenizedBuffer.
//
// Python's layout rules: a logical line ends with a Newline token; a deeper
// indentation opens an Indent, a shallower one closes Dedents; blank and
// comment-only lines are ignored; inside (), [] and {} line breaks and
// indentation do not count; a backslash at the end of a line joins it with the
// next. Tabs in indentation are rejected (elsewhere they are whitespace). A
// rejected character becomes an Invalid token. The token stream always ends with a
// Newline (when the file holds any token), the Dedents that close open blocks,
// and EndOfFile. Lexical errors are diagnostics; lexing continues after them.
//
// Implementation: the raw token shapes are matched by a re2c scanner
// (lexer.re); layout, strings, numbers and brackets are handled around it.
#pragma once

#include "support/diagnostics/diagnostics.h"
#include "frontend/lex/tokenized_buffer.h"
#include "frontend/lex/value_stores.h"

namespace tessera {

TokenizedBuffer lex_file(FileId file, const SourceManager& sources, ValueStores& values, DiagnosticEngine& diags);

// Lexes the source text in `range` (part of a loaded file) as a bracketed
// fragment: no layout tokens, just the tokens and EndOfFile. Used for
// f-string expressions and dtype strings; offsets stay those of the file.
TokenizedBuffer lex_fragment(SourceRange range, const SourceManager& sources, ValueStores& values,
                             DiagnosticEngine& diags);

}  // namespace tessera
