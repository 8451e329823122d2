// re2c input for the Tessera lexer; see lexer.h for the rules it implements.
#include "frontend/lex/lexer.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include "support/diagnostics/internal_error.h"

namespace tessera {
namespace {

// What the re2c scanner recognised at the cursor.
enum class Raw : uint8_t {
  Punct,           // kind in `punct`
  Keyword,         // kind in `punct`
  Whitespace,
  Comment,
  Newline,
  Continuation,    // backslash + line break
  StrayBackslash,
  Identifier,
  Decimal,
  Hex,
  Octal,
  Binary,
  Float,
  MissingDigits,   // "0x" with no digits
  StringStart,     // optional prefix and the opening quote
  NonAscii,
  Nul,
};

struct ScanResult {
  Raw raw;
  TokenKind punct = TokenKind::EndOfFile;
};

// Scans one raw token starting at `cursor` and advances it. The buffer must
// end with a NUL byte (std::string guarantees one).
ScanResult scan_raw(const char*& cursor) {
  const char* marker = nullptr;
  (void)marker;
  /*!re2c
    re2c:define:YYCTYPE = "unsigned char";
    re2c:define:YYCURSOR = cursor;
    re2c:define:YYMARKER = marker;
    re2c:yyfill:enable = 0;
    re2c:indent:string = "  ";

    digit = [0-9];
    dec = digit ("_"? digit)*;
    hex = "0" [xX] ("_"? [0-9a-fA-F])+;
    oct = "0" [oO] ("_"? [0-7])+;
    bin = "0" [bB] ("_"? [01])+;
    exponent = [eE] [+-]? dec;
    float = dec "." dec? exponent? | "." dec exponent? | dec exponent;
    string_prefix = [rR] | [fF] | [uU] | [rR][fF] | [fF][rR];
    // A comment holds ASCII other than NUL and line breaks, and well-formed
    // UTF-8 sequences; the first byte that is neither ends the match, and
    // lex_comment reports it and skips the rest of the line.
    utf8_tail = [\x80-\xbf];
    utf8_multibyte = [\xc2-\xdf] utf8_tail
                   | "\xe0" [\xa0-\xbf] utf8_tail
                   | [\xe1-\xec\xee\xef] utf8_tail utf8_tail
                   | "\xed" [\x80-\x9f] utf8_tail
                   | "\xf0" [\x90-\xbf] utf8_tail utf8_tail
                   | [\xf1-\xf3] utf8_tail utf8_tail utf8_tail
                   | "\xf4" [\x80-\x8f] utf8_tail utf8_tail;

    "\x00"                    { return {Raw::Nul}; }
    // Tabs between tokens are whitespace; in indentation they are an error
    // (handle_line_start).
    [ \t\f]+                  { return {Raw::Whitespace}; }
    "#" ([^\r\n\x00\x80-\xff] | utf8_multibyte)* { return {Raw::Comment}; }
    "\r\n" | "\n" | "\r"      { return {Raw::Newline}; }
    "\\" ("\r\n" | "\n" | "\r") { return {Raw::Continuation}; }
    "\\"                      { return {Raw::StrayBackslash}; }
    string_prefix? ['"]       { return {Raw::StringStart}; }

    // Keywords, as listed in token_kind.def (keep the two in step; the lexer
    // unit test checks every keyword). Longest match keeps `define` an
    // identifier; listed before the identifier rule, they win ties.
    "and"       { return {Raw::Keyword, TokenKind::KwAnd}; }
    "as"        { return {Raw::Keyword, TokenKind::KwAs}; }
    "assert"    { return {Raw::Keyword, TokenKind::KwAssert}; }
    "break"     { return {Raw::Keyword, TokenKind::KwBreak}; }
    "class"     { return {Raw::Keyword, TokenKind::KwClass}; }
    "continue"  { return {Raw::Keyword, TokenKind::KwContinue}; }
    "def"       { return {Raw::Keyword, TokenKind::KwDef}; }
    "elif"      { return {Raw::Keyword, TokenKind::KwElif}; }
    "else"      { return {Raw::Keyword, TokenKind::KwElse}; }
    "False"     { return {Raw::Keyword, TokenKind::KwFalse}; }
    "for"       { return {Raw::Keyword, TokenKind::KwFor}; }
    "from"      { return {Raw::Keyword, TokenKind::KwFrom}; }
    "if"        { return {Raw::Keyword, TokenKind::KwIf}; }
    "import"    { return {Raw::Keyword, TokenKind::KwImport}; }
    "in"        { return {Raw::Keyword, TokenKind::KwIn}; }
    "is"        { return {Raw::Keyword, TokenKind::KwIs}; }
    "lambda"    { return {Raw::Keyword, TokenKind::KwLambda}; }
    "mut"       { return {Raw::Keyword, TokenKind::KwMut}; }
    "None"      { return {Raw::Keyword, TokenKind::KwNone}; }
    "not"       { return {Raw::Keyword, TokenKind::KwNot}; }
    "or"        { return {Raw::Keyword, TokenKind::KwOr}; }
    "pass"      { return {Raw::Keyword, TokenKind::KwPass}; }
    "return"    { return {Raw::Keyword, TokenKind::KwReturn}; }
    "True"      { return {Raw::Keyword, TokenKind::KwTrue}; }
    "while"     { return {Raw::Keyword, TokenKind::KwWhile}; }
    "with"      { return {Raw::Keyword, TokenKind::KwWith}; }
    "async"     { return {Raw::Keyword, TokenKind::KwAsync}; }
    "await"     { return {Raw::Keyword, TokenKind::KwAwait}; }
    "del"       { return {Raw::Keyword, TokenKind::KwDel}; }
    "except"    { return {Raw::Keyword, TokenKind::KwExcept}; }
    "finally"   { return {Raw::Keyword, TokenKind::KwFinally}; }
    "global"    { return {Raw::Keyword, TokenKind::KwGlobal}; }
    "nonlocal"  { return {Raw::Keyword, TokenKind::KwNonlocal}; }
    "raise"     { return {Raw::Keyword, TokenKind::KwRaise}; }
    "try"       { return {Raw::Keyword, TokenKind::KwTry}; }
    "yield"     { return {Raw::Keyword, TokenKind::KwYield}; }

    [a-zA-Z_] [a-zA-Z_0-9]*   { return {Raw::Identifier}; }
    float                     { return {Raw::Float}; }
    hex                       { return {Raw::Hex}; }
    oct                       { return {Raw::Octal}; }
    bin                       { return {Raw::Binary}; }
    "0" [xXoObB]              { return {Raw::MissingDigits}; }
    dec                       { return {Raw::Decimal}; }

    "("   { return {Raw::Punct, TokenKind::LParen}; }
    ")"   { return {Raw::Punct, TokenKind::RParen}; }
    "["   { return {Raw::Punct, TokenKind::LBracket}; }
    "]"   { return {Raw::Punct, TokenKind::RBracket}; }
    "{"   { return {Raw::Punct, TokenKind::LBrace}; }
    "}"   { return {Raw::Punct, TokenKind::RBrace}; }
    ","   { return {Raw::Punct, TokenKind::Comma}; }
    ":"   { return {Raw::Punct, TokenKind::Colon}; }
    ";"   { return {Raw::Punct, TokenKind::Semicolon}; }
    "."   { return {Raw::Punct, TokenKind::Dot}; }
    "..." { return {Raw::Punct, TokenKind::Ellipsis}; }
    "->"  { return {Raw::Punct, TokenKind::Arrow}; }
    "?"   { return {Raw::Punct, TokenKind::Question}; }
    "="   { return {Raw::Punct, TokenKind::Equal}; }
    "@"   { return {Raw::Punct, TokenKind::At}; }
    "+"   { return {Raw::Punct, TokenKind::Plus}; }
    "-"   { return {Raw::Punct, TokenKind::Minus}; }
    "*"   { return {Raw::Punct, TokenKind::Star}; }
    "/"   { return {Raw::Punct, TokenKind::Slash}; }
    "//"  { return {Raw::Punct, TokenKind::SlashSlash}; }
    "%"   { return {Raw::Punct, TokenKind::Percent}; }
    "**"  { return {Raw::Punct, TokenKind::StarStar}; }
    "<<"  { return {Raw::Punct, TokenKind::LessLess}; }
    ">>"  { return {Raw::Punct, TokenKind::GreaterGreater}; }
    "&"   { return {Raw::Punct, TokenKind::Amp}; }
    "|"   { return {Raw::Punct, TokenKind::Pipe}; }
    "^"   { return {Raw::Punct, TokenKind::Caret}; }
    "~"   { return {Raw::Punct, TokenKind::Tilde}; }
    "<"   { return {Raw::Punct, TokenKind::Less}; }
    ">"   { return {Raw::Punct, TokenKind::Greater}; }
    "<="  { return {Raw::Punct, TokenKind::LessEqual}; }
    ">="  { return {Raw::Punct, TokenKind::GreaterEqual}; }
    "=="  { return {Raw::Punct, TokenKind::EqualEqual}; }
    "!="  { return {Raw::Punct, TokenKind::NotEqual}; }
    "+="  { return {Raw::Punct, TokenKind::PlusEqual}; }
    "-="  { return {Raw::Punct, TokenKind::MinusEqual}; }
    "*="  { return {Raw::Punct, TokenKind::StarEqual}; }
    "/="  { return {Raw::Punct, TokenKind::SlashEqual}; }
    "//=" { return {Raw::Punct, TokenKind::SlashSlashEqual}; }
    "%="  { return {Raw::Punct, TokenKind::PercentEqual}; }
    "**=" { return {Raw::Punct, TokenKind::StarStarEqual}; }
    "@="  { return {Raw::Punct, TokenKind::AtEqual}; }
    "&="  { return {Raw::Punct, TokenKind::AmpEqual}; }
    "|="  { return {Raw::Punct, TokenKind::PipeEqual}; }
    "^="  { return {Raw::Punct, TokenKind::CaretEqual}; }
    "<<=" { return {Raw::Punct, TokenKind::LessLessEqual}; }
    ">>=" { return {Raw::Punct, TokenKind::GreaterGreaterEqual}; }

    [\x80-\xff]               { return {Raw::NonAscii}; }
    *                         { return {Raw::NonAscii}; }
  */
}

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Decodes one UTF-8 sequence; returns its length, or 0 when it is invalid.
int decode_utf8(const char* p, const char* end, uint32_t& code_point) {
  auto byte = [&](int i) { return static_cast<unsigned char>(p[i]); };
  unsigned char b0 = byte(0);
  int length = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xE ? 3 : (b0 >> 3) == 0x1E ? 4 : 0;
  if (length == 0 || end - p < length) return 0;
  code_point = length == 1 ? b0 : b0 & (0x7F >> length);
  for (int i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(i) & 0x3F);
  }
  static constexpr uint32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code_point < kMinimum[length] || code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF)) {
    return 0;
  }
  return length;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

