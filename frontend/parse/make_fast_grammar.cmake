# Writes the grammar of the fast parser: parser.yy without lookahead
# correction, under the class name FastParser (see parser.yy's header).
#   cmake -DIN=parser.yy -DOUT=fast_parser.yy -P make_fast_grammar.cmake
file(READ "${IN}" text)
set(replacements
  "%define parse.lac full" "%define parse.lac none"
  "%define api.parser.class {Parser}" "%define api.parser.class {FastParser}"
  "#define TESSERA_PARSER_CLASS Parser" "#define TESSERA_PARSER_CLASS FastParser"
  "#define TESSERA_PARSE_ENTRY run_checked_parser" "#define TESSERA_PARSE_ENTRY run_fast_parser")
list(LENGTH replacements count)
math(EXPR last "${count} - 1")
foreach(i RANGE 0 ${last} 2)
  math(EXPR j "${i} + 1")
  list(GET replacements ${i} from)
  list(GET replacements ${j} to)
  string(FIND "${text}" "${from}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "make_fast_grammar: '${from}' not found in ${IN}")
  endif()
  string(REPLACE "${from}" "${to}" text "${text}")
endforeach()
file(WRITE "${OUT}" "${text}")
