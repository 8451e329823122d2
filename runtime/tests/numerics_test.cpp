// Unit tests of tessera/numerics.hpp, the specification of Tessera's narrow
// floating-point formats (docs/numerics.md):
//  - every code of the 4-, 6- and 8-bit formats decodes to the value of the
//    OCP tables (fp4 and fp6 tables written out below, fp8 from the table's
//    key values and its doubling rows), bf16 and f16 likewise;
//  - encode agrees, for every rounding mode and both overflow modes, with a
//    reference encoder written here independently (all values of the format
//    as doubles, the neighbours of x found by search, decisions made in double
//    arithmetic) on a dense sweep of f32 values: a stride over all 2^32 bit
//    patterns, every value of the format, every midpoint between neighbours
//    and the f32 values next to each, signed zeros, infinities, NaNs;
//  - saturation and the OCP special-value rules, spelled out;
//  - stochastic rounding picks a neighbour, converges in mean, and is
//    reproducible from the seed; Philox-4x32-10 matches Random123's answers;
//  - packed fp4 and fp6 storage as docs/abi.md lays it out.
#include "tessera/numerics.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace nx = tessera::numerics;
using nx::Format;
using nx::Overflow;
using nx::Rounding;

namespace {

constexpr Rounding kRoundings[] = {Rounding::NearestEven,    Rounding::NearestAway,    Rounding::TowardZero,
                                   Rounding::TowardPositive, Rounding::TowardNegative, Rounding::Stochastic};
constexpr Overflow kOverflows[] = {Overflow::Propagate, Overflow::Saturate};

const char* rounding_name(Rounding rounding) {
  switch (rounding) {
    case Rounding::NearestEven:
      return "rne";
    case Rounding::NearestAway:
      return "rna";
    case Rounding::TowardZero:
      return "rz";
    case Rounding::TowardPositive:
      return "ru";
    case Rounding::TowardNegative:
      return "rd";
    case Rounding::Stochastic:
      return "stochastic";
  }
  return "?";
}

float from_bits(uint32_t bits) { return nx::bits_to_float(bits); }
uint32_t to_bits(float value) { return nx::float_to_bits(value); }

std::string hex(uint32_t value) {
  std::ostringstream out;
  out << "0x" << std::hex << value;
  return out.str();
}

// Collects mismatches; reports the first few and their count.
class Mismatches {
 public:
  template <class Describe>
  void check(bool ok, Describe describe) {
    ++checked_;
    if (ok) return;
    if (++count_ <= 8) report_ += describe() + "\n";
  }
  uint64_t count() const { return count_; }
  uint64_t checked() const { return checked_; }
  const std::string& report() const { return report_; }

 private:
  uint64_t count_ = 0;
  uint64_t checked_ = 0;
  std::string report_;
};

#define CHECK_NO_MISMATCHES(m)       \
  do {                               \
    INFO((m).report());              \
    CHECK((m).count() == 0);         \
    CHECK((m).checked() > 0);        \
  } while (false)

// --- the OCP tables, written out -------------------------------------------------

// OCP MX v1.0, FP4 E2M1: codes 0x0..0x7 (0x8..0xF are their negatives).
constexpr double kFp4E2M1[8] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};

// OCP MX v1.0, FP6 E2M3 (bias 1, max 7.5, min normal 1, min subnormal 0.125).
constexpr double kFp6E2M3[32] = {
    0.0,   0.125, 0.25,  0.375, 0.5,   0.625, 0.75,  0.875,  // exponent 00: subnormals
    1.0,   1.125, 1.25,  1.375, 1.5,   1.625, 1.75,  1.875,  // 01
    2.0,   2.25,  2.5,   2.75,  3.0,   3.25,  3.5,   3.75,   // 10
    4.0,   4.5,   5.0,   5.5,   6.0,   6.5,   7.0,   7.5,    // 11
};

// OCP MX v1.0, FP6 E3M2 (bias 3, max 28, min normal 0.25, min subnormal 0.0625).
constexpr double kFp6E3M2[32] = {
    0.0,  0.0625, 0.125, 0.1875,  // exponent 000: subnormals
    0.25, 0.3125, 0.375, 0.4375,  // 001
    0.5,  0.625,  0.75,  0.875,   // 010
    1.0,  1.25,   1.5,   1.75,    // 011
    2.0,  2.5,    3.0,   3.5,     // 100
    4.0,  5.0,    6.0,   7.0,     // 101
    8.0,  10.0,   12.0,  14.0,    // 110
    16.0, 20.0,   24.0,  28.0,    // 111
};

// The non-negative finite values of a format, indexed by magnitude code,
// built without the library: the subnormal row and the first normal row are
// multiples of the smallest subnormal; every later row doubles the row below.
// (The fp4 and fp6 tables above are checked against this construction too.)
std::vector<double> finite_values(const Format& format) {
  if (&format == &nx::fp4_e2m1) return {std::begin(kFp4E2M1), std::end(kFp4E2M1)};
  if (&format == &nx::fp6_e2m3) return {std::begin(kFp6E2M3), std::end(kFp6E2M3)};
  if (&format == &nx::fp6_e3m2) return {std::begin(kFp6E3M2), std::end(kFp6E3M2)};
  const uint32_t row = 1u << format.mantissa_bits;
  const double min_subnormal = std::ldexp(1.0, 1 - format.bias - static_cast<int>(format.mantissa_bits));
  uint32_t finite_count = 0;  // positive codes with a finite value
  if (&format == &nx::bf16) finite_count = 0x7F80;
  if (&format == &nx::f16) finite_count = 0x7C00;
  if (&format == &nx::fp8_e4m3) finite_count = 0x7F;
  if (&format == &nx::fp8_e5m2) finite_count = 0x7C;
  REQUIRE(finite_count != 0);
  std::vector<double> values(finite_count);
  for (uint32_t code = 0; code < finite_count; ++code)
    values[code] = code < 2 * row ? code * min_subnormal : 2.0 * values[code - row];
  return values;
}

// --- an independent reference encoder ---------------------------------------------

struct Reference {
  const Format* format;
  std::vector<double> values;  // by magnitude code, 0 .. max code
  double beyond;               // where the next code would be: max + the top spacing
  uint32_t max_code;
  uint32_t sign_bit;
  uint32_t nan;  // the NaN the encoder returns; formats without NaN: +max
  bool has_inf;
  uint32_t inf;
  unsigned random_bit_count;

  explicit Reference(const Format& f) : format(&f), values(finite_values(f)) {
    max_code = static_cast<uint32_t>(values.size() - 1);
    beyond = values[max_code] + (values[max_code] - values[max_code - 1]);
    sign_bit = 1u << (f.bits() - 1);
    const bool has_nan = &f != &nx::fp4_e2m1 && &f != &nx::fp6_e2m3 && &f != &nx::fp6_e3m2;
    nan = has_nan ? sign_bit - 1 : max_code;  // all exponent and mantissa bits set
    has_inf = &f == &nx::bf16 || &f == &nx::f16 || &f == &nx::fp8_e5m2;
    inf = max_code + 1;  // for the IEEE-like formats the code after the largest finite one
    random_bit_count = 23 - f.mantissa_bits;
  }

