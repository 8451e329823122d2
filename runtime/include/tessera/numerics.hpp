// Tessera's narrow floating-point formats: the exact conversion rules.
//
// Header-only, dependency-free (C++17 or later; constexpr throughout, and the
// float-typed functions too from C++20). Used by users' C++ code, the runtime,
// the compiler and the tests. The compiler's code generation emits the same
// algorithm as LLVM IR for the CPU and the GPU and must be bit-identical to
// it: this file is the specification, docs/numerics.md explains it.
//
// ============================================================================
// THE SPECIFICATION
// ============================================================================
//
// Formats. A format has a sign bit, E exponent bits, M mantissa bits and a
// bias B; a code is the integer (sign << (E + M)) | (exp << M) | man, held in
// the low 1 + E + M bits of a uint32_t. emin = 1 - B.
//   exp == 0:       subnormal, value (-1)^sign * man * 2^(emin - M)
//   otherwise:      normal,    value (-1)^sign * (1 + man / 2^M) * 2^(exp - B)
// except the special codes, by NanEncoding:
//   Ieee    (bf16, f16, fp8_e5m2): exp all ones: man == 0 is +-inf, else NaN
//   AllOnes (fp8_e4m3, OCP E4M3):  magnitude all ones (S.1111.111) is NaN; no inf
//   None    (fp6_e2m3, fp6_e3m2, fp4_e2m1, OCP MX): no inf, no NaN
// max_code, the magnitude code of the largest finite value:
//   Ieee: ((2^E - 2) << M) | (2^M - 1);  AllOnes: 2^(E+M) - 2;  None: 2^(E+M) - 1
// The canonical NaN (Ieee, AllOnes) is the POSITIVE code with every exponent
// and mantissa bit set: bf16 0x7FFF, f16 0x7FFF, e5m2 0x7F, e4m3 0x7F.
//
// decode(F, code) -> f32 bits (exact: every value of these formats is an f32):
//   bits above 1 + E + M are ignored; S = sign << 31.
//   NaN:        S | 0x7FC00000 | (man << (23 - M))   (quietened, payload kept)
//   inf:        S | 0x7F800000
//   zero:       S
//   subnormal:  if emin == -126 (bf16): S | (man << (23 - M))  (an f32 subnormal)
//               else p = index of the highest set bit of man (0 <= p < M):
//                    S | ((emin - M + p + 127) << 23) | ((man << (23 - p)) & 0x7FFFFF)
//   normal:     S | ((exp - B + 127) << 23) | (man << (23 - M))
//
// encode(F, x, rounding, overflow, random) with x the f32 bits, in 32-bit
// unsigned integer arithmetic (shifts are always < 32):
//   1. sign = x >> 31; a = x & 0x7FFFFFFF; S = sign << (E + M).
//   2. NaN (a > 0x7F800000): the canonical NaN; formats without NaN: max_code
//      (POSITIVE largest finite, as CUDA's cuda_fp4.hpp/cuda_fp6.hpp; the MX
//      specification leaves it to the implementation). Sign, rounding and
//      overflow mode do not matter.
//   3. inf (a == 0x7F800000): Saturate: S | max_code. Propagate: S | inf code
//      if the format has inf; else the canonical NaN if it has NaN (e4m3);
//      else S | max_code. Infinity is exact, never an "overflow", so the
//      rounding mode does not matter.
//   4. Finite: e32 = a >> 23; sig = a & 0x7FFFFF, plus 0x800000 when e32 != 0;
//      e = max(e32, 1) - 127 (so |x| = sig * 2^(e - 23)).
//      R = 23 - M                              (the random bits used, below)
//      shift = R + max(0, emin - e)            (f32 bits dropped; >= R >= 13)
//      s = min(shift, 31)                      (exact: sig < 2^24)
//      kept = sig >> s; rem = sig & (2^s - 1); half = 2^(s - 1)
//      code = (e >= emin ? (e + B - 1) << M : 0) + kept
//        (for a normal result kept holds the implicit bit at bit M, which adds
//        the missing 1 to the exponent field; for a subnormal result kept < 2^M)
//   5. Round: code += up, where up is
//      NearestEven:    rem > half || (rem == half && (kept & 1))
//      NearestAway:    rem >= half
//      TowardZero:     false
//      TowardPositive: rem != 0 && sign == 0
//      TowardNegative: rem != 0 && sign == 1
//      Stochastic:     t = rem >> min(shift - R, 31)   (the R bits just below
//                          the kept LSB; fewer are non-zero for a subnormal result)
//                      up = t + (random & (2^R - 1)) >= 2^R
//      A carry out of the mantissa increments the exponent field (the code is
//      one integer), which is the correct next value, the step from the
//      largest subnormal to the smallest normal included.
//      Stochastic rounding therefore uses exactly R = 23 - M random bits: the
//      low R bits of `random` (bf16 16, f16 13, e4m3 20, e5m2 21, e2m3 20,
//      e3m2 21, e2m1 22). P(up) = floor(frac * 2^R) / 2^R where frac is the
//      exact position of |x| between its two neighbours: exact for normal
//      results, and within 2^-R of frac for subnormal ones (bits of |x| more
//      than R places below the rounding position are ignored).
//   6. Overflow: if code > max_code the rounded magnitude exceeds the largest
//      finite value (as in IEEE 754, the test is after rounding: for e4m3,
//      |x| < 464 gives 448, 464 ties to 448 (even), above 464 overflows).
//      code = max_code under Saturate, or when the rounding moved toward zero
//      for this sign (TowardZero; TowardNegative for x > 0; TowardPositive for
//      x < 0), as IEEE 754 directed rounding does. Otherwise (Propagate with
//      NearestEven, NearestAway, Stochastic or the outward direction): the inf
//      code if the format has inf; the canonical NaN (no sign) for e4m3, as
//      OCP OFP8 says; S | max_code for the formats with neither (fp6, fp4
//      always saturate).
//   7. Result: S | code. Zeros keep their sign; there is no flush to zero.
//
// Wider sources (f64, integers of more than 24 bits) are first made f32 by
// rounding to ODD: truncate toward zero, then set the f32's last mantissa bit
// if anything was dropped (NaN, infinities and exact values unchanged; a
// finite value beyond the f32 range gives the largest finite f32). The f32
// keeps at least two bits more than every format above (24 >= M + 3), so
// encode() of it rounds exactly as one rounding of the wide value would, in
// every mode but Stochastic (whose R bits are then the f32's): no double
// rounding (Boldo and Melquiond, "Emulation of FMA and correctly rounded
// sums: proved algorithms using rounding to odd", IEEE TC 2008).
//
// random_bits(seed, counter): word (counter & 3) of Philox-4x32-10 (Salmon et
// al., SC'11, as in Random123/cuRAND) with
//   key = {lo32(seed), hi32(seed)}, ctr = {lo32(counter >> 2), hi32(counter >> 2), 0, 0}
// so four consecutive counters share one Philox block. One round:
//   (hi0, lo0) = 0xD2511F53 * ctr[0], (hi1, lo1) = 0xCD9E8D57 * ctr[2] (32x32->64)
//   ctr = {hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0}
// ten rounds, with key += {0x9E3779B9, 0xBB67AE85} (mod 2^32) between rounds.
//
// The algorithm as written assumes what holds for every format here:
// 1 <= M <= 22, E <= 8, and either emin == -126 (bf16) or every subnormal of
// the format is a normal f32 (emin - M >= -126). The static_asserts at the
// end check the formats defined below.
//
// Packed storage (docs/abi.md): an element of w bits (w = 4 or 6; also any
// 1 <= w <= 8) with index i occupies bits [w*i, w*i + w) of the byte buffer,
// least significant bit first: fp4 element i is the low nibble of byte i/2
// when i is even, the high nibble when odd; fp6 elements may straddle bytes.
// n elements take ceil(w*n / 8) bytes; the unused high bits of the last byte
// are left as they are by the setters.
// ============================================================================
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#if defined(__has_include)
#if __has_include(<version>)
#include <version>
#endif
#endif
#if defined(__cpp_lib_bit_cast) && __cpp_lib_bit_cast >= 201806L
#include <bit>
#define TESSERA_NUMERICS_FLOAT_CONSTEXPR constexpr
#else
#define TESSERA_NUMERICS_FLOAT_CONSTEXPR inline
#endif

