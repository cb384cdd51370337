#include "tessera/core/problem.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "tessera/core/error.hpp"
#include "tessera/core/params.hpp"

namespace tessera {

namespace {
std::map<std::string, ProblemInfo>& registry() {
  static std::map<std::string, ProblemInfo> r;
  return r;
}
}  // namespace

void register_problem(ProblemInfo info) {
  auto name = info.name;
  if (!registry().emplace(name, std::move(info)).second)
    throw Error(ErrorKind::kInternal, "problem '" + name + "' registered twice");
}

const ProblemInfo& find_problem(const std::string& name) {
  auto it = registry().find(name);
  if (it != registry().end()) return it->second;
  std::string known;
  for (const auto& [n, info] : registry()) known += (known.empty() ? "" : ", ") + n;
  throw Error(ErrorKind::kInput,
              "unknown problem '" + shorten_for_message(name) + "'; known problems: " + known);
}

std::unique_ptr<Problem> create_problem(const Params& params) {
  const std::string& name = params.string("problem.name");
  const ProblemInfo& info = find_problem(name);
  try {
    return info.create(params);
  } catch (const Error& e) {
    throw Error(e.kind(), "[problem] " + name + ": " + e.what());
  }
}

std::vector<const ProblemInfo*> all_problems() {
  std::vector<const ProblemInfo*> out;
  for (const auto& [n, info] : registry()) out.push_back(&info);
  return out;
}

kernels::Cons gauss_cell_average(const CellBox& cell,
                                 const std::function<kernels::Cons(std::array<double, 3>)>& f) {
  static const double kNode[3] = {-std::sqrt(0.6), 0.0, std::sqrt(0.6)};
  static const double kWeight[3] = {5.0 / 18, 8.0 / 18, 5.0 / 18};
  double acc[5] = {0, 0, 0, 0, 0};
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i) {
        const int q[3] = {i, j, k};
        std::array<double, 3> x{};
        for (int d = 0; d < 3; ++d)
          x[d] = 0.5 * (cell.lo[d] + cell.hi[d]) + 0.5 * (cell.hi[d] - cell.lo[d]) * kNode[q[d]];
        const kernels::Cons u = f(x);
        const double w = kWeight[i] * kWeight[j] * kWeight[k];
        acc[0] += w * u.dens;
        for (int d = 0; d < 3; ++d) acc[1 + d] += w * u.mom[d];
        acc[4] += w * u.engy;
      }
  return {Real(acc[0]), {Real(acc[1]), Real(acc[2]), Real(acc[3])}, Real(acc[4])};
}

}  // namespace tessera
