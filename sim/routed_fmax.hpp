// SPDX-License-Identifier: Apache-2.0
// The clock a configuration of the NI reaches: the Fmax of its latest place-and-route
// record (docs/figures/synth-runs/CONFIG-ecp5/pnr.json, nextpnr's report, written by
// make synth), so that the benchmarks can give latencies in ns as well as in cycles.
#pragma once
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>

namespace ni {

struct RoutedFmax {
  double mhz = 0;
  std::string rtl;  // the RTL revision the record measured
  double ns(double cycles) const { return cycles * 1000.0 / mhz; }
};

// No record, or a record of a run that did not route (no Fmax in it): nothing. The
// repository is found from this header's own path (the build includes it by its
// absolute path: sim/ is on the include path).
inline std::optional<RoutedFmax> routedFmax(const std::string& config, const std::string& family = "ecp5") {
  const std::string here = __FILE__;
  const std::string root = here.substr(0, here.rfind("/sim/"));
  const std::string dir = root + "/docs/figures/synth-runs/" + config + "-" + family;
  std::ifstream f(dir + "/pnr.json");
  if (!f) return std::nullopt;
  std::stringstream s;
  s << f.rdbuf();
  const std::string text = s.str();
  // {"fmax": {"clk_i": {"achieved": 31.74..., "constraint": 125}}}
  static const std::regex kFmax(R"re("fmax"\s*:\s*\{\s*"clk_i"\s*:\s*\{\s*"achieved"\s*:\s*([0-9.eE+-]+))re");
  const size_t at = text.find("\"fmax\"");
  if (at == std::string::npos) return std::nullopt;
  const std::string part = text.substr(at, 200);
  std::smatch m;
  if (!std::regex_search(part, m, kFmax)) return std::nullopt;
  RoutedFmax r;
  r.mhz = std::stod(m[1].str());
  std::ifstream rev(dir + "/rtl_rev.txt");
  std::getline(rev, r.rtl);
  return r.mhz > 0 ? std::optional<RoutedFmax>(r) : std::nullopt;
}

}  // namespace ni
