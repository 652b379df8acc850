// Piotrowska's Data Center dumbbell (scenarios/papers/piotrowska/data_center.toml) in ns-3
// (3.44, the PyPI `ns3` package), with DropTail at the bottleneck: an experiment on the
// lock-outs that docs/reproductions.md ("Lock-outs and exact ties") traces to the order of
// simultaneous events. Not part of CI; bench/ns3/datacenter.py compiles and runs it.
//
//   N1, N2, N3 (s0..s2) -- A ==(1 Gbit/s, 0 delay)== B -- N4, N5, N6 (r0..r2)
//   all links 1 Gbit/s; s0, s1, r0 attach with 10 us, s2, r1, r2 with 100 us;
//   `count` flows from every source to every sink (9, 90, 900 flows).
//
// TCP as the ccsim scenario states ns-3.30's defaults and the paper's choices: NewReno (or,
// with --cc, CUBIC as `ccsim reproduce piotrowska` runs it: Reno-friendly region and fast
// convergence on, HyStart off) with SACK and timestamps, 1448-byte segments (1500-byte IP
// packets), initial window 1 segment, delayed ACK every 2nd segment with the 200 ms timer,
// minimum RTO 1 s, 4 MiB buffers, classic (RFC 6675) recovery, bulk senders starting
// uniformly in [0, 3) s; 100 s, statistics from 30 s.
//
// Two buffer arrangements (--stack):
// - `one`: one buffer per link direction, as ccsim models it and as bench/ns3/dumbbell.cc
//   builds it: no queue discs, the bottleneck's device queue DropTail 900 packets, every other
//   device queue 1000.
// - `tc`: ns-3's own arrangement as the paper would have had it: a root queue disc on every
//   device (FIFO 900 packets at the bottleneck, pfifo_fast 1000 elsewhere, ns-3.30's default)
//   above a 100-packet DropTail device queue, with the device's flow control between them
//   (no BQL).
//
// Output: one JSON object: per flow its source group and goodput over [30 s, 100 s); the
// bottleneck queue's mean length (queue disc plus device queue, sampled every 10 ms from
// 30 s); with `tc`, the drops at the bottleneck over the window (with `one` they are not
// counted, null: a full device queue stops the transmission queue and the traffic-control
// layer discards what IP hands it without a trace; dumbbell.cc counts them).
//
// Usage: datacenter --count=1 --seed=1 --stack=one [--cc=TcpNewReno] [--duration=100]
//        [--warmup=30]

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include "common.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

Ptr<Queue<Packet>> g_device;  // A's device towards B
Ptr<QueueDisc> g_disc;        // its root queue disc (stack `tc` only)
double g_warmup = 30.0;
double g_qSum = 0;
uint64_t g_qN = 0;

uint32_t
BottleneckLen()
{
    return g_device->GetNPackets() + (g_disc ? g_disc->GetNPackets() : 0);
}

void
SampleQueue(Time interval)
{
    if (Simulator::Now().GetSeconds() >= g_warmup)
    {
        g_qSum += BottleneckLen();
        g_qN++;
    }
    Simulator::Schedule(interval, &SampleQueue, interval);
}

uint64_t
BottleneckDrops()
{
    return g_device->GetTotalDroppedPackets() + (g_disc ? g_disc->GetStats().nTotalDroppedPackets : 0);
}

uint64_t g_dropsAtWarmup = 0;
std::vector<uint64_t> g_rxAtWarmup;

void
AtWarmup(std::vector<Ptr<PacketSink>>* sinks)
{
    for (size_t i = 0; i < sinks->size(); ++i)
    {
        g_rxAtWarmup[i] = (*sinks)[i]->GetTotalRx();
    }
    g_dropsAtWarmup = BottleneckDrops();
}

} // namespace

using twin::Num;

