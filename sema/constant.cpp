// Exact integer arithmetic on compile-time constants (constant.h).
#include "sema/constant.h"

#include <algorithm>

#include <fmt/format.h>

namespace tessera::sema {

namespace {

constexpr ConstantInt kMax = static_cast<ConstantInt>(~static_cast<ConstantUint>(0) >> 1);
constexpr ConstantInt kMin = -kMax - 1;

// Python's floor division and modulo (the quotient rounds toward negative
// infinity; the remainder takes the divisor's sign). b != 0.
ConstantInt floor_div(ConstantInt a, ConstantInt b) {
  ConstantInt q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
ConstantInt floor_mod(ConstantInt a, ConstantInt b) {
  ConstantInt r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

}  // namespace

std::string to_string(ConstantInt value) {
  if (value == 0) return "0";
  bool negative = value < 0;
  // The magnitude as unsigned, so that the most negative value works too.
  ConstantUint magnitude = negative ? static_cast<ConstantUint>(0) - static_cast<ConstantUint>(value)
                                         : static_cast<ConstantUint>(value);
  std::string digits;
  while (magnitude != 0) {
    digits.push_back(static_cast<char>('0' + static_cast<int>(magnitude % 10)));
    magnitude /= 10;
  }
  if (negative) digits.push_back('-');
  std::reverse(digits.begin(), digits.end());
  return digits;
}

IntegerRange integer_range(ScalarType type) {
  const ScalarInfo& info = scalar_info(type);
  unsigned bits = info.bits;
  switch (info.category) {
    case ScalarCategory::Bool: return {0, 1};
    case ScalarCategory::SignedInt: {
      ConstantInt half = static_cast<ConstantInt>(1) << (bits - 1);
      return {-half, half - 1};
    }
    case ScalarCategory::UnsignedInt: return {0, (static_cast<ConstantInt>(1) << bits) - 1};
    case ScalarCategory::Float: break;
  }
  return {kMin, kMax};
}

FoldError fold_integer(BinaryOperator op, ConstantInt a, ConstantInt b, ConstantInt& result) {
  switch (op) {
    case BinaryOperator::Add:
      return __builtin_add_overflow(a, b, &result) ? FoldError::TooLarge : FoldError::None;
    case BinaryOperator::Sub:
      return __builtin_sub_overflow(a, b, &result) ? FoldError::TooLarge : FoldError::None;
    case BinaryOperator::Mul:
      return __builtin_mul_overflow(a, b, &result) ? FoldError::TooLarge : FoldError::None;
    case BinaryOperator::Div:
    case BinaryOperator::FloorDiv:
    case BinaryOperator::Mod:
      if (b == 0) return FoldError::DivisionByZero;
      if (a == kMin && b == -1) {
        if (op == BinaryOperator::Mod) {
          result = 0;
          return FoldError::None;
        }
        return FoldError::TooLarge;
      }
      result = op == BinaryOperator::Mod ? floor_mod(a, b) : floor_div(a, b);
      return FoldError::None;
    case BinaryOperator::Pow: {
      if (b < 0) return FoldError::NegativeExponent;
      // Bases whose powers never grow, for any exponent.
      if (a == 0 || a == 1) {
        result = (a == 0 && b != 0) ? 0 : 1;
        return FoldError::None;
      }
      if (a == -1) {
        result = (b % 2 == 0) ? 1 : -1;
        return FoldError::None;
      }
      if (b >= 128) return FoldError::TooLarge;  // |a| >= 2
      ConstantInt power = 1, square = a;
      for (ConstantInt e = b; e > 0; e >>= 1) {
        if ((e & 1) && __builtin_mul_overflow(power, square, &power)) return FoldError::TooLarge;
        if (e > 1 && __builtin_mul_overflow(square, square, &square)) return FoldError::TooLarge;
      }
      result = power;
      return FoldError::None;
    }
    case BinaryOperator::LShift:
      if (b < 0) return FoldError::NegativeShift;
      if (a == 0) {
        result = 0;
        return FoldError::None;
      }
      if (b >= 127) return FoldError::TooLarge;
      {
        // Shift the magnitude's bits; overflow when they do not come back.
        ConstantInt shifted = static_cast<ConstantInt>(static_cast<ConstantUint>(a) << static_cast<int>(b));
        if ((shifted >> static_cast<int>(b)) != a) return FoldError::TooLarge;
        result = shifted;
      }
      return FoldError::None;
    case BinaryOperator::RShift:
      if (b < 0) return FoldError::NegativeShift;
      result = b >= 127 ? (a < 0 ? -1 : 0) : (a >> static_cast<int>(b));  // arithmetic: floor(a / 2**b)
      return FoldError::None;
    case BinaryOperator::BitAnd: result = a & b; return FoldError::None;
    case BinaryOperator::BitOr: result = a | b; return FoldError::None;
    case BinaryOperator::BitXor: result = a ^ b; return FoldError::None;
    case BinaryOperator::MatMul: break;
  }
  return FoldError::TooLarge;
}

}  // namespace tessera::sema

namespace tessera::sema {

std::string to_string(const Constant& value, bool boolean) {
  if (!value.is_float) return boolean ? (value.integer != 0 ? "True" : "False") : to_string(value.integer);
  // fmt's shortest round-trip form, with Python's `.0` on whole numbers.
  std::string text = fmt::format("{}", value.real);
  if (text.find_first_of(".einf") == std::string::npos) text += ".0";
  return text;
}

}  // namespace tessera::sema