TokenKind closer_for(TokenKind opener) {
  switch (opener) {
    case TokenKind::LParen:
      return TokenKind::RParen;
    case TokenKind::LBracket:
      return TokenKind::RBracket;
    default:
      return TokenKind::RBrace;
  }
}

std::string spelling_of(TokenKind kind) {
  std::string text = token_kind_description(kind);
  return text.substr(1, text.size() - 2);  // strip the quotes of "'('"
}

class Lexer {
 public:
  Lexer(const char* begin, const char* end, SourceOffset base, bool fragment, ValueStores& values,
        DiagnosticEngine& diags, TokenizedBuffer& out)
      : begin_(begin), end_(end), cursor_(begin), base_(base), fragment_(fragment), values_(values),
        diags_(diags), out_(out) {
    // A UTF-8 byte order mark at the start of a file is ignored.
    if (!fragment_ && end_ - cursor_ >= 3 && std::string_view(cursor_, 3) == "\xEF\xBB\xBF") cursor_ += 3;
  }

  void run();

 private:
  SourceOffset offset(const char* p) const { return base_ + static_cast<SourceOffset>(p - begin_); }
  SourceRange range(const char* b, const char* e) const { return {offset(b), offset(e)}; }
  TokenKind last_kind() const { return out_.size() == 0 ? TokenKind::EndOfFile : out_.tokens().back().kind; }
  void add(TokenKind kind, const char* b, const char* e, uint32_t payload = 0) {
    out_.add(Token{kind, range(b, e), payload});
  }

