// Escaping text for one-line display in dumps and messages.
#pragma once

#include <string>
#include <string_view>

namespace tessera {

// `text` in double quotes, with \n, \t, \r, \", \\ and other control
// characters escaped (as \xHH); UTF-8 passes through.
std::string quote_for_display(std::string_view text);

}  // namespace tessera