int
main(int argc, char* argv[])
{
    uint32_t count = 1;
    uint32_t seed = 1;
    double duration = 100.0;
    std::string stack = "one";
    std::string cc = "TcpNewReno";
    CommandLine cmd(__FILE__);
    cmd.AddValue("count", "flows per source-sink pair (1, 10, 100)", count);
    cmd.AddValue("seed", "run number of ns-3's random streams (start times)", seed);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("warmup", "statistics start here (s)", g_warmup);
    cmd.AddValue("stack", "one (one buffer per link direction) or tc (queue discs)", stack);
    cmd.AddValue("cc", "TcpNewReno or TcpCubic (without HyStart, as the scenario's cubic)", cc);
    cmd.Parse(argc, argv);
    if (count < 1 || duration <= g_warmup)
    {
        std::cerr << "datacenter: need --count >= 1, --warmup < --duration\n";
        return 2;
    }
    if (!twin::OneOf("datacenter", "stack", stack, {"one", "tc"}) ||
        !twin::OneOf("datacenter", "cc", cc, {"TcpNewReno", "TcpCubic"}))
    {
        return 2;
    }
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    twin::ConfigureTcp("ns3::" + cc, 1, 2);

    NodeContainer sources, sinksNodes, routers;
    sources.Create(3);
    sinksNodes.Create(3);
    routers.Create(2);
    Ptr<Node> a = routers.Get(0);
    Ptr<Node> b = routers.Get(1);
    InternetStackHelper internet;
    internet.SetIpv6StackInstall(false);
    Ipv4StaticRoutingHelper staticRouting;
    internet.SetRoutingHelper(staticRouting);
    internet.InstallAll();

    const std::string deviceQueue = stack == "one" ? "1000p" : "100p";
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue(deviceQueue));
    p2p.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
    NetDeviceContainer core = p2p.Install(a, b);
    g_device = DynamicCast<PointToPointNetDevice>(core.Get(0))->GetQueue();
    if (stack == "one")
    {
        g_device->SetMaxSize(QueueSize("900p"));
    }

    const double srcDelayUs[3] = {10, 10, 100};
    const double sinkDelayUs[3] = {10, 100, 100};
    std::vector<NetDeviceContainer> edges;
    std::vector<Ipv4InterfaceContainer> srcIf(3), sinkIf(3);
    Ipv4AddressHelper addr;
    addr.SetBase("10.3.0.0", "255.255.255.252");
    Ipv4InterfaceContainer coreIf = addr.Assign(core);
    Ipv4AddressHelper left, right;
    left.SetBase("10.1.0.0", "255.255.255.252");
    right.SetBase("10.2.0.0", "255.255.255.252");
    for (int i = 0; i < 3; ++i)
    {
        p2p.SetChannelAttribute("Delay", TimeValue(MicroSeconds(srcDelayUs[i])));
        NetDeviceContainer l = p2p.Install(sources.Get(i), a);
        p2p.SetChannelAttribute("Delay", TimeValue(MicroSeconds(sinkDelayUs[i])));
        NetDeviceContainer r = p2p.Install(b, sinksNodes.Get(i));
        srcIf[i] = left.Assign(l);
        left.NewNetwork();
        sinkIf[i] = right.Assign(r);
        right.NewNetwork();
        edges.push_back(l);
        edges.push_back(r);
    }

    // Assign() installed ns-3.44's default root queue disc (FqCoDel) on every device.
    TrafficControlHelper tch;
    tch.Uninstall(core);
    for (auto& d : edges)
    {
        tch.Uninstall(d);
    }
    if (stack == "tc")
    {
        TrafficControlHelper fifo;
        fifo.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue("900p"));
        g_disc = fifo.Install(core.Get(0)).Get(0);
        TrafficControlHelper pfifo;
        pfifo.SetRootQueueDisc("ns3::PfifoFastQueueDisc", "MaxSize", StringValue("1000p"));
        pfifo.Install(core.Get(1));
        for (auto& d : edges)
        {
            pfifo.Install(d);
        }
    }

    for (int i = 0; i < 3; ++i)
    {
        twin::DefaultRouteToRouter(staticRouting, srcIf[i], 0);
        twin::DefaultRouteToRouter(staticRouting, sinkIf[i], 1);
    }
    twin::RouteBetweenRouters(staticRouting, coreIf);

    std::vector<Ptr<PacketSink>> sinks;
    std::vector<int> groups;
    Ptr<UniformRandomVariable> startVar = CreateObject<UniformRandomVariable>();
    uint16_t port = 5000;
    for (int i = 0; i < 3; ++i)
    {
        for (int j = 0; j < 3; ++j)
        {
            for (uint32_t k = 0; k < count; ++k, ++port)
            {
                PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                            InetSocketAddress(Ipv4Address::GetAny(), port));
                ApplicationContainer sinkApp = sinkHelper.Install(sinksNodes.Get(j));
                sinkApp.Start(Seconds(0));
                sinks.push_back(DynamicCast<PacketSink>(sinkApp.Get(0)));
                groups.push_back(i);
                BulkSendHelper bulk("ns3::TcpSocketFactory",
                                    InetSocketAddress(sinkIf[j].GetAddress(1), port));
                bulk.SetAttribute("MaxBytes", UintegerValue(0));
                bulk.SetAttribute("SendSize", UintegerValue(16 * 1448));
                ApplicationContainer app = bulk.Install(sources.Get(i));
                app.Start(Seconds(startVar->GetValue(0.0, 3.0)));
                app.Stop(Seconds(duration));
            }
        }
    }
    g_rxAtWarmup.assign(sinks.size(), 0);

    Simulator::Schedule(Seconds(0), &SampleQueue, MilliSeconds(10));
    Simulator::Schedule(Seconds(g_warmup), &AtWarmup, &sinks);
    Simulator::Stop(Seconds(duration));
    Simulator::Run();

    const double window = duration - g_warmup;
    std::ostringstream o;
    o << "{\"stack\":\"" << stack << "\",\"cc\":\"" << cc << "\",\"count\":" << count << ",\"seed\":" << seed
      << ",\"duration_s\":" << Num(duration) << ",\"warmup_s\":" << Num(g_warmup)
      << ",\"queue_mean_pkts\":" << Num(g_qN ? g_qSum / g_qN : NAN)
      << ",\"bottleneck_drops\":"
      << (g_disc ? std::to_string(BottleneckDrops() - g_dropsAtWarmup) : std::string("null"))
      << ",\"flows\":[";
    for (size_t f = 0; f < sinks.size(); ++f)
    {
        o << (f ? "," : "") << "{\"group\":\"N" << groups[f] + 1 << "\",\"goodput_bps\":"
          << Num(double(sinks[f]->GetTotalRx() - g_rxAtWarmup[f]) * 8.0 / window) << "}";
    }
    o << "]}";
    std::cout << o.str() << std::endl;
    Simulator::Destroy();
    return 0;
}