namespace tessera::numerics {

// --- formats --------------------------------------------------------------------

enum class NanEncoding : uint8_t {
  None,     // every code is a number (OCP MX fp6, fp4)
  Ieee,     // exponent field all ones: mantissa 0 is infinity, otherwise NaN
  AllOnes,  // only the magnitude with every bit set is NaN; no infinity (OCP E4M3)
};

struct Format {
  const char* name;  // the Tessera dtype name
  unsigned exponent_bits;
  unsigned mantissa_bits;
  int bias;
  bool has_inf;
  NanEncoding nan_encoding;

  constexpr bool has_nan() const { return nan_encoding != NanEncoding::None; }
  // Storage bits per element: 1 + E + M.
  constexpr unsigned bits() const { return 1 + exponent_bits + mantissa_bits; }
  constexpr uint32_t sign_mask() const { return uint32_t{1} << (exponent_bits + mantissa_bits); }
  constexpr uint32_t magnitude_mask() const { return sign_mask() - 1; }
  constexpr uint32_t mantissa_mask() const { return (uint32_t{1} << mantissa_bits) - 1; }
  constexpr uint32_t exponent_field_max() const { return (uint32_t{1} << exponent_bits) - 1; }
  // The unbiased exponent of the smallest normal value.
  constexpr int min_exponent() const { return 1 - bias; }
  // The magnitude code of the largest finite value.
  constexpr uint32_t max_finite_code() const {
    switch (nan_encoding) {
      case NanEncoding::Ieee:
        return ((exponent_field_max() - 1) << mantissa_bits) | mantissa_mask();
      case NanEncoding::AllOnes:
        return magnitude_mask() - 1;
      case NanEncoding::None:
        return magnitude_mask();
    }
    return 0;
  }
  // +infinity (meaningful when has_inf).
  constexpr uint32_t inf_code() const { return exponent_field_max() << mantissa_bits; }
  // The NaN encode() produces (meaningful when has_nan()): positive, all ones.
  constexpr uint32_t canonical_nan() const { return magnitude_mask(); }
  // How many random bits stochastic rounding consumes.
  constexpr unsigned random_bit_count() const { return 23 - mantissa_bits; }