  // What the rounded magnitude code `code` (max_code + 1 means beyond) becomes.
  uint32_t finish(uint32_t code, bool negative, Rounding rounding, Overflow overflow) const {
    const uint32_t sign = negative ? sign_bit : 0;
    if (code <= max_code) return sign | code;
    const bool toward_zero = rounding == Rounding::TowardZero || (rounding == Rounding::TowardNegative && !negative) ||
                             (rounding == Rounding::TowardPositive && negative);
    if (overflow == Overflow::Saturate || toward_zero) return sign | max_code;
    if (has_inf) return sign | inf;
    if (nan != max_code) return nan;  // e4m3: overflow is NaN
    return sign | max_code;
  }

  // Where x lies: found once, then decided for every rounding and overflow mode.
  struct Position {
    enum Kind { Nan, Inf, Beyond, Finite } kind = Finite;
    bool negative = false;
    bool exact = false;   // Beyond: |x| == beyond; Finite: |x| == values[low]
    uint32_t low = 0;     // Finite: the largest value <= |x|
    int twice_vs_sum = 0;  // the sign of 2|x| - (lower + upper): above, at or below the midpoint
    double scaled = 0;     // floor(the fraction of the way from lower to upper * 2^R)
  };

  Position locate(float x) const {
    Position pos;
    pos.negative = std::signbit(x);
    if (std::isnan(x)) pos.kind = Position::Nan;
    if (std::isinf(x)) pos.kind = Position::Inf;
    if (pos.kind != Position::Finite) return pos;
    const double ax = std::fabs(static_cast<double>(x));
    if (ax >= beyond) {
      pos.kind = Position::Beyond;
      pos.exact = ax == beyond;
      return pos;
    }
    // The largest value <= ax, and the next one (beyond, past the largest).
    const auto it = std::upper_bound(values.begin(), values.end(), ax);
    pos.low = static_cast<uint32_t>(it - values.begin() - 1);
    const double lower = values[pos.low];
    const double upper = pos.low < max_code ? values[pos.low + 1] : beyond;
    pos.exact = ax == lower;
    const double twice = 2.0 * ax, sum = lower + upper;  // both exact
    pos.twice_vs_sum = twice > sum ? 1 : twice == sum ? 0 : -1;
    const double fraction = (ax - lower) / (upper - lower);  // exact (Sterbenz; a power of two)
    pos.scaled = std::floor(std::ldexp(fraction, static_cast<int>(random_bit_count)));
    return pos;
  }

  uint32_t encode(const Position& pos, Rounding rounding, Overflow overflow, uint32_t random) const {
    const uint32_t sign = pos.negative ? sign_bit : 0;
    switch (pos.kind) {
      case Position::Nan:
        return nan;
      case Position::Inf:
        if (overflow == Overflow::Saturate) return sign | max_code;
        if (has_inf) return sign | inf;
        if (nan != max_code) return nan;
        return sign | max_code;
      case Position::Beyond:
        return finish(pos.exact ? max_code + 1 : max_code + 2, pos.negative, rounding, overflow);
      case Position::Finite:
        break;
    }
    if (pos.exact) return finish(pos.low, pos.negative, rounding, overflow);
    bool up = false;
    switch (rounding) {
      case Rounding::NearestEven:
        up = pos.twice_vs_sum > 0 || (pos.twice_vs_sum == 0 && (pos.low & 1) != 0);
        break;
      case Rounding::NearestAway:
        up = pos.twice_vs_sum >= 0;
        break;
      case Rounding::TowardZero:
        up = false;
        break;
      case Rounding::TowardPositive:
        up = !pos.negative;
        break;
      case Rounding::TowardNegative:
        up = pos.negative;
        break;
      case Rounding::Stochastic: {
        // The position truncated to R bits plus R random bits: a carry means up.
        const double random_part = static_cast<double>(random & ((1u << random_bit_count) - 1));
        up = pos.scaled + random_part >= std::ldexp(1.0, static_cast<int>(random_bit_count));
        break;
      }
    }
    return finish(pos.low + (up ? 1 : 0), pos.negative, rounding, overflow);
  }
};

// The f32 values a format's encoder is checked on.
// For the 16-bit formats (32k values each) every point is taken with one
// sign, alternating every second code so that both signs meet both parities
// of the lower neighbour; the quarter points are taken at every 16th code.
std::vector<uint32_t> sweep(const Reference& ref, uint32_t stride) {
  std::vector<uint32_t> xs;
  // A stride over every bit pattern (the stride is odd so every residue of the
  // low bits shows up), starting from a few offsets.
  for (uint32_t offset : {0u, 1u, 0x1234567u})
    for (uint64_t bits = offset; bits <= 0xFFFFFFFFu; bits += stride) xs.push_back(static_cast<uint32_t>(bits));
  const bool wide = ref.format->bits() == 16;
  auto add_around = [&xs](double value, bool positive, bool negative) {
    const auto f = static_cast<float>(value);
    if (static_cast<double>(f) != value) return;  // not an f32 (cannot happen for these formats)
    for (float v : {f, std::nextafter(f, 0.0f), std::nextafter(f, std::numeric_limits<float>::infinity())}) {
      if (positive) xs.push_back(to_bits(v));
      if (negative) xs.push_back(to_bits(-v));
    }
  };
  // Every value, every midpoint, including the one between the largest value
  // and `beyond` (the overflow threshold of round-to-nearest), and beyond.
  for (size_t code = 0; code < ref.values.size(); ++code) {
    const bool positive = !wide || (code & 2) == 0, negative = !wide || (code & 2) != 0;
    add_around(ref.values[code], positive, negative);
    const double next = code + 1 < ref.values.size() ? ref.values[code + 1] : ref.beyond;
    add_around((ref.values[code] + next) / 2, positive, negative);
    if (!wide || code % 16 == 0)  // a quarter of the way: stochastic rounding's resolution
      add_around((3 * ref.values[code] + next) / 4, positive, negative);
  }
  for (size_t code = ref.values.size() - 4; code < ref.values.size(); ++code) {  // the top, both signs
    const double next = code + 1 < ref.values.size() ? ref.values[code + 1] : ref.beyond;
    add_around((ref.values[code] + next) / 2, true, true);
  }
  add_around(ref.beyond, true, true);
  add_around(2 * ref.beyond, true, true);
  // Specials and f32 extremes.
  for (uint32_t bits : {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u, 0x7F800001u,
                        0xFF800001u, 0x7FFFFFFFu, 0xFFFFFFFFu, 0x7FA00000u, 0x00000001u, 0x80000001u, 0x007FFFFFu,
                        0x00800000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x00400000u, 0x00000002u, 0x00000003u})
    xs.push_back(bits);
  return xs;
}