  bool handle_line_start();
  void lex_comment(const char* start);
  void report_bad_byte(const char* p);
  void append_string_byte(const char*& p, std::string& text);
  void emit_newline();
  void finish();
  void lex_identifier(const char* start);
  void lex_number(Raw raw, const char* start);
  void lex_string(const char* start);
  void lex_punct(TokenKind kind, const char* start);
  void lex_non_ascii(const char* start);

  // String helpers. `quote` is ' or ", `triple` for ''' and """.
  bool at_string_end(const char* p, char quote, bool triple) const {
    if (*p != quote) return false;
    return !triple || (end_ - p >= 3 && p[1] == quote && p[2] == quote);
  }
  void decode_escape(const char*& p, std::string& out);
  void scan_fstring_field(const char*& p, char quote, bool triple, FStringValue& value);

  const char* begin_;
  const char* end_;
  const char* cursor_;
  SourceOffset base_;
  bool fragment_;
  ValueStores& values_;
  DiagnosticEngine& diags_;
  TokenizedBuffer& out_;

  // The open indentation levels. A level kept after an inconsistent dedent
  // (`opened` false) has no Indent token, so closing it emits no Dedent: the
  // lines at that column continue the enclosing block instead of each
  // opening a new one (one error for one mistake).
  struct IndentLevel {
    uint32_t column;
    bool opened;
  };
  std::vector<IndentLevel> indents_{{0, true}};
  struct OpenBracket {
    TokenKind kind;
    SourceRange range;
  };
  std::vector<OpenBracket> brackets_;
  bool at_line_start_ = true;
  bool reported_tab_ = false;
};

