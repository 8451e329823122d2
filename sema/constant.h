// Compile-time constants and their exact arithmetic.
//
// Integer constants are exact, as Python integers are: sema folds them in
// 128 bits with every operation checked, so `2147483647 + 1` is 2147483648,
// `10 ** 10` is 10000000000, and only where the value ends up with a type
// (a store into an i32 tensor, an operand of an i32 operation, a local
// declared u8) is it checked against that type's range
// (docs/language/types.md, "Integer constants").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "frontend/ast/ast.h"
#include "support/scalar_type.h"

namespace tessera::sema {

// 128-bit two's complement: wide enough for every value of every 64-bit
// type and for products of two of them.
__extension__ typedef __int128 ConstantInt;
__extension__ typedef unsigned __int128 ConstantUint;

// A compile-time constant value.
struct Constant {
  bool is_float = false;
  ConstantInt integer = 0;
  double real = 0.0;
  // Read from a local variable (or computed from one): the value the local
  // held when sema reached the read, which a loop may change before it runs
  // (sema.h, TypedModule::constants). Good for sizes sema needs (a vector
  // width held in a local) but not exact enough to reject a program with.
  bool from_local = false;

  bool operator==(const Constant&) const = default;
  double as_double() const { return is_float ? real : static_cast<double>(integer); }
  // The integer when it fits 64 bits (every size, shape and index sema uses).
  std::optional<int64_t> as_int64() const {
    if (is_float || integer < INT64_MIN || integer > INT64_MAX) return std::nullopt;
    return static_cast<int64_t>(integer);
  }
};

std::string to_string(ConstantInt value);
// As Python prints it: `-1`, `0.5`, `2.0`, `1e-05` (`True`/`False` when
// `boolean`).
std::string to_string(const Constant& value, bool boolean = false);

// The values of an integer type (bool is 0..1).
struct IntegerRange {
  ConstantInt min = 0, max = 0;
  bool contains(ConstantInt v) const { return v >= min && v <= max; }
};
IntegerRange integer_range(ScalarType type);

// Why an integer operation has no exact result.
enum class FoldError : uint8_t {
  None,
  DivisionByZero,    // `//`, `%` (and `/`) by 0
  NegativeExponent,  // `a ** -k` on integers: not an integer
  NegativeShift,     // `a << -k`, `a >> -k` (Python raises ValueError)
  TooLarge,          // the exact result needs more than 128 bits
};

// `a op b` on exact integers with Python's rules (`//` and `%` round toward
// negative infinity; `>>` is a floor division by a power of two). `/` is
// true division, which the caller computes in reals (here it checks for a
// zero divisor and folds as `//`); `@` is no integer operation (TooLarge).
FoldError fold_integer(BinaryOperator op, ConstantInt a, ConstantInt b, ConstantInt& result);

}  // namespace tessera::sema