void check_encoder_against_reference(const Format& format, uint32_t stride) {
  const Reference ref(format);
  const std::vector<uint32_t> xs = sweep(ref, stride);
  const uint32_t r = format.random_bit_count();
  const uint32_t all_random = (1u << r) - 1;
  Mismatches mismatches;
  uint64_t index = 0;
  for (uint32_t x : xs) {
    const Reference::Position pos = ref.locate(from_bits(x));
    // Stochastic: no random bits, all of them, the top one, bits from the generator.
    const uint32_t randoms[] = {0u, all_random, 1u << (r - 1), nx::random_bits(7, index++)};
    for (Overflow overflow : kOverflows) {
      for (Rounding rounding : kRoundings) {
        const bool stochastic = rounding == Rounding::Stochastic;
        for (uint32_t random : randoms) {
          const uint32_t got = nx::encode_bits(format, x, rounding, overflow, random);
          const uint32_t want = ref.encode(pos, rounding, overflow, random);
          mismatches.check(got == want, [&] {
            return std::string(format.name) + " x=" + hex(x) + " (" + std::to_string(from_bits(x)) + ") " +
                   rounding_name(rounding) + (overflow == Overflow::Saturate ? " saturate" : " propagate") +
                   " random=" + hex(random) + ": got " + hex(got) + ", reference " + hex(want);
          });
          if (!stochastic) break;
        }
      }
    }
  }
  MESSAGE(std::string(format.name) << ": " << xs.size() << " f32 values, " << mismatches.checked() << " encodings compared");
  CHECK_NO_MISMATCHES(mismatches);
}

bool same_value(float got, double want, bool want_negative_zero = false) {
  if (got != want) return false;
  return want != 0.0 || std::signbit(got) == want_negative_zero;
}

}  // namespace

// --- formats and decoding ---------------------------------------------------------

