// The schedule hints (schedule_hints.def) as an enum: what sema records for
// a schedule directive and what lowering and the IR passes switch over; the
// IR keeps the attribute names.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tessera {

enum class ScheduleHint : uint8_t {
#define TESSERA_SCHEDULE_HINT(Name, attribute) Name,
#include "support/schedule_hints.def"
#undef TESSERA_SCHEDULE_HINT
};

inline constexpr std::string_view kScheduleHintNames[] = {
#define TESSERA_SCHEDULE_HINT(Name, attribute) attribute,
#include "support/schedule_hints.def"
#undef TESSERA_SCHEDULE_HINT
};

inline constexpr ScheduleHint kScheduleHints[] = {
#define TESSERA_SCHEDULE_HINT(Name, attribute) ScheduleHint::Name,
#include "support/schedule_hints.def"
#undef TESSERA_SCHEDULE_HINT
};

// The IR attribute of `hint`.
inline std::string_view schedule_hint_name(ScheduleHint hint) { return kScheduleHintNames[static_cast<size_t>(hint)]; }

// The hint whose attribute is `name`, or nullopt.
inline std::optional<ScheduleHint> schedule_hint_by_name(std::string_view name) {
  for (size_t i = 0; i < std::size(kScheduleHintNames); ++i)
    if (kScheduleHintNames[i] == name) return static_cast<ScheduleHint>(i);
  return std::nullopt;
}

}  // namespace tessera
