// The sizes every part of the mesh agrees on: 8^3-cell patches in families (patch groups)
// of 8, at most 11 levels.
#pragma once

namespace tessera::mesh {

inline constexpr int kPatchSize = 8;
inline constexpr int kPatchCells = kPatchSize * kPatchSize * kPatchSize;
inline constexpr int kFamilySize = 8;  // patches per patch group
inline constexpr int kMaxLevels = 11;  // root + 10 refinement levels
inline constexpr int kNoPatch = -1;    // outside a non-periodic boundary, or not refined

}  // namespace tessera::mesh