void Lexer::run() {
  while (true) {
    if (diags_.should_stop()) {
      cursor_ = end_;
      finish();
      return;
    }
    if (at_line_start_ && brackets_.empty() && !fragment_) {
      if (!handle_line_start()) continue;
    }
    const char* start = cursor_;
    ScanResult result = scan_raw(cursor_);
    switch (result.raw) {
      case Raw::Nul:
        if (start >= end_) {
          cursor_ = end_;
          finish();
          return;
        }
        report_bad_byte(start);
        add(TokenKind::Invalid, start, cursor_);
        break;
      case Raw::Whitespace:
        break;
      case Raw::Comment:
        lex_comment(start);
        break;
      case Raw::Newline:
        if (brackets_.empty() && !fragment_) {
          emit_newline();
          at_line_start_ = true;
        }
        break;
      case Raw::Continuation:
        break;
      case Raw::StrayBackslash:
        diags_.emit<diag::LexStrayBackslash>(range(start, cursor_));
        break;
      case Raw::Identifier:
        lex_identifier(start);
        break;
      case Raw::Keyword:
        // After '.', every word is an attribute name, keywords included
        // (cp_async.shared.global).
        if (last_kind() == TokenKind::Dot) {
          lex_identifier(start);
        } else {
          add(result.punct, start, cursor_);
        }
        break;
      case Raw::Decimal:
      case Raw::Hex:
      case Raw::Octal:
      case Raw::Binary:
      case Raw::Float:
      case Raw::MissingDigits:
        lex_number(result.raw, start);
        break;
      case Raw::StringStart:
        lex_string(start);
        break;
      case Raw::Punct:
        lex_punct(result.punct, start);
        break;
      case Raw::NonAscii:
        lex_non_ascii(start);
        break;
    }
  }
}

// Measures the indentation of a new logical line and emits Indent/Dedent.
// Returns false when the line is blank or comment-only (no layout change).
bool Lexer::handle_line_start() {
  const char* line_begin = cursor_;
  const char* p = cursor_;
  uint32_t column = 0;
  const char* first_tab = nullptr;
  for (;; ++p) {
    if (*p == ' ') {
      ++column;
    } else if (*p == '\t') {
      if (first_tab == nullptr) first_tab = p;
      column = (column / 8 + 1) * 8;
    } else if (*p == '\f') {
      column = 0;
    } else {
      break;
    }
  }
  const char* line_indent_end = p;
  cursor_ = p;
  bool blank = *p == '#' || *p == '\n' || *p == '\r' || (*p == '\0' && p >= end_);
  if (blank) {
    at_line_start_ = true;
    if (*p == '#' || *p == '\0') {
      // Leave the comment (or end of input) to the main loop.
      if (*p == '\0') return true;
      const char* comment_start = p;
      ScanResult skipped = scan_raw(cursor_);
      (void)skipped;
      lex_comment(comment_start);
    }
    if (*cursor_ == '\r' || *cursor_ == '\n') {
      cursor_ += (cursor_[0] == '\r' && cursor_[1] == '\n') ? 2 : 1;
    }
    return false;
  }
  at_line_start_ = false;
  // Reported once per file: a tab-indented file would otherwise drown in
  // one error per line. Later lines count a tab as reaching the next multiple of 8.
  if (first_tab != nullptr && !reported_tab_) {
    reported_tab_ = true;
    diags_.emit<diag::LexTabIndentation>(range(first_tab, first_tab + 1))
        .fix_it_replace(range(line_begin, line_indent_end), std::string(column, ' '));
  }
  if (column > indents_.back().column) {
    indents_.push_back({column, true});
    add(TokenKind::Indent, line_begin, line_indent_end);
  } else if (column < indents_.back().column) {
    while (column < indents_.back().column) {
      if (indents_.back().opened) add(TokenKind::Dedent, line_indent_end, line_indent_end);
      indents_.pop_back();
    }
    if (column != indents_.back().column) {
      diags_.emit<diag::LexInconsistentDedent>(range(line_indent_end, line_indent_end), column + 1);
      // Recovery: the line continues the enclosing block, and so do the
      // lines after it at the same column.
      indents_.push_back({column, false});
    }
  }
  return true;
}

// `start` is at the '#' and the scanner stopped at the end of the line, or at
// a NUL byte or a byte that is not UTF-8 (rare: checked here, off the fast
// path). Such bytes are reported and the comment goes on to the line break.
void Lexer::lex_comment(const char* start) {
  while (true) {
    unsigned char c = static_cast<unsigned char>(*cursor_);
    if (c == '\n' || c == '\r' || (c == 0 && cursor_ >= end_)) break;
    uint32_t cp = 0;
    int length = c == 0 ? 0 : decode_utf8(cursor_, end_, cp);
    if (length == 0) {
      report_bad_byte(cursor_);
      length = 1;
    }
    cursor_ += length;
  }
  out_.add_comment(range(start, cursor_));
}

// Reports the NUL byte or the byte that is not UTF-8 at `p`.
void Lexer::report_bad_byte(const char* p) {
  if (*p == '\0') {
    diags_.emit<diag::LexInvalidCharacter>(range(p, p + 1), std::string("U+0000 (NUL)"));
  } else {
    diags_.emit<diag::LexInvalidUtf8>(range(p, p + 1), static_cast<unsigned>(static_cast<unsigned char>(*p)));
  }
}