TEST_SUITE("numerics.formats") {
  TEST_CASE("format descriptors match the OCP and IEEE parameters") {
    struct Row {
      const Format* format;
      unsigned bits, e, m;
      int bias;
      bool inf, nan;
      double max, min_normal, min_subnormal;
    };
    const Row rows[] = {
        {&nx::bf16, 16, 8, 7, 127, true, true, 3.38953138925153547590470800371487866880e38, 0x1p-126, 0x1p-133},
        {&nx::f16, 16, 5, 10, 15, true, true, 65504.0, 0x1p-14, 0x1p-24},
        {&nx::fp8_e4m3, 8, 4, 3, 7, false, true, 448.0, 0x1p-6, 0x1p-9},
        {&nx::fp8_e5m2, 8, 5, 2, 15, true, true, 57344.0, 0x1p-14, 0x1p-16},
        {&nx::fp6_e2m3, 6, 2, 3, 1, false, false, 7.5, 1.0, 0.125},
        {&nx::fp6_e3m2, 6, 3, 2, 3, false, false, 28.0, 0.25, 0.0625},
        {&nx::fp4_e2m1, 4, 2, 1, 1, false, false, 6.0, 1.0, 0.5},
    };
    for (const Row& row : rows) {
      const Format& f = *row.format;
      INFO(f.name);
      CHECK(f.bits() == row.bits);
      CHECK(f.exponent_bits == row.e);
      CHECK(f.mantissa_bits == row.m);
      CHECK(f.bias == row.bias);
      CHECK(f.has_inf == row.inf);
      CHECK(f.has_nan() == row.nan);
      CHECK(nx::max_finite(f) == row.max);
      CHECK(nx::decode(f, 1u << f.mantissa_bits) == row.min_normal);
      CHECK(nx::decode(f, 1) == row.min_subnormal);
      CHECK(nx::find_format(f.name) == &f);
    }
    CHECK(nx::find_format("fp8") == nullptr);
    CHECK(std::size(nx::all_formats) == 7);
  }

  TEST_CASE("every fp4 and fp6 code decodes to the OCP MX table value") {
    struct Table {
      const Format* format;
      const double* values;
      uint32_t count;
    };
    for (const Table& table : {Table{&nx::fp4_e2m1, kFp4E2M1, 8}, Table{&nx::fp6_e2m3, kFp6E2M3, 32},
                               Table{&nx::fp6_e3m2, kFp6E3M2, 32}}) {
      INFO(table.format->name);
      for (uint32_t code = 0; code < table.count; ++code) {
        INFO("code " << hex(code));
        CHECK(same_value(nx::decode(*table.format, code), table.values[code]));
        CHECK(same_value(nx::decode(*table.format, code | table.count), -table.values[code], true));
        CHECK_FALSE(table.format->is_nan(code));
        CHECK_FALSE(table.format->is_inf(code | table.count));
      }
      // The written-out table is the OCP table: strictly increasing, each
      // normal row (after the first) twice the one below it.
      const uint32_t row = 1u << table.format->mantissa_bits;
      for (uint32_t code = 1; code < table.count; ++code) CHECK(table.values[code] > table.values[code - 1]);
      for (uint32_t code = 2 * row; code < table.count; ++code)
        CHECK(table.values[code] == 2 * table.values[code - row]);
    }
    // Bits above the format's width are ignored.
    CHECK(nx::decode(nx::fp4_e2m1, 0xF7) == 6.0f);
    CHECK(nx::decode(nx::fp4_e2m1, 0xFF) == -6.0f);
    CHECK(nx::decode(nx::fp6_e3m2, 0xC1) == 0.0625f);
  }

  TEST_CASE("fp8_e4m3: the OCP OFP8 key values and special codes") {
    const Format& f = nx::fp8_e4m3;
    CHECK(same_value(nx::decode(f, 0x00), 0.0));
    CHECK(same_value(nx::decode(f, 0x80), -0.0, true));
    CHECK(nx::decode(f, 0x01) == 0.001953125f);  // min subnormal 2^-9, S.0000.001
    CHECK(nx::decode(f, 0x07) == 0.013671875f);  // max subnormal 0.875 * 2^-6, S.0000.111
    CHECK(nx::decode(f, 0x08) == 0.015625f);     // min normal 2^-6, S.0001.000
    CHECK(nx::decode(f, 0x38) == 1.0f);          // S.0111.000
    CHECK(nx::decode(f, 0x3C) == 1.5f);
    CHECK(nx::decode(f, 0x40) == 2.0f);
    CHECK(nx::decode(f, 0x77) == 240.0f);
    CHECK(nx::decode(f, 0x78) == 256.0f);  // 0x78..0x7E are numbers: E4M3 has no infinity
    CHECK(nx::decode(f, 0x7D) == 416.0f);
    CHECK(nx::decode(f, 0x7E) == 448.0f);   // max normal 1.75 * 2^8, S.1111.110
    CHECK(nx::decode(f, 0xFE) == -448.0f);
    CHECK(std::isnan(nx::decode(f, 0x7F)));  // NaN S.1111.111, the only NaNs
    CHECK(std::isnan(nx::decode(f, 0xFF)));
    CHECK(std::signbit(nx::decode(f, 0xFF)));
    for (uint32_t code = 0; code < 256; ++code) {
      INFO("code " << hex(code));
      const bool nan = (code & 0x7F) == 0x7F;
      CHECK(f.is_nan(code) == nan);
      CHECK(std::isnan(nx::decode(f, code)) == nan);
      CHECK_FALSE(std::isinf(nx::decode(f, code)));
    }
  }

  TEST_CASE("fp8_e5m2: the OCP OFP8 key values and special codes") {
    const Format& f = nx::fp8_e5m2;
    CHECK(same_value(nx::decode(f, 0x00), 0.0));
    CHECK(same_value(nx::decode(f, 0x80), -0.0, true));
    CHECK(nx::decode(f, 0x01) == 0x1p-16f);      // min subnormal, S.00000.01
    CHECK(nx::decode(f, 0x03) == 0.75f * 0x1p-14f);  // max subnormal, S.00000.11
    CHECK(nx::decode(f, 0x04) == 0x1p-14f);      // min normal, S.00001.00
    CHECK(nx::decode(f, 0x3C) == 1.0f);          // S.01111.00
    CHECK(nx::decode(f, 0x3E) == 1.5f);
    CHECK(nx::decode(f, 0x7A) == 49152.0f);
    CHECK(nx::decode(f, 0x7B) == 57344.0f);      // max normal 1.75 * 2^15, S.11110.11
    CHECK(nx::decode(f, 0xFB) == -57344.0f);
    CHECK(nx::decode(f, 0x7C) == std::numeric_limits<float>::infinity());  // S.11111.00
    CHECK(nx::decode(f, 0xFC) == -std::numeric_limits<float>::infinity());
    for (uint32_t code = 0; code < 256; ++code) {
      INFO("code " << hex(code));
      const bool nan = (code & 0x7C) == 0x7C && (code & 3) != 0;  // S.11111.{01, 10, 11}
      CHECK(f.is_nan(code) == nan);
      CHECK(std::isnan(nx::decode(f, code)) == nan);
      CHECK(std::isinf(nx::decode(f, code)) == ((code & 0x7F) == 0x7C));
    }
  }

  TEST_CASE("every finite code of every format decodes to the table built by rows") {
    for (const Format* format : nx::all_formats) {
      INFO(format->name);
      const std::vector<double> values = finite_values(*format);
      // The table construction agrees with the written-out OCP tables.
      if (format->bits() <= 6) {
        const uint32_t row = 1u << format->mantissa_bits;
        const double min_subnormal = std::ldexp(1.0, 1 - format->bias - static_cast<int>(format->mantissa_bits));
        for (uint32_t code = 0; code < values.size(); ++code)
          CHECK(values[code] == (code < 2 * row ? code * min_subnormal : 2.0 * values[code - row]));
      }
      Mismatches mismatches;
      for (uint32_t code = 0; code < values.size(); ++code) {
        for (uint32_t sign : {0u, format->sign_mask()}) {
          const float got = nx::decode(*format, sign | code);
          const double want = sign != 0 ? -values[code] : values[code];
          mismatches.check(same_value(got, want, sign != 0), [&] {
            return hex(sign | code) + " decodes to " + std::to_string(got) + ", table " + std::to_string(want);
          });
        }
      }
      CHECK(values.size() == format->max_finite_code() + 1);
      CHECK_NO_MISMATCHES(mismatches);
    }
  }

  TEST_CASE("bf16 and f16 decoding against their definitions") {
    // bf16 is the high half of an f32.
    for (uint32_t code = 0; code < 0x10000; ++code) {
      const uint32_t bits = nx::f32_bits_from_bf16(static_cast<uint16_t>(code));
      if (nx::bf16.is_nan(code))
        REQUIRE(bits == ((code << 16) | 0x00400000u));  // quietened, payload kept
      else
        REQUIRE(bits == code << 16);
    }
    const Format& f = nx::f16;
    CHECK(nx::decode(f, 0x3C00) == 1.0f);
    CHECK(nx::decode(f, 0x7BFF) == 65504.0f);
    CHECK(nx::decode(f, 0x0400) == 0x1p-14f);
    CHECK(nx::decode(f, 0x0001) == 0x1p-24f);
    CHECK(nx::decode(f, 0x03FF) == 1023 * 0x1p-24f);
    CHECK(nx::decode(f, 0x7C00) == std::numeric_limits<float>::infinity());
    CHECK(nx::decode_bits(f, 0x7E00) == 0x7FC00000u);
    CHECK(nx::decode_bits(f, 0xFC01) == 0xFFC02000u);  // a signalling NaN comes back quiet with its payload
#if defined(__FLT16_MAX__)
    // The compiler's own _Float16 (an independent implementation).
    for (uint32_t code = 0; code < 0x10000; ++code) {
      const auto h = static_cast<uint16_t>(code);
      _Float16 value;
      std::memcpy(&value, &h, sizeof value);
      const float want = static_cast<float>(value);
      const float got = nx::f16_to_float(h);
      if (std::isnan(want))
        REQUIRE(std::isnan(got));
      else
        REQUIRE(to_bits(got) == to_bits(want));
    }
#endif
  }

  TEST_CASE("decode and encode are constant expressions") {
    static_assert(nx::decode_bits(nx::fp8_e4m3, 0x38) == 0x3F800000u);
    static_assert(nx::encode_bits(nx::fp8_e4m3, 0x43E80000u /* 464 */, Rounding::NearestEven, Overflow::Propagate) ==
                  0x7E);
    static_assert(nx::bf16_from_f32_bits(0x3F808000u) == 0x3F80);  // a tie: to even
    static_assert(nx::f16_from_f32_bits(0x477FF000u) == 0x7C00);   // 65520 overflows to inf
    static_assert(nx::random_bits(0, 0) == 0x6627e8d5u);
    CHECK(true);
  }
}

// --- encoding ---------------------------------------------------------------------