  constexpr bool is_nan(uint32_t code) const {
    const uint32_t magnitude = code & magnitude_mask();
    switch (nan_encoding) {
      case NanEncoding::Ieee:
        return (magnitude >> mantissa_bits) == exponent_field_max() && (magnitude & mantissa_mask()) != 0;
      case NanEncoding::AllOnes:
        return magnitude == magnitude_mask();
      case NanEncoding::None:
        return false;
    }
    return false;
  }
  constexpr bool is_inf(uint32_t code) const { return has_inf && (code & magnitude_mask()) == inf_code(); }
};

inline constexpr Format bf16{"bf16", 8, 7, 127, true, NanEncoding::Ieee};
inline constexpr Format f16{"f16", 5, 10, 15, true, NanEncoding::Ieee};
inline constexpr Format fp8_e4m3{"fp8_e4m3", 4, 3, 7, false, NanEncoding::AllOnes};
inline constexpr Format fp8_e5m2{"fp8_e5m2", 5, 2, 15, true, NanEncoding::Ieee};
inline constexpr Format fp6_e2m3{"fp6_e2m3", 2, 3, 1, false, NanEncoding::None};
inline constexpr Format fp6_e3m2{"fp6_e3m2", 3, 2, 3, false, NanEncoding::None};
inline constexpr Format fp4_e2m1{"fp4_e2m1", 2, 1, 1, false, NanEncoding::None};

inline constexpr const Format* all_formats[] = {&bf16, &f16, &fp8_e4m3, &fp8_e5m2, &fp6_e2m3, &fp6_e3m2, &fp4_e2m1};

// The format with this canonical dtype name ("fp8_e4m3"), or null.
constexpr const Format* find_format(std::string_view name) {
  for (const Format* format : all_formats)
    if (name == format->name) return format;
  return nullptr;
}

// --- f32 bits -------------------------------------------------------------------

TESSERA_NUMERICS_FLOAT_CONSTEXPR uint32_t float_to_bits(float value) {
#if defined(__cpp_lib_bit_cast) && __cpp_lib_bit_cast >= 201806L
  return std::bit_cast<uint32_t>(value);
#else
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
#endif
}

TESSERA_NUMERICS_FLOAT_CONSTEXPR float bits_to_float(uint32_t bits) {
#if defined(__cpp_lib_bit_cast) && __cpp_lib_bit_cast >= 201806L
  return std::bit_cast<float>(bits);
#else
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
#endif
}

// --- decode ---------------------------------------------------------------------

// The f32 bits of a code's value (exact). Bits above format.bits() are ignored.
constexpr uint32_t decode_bits(const Format& format, uint32_t code) {
  const uint32_t m = format.mantissa_bits;
  code &= format.sign_mask() | format.magnitude_mask();
  const uint32_t sign = (code & format.sign_mask()) != 0 ? 0x80000000u : 0u;
  const uint32_t exp = (code & format.magnitude_mask()) >> m;
  const uint32_t man = code & format.mantissa_mask();
  if (format.is_nan(code)) return sign | 0x7FC00000u | (man << (23 - m));
  if (format.is_inf(code)) return sign | 0x7F800000u;
  if (exp == 0) {
    if (man == 0) return sign;
    if (format.min_exponent() == -126) return sign | (man << (23 - m));  // an f32 subnormal (bf16)
    uint32_t p = 0;  // index of the highest set bit of man
    while ((man >> (p + 1)) != 0) ++p;
    const uint32_t biased = static_cast<uint32_t>(format.min_exponent() - static_cast<int>(m) + static_cast<int>(p) + 127);
    return sign | (biased << 23) | ((man << (23 - p)) & 0x7FFFFFu);
  }
  const uint32_t biased = static_cast<uint32_t>(static_cast<int>(exp) - format.bias + 127);
  return sign | (biased << 23) | (man << (23 - m));
}

TESSERA_NUMERICS_FLOAT_CONSTEXPR float decode(const Format& format, uint32_t code) {
  return bits_to_float(decode_bits(format, code));
}

// The largest finite value of the format.
TESSERA_NUMERICS_FLOAT_CONSTEXPR float max_finite(const Format& format) {
  return decode(format, format.max_finite_code());
}

// --- encode ---------------------------------------------------------------------

enum class Rounding : uint8_t {
  NearestEven,     // "rne": to nearest, ties to the even code (IEEE default)
  NearestAway,     // "rna": to nearest, ties away from zero
  TowardZero,      // "rz"
  TowardPositive,  // "ru"
  TowardNegative,  // "rd"
  Stochastic,      // up with probability (|x| - lower) / (upper - lower), R-bit resolution
};

enum class Overflow : uint8_t {
  Propagate,  // overflow gives inf (bf16, f16, e5m2), NaN (e4m3), max finite (fp6, fp4)
  Saturate,   // overflow and infinities give the largest finite value of the sign
};

// The code of the f32 value with bits `x` in `format` (the specification above).
// `random` is used by Rounding::Stochastic only: its low format.random_bit_count() bits.
constexpr uint32_t encode_bits(const Format& format, uint32_t x, Rounding rounding, Overflow overflow,
                               uint32_t random = 0) {
  const uint32_t m = format.mantissa_bits;
  const uint32_t r = 23 - m;
  const uint32_t sign = x >> 31;
  const uint32_t a = x & 0x7FFFFFFFu;
  const uint32_t sign_code = sign != 0 ? format.sign_mask() : 0u;
  const uint32_t max_code = format.max_finite_code();

  if (a > 0x7F800000u) return format.has_nan() ? format.canonical_nan() : max_code;  // NaN
  if (a == 0x7F800000u) {                                                              // infinity
    if (overflow == Overflow::Saturate) return sign_code | max_code;
    if (format.has_inf) return sign_code | format.inf_code();
    if (format.has_nan()) return format.canonical_nan();
    return sign_code | max_code;
  }

  const uint32_t e32 = a >> 23;
  const uint32_t sig = e32 != 0 ? (a & 0x7FFFFFu) | 0x800000u : a;
  const int e = static_cast<int>(e32 != 0 ? e32 : 1) - 127;
  const int emin = format.min_exponent();
  const uint32_t shift = r + static_cast<uint32_t>(e < emin ? emin - e : 0);
  const uint32_t s = shift < 31 ? shift : 31;
  const uint32_t kept = sig >> s;
  const uint32_t rem = sig & ((uint32_t{1} << s) - 1);
  const uint32_t half = uint32_t{1} << (s - 1);
  uint32_t code = (e >= emin ? static_cast<uint32_t>(e + format.bias - 1) << m : 0u) + kept;

  bool up = false;
  switch (rounding) {
    case Rounding::NearestEven:
      up = rem > half || (rem == half && (kept & 1) != 0);
      break;
    case Rounding::NearestAway:
      up = rem >= half;
      break;
    case Rounding::TowardZero:
      up = false;
      break;
    case Rounding::TowardPositive:
      up = rem != 0 && sign == 0;
      break;
    case Rounding::TowardNegative:
      up = rem != 0 && sign != 0;
      break;
    case Rounding::Stochastic: {
      const uint32_t below = shift - r;
      const uint32_t t = rem >> (below < 31 ? below : 31);
      up = t + (random & ((uint32_t{1} << r) - 1)) >= (uint32_t{1} << r);
      break;
    }
  }
  code += up ? 1u : 0u;

  if (code > max_code) {
    const bool toward_zero = rounding == Rounding::TowardZero || (rounding == Rounding::TowardNegative && sign == 0) ||
                             (rounding == Rounding::TowardPositive && sign != 0);
    if (overflow == Overflow::Saturate || toward_zero)
      code = max_code;
    else if (format.has_inf)
      code = format.inf_code();
    else if (format.has_nan())
      return format.canonical_nan();
    else
      code = max_code;
  }
  return sign_code | code;
}

TESSERA_NUMERICS_FLOAT_CONSTEXPR uint32_t encode(const Format& format, float value, Rounding rounding,
                                                 Overflow overflow, uint32_t random = 0) {
  return encode_bits(format, float_to_bits(value), rounding, overflow, random);
}

// The value `value` becomes when stored in `format` and read back.
TESSERA_NUMERICS_FLOAT_CONSTEXPR float quantize(const Format& format, float value, Rounding rounding,
                                                Overflow overflow, uint32_t random = 0) {
  return decode(format, encode(format, value, rounding, overflow, random));
}

// --- wider sources: f64 rounded to odd ---------------------------------------

// `value` as an f32 rounded to odd (the specification above): what encode()
// takes so that an f64 is rounded once.
TESSERA_NUMERICS_FLOAT_CONSTEXPR float f32_rounded_to_odd(double value) {
  const float nearest = static_cast<float>(value);
  if (value != value || static_cast<double>(nearest) == value) return nearest;  // NaN, exact, infinities
  uint32_t bits = float_to_bits(nearest);
  const double magnitude = value < 0 ? -value : value;
  const double nearest_magnitude = nearest < 0 ? -static_cast<double>(nearest) : static_cast<double>(nearest);
  if (nearest_magnitude > magnitude) bits -= 1;  // toward zero (an overflow to inf: the largest finite f32)
  return bits_to_float(bits | 1u);
}

// --- bf16 and f16 (round to nearest even, overflow to infinity) ----------------

constexpr uint16_t bf16_from_f32_bits(uint32_t x) {
  return static_cast<uint16_t>(encode_bits(bf16, x, Rounding::NearestEven, Overflow::Propagate));
}
constexpr uint32_t f32_bits_from_bf16(uint16_t code) { return decode_bits(bf16, code); }
constexpr uint16_t f16_from_f32_bits(uint32_t x) {
  return static_cast<uint16_t>(encode_bits(f16, x, Rounding::NearestEven, Overflow::Propagate));
}
constexpr uint32_t f32_bits_from_f16(uint16_t code) { return decode_bits(f16, code); }

TESSERA_NUMERICS_FLOAT_CONSTEXPR uint16_t float_to_bf16(float value) { return bf16_from_f32_bits(float_to_bits(value)); }
TESSERA_NUMERICS_FLOAT_CONSTEXPR float bf16_to_float(uint16_t code) { return bits_to_float(f32_bits_from_bf16(code)); }
TESSERA_NUMERICS_FLOAT_CONSTEXPR uint16_t float_to_f16(float value) { return f16_from_f32_bits(float_to_bits(value)); }
TESSERA_NUMERICS_FLOAT_CONSTEXPR float f16_to_float(uint16_t code) { return bits_to_float(f32_bits_from_f16(code)); }

// --- counter-based random bits --------------------------------------------------

struct PhiloxBlock {
  uint32_t word[4];
};

// Philox-4x32-10 of Random123: counter {c0, c1, c2, c3}, key {k0, k1}.
constexpr PhiloxBlock philox4x32_10(PhiloxBlock counter, uint32_t key0, uint32_t key1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key0 += 0x9E3779B9u;
      key1 += 0xBB67AE85u;
    }
    const uint64_t product0 = uint64_t{0xD2511F53u} * counter.word[0];
    const uint64_t product1 = uint64_t{0xCD9E8D57u} * counter.word[2];
    const auto hi0 = static_cast<uint32_t>(product0 >> 32), lo0 = static_cast<uint32_t>(product0);
    const auto hi1 = static_cast<uint32_t>(product1 >> 32), lo1 = static_cast<uint32_t>(product1);
    counter = PhiloxBlock{{hi1 ^ counter.word[1] ^ key0, lo1, hi0 ^ counter.word[3] ^ key1, lo0}};
  }
  return counter;
}