// The slow path of string scanning: `p` is at a NUL byte or a non-ASCII byte
// inside a string. A well-formed UTF-8 sequence is copied; a NUL or a byte
// that is not UTF-8 is reported and left out of the value.
void Lexer::append_string_byte(const char*& p, std::string& text) {
  uint32_t cp = 0;
  int length = *p == '\0' ? 0 : decode_utf8(p, end_, cp);
  if (length == 0) {
    report_bad_byte(p);
    ++p;
    return;
  }
  text.append(p, static_cast<size_t>(length));
  p += length;
}

void Lexer::emit_newline() {
  TokenKind last = last_kind();
  if (out_.size() == 0 || last == TokenKind::Newline || last == TokenKind::Indent || last == TokenKind::Dedent) {
    return;
  }
  // The Newline sits right after the line's last token, so that statement
  // ranges and "expected ... found end of line" carets exclude trailing comments.
  SourceOffset end = out_.tokens().back().range.end;
  out_.add(Token{TokenKind::Newline, SourceRange::at(end), 0});
}

void Lexer::finish() {
  const char* eof = end_;
  if (!brackets_.empty()) {
    const OpenBracket& outer = brackets_.front();
    std::string text = spelling_of(outer.kind);
    diags_.emit<diag::LexUnclosedBracket>(outer.range, text);
    // Close them so that the parser sees balanced brackets and can go on.
    while (!brackets_.empty()) {
      add(closer_for(brackets_.back().kind), eof, eof);
      brackets_.pop_back();
    }
  }
  if (!fragment_) {
    emit_newline();
    while (indents_.size() > 1) {
      if (indents_.back().opened) add(TokenKind::Dedent, eof, eof);
      indents_.pop_back();
    }
  }
  add(TokenKind::EndOfFile, eof, eof);
}

void Lexer::lex_identifier(const char* start) {
  std::string_view text(start, cursor_ - start);
  add(TokenKind::Identifier, start, cursor_, values_.identifiers.intern(text).index);
}

void Lexer::lex_number(Raw raw, const char* start) {
  // Any letters, digits or underscores glued to the literal are a suffix.
  const char* suffix_start = cursor_;
  while (is_identifier_char(*cursor_)) ++cursor_;
  std::string_view suffix(suffix_start, cursor_ - suffix_start);
  std::string_view literal(start, suffix_start - start);
  std::string_view whole(start, cursor_ - start);
  SourceRange whole_range = range(start, cursor_);

  auto kind_name = [&] {
    switch (raw) {
      case Raw::Hex:
        return "hexadecimal";
      case Raw::Octal:
        return "octal";
      case Raw::Binary:
        return "binary";
      case Raw::Float:
        return "floating-point";
      default:
        return "decimal";
    }
  };

  // A decimal digit that the base does not allow, glued to a binary or octal
  // literal (0b102, 0o19, 0b2, 0o_8), is an invalid digit rather than a suffix.
  bool invalid_digit = false;
  if (raw == Raw::Binary || raw == Raw::Octal || raw == Raw::MissingDigits) {
    char base_letter = static_cast<char>(start[1] | 0x20);
    const char* digit = suffix_start < cursor_ && *suffix_start == '_' ? suffix_start + 1 : suffix_start;
    if ((base_letter == 'b' || base_letter == 'o') && digit < cursor_ && *digit >= '0' && *digit <= '9') {
      diags_.emit<diag::LexInvalidDigit>(range(digit, digit + 1), std::string(1, *digit),
                                         std::string(base_letter == 'b' ? "binary" : "octal"));
      invalid_digit = true;
    }
  }

  if (raw == Raw::MissingDigits) {
    if (!invalid_digit) {
      diags_.emit<diag::LexInvalidNumber>(whole_range, std::string("integer"), std::string(whole),
                                          std::string("expected digits after the base prefix"));
    }
    add(TokenKind::IntLiteral, start, cursor_, values_.add_integer(0));
    return;
  }

  uint64_t multiplier = 1;
  if (!suffix.empty() && !invalid_digit) {
    bool underscore_problem = suffix[0] == '_' && (suffix.size() == 1 || suffix[1] == '_' ||
                                                   (suffix[1] >= '0' && suffix[1] <= '9'));
    std::string_view unit = suffix[0] == '_' ? suffix.substr(1) : suffix;
    if (underscore_problem) {
      diags_.emit<diag::LexInvalidNumber>(whole_range, std::string(kind_name()), std::string(whole),
                                          std::string("'_' may only stand between two digits"));
    } else if (raw == Raw::Decimal && (unit == "KiB" || unit == "MiB" || unit == "GiB")) {
      multiplier = unit == "KiB" ? (1ull << 10) : unit == "MiB" ? (1ull << 20) : (1ull << 30);
    } else {
      diags_.emit<diag::LexInvalidNumberSuffix>(range(suffix_start, cursor_), std::string(suffix));
    }
  }

  std::string digits;
  for (char c : literal) {
    if (c != '_') digits += c;
  }

  if (raw == Raw::Float) {
    errno = 0;
    double value = std::strtod(digits.c_str(), nullptr);
    if (std::isinf(value)) {
      diags_.emit<diag::LexFloatOutOfRange>(whole_range, std::string(literal), std::string("infinity"));
    } else if (value == 0.0 && digits.find_first_of("123456789") < digits.find_first_of("eE")) {
      diags_.emit<diag::LexFloatOutOfRange>(whole_range, std::string(literal), std::string("0.0"));
    }
    add(TokenKind::FloatLiteral, start, cursor_, values_.add_real(value));
    return;
  }

  int base = 10;
  std::string_view body = digits;
  if (raw != Raw::Decimal) {
    base = raw == Raw::Hex ? 16 : raw == Raw::Octal ? 8 : 2;
    body = body.substr(2);
  } else if (body.size() > 1 && body[0] == '0' && body.find_first_not_of('0') != std::string_view::npos) {
    diags_.emit<diag::LexInvalidNumber>(whole_range, std::string("decimal"), std::string(literal),
                                        std::string("leading zeros are not allowed; use the 0o prefix for octal"));
  }
  uint64_t value = 0;
  auto [end, error] = std::from_chars(body.data(), body.data() + body.size(), value, base);
  (void)end;
  bool too_large = error == std::errc::result_out_of_range ||
                   (multiplier > 1 && value > UINT64_MAX / multiplier);
  if (too_large) {
    diags_.emit<diag::LexIntegerTooLarge>(whole_range, std::string(whole));
    value = 0;
  }
  value *= multiplier;
  add(multiplier > 1 ? TokenKind::SizeLiteral : TokenKind::IntLiteral, start, cursor_, values_.add_integer(value));
}