TEST_SUITE("numerics.encode") {
  // Strides are odd and about 2^32 / 2^15 (three offsets): with the values,
  // midpoints and their neighbours some 100k f32 values per 8-bit or smaller
  // format, 200k for bf16 and f16, each under every rounding mode (stochastic
  // with four sets of random bits) and both overflow modes.
  TEST_CASE("fp4_e2m1 against the reference") { check_encoder_against_reference(nx::fp4_e2m1, 131071); }
  TEST_CASE("fp6_e2m3 against the reference") { check_encoder_against_reference(nx::fp6_e2m3, 131071); }
  TEST_CASE("fp6_e3m2 against the reference") { check_encoder_against_reference(nx::fp6_e3m2, 131071); }
  TEST_CASE("fp8_e4m3 against the reference") { check_encoder_against_reference(nx::fp8_e4m3, 131071); }
  TEST_CASE("fp8_e5m2 against the reference") { check_encoder_against_reference(nx::fp8_e5m2, 131071); }
  TEST_CASE("bf16 against the reference") { check_encoder_against_reference(nx::bf16, 131071); }
  TEST_CASE("f16 against the reference") { check_encoder_against_reference(nx::f16, 131071); }

  TEST_CASE("decode then encode is the identity on every code") {
    Mismatches mismatches;
    for (const Format* format : nx::all_formats) {
      for (uint32_t code = 0; code < (2u * format->sign_mask()); ++code) {
        const float value = nx::decode(*format, code);
        for (Rounding rounding : kRoundings) {
          // 16-bit formats: two modes (time under sanitizers); the sweeps cover the rest.
          if (format->bits() == 16 && rounding != Rounding::NearestEven && rounding != Rounding::Stochastic) continue;
          for (Overflow overflow : kOverflows) {
            const uint32_t got = nx::encode(*format, value, rounding, overflow, 0xFFFFFFFFu);
            // NaNs become the canonical NaN; infinities saturate under Saturate.
            uint32_t want = code;
            if (format->is_nan(code)) want = format->canonical_nan();
            if (format->is_inf(code) && overflow == Overflow::Saturate)
              want = (code & format->sign_mask()) | format->max_finite_code();
            mismatches.check(got == want, [&] {
              return std::string(format->name) + " " + hex(code) + " " + rounding_name(rounding) + " -> " + hex(got);
            });
          }
        }
      }
    }
    CHECK_NO_MISMATCHES(mismatches);
  }

  TEST_CASE("bf16 and f16 helpers: round to nearest even") {
    Mismatches mismatches;
    for (uint64_t bits = 0; bits <= 0xFFFFFFFFu; bits += 8191) {
      const auto x = static_cast<uint32_t>(bits);
      const float value = from_bits(x);
      // bf16: the classic add-and-truncate (0x7FFF plus the kept LSB).
      if (!std::isnan(value)) {
        const auto want = static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1)) >> 16);
        const uint16_t got = nx::float_to_bf16(value);
        mismatches.check(got == want, [&] { return "bf16 " + hex(x) + " -> " + hex(got) + ", want " + hex(want); });
      } else {
        mismatches.check(nx::float_to_bf16(value) == 0x7FFF, [&] { return "bf16 NaN " + hex(x); });
      }
#if defined(__FLT16_MAX__)
      // f16: the compiler's float -> _Float16 conversion (round to nearest even).
      const auto h = static_cast<_Float16>(value);
      uint16_t want16;
      std::memcpy(&want16, &h, sizeof want16);
      const uint16_t got16 = nx::float_to_f16(value);
      if (std::isnan(value))
        mismatches.check(got16 == 0x7FFF, [&] { return "f16 NaN " + hex(x); });
      else
        mismatches.check(got16 == want16, [&] { return "f16 " + hex(x) + " -> " + hex(got16) + ", want " + hex(want16); });
