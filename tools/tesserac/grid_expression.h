// `tesserac run --grid` as expressions (docs/autotuning.md, "Grids that
// depend on knobs"): `--grid 'cdiv(N, BN), cdiv(M, BM), BATCH'` gives each
// axis as an integer expression of the kernel's symbolic dimensions and, for
// an autotuned kernel, its knobs, evaluated for each variant. Axes are
// separated by commas outside parentheses (or by 'x' in the plain numeric
// form 8x4). Operators: + - * // % and parentheses; functions cdiv(a, b)
// (a / b rounded up), min(a, b), max(a, b).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tessera {

// The axes' expression texts; nullopt with `error` set when the text is
// not 1 to 3 axes.
std::optional<std::vector<std::string>> split_grid_axes(const std::string& text, std::string& error);

// The value of one axis's expression with `names` bound; nullopt with
// `error` set (an unknown name, a syntax error, division by zero, a value
// outside 1 .. 2^31 - 1).
std::optional<int64_t> evaluate_grid_axis(const std::string& expression, const std::map<std::string, int64_t>& names,
                                          std::string& error);

}  // namespace tessera