void Lexer::decode_escape(const char*& p, std::string& out) {
  // p points at the backslash.
  const char* escape_start = p;
  char c = p[1];
  auto hex_value = [](char h) -> int {
    if (h >= '0' && h <= '9') return h - '0';
    if (h >= 'a' && h <= 'f') return h - 'a' + 10;
    if (h >= 'A' && h <= 'F') return h - 'A' + 10;
    return -1;
  };
  p += 2;
  switch (c) {
    case '\\': out += '\\'; return;
    case '\'': out += '\''; return;
    case '"': out += '"'; return;
    case 'a': out += '\a'; return;
    case 'b': out += '\b'; return;
    case 'f': out += '\f'; return;
    case 'n': out += '\n'; return;
    case 'r': out += '\r'; return;
    case 't': out += '\t'; return;
    case 'v': out += '\v'; return;
    case '\n':
      return;  // line continuation inside a string
    case '\r':
      if (*p == '\n') ++p;
      return;
    case 'x':
    case 'u':
    case 'U': {
      int count = c == 'x' ? 2 : c == 'u' ? 4 : 8;
      uint32_t value = 0;
      for (int i = 0; i < count; ++i) {
        int digit = p < end_ ? hex_value(*p) : -1;
        if (digit < 0) {
          diags_.emit<diag::LexInvalidEscape>(range(escape_start, p),
                                              fmt::format("'\\{}' needs exactly {} hexadecimal digits", c, count));
          return;
        }
        value = value * 16 + static_cast<uint32_t>(digit);
        ++p;
      }
      if (c == 'x') {
        append_utf8(out, value);
      } else if (value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) {
        diags_.emit<diag::LexInvalidEscape>(range(escape_start, p),
                                            fmt::format("U+{:X} is not a Unicode scalar value", value));
      } else {
        append_utf8(out, value);
      }
      return;
    }
    default:
      break;
  }
  if (c >= '0' && c <= '7') {
    uint32_t value = static_cast<uint32_t>(c - '0');
    for (int i = 0; i < 2 && *p >= '0' && *p <= '7'; ++i, ++p) value = value * 8 + static_cast<uint32_t>(*p - '0');
    append_utf8(out, value);
    return;
  }
  // Unknown escape: kept as written, as Python does, with a warning.
  uint32_t cp = 0;
  int length = c == '\0' ? 0 : decode_utf8(escape_start + 1, end_, cp);
  if (length == 0) {
    // A backslash at the end of input, or before a NUL or a byte that is not
    // UTF-8: keep the backslash and leave the rest to the caller (which
    // reports the byte).
    p = escape_start + 1;
    out += '\\';
    return;
  }
  p = escape_start + 1 + length;
  std::string written(escape_start + 1, length);
  diags_.emit<diag::LexUnknownEscape>(range(escape_start, p), written);
  out += '\\';
  out += written;
}