#endif
    }
    CHECK(nx::bf16_to_float(nx::float_to_bf16(1.0f)) == 1.0f);
    CHECK(nx::f16_to_float(nx::float_to_f16(0.1f)) == 0.0999755859375f);
    CHECK_NO_MISMATCHES(mismatches);
  }

  TEST_CASE("f64 sources: rounding to odd into f32, then encode, rounds once") {
    auto odd = [](double x) { return to_bits(nx::f32_rounded_to_odd(x)); };
    CHECK(odd(1.0) == 0x3F800000u);                      // exact: unchanged
    CHECK(odd(1.0 + 0x1p-30) == 0x3F800001u);            // dropped bits: the odd neighbour
    CHECK(odd(-(1.0 + 0x1p-30)) == 0xBF800001u);
    CHECK(odd(1.0 + 0x1p-23 - 0x1p-40) == 0x3F800001u);  // nearest would round up to 1 + 2^-23, odd anyway
    CHECK(odd(1.0 + 0x1p-22 - 0x1p-40) == 0x3F800001u);  // nearest gives the even 1 + 2^-22: one below
    CHECK(odd(1e300) == 0x7F7FFFFFu);                    // beyond f32: the largest finite value
    CHECK(odd(-std::numeric_limits<double>::infinity()) == 0xFF800000u);
    CHECK(std::isnan(nx::f32_rounded_to_odd(std::numeric_limits<double>::quiet_NaN())));
    CHECK(odd(1e-300) == 0x00000001u);                   // below every f32 subnormal: sticky
    // 2^25 + 2^17 + 1 is just above a bf16 tie: one rounding gives 2^25 + 2^18,
    // rounding to nearest f32 first would land on the tie and go to even.
    constexpr Rounding rne = Rounding::NearestEven;
    CHECK(nx::encode(nx::bf16, nx::f32_rounded_to_odd(33685505.0), rne, Overflow::Propagate) == 0x4C01u);
    CHECK(nx::encode(nx::bf16, static_cast<float>(33685505.0), rne, Overflow::Propagate) == 0x4C00u);
    // e4m3: 1 + 2^-4 is a tie between 1 and 1.125; just above it rounds up.
    CHECK(nx::encode(nx::fp8_e4m3, nx::f32_rounded_to_odd(1.0625 + 0x1p-40), rne, Overflow::Propagate) == 0x39u);
    CHECK(nx::encode(nx::fp8_e4m3, nx::f32_rounded_to_odd(1.0625), rne, Overflow::Propagate) == 0x38u);
#if defined(__FLT16_MAX__)
    // f16 against the compiler's f64 -> _Float16 conversion (one rounding):
    // every f16 midpoint (the overflow threshold too) and its f64 neighbours
    // at several distances.
    Mismatches mismatches;
    for (uint32_t code = 0; code < 0x7C00; ++code) {
      const double low = nx::f16_to_float(static_cast<uint16_t>(code));
      // Above the largest finite value: 2^16, whose midpoint is the overflow threshold.
      const double high = code == 0x7BFF ? 65536.0 : nx::f16_to_float(static_cast<uint16_t>(code + 1));
      const double middle = (low + high) / 2;
      for (double delta : {0.0, 0x1p-40, 0x1p-30, 0x1p-26}) {
        for (double x : {middle + delta * middle, middle - delta * middle, -(middle + delta * middle)}) {
          const auto h = static_cast<_Float16>(x);
          uint16_t want;
          std::memcpy(&want, &h, sizeof want);
          const uint32_t got = nx::encode(nx::f16, nx::f32_rounded_to_odd(x), rne, Overflow::Propagate);
          mismatches.check(got == want, [&] { return "f16 of f64 " + std::to_string(x) + " -> " + hex(got) + ", want " + hex(want); });
        }
      }
    }
    CHECK_NO_MISMATCHES(mismatches);
#endif
  }

  TEST_CASE("saturation, overflow and the special values, spelled out") {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    constexpr Rounding rne = Rounding::NearestEven;
    constexpr Overflow sat = Overflow::Saturate, prop = Overflow::Propagate;
    auto enc = [](const Format& f, float x, Rounding r, Overflow o) { return nx::encode(f, x, r, o); };

    // fp8_e4m3 (OCP): overflow is NaN, or the max under saturation.
    CHECK(enc(nx::fp8_e4m3, 448.0f, rne, prop) == 0x7E);
    CHECK(enc(nx::fp8_e4m3, 463.99997f, rne, prop) == 0x7E);
    CHECK(enc(nx::fp8_e4m3, 464.0f, rne, prop) == 0x7E);  // a tie with 480 (S.1111.111): to even
    CHECK(enc(nx::fp8_e4m3, 464.00003f, rne, prop) == 0x7F);
    CHECK(enc(nx::fp8_e4m3, 464.00003f, rne, sat) == 0x7E);
    CHECK(enc(nx::fp8_e4m3, -1000.0f, rne, prop) == 0x7F);  // NaN has no sign
    CHECK(enc(nx::fp8_e4m3, -1000.0f, rne, sat) == 0xFE);
    CHECK(enc(nx::fp8_e4m3, inf, rne, prop) == 0x7F);
    CHECK(enc(nx::fp8_e4m3, -inf, rne, sat) == 0xFE);
    CHECK(enc(nx::fp8_e4m3, nan, rne, sat) == 0x7F);
    CHECK(enc(nx::fp8_e4m3, -nan, rne, prop) == 0x7F);
    CHECK(enc(nx::fp8_e4m3, 1000.0f, Rounding::TowardZero, prop) == 0x7E);  // directed toward zero: the max
    CHECK(enc(nx::fp8_e4m3, 449.0f, Rounding::TowardPositive, prop) == 0x7F);
    CHECK(enc(nx::fp8_e4m3, -449.0f, Rounding::TowardPositive, prop) == 0xFE);
    CHECK(enc(nx::fp8_e4m3, 0x1p-10f, rne, prop) == 0x00);       // half the min subnormal: a tie, to even 0
    CHECK(enc(nx::fp8_e4m3, -0x1.000002p-10f, rne, prop) == 0x81);
    CHECK(enc(nx::fp8_e4m3, -0x1p-30f, rne, prop) == 0x80);      // underflow keeps the sign
    CHECK(enc(nx::fp8_e4m3, 0x1p-30f, Rounding::TowardPositive, prop) == 0x01);

    // fp8_e5m2: IEEE-like, overflow is infinity.
    CHECK(enc(nx::fp8_e5m2, 57344.0f, rne, prop) == 0x7B);
    CHECK(enc(nx::fp8_e5m2, 61439.996f, rne, prop) == 0x7B);
    CHECK(enc(nx::fp8_e5m2, 61440.0f, rne, prop) == 0x7C);  // a tie with 65536: to even, which is inf
    CHECK(enc(nx::fp8_e5m2, 61440.0f, rne, sat) == 0x7B);
    CHECK(enc(nx::fp8_e5m2, -1e6f, rne, prop) == 0xFC);
    CHECK(enc(nx::fp8_e5m2, -1e6f, rne, sat) == 0xFB);
    CHECK(enc(nx::fp8_e5m2, inf, rne, prop) == 0x7C);
    CHECK(enc(nx::fp8_e5m2, inf, rne, sat) == 0x7B);
    CHECK(enc(nx::fp8_e5m2, nan, rne, prop) == 0x7F);
    CHECK(enc(nx::fp8_e5m2, 1e6f, Rounding::TowardNegative, prop) == 0x7B);
    CHECK(enc(nx::fp8_e5m2, -1e6f, Rounding::TowardNegative, prop) == 0xFC);

    // fp6 and fp4 (OCP MX): no inf, no NaN: always saturate; NaN is +max.
    CHECK(enc(nx::fp4_e2m1, 5.0f, rne, prop) == 0x6);  // a tie between 4 and 6: to even (4)
    CHECK(enc(nx::fp4_e2m1, 7.0f, rne, prop) == 0x7);  // 7 is the tie with 8: even is 8, overflow, saturate
    CHECK(enc(nx::fp4_e2m1, 1e30f, rne, prop) == 0x7);
    CHECK(enc(nx::fp4_e2m1, -inf, rne, prop) == 0xF);
    CHECK(enc(nx::fp4_e2m1, nan, rne, prop) == 0x7);
    CHECK(enc(nx::fp4_e2m1, -nan, rne, sat) == 0x7);
    CHECK(enc(nx::fp4_e2m1, 0.25f, rne, prop) == 0x0);  // tie with 0.5: to even 0
    CHECK(enc(nx::fp4_e2m1, 0.75f, rne, prop) == 0x2);  // tie 0.5 / 1.0: to even 1.0
    CHECK(enc(nx::fp6_e2m3, 100.0f, rne, prop) == 0x1F);
    CHECK(enc(nx::fp6_e2m3, -7.75f, rne, prop) == 0x3F);
    CHECK(enc(nx::fp6_e3m2, 30.0f, rne, prop) == 0x1F);
    CHECK(enc(nx::fp6_e3m2, -inf, rne, sat) == 0x3F);
    CHECK(enc(nx::fp6_e3m2, nan, rne, sat) == 0x1F);

    // f16 and bf16: IEEE 754.
    CHECK(enc(nx::f16, 65519.996f, rne, prop) == 0x7BFF);
    CHECK(enc(nx::f16, 65520.0f, rne, prop) == 0x7C00);
    CHECK(enc(nx::f16, 65520.0f, rne, sat) == 0x7BFF);
    CHECK(enc(nx::f16, 1e6f, Rounding::TowardZero, prop) == 0x7BFF);
    CHECK(enc(nx::f16, 1e6f, Rounding::TowardPositive, prop) == 0x7C00);
    CHECK(enc(nx::f16, -1e6f, Rounding::TowardNegative, prop) == 0xFC00);
    CHECK(enc(nx::f16, -1e6f, Rounding::TowardPositive, prop) == 0xFBFF);
    CHECK(enc(nx::f16, 0x1p-25f, rne, prop) == 0x0000);  // half the min subnormal: tie to even
    CHECK(enc(nx::f16, 0x1.8p-24f, rne, prop) == 0x0002);  // 1.5 min subnormals: to even 2
    CHECK(enc(nx::f16, 0x1p-25f, Rounding::NearestAway, prop) == 0x0001);
    CHECK(enc(nx::f16, 0x1.ff8p-15f, rne, prop) == 0x03FF);  // max subnormal
    CHECK(enc(nx::f16, 0x1.ffcp-15f, rne, prop) == 0x0400);  // a tie: to even, the min normal
    CHECK(enc(nx::f16, 0x1.ffcp-15f, Rounding::TowardZero, prop) == 0x03FF);
    CHECK(enc(nx::f16, nan, rne, prop) == 0x7FFF);
    CHECK(enc(nx::bf16, std::numeric_limits<float>::max(), rne, prop) == 0x7F80);
    CHECK(enc(nx::bf16, std::numeric_limits<float>::max(), rne, sat) == 0x7F7F);
    CHECK(enc(nx::bf16, std::numeric_limits<float>::denorm_min(), rne, prop) == 0x0000);
    CHECK(enc(nx::bf16, std::numeric_limits<float>::denorm_min(), Rounding::TowardPositive, prop) == 0x0001);
    CHECK(enc(nx::bf16, -nan, rne, prop) == 0x7FFF);
  }
}

