// Escaping text for one-line display in dumps and messages.
#pragma once

#include <string>
#include <string_view>

namespace tessera {

// `text` in double quotes, with \n, \t, \r, \", \\ and other control
// characters escaped (as \xHH); UTF-8 passes through.
std::string quote_for_display(std::string_view text);

// Text as a terminal shows it under a diagnostic: valid UTF-8 passes
// through, a tab becomes one space (so that columns counted in code points
// line up with the caret), and every byte that is not part of valid UTF-8
// becomes `<XX>` (its value in hex, as clang shows it): the raw byte could
// be anything on the reader's terminal.
std::string display_text(std::string_view text);
// The columns `text` takes in display_text's form: one per code point, four
// per invalid byte.
uint32_t display_width(std::string_view text);

}  // namespace tessera