void Lexer::lex_string(const char* start) {
  // cursor_ is just past the opening quote; the prefix sits between start and it.
  bool raw = false;
  bool is_f = false;
  for (const char* p = start; p < cursor_ - 1; ++p) {
    raw |= *p == 'r' || *p == 'R';
    is_f |= *p == 'f' || *p == 'F';
  }
  char quote = cursor_[-1];
  bool triple = end_ - cursor_ >= 2 && cursor_[0] == quote && cursor_[1] == quote;
  if (triple) cursor_ += 2;

  std::string text;
  FStringValue fvalue;
  const char* p = cursor_;
  bool terminated = false;
  while (true) {
    char c = *p;
    // One test for the end of the buffer (a NUL), NUL bytes and non-ASCII
    // bytes, which must be well-formed UTF-8.
    if (static_cast<signed char>(c) <= 0) {
      if (p >= end_) break;
      append_string_byte(p, text);
      continue;
    }
    if (at_string_end(p, quote, triple)) {
      terminated = true;
      break;
    }
    if (!triple && (c == '\n' || c == '\r')) break;
    if (c == '\\') {
      if (raw) {
        // The backslash keeps the next character from closing the string; a
        // NUL or non-ASCII byte after it goes through the check above.
        text += c;
        bool take_next = p + 1 < end_ && static_cast<signed char>(p[1]) > 0;
        if (take_next) text += p[1];
        p += take_next ? 2 : 1;
      } else {
        decode_escape(p, text);
      }
      continue;
    }
    if (is_f && (c == '{' || c == '}')) {
      if (p + 1 < end_ && p[1] == c) {
        text += c;
        p += 2;
        continue;
      }
      if (c == '}') {
        diags_.emit<diag::LexFStringSingleBrace>(range(p, p + 1), std::string("}"));
        ++p;
        continue;
      }
      if (!text.empty()) fvalue.parts.push_back(FStringPart{false, std::move(text), {}, 0, {}});
      text.clear();
      scan_fstring_field(p, quote, triple, fvalue);
      continue;
    }
    text += c;
    ++p;
  }

  if (terminated) {
    p += triple ? 3 : 1;
  } else if (triple) {
    diags_.emit<diag::LexUnterminatedTripleString>(range(start, start))
        .note<diag::NoteStringStartsHere>(range(start, cursor_));
  } else {
    diags_.emit<diag::LexUnterminatedString>(range(start, p));
  }
  cursor_ = std::min(p, end_);  // escapes and f-string fields never leave the buffer
  if (is_f) {
    if (!text.empty() || fvalue.parts.empty()) fvalue.parts.push_back(FStringPart{false, std::move(text), {}, 0, {}});
    add(TokenKind::FStringLiteral, start, cursor_, values_.add_fstring(std::move(fvalue)));
  } else {
    add(TokenKind::StringLiteral, start, cursor_, values_.add_string(std::move(text)));
  }
}