// 32 random bits, a pure function of (seed, counter): word counter % 4 of the
// Philox block {counter / 4 (64 bits, low word first), 0, 0} under key seed.
constexpr uint32_t random_bits(uint64_t seed, uint64_t counter) {
  const uint64_t block = counter >> 2;
  const PhiloxBlock out = philox4x32_10(
      PhiloxBlock{{static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0u, 0u}},
      static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
  return out.word[counter & 3];
}

// --- packed sub-byte storage ----------------------------------------------------

// Bytes holding `count` elements of `bits` bits each (1 <= bits <= 8).
constexpr uint64_t packed_bytes(uint64_t count, unsigned bits) { return (count * bits + 7) / 8; }

// The `bits`-bit code of element `index` (bits [bits*index, bits*index + bits), LSB first).
constexpr uint32_t packed_get(const uint8_t* data, uint64_t index, unsigned bits) {
  const uint64_t bit = index * bits;
  const uint64_t byte = bit >> 3;
  const unsigned offset = static_cast<unsigned>(bit & 7);
  uint32_t value = static_cast<uint32_t>(data[byte]) >> offset;
  if (offset + bits > 8) value |= static_cast<uint32_t>(data[byte + 1]) << (8 - offset);
  return value & ((uint32_t{1} << bits) - 1);
}

// Stores the low `bits` bits of `code` as element `index`, leaving every other bit as it is.
constexpr void packed_set(uint8_t* data, uint64_t index, unsigned bits, uint32_t code) {
  const uint64_t bit = index * bits;
  const uint64_t byte = bit >> 3;
  const unsigned offset = static_cast<unsigned>(bit & 7);
  const uint32_t mask = (uint32_t{1} << bits) - 1;
  code &= mask;
  data[byte] = static_cast<uint8_t>((data[byte] & ~(mask << offset)) | (code << offset));
  if (offset + bits > 8)
    data[byte + 1] = static_cast<uint8_t>((data[byte + 1] & ~(mask >> (8 - offset))) | (code >> (8 - offset)));
}

constexpr uint32_t fp4_get(const uint8_t* data, uint64_t index) { return packed_get(data, index, 4); }
constexpr void fp4_set(uint8_t* data, uint64_t index, uint32_t code) { packed_set(data, index, 4, code); }
constexpr uint32_t fp6_get(const uint8_t* data, uint64_t index) { return packed_get(data, index, 6); }
constexpr void fp6_set(uint8_t* data, uint64_t index, uint32_t code) { packed_set(data, index, 6, code); }

// --- the numbers the tables promise ----------------------------------------------

static_assert(bf16.max_finite_code() == 0x7F7F && f16.max_finite_code() == 0x7BFF);
static_assert(fp8_e4m3.max_finite_code() == 0x7E && fp8_e5m2.max_finite_code() == 0x7B);
static_assert(fp6_e2m3.max_finite_code() == 0x1F && fp6_e3m2.max_finite_code() == 0x1F &&
              fp4_e2m1.max_finite_code() == 0x7);
static_assert(decode_bits(fp8_e4m3, 0x7E) == 0x43E00000u);  // 448
static_assert(decode_bits(fp8_e5m2, 0x7B) == 0x47600000u);  // 57344
static_assert(decode_bits(fp6_e2m3, 0x1F) == 0x40F00000u);  // 7.5
static_assert(decode_bits(fp6_e3m2, 0x1F) == 0x41E00000u);  // 28
static_assert(decode_bits(fp4_e2m1, 0x7) == 0x40C00000u);   // 6
static_assert(decode_bits(f16, 0x7BFF) == 0x477FE000u);     // 65504
// Every subnormal of a format other than bf16 is a normal f32 (decode relies on it).
static_assert(fp8_e4m3.min_exponent() - 3 >= -126 && f16.min_exponent() - 10 >= -126 && bf16.min_exponent() == -126);

}  // namespace tessera::numerics

#undef TESSERA_NUMERICS_FLOAT_CONSTEXPR
