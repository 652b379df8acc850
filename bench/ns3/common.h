// What the ns-3 programs of bench/ns3 (dumbbell.cc, datacenter.cc) share: TCP configured as
// ccsim's scenarios state it, the static routes of a dumbbell addressed 10.1/16 (left hosts),
// 10.2/16 (right hosts) and 10.3/16 (between the routers) and the check of an option's
// choices; numbers in JSON and the peak memory come from bench/twin_json.h.
// run.py compiles each program with this header and rebuilds both when it changes.

#pragma once

#include "twin_json.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"

#include <initializer_list>
#include <iostream>
#include <string>

namespace twin
{

// TCP with SACK and timestamps, 1448-byte segments (20 B IP + 20 B TCP + 12 B timestamp
// option = 1500-byte IP packets, ccsim's `mss = 1448`, `header = 52`), delayed ACK every
// `delAckCount` segments with the 200 ms timer, minimum RTO 1 s, 4 MiB send and receive
// buffers (window scaling on) and classic recovery: ns-3's default is PRR (RFC 6937), which
// ccsim does not implement; classic recovery sets cwnd = ssthresh and sends while pipe <
// cwnd, RFC 6675 as ccsim. `socketType` is an ns-3 TypeId name such as "ns3::TcpNewReno".
inline void
ConfigureTcp(const std::string& socketType, uint32_t initialCwnd, uint32_t delAckCount)
{
    using namespace ns3;
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TypeId::LookupByName(socketType)));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(initialCwnd));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(delAckCount));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4u << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4u << 20));
    // ns-3 aborts a connection after DataRetries retransmissions of one segment (default 6);
    // ccsim never gives up, so neither may ns-3 here.
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(1000));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(1)));
    // For TcpCubic: ns-3's HyStart is the original (Ha & Rhee 2011), ccsim's HyStart++ (RFC
    // 9406) and off by default: neither runs. ns-3's other CUBIC defaults are ccsim's (beta
    // 0.7, C 0.4, fast convergence and the Reno-friendly region on).
    Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(false));
}

// Static routes instead of global routing (the same paths, without all-pairs routes): a host
// at index `host` (0 or 1) of its link's interfaces defaults to the router at the other end.
inline void
DefaultRouteToRouter(ns3::Ipv4StaticRoutingHelper& routing, const ns3::Ipv4InterfaceContainer& link, uint32_t host)
{
    auto end = link.Get(host);
    routing.GetStaticRouting(end.first)->SetDefaultRoute(link.GetAddress(1 - host), end.second);
}

// Router A (interface 0 of `core`) sends 10.2/16 to B, B sends 10.1/16 to A.
inline void
RouteBetweenRouters(ns3::Ipv4StaticRoutingHelper& routing, const ns3::Ipv4InterfaceContainer& core)
{
    routing.GetStaticRouting(core.Get(0).first)
        ->AddNetworkRouteTo("10.2.0.0", "255.255.0.0", core.GetAddress(1), core.Get(0).second);
    routing.GetStaticRouting(core.Get(1).first)
        ->AddNetworkRouteTo("10.1.0.0", "255.255.0.0", core.GetAddress(0), core.Get(1).second);
}

// Whether option `--option` of `program` has one of the `allowed` values; if not, says so on
// stderr, and the caller exits with status 2.
inline bool
OneOf(const char* program, const char* option, const std::string& value, std::initializer_list<const char*> allowed)
{
    for (const char* a : allowed)
    {
        if (value == a)
        {
            return true;
        }
    }
    std::cerr << program << ": --" << option << " must be one of";
    for (const char* a : allowed)
    {
        std::cerr << " " << a;
    }
    std::cerr << ", not '" << value << "'\n";
    return false;
}

} // namespace twin