// `p` points at the '{' of a replacement field; on return it is past the '}'.
void Lexer::scan_fstring_field(const char*& p, char quote, bool triple, FStringValue& value) {
  const char* open = p++;
  const char* expr_begin = p;
  int depth = 0;
  char inner_quote = 0;
  const char* expr_end = nullptr;
  FStringPart part{true, {}, {}, 0, {}};
  while (p < end_ && !at_string_end(p, quote, triple) && (triple || (*p != '\n' && *p != '\r'))) {
    char c = *p;
    if (inner_quote != 0) {
      if (c == '\\' && p + 1 < end_) ++p;
      else if (c == inner_quote) inner_quote = 0;
      ++p;
      continue;
    }
    if (c == '\'' || c == '"') {
      inner_quote = c;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if ((c == ')' || c == ']') && depth > 0) {
      --depth;
    } else if (c == '}' && depth > 0) {
      --depth;
    } else if (depth == 0 && (c == '}' || c == ':' || (c == '!' && p[1] != '='))) {
      if (expr_end == nullptr) {
        expr_end = p;
        // `{x=}`, `{loss = :.3f}`: Python's self-documenting field prints
        // the expression's text ('=' and spaces included), then the value.
        const char* last = expr_end;
        while (last > expr_begin && (last[-1] == ' ' || last[-1] == '\t')) --last;
        bool comparison = last - 1 > expr_begin && (last[-2] == '=' || last[-2] == '!' || last[-2] == '<' ||
                                                    last[-2] == '>');
        if (last > expr_begin && last[-1] == '=' && !comparison) {
          value.parts.push_back(FStringPart{false, std::string(expr_begin, expr_end), {}, 0, {}});
          expr_end = last - 1;
        }
      }
      if (c == '!') {
        // A conversion: `!r`, `!s` or `!a`, up to the ':' or '}' after it.
        const char* conversion_begin = ++p;
        while (p < end_ && *p != '}' && *p != ':' && !at_string_end(p, quote, triple) &&
               (triple || (*p != '\n' && *p != '\r'))) {
          ++p;
        }
        std::string_view conversion(conversion_begin, p - conversion_begin);
        if (conversion.empty()) {
          diags_.emit<diag::LexFStringMissingConversion>(range(conversion_begin - 1, conversion_begin));
        } else if (conversion == "r" || conversion == "s" || conversion == "a") {
          part.conversion = conversion[0];
        } else {
          diags_.emit<diag::LexFStringInvalidConversion>(range(conversion_begin, p), std::string(conversion));
        }
        continue;
      }
      if (c == ':') {
        // Format spec: verbatim up to the matching '}' (bytes checked as in
        // the string's text).
        ++p;
        int spec_depth = 0;
        while (p < end_ && !at_string_end(p, quote, triple) && !(*p == '}' && spec_depth == 0)) {
          if (static_cast<signed char>(*p) <= 0) {
            append_string_byte(p, part.format_spec);
            continue;
          }
          if (*p == '{') ++spec_depth;
          if (*p == '}') --spec_depth;
          part.format_spec += *p++;
        }
        continue;
      }
      // c == '}'
      part.expression = range(expr_begin, expr_end);
      std::string_view source(expr_begin, expr_end - expr_begin);
      if (source.find_first_not_of(" \t\r\n\f") == std::string_view::npos) {
        diags_.emit<diag::LexFStringEmptyExpression>(range(open, p + 1));
      } else {
        value.parts.push_back(std::move(part));
      }
      ++p;
      return;
    }
    ++p;
  }
  diags_.emit<diag::LexFStringUnclosedExpression>(range(open, open + 1));
}

void Lexer::lex_punct(TokenKind kind, const char* start) {
  switch (kind) {
    case TokenKind::LParen:
    case TokenKind::LBracket:
    case TokenKind::LBrace:
      brackets_.push_back({kind, range(start, cursor_)});
      break;
    case TokenKind::RParen:
    case TokenKind::RBracket:
    case TokenKind::RBrace: {
      if (brackets_.empty()) {
        diags_.emit<diag::LexUnmatchedClosingBracket>(range(start, cursor_), spelling_of(kind));
        add(TokenKind::Invalid, start, cursor_);  // nothing to close: as an invalid character
        return;
      }
      OpenBracket open = brackets_.back();
      brackets_.pop_back();
      if (closer_for(open.kind) != kind) {
        diags_.emit<diag::LexMismatchedBracket>(range(start, cursor_), spelling_of(kind), spelling_of(open.kind))
            .note<diag::NoteOpeningBracketHere>(open.range, spelling_of(open.kind));
        kind = closer_for(open.kind);  // recover as if the right bracket had been written
      }
      break;
    }
    default:
      break;
  }
  add(kind, start, cursor_);
}

void Lexer::lex_non_ascii(const char* start) {
  uint32_t cp = 0;
  int length = decode_utf8(start, end_, cp);
  if (length == 0) {
    cursor_ = start + 1;
    report_bad_byte(start);
  } else {
    cursor_ = start + length;
    std::string description = fmt::format("U+{:04X}", cp);
    if (cp >= 0x20 && cp != 0x7F) description += fmt::format(" '{}'", std::string_view(start, length));
    diags_.emit<diag::LexInvalidCharacter>(range(start, cursor_), description);
  }
  // An Invalid token keeps the place of the character, so that the parser
  // neither reports the hole it would leave (`x = $`) nor adds an error of
  // its own (see Invalid in token_kind.def).
  add(TokenKind::Invalid, start, cursor_);
}

}  // namespace

TokenizedBuffer lex_file(FileId file, const SourceManager& sources, ValueStores& values, DiagnosticEngine& diags) {
  TokenizedBuffer out(file);
  std::string_view text = sources.contents(file);
  // Generous: typical source has about one token per three bytes, and capacity
  // that is never written costs no memory (huge_pages.h), while growing the
  // array would copy every token.
  out.reserve(text.size() / 2 + 16);
  Lexer lexer(text.data(), text.data() + text.size(), sources.file_begin(file), /*fragment=*/false, values, diags,
              out);
  lexer.run();
  return out;
}

TokenizedBuffer lex_fragment(SourceRange source_range, const SourceManager& sources, ValueStores& values,
                             DiagnosticEngine& diags) {
  FileId file = sources.file_containing(source_range.begin);
  TokenizedBuffer out(file);
  // The scanner needs a NUL after the text, so lex a copy.
  std::string copy(sources.pointer(source_range.begin), source_range.end - source_range.begin);
  Lexer lexer(copy.data(), copy.data() + copy.size(), source_range.begin, /*fragment=*/true, values, diags, out);
  lexer.run();
  return out;
}

}  // namespace tessera