// --- stochastic rounding and the generator ----------------------------------------

TEST_SUITE("numerics.stochastic") {
  TEST_CASE("Philox-4x32-10 gives Random123's known answers") {
    struct Kat {
      nx::PhiloxBlock counter;
      uint32_t key0, key1;
      nx::PhiloxBlock want;
    };
    // Random123 kat_vectors: "philox4x32 10 <ctr x4> <key x2> <result x4>".
    const Kat kats[] = {
        {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
        {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
         0xffffffff,
         0xffffffff,
         {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
        {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
         0xa4093822,
         0x299f31d0,
         {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
    };
    for (const Kat& kat : kats) {
      const nx::PhiloxBlock got = nx::philox4x32_10(kat.counter, kat.key0, kat.key1);
      for (int i = 0; i < 4; ++i) CHECK(got.word[i] == kat.want.word[i]);
    }
    // random_bits(seed, counter) is word counter % 4 of block counter / 4.
    CHECK(nx::random_bits(0, 0) == 0x6627e8d5u);
    CHECK(nx::random_bits(0, 1) == 0xe169c58du);
    CHECK(nx::random_bits(0, 2) == 0xbc57ac4cu);
    CHECK(nx::random_bits(0, 3) == 0x9b00dbd8u);
    CHECK(nx::random_bits(0xFFFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFFull) ==
          nx::philox4x32_10({{0xFFFFFFFFu, 0x3FFFFFFFu, 0, 0}}, 0xFFFFFFFFu, 0xFFFFFFFFu).word[3]);
    CHECK(nx::random_bits(0x299f31d0a4093822ull, 4 * 0x05a308d3243f6a88ull + 1) ==
          nx::philox4x32_10({{0x243f6a88, 0x05a308d3, 0, 0}}, 0xa4093822, 0x299f31d0).word[1]);
  }

  TEST_CASE("the generator's bits are balanced") {
    // Each of the 32 bits over 2^16 counters: within 5 standard deviations
    // (0.5 / 256 each) of one half.
    constexpr int n = 1 << 16;
    int ones[32] = {};
    for (uint64_t counter = 0; counter < n; ++counter) {
      const uint32_t bits = nx::random_bits(12345, counter);
      for (int b = 0; b < 32; ++b) ones[b] += (bits >> b) & 1;
    }
    for (int b = 0; b < 32; ++b) {
      INFO("bit " << b);
      CHECK(std::fabs(ones[b] / double(n) - 0.5) < 5 * 0.5 / 256);
    }
  }

  TEST_CASE("stochastic rounding gives one of the two neighbours") {
    Mismatches mismatches;
    for (const Format* format : nx::all_formats) {
      uint64_t counter = 0;
      for (uint64_t bits = 0; bits <= 0xFFFFFFFFu; bits += 1048573) {
        const auto x = static_cast<uint32_t>(bits);
        const float value = from_bits(x);
        if (std::isnan(value) || std::isinf(value)) continue;
        // The neighbours: rounded toward zero and away from it (equal when x is exact).
        const Rounding away = std::signbit(value) ? Rounding::TowardNegative : Rounding::TowardPositive;
        const uint32_t low = nx::encode_bits(*format, x, Rounding::TowardZero, Overflow::Saturate);
        const uint32_t high = nx::encode_bits(*format, x, away, Overflow::Saturate);
        for (int k = 0; k < 8; ++k) {
          const uint32_t got =
              nx::encode_bits(*format, x, Rounding::Stochastic, Overflow::Saturate, nx::random_bits(99, counter++));
          mismatches.check(got == low || got == high, [&] {
            return std::string(format->name) + " " + hex(x) + " -> " + hex(got) + ", neighbours " + hex(low) + " " +
                   hex(high);
          });
        }
      }
    }
    CHECK_NO_MISMATCHES(mismatches);
  }

  TEST_CASE("the mean of stochastically rounded values converges to the input") {
    // N roundings of x, which lies a fraction p of the way from its lower
    // neighbour to its upper one (spacing q), with random bits from the
    // generator: the result is lower + q * Bernoulli(p'), p' = p truncated to
    // R bits (p - 2^-R < p' <= p). The mean's standard deviation is
    // q * sqrt(p (1 - p) / N); the tolerance is 5 of them plus q * 2^-R.
    constexpr int n = 1 << 16;
    struct Case {
      const Format* format;
      float x;
      double lower, upper;
    };
    const Case cases[] = {
        {&nx::fp4_e2m1, 2.5f, 2.0, 3.0},             // p = 1/2
        {&nx::fp4_e2m1, 4.2f, 4.0, 6.0},             // p = 0.1
        {&nx::fp4_e2m1, -0.3f, 0.0, 0.5},            // subnormal range, negative, p = 0.6
        {&nx::fp4_e2m1, 0.01f, 0.0, 0.5},            // p = 0.02
        {&nx::fp6_e2m3, 0.3f, 0.25, 0.375},          // p = 0.4
        {&nx::fp6_e3m2, 13.0f, 12.0, 14.0},          // p = 1/2
        {&nx::fp6_e3m2, 0.03f, 0.0, 0.0625},         // subnormal
        {&nx::fp8_e4m3, 1.0f / 3.0f, 0.3125, 0.34375},  // p ~ 2/3
        {&nx::fp8_e4m3, 300.0f, 288.0, 320.0},       // p = 0.375
        {&nx::fp8_e4m3, 0.004f, 0.00390625, 0.005859375},  // subnormal, p ~ 0.048
        {&nx::fp8_e5m2, 3.3f, 3.0, 3.5},             // p ~ 0.6
        {&nx::fp8_e5m2, -1e-5f, 0.0, 0x1p-16},          // subnormal, negative, p ~ 0.66
        {&nx::bf16, 1.001f, 1.0, 1.0078125},         // p ~ 0.128
        {&nx::f16, 0.1f, 0.0999755859375, 0.10003662109375},  // p = 0.4
        {&nx::f16, 3e-8f, 0.0, 0x1p-24},             // f16 subnormal range, p ~ 0.50
    };
    for (const Case& c : cases) {
      const Format& f = *c.format;
      const double ax = std::fabs(static_cast<double>(c.x));
      REQUIRE(c.lower < ax);
      REQUIRE(ax < c.upper);
      // The neighbours are what round-toward-zero and away give.
      REQUIRE(std::fabs(nx::quantize(f, c.x, Rounding::TowardZero, Overflow::Saturate)) == c.lower);
      REQUIRE(std::fabs(nx::quantize(f, c.x, c.x > 0 ? Rounding::TowardPositive : Rounding::TowardNegative,
                                     Overflow::Saturate)) == c.upper);
      const double q = c.upper - c.lower;
      const double p = (ax - c.lower) / q;
      const double sigma = q * std::sqrt(p * (1 - p) / n);
      const double tolerance = 5 * sigma + q * std::ldexp(1.0, -static_cast<int>(f.random_bit_count()));
      double sum = 0;
      for (uint64_t i = 0; i < n; ++i)
        sum += nx::quantize(f, c.x, Rounding::Stochastic, Overflow::Saturate, nx::random_bits(2024, i));
      const double mean = sum / n;
      INFO(f.name << " x=" << c.x << " p=" << p << " mean=" << mean << " tolerance=" << tolerance);
      CHECK(std::fabs(mean - static_cast<double>(c.x)) <= tolerance);
      // And round to nearest is biased here whenever p != 1/2: the test can fail.
      if (std::fabs(p - 0.5) > 0.05)
        CHECK(std::fabs(std::fabs(nx::quantize(f, c.x, Rounding::NearestEven, Overflow::Saturate)) - ax) >
              tolerance);
    }
  }

  TEST_CASE("stochastic rounding is reproducible from the seed") {
    auto sequence = [](uint64_t seed) {
      std::vector<uint32_t> codes;
      for (uint64_t i = 0; i < 4096; ++i)
        codes.push_back(nx::encode(nx::fp8_e4m3, 0.3f + 0.001f * static_cast<float>(i % 7), Rounding::Stochastic,
                                   Overflow::Saturate, nx::random_bits(seed, i)));
      return codes;
    };
    CHECK(sequence(1) == sequence(1));
    CHECK(sequence(1) != sequence(2));
    CHECK(nx::random_bits(1, 5) == nx::random_bits(1, 5));
    CHECK(nx::random_bits(1, 5) != nx::random_bits(2, 5));
    CHECK(nx::random_bits(1, 5) != nx::random_bits(1, 6));
  }
}

// --- packed storage -----------------------------------------------------------------

TEST_SUITE("numerics.packing") {
  TEST_CASE("fp4: two per byte, the even element in the low nibble") {
    uint8_t bytes[2] = {0, 0};
    nx::fp4_set(bytes, 0, 0x1);
    nx::fp4_set(bytes, 1, 0x2);
    nx::fp4_set(bytes, 2, 0xF);
    CHECK(bytes[0] == 0x21);
    CHECK(bytes[1] == 0x0F);
    CHECK(nx::fp4_get(bytes, 0) == 0x1);
    CHECK(nx::fp4_get(bytes, 1) == 0x2);
    CHECK(nx::fp4_get(bytes, 2) == 0xF);
    CHECK(nx::fp4_get(bytes, 3) == 0x0);
    nx::fp4_set(bytes, 0, 0x1F);  // only the low 4 bits are stored
    CHECK(bytes[0] == 0x2F);
    CHECK(nx::packed_bytes(3, 4) == 2);
    CHECK(nx::packed_bytes(4, 4) == 2);
  }

  TEST_CASE("fp6: element i at bits [6i, 6i + 6), least significant bit first") {
    // Four elements a, b, c, d fill three bytes:
    //   byte 0 = a | b << 6, byte 1 = b >> 2 | c << 4, byte 2 = c >> 4 | d << 2.
    uint8_t bytes[3] = {0, 0, 0};
    const uint32_t a = 0x15, b = 0x2B, c = 0x0E, d = 0x31;
    nx::fp6_set(bytes, 0, a);
    nx::fp6_set(bytes, 1, b);
    nx::fp6_set(bytes, 2, c);
    nx::fp6_set(bytes, 3, d);
    CHECK(bytes[0] == static_cast<uint8_t>(a | (b << 6)));
    CHECK(bytes[1] == static_cast<uint8_t>((b >> 2) | (c << 4)));
    CHECK(bytes[2] == static_cast<uint8_t>((c >> 4) | (d << 2)));
    CHECK(nx::fp6_get(bytes, 0) == a);
    CHECK(nx::fp6_get(bytes, 1) == b);
    CHECK(nx::fp6_get(bytes, 2) == c);
    CHECK(nx::fp6_get(bytes, 3) == d);
    CHECK(nx::packed_bytes(1, 6) == 1);
    CHECK(nx::packed_bytes(3, 6) == 3);
    CHECK(nx::packed_bytes(4, 6) == 3);
    CHECK(nx::packed_bytes(5, 6) == 4);
  }

  TEST_CASE("round trips, neighbours untouched, no access past the buffer") {
    for (unsigned bits : {4u, 6u, 8u, 3u}) {
      for (uint64_t n = 1; n <= 37; ++n) {
        INFO("bits " << bits << ", " << n << " elements");
        // Exactly packed_bytes(n) bytes: AddressSanitizer catches any access past them.
        std::vector<uint8_t> buffer(nx::packed_bytes(n, bits), 0xA5);
        std::vector<uint32_t> want(n);
        const uint32_t mask = (1u << bits) - 1;
        for (uint64_t i = 0; i < n; ++i) {
          want[i] = nx::random_bits(bits, i) & mask;
          nx::packed_set(buffer.data(), i, bits, want[i] | ~mask);
        }
        bool ok = true;
        for (uint64_t i = 0; i < n; ++i) ok = ok && nx::packed_get(buffer.data(), i, bits) == want[i];
        CHECK(ok);
        // The unused bits of the last byte are untouched (0xA5's).
        const uint64_t used = n * bits % 8;
        if (used != 0) CHECK((buffer.back() >> used) == (0xA5 >> used));
        // Rewriting one element leaves the others.
        for (uint64_t i = 0; i < n; ++i) {
          nx::packed_set(buffer.data(), i, bits, ~want[i]);
          bool others = true;
          for (uint64_t j = 0; j < n; ++j)
            others = others && nx::packed_get(buffer.data(), j, bits) == (j == i ? (~want[i] & mask) : want[j]);
          CHECK(others);
          nx::packed_set(buffer.data(), i, bits, want[i]);
        }
      }
    }
  }

  TEST_CASE("quantise a vector into packed fp4 and back") {
    const float input[] = {0.0f, 0.4f, -1.2f, 2.6f, 5.5f, -7.0f, 3.0f};
    std::vector<uint8_t> packed(nx::packed_bytes(std::size(input), 4));
    for (size_t i = 0; i < std::size(input); ++i)
      nx::fp4_set(packed.data(), i, nx::encode(nx::fp4_e2m1, input[i], Rounding::NearestEven, Overflow::Saturate));
    const float want[] = {0.0f, 0.5f, -1.0f, 3.0f, 6.0f, -6.0f, 3.0f};
    for (size_t i = 0; i < std::size(input); ++i) CHECK(nx::decode(nx::fp4_e2m1, nx::fp4_get(packed.data(), i)) == want[i]);
  }
}
