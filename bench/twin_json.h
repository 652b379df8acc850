// What every C++ twin of bench/ (bench/ns3/dumbbell.cc and datacenter.cc, bench/htsim/
// dumbbell.cpp) writes the same way, whatever simulator it drives: numbers in its JSON line
// and the process's peak memory. No simulator header here, so that each build can include it.
// bench/ns3/run.py and bench/htsim/run.py compile with -I bench and rebuild when it changes.

#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace twin
{

// A number for JSON: 17 significant digits (it reads back as the same double), null when not
// finite.
inline std::string
Num(double x)
{
    if (!std::isfinite(x))
    {
        return "null";
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
}

// The process's peak resident memory (VmHWM), as ccsim-bench reports its own.
inline uint64_t
PeakRssBytes()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
    {
        if (line.rfind("VmHWM:", 0) == 0)
        {
            std::istringstream in(line.substr(6));
            uint64_t kb = 0;
            in >> kb;
            return kb * 1024;
        }
    }
    return 0;
}

} // namespace twin
