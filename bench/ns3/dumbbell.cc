// The benchmark dumbbell (docs/performance.md, "Method"), built in ns-3 as the twin of what
// `make bench` runs in ccsim (bench/bench.py, ccsim-bench). bench/ns3/run.py compiles it against
// ns-3 3.37 built from Debian's source package with the optimized profile (C++17) and, with
// --also-pypi, against the PyPI package `ns3` 3.44 (C++20); the source is the same for both.
//
//   N senders S_i --1 Gbit/s, d_i-- A ==100 Mbit/s, 2 ms== B --1 Gbit/s, d_i-- N receivers R_i
//   d_i = 1 + 48 i / (N - 1) ms (base RTT 8..200 ms)
//
// Choices, each to make the twin equal to ccsim's scenario:
// - The only buffer that can drop is the point-to-point device queue of A towards B: a
//   DropTailQueue of 900 packets. The traffic-control layer's root queue discs (FqCoDel in
//   3.37 and 3.44, which Ipv4AddressHelper installs by default) are removed from every device,
//   so a packet goes from IP straight to the device queue and there is one buffer per link
//   direction, as in ccsim. The device queue holds the packets waiting for the wire and not
//   the one being serialized (PointToPointNetDevice dequeues before transmitting), which is
//   what ccsim's 900-packet limit and its queue length count too. Every other device queue
//   is DropTail 1000 packets.
//   Drops are counted where they happen. Without a queue disc, a full device queue does not
//   drop by itself: the device's flow control (NetDeviceQueue) stops the transmission queue
//   once it cannot take another packet (900 queued), and the traffic-control layer then
//   discards what IP hands it, silently. So a packet offered to the bottleneck is one that A
//   forwards towards 10.2/16 (Ipv4L3Protocol "UnicastForward"), and the bottleneck's drops are
//   the offered packets that the device did not take ("MacTx" fires on every packet the
//   device accepts into its queue or sends) plus any the queue itself dropped. Every other
//   loss anywhere (IP's Tx minus the devices' MacTx over all nodes, IP drops, device-queue
//   drops) is reported as `other_drops`, which must be 0.
// - TCP: TcpNewReno (or, with --cc, TcpLinuxReno, ns-3's model of Linux's Reno, for the
//   drop-ratio comparison in docs/performance.md, or TcpCubic) with TcpClassicRecovery
//   (ns-3's default is PRR, RFC 6937, which ccsim does not implement; classic recovery sets
//   cwnd = ssthresh and sends while pipe < cwnd, RFC 6675 as ccsim), SACK on, timestamps on
//   with a 1448-byte segment size (20 B IP + 20 B TCP + 12 B timestamp option = 1500-byte IP
//   packets, ccsim's default `mss = 1448`, `header = 52`), initial window 10 segments, delayed
//   ACK every 2nd segment with the 200 ms timer, minimum RTO 1 s, 4 MiB send and receive
//   buffers (window scaling on). BulkSend applications (no byte limit) start uniformly at
//   random in [0, 3) s.
// - Static routes (S_i -> A -> B -> R_i and back) instead of global routing: the same paths,
//   without computing all-pairs routes over 2N + 2 nodes.
// - Statistics as ccsim-bench reports them (counters over [warm-up, end) like ccsim's): goodput per flow from the PacketSink's received
//   bytes at the warm-up (10 s) and at the end (30 s); the bottleneck queue length sampled
//   every 10 ms from 0 s (the driver keeps the samples from 10 s); drop ratio = drops /
//   (accepted + dropped) at the bottleneck queue in [10 s, 30 s); bottleneck packets = packets
//   A dequeued towards B in the whole run. Wall time covers Simulator::Run() only (not
//   building the topology), as ccsim-bench's covers its event loop.
//
// Not identical, and why (docs/performance.md discusses the effect):
// - ns-3 opens each connection with a handshake (ccsim starts in ESTABLISHED), and its
//   point-to-point links add a 2-byte PPP header (1502 bytes on the wire).
// - The TCP implementations differ where RFCs leave room (ns-3 NewReno grows cwnd per ACK,
//   not per byte acknowledged; no detection of lost retransmissions from SACKs, only the RTO
//   and, for the first unacknowledged segment, a resend on each partial ACK).
//
// Output: one JSON object on stdout in the shape of ccsim-bench's: wall_s, events,
// bottleneck_packets, peak_rss_bytes and results {seed, events, duration_s, warmup_s, flows,
// queues, jain_index, bottleneck, utilization, traces}. Each flow also carries
// resent_without_timeout (a diagnostic, see FlowStats), which ccsim does not report.
//
// Usage: dumbbell --flows=90 --seed=1 [--duration=30] [--warmup=10] [--delack=2]
// (--delack and shorter runs are for experiments; the benchmark uses the defaults.)

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include "common.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

// Per-flow counters from the sender socket's traces.
struct FlowStats
{
    uint64_t rxAtWarmup = 0;     // PacketSink bytes at the warm-up
    uint64_t rxAtEnd = 0;        // PacketSink bytes at the end
    uint64_t dataSegments = 0;   // data segments the sender transmitted
    uint64_t retransmissions = 0;
    uint64_t recoveries = 0;     // entries into CA_RECOVERY (fast retransmit)
    uint64_t timeouts = 0;       // entries into CA_LOSS (retransmission timeout)
    // Retransmissions of a segment already retransmitted with no timeout in between (a
    // lost retransmission repaired without the RTO; docs/performance.md traces them to
    // ns-3's resend of the head on partial ACKs). Keyed by the segment's start, the value is
    // `timeouts` at its latest retransmission.
    uint64_t resentWithoutTimeout = 0;
    std::map<uint32_t, uint64_t> retransmittedAt;
    SequenceNumber32 highTx{0};  // end of the highest data sent so far
    bool sentAny = false;
    double start = 0.0;
    // The counters at the warm-up: like ccsim's, the reported ones cover the measured window.
    uint64_t dataSegmentsAtWarmup = 0, retransmissionsAtWarmup = 0, recoveriesAtWarmup = 0,
             timeoutsAtWarmup = 0, resentWithoutTimeoutAtWarmup = 0;
};

std::vector<FlowStats> g_flows;
Ptr<Queue<Packet>> g_bottleneck;
std::vector<double> g_sampleTimes;
std::vector<double> g_sampleLens;

// Bottleneck counters: packets A forwards towards the receivers, packets its bottleneck
// device takes, and both at the warm-up.
uint64_t g_offered = 0, g_taken = 0;
uint64_t g_offeredAtWarmup = 0, g_takenAtWarmup = 0, g_queueDropAtWarmup = 0, g_txBytesAtWarmup = 0;
// Every node: packets IP hands down, packets devices take, packets IP drops.
uint64_t g_ipTx = 0, g_macTx = 0, g_ipDrop = 0;
const Ipv4Mask g_slash16("255.255.0.0");
const Ipv4Address g_receiverNet("10.2.0.0");

// Bytes the queue has handed to the device so far (accepted minus still queued).
uint64_t
DequeuedBytes(Ptr<Queue<Packet>> q)
{
    return uint64_t(q->GetTotalReceivedBytes()) - q->GetNBytes();
}

void
SampleQueue(Time interval)
{
    g_sampleTimes.push_back(Simulator::Now().GetSeconds());
    g_sampleLens.push_back(g_bottleneck->GetNPackets());
    Simulator::Schedule(interval, &SampleQueue, interval);
}

void
AtWarmup(std::vector<Ptr<PacketSink>>* sinks)
{
    for (size_t i = 0; i < sinks->size(); ++i)
    {
        FlowStats& f = g_flows[i];
        f.rxAtWarmup = (*sinks)[i]->GetTotalRx();
        f.dataSegmentsAtWarmup = f.dataSegments;
        f.retransmissionsAtWarmup = f.retransmissions;
        f.recoveriesAtWarmup = f.recoveries;
        f.timeoutsAtWarmup = f.timeouts;
        f.resentWithoutTimeoutAtWarmup = f.resentWithoutTimeout;
    }
    g_offeredAtWarmup = g_offered;
    g_takenAtWarmup = g_taken;
    g_queueDropAtWarmup = g_bottleneck->GetTotalDroppedPackets();
    g_txBytesAtWarmup = DequeuedBytes(g_bottleneck);
}

void
OnForward(const Ipv4Header& h, Ptr<const Packet>, uint32_t)
{
    if (h.GetDestination().CombineMask(g_slash16) == g_receiverNet)
    {
        g_offered++;
    }
}

void
OnBottleneckMacTx(Ptr<const Packet>)
{
    g_taken++;
}

void
OnIpTx(Ptr<const Packet>, Ptr<Ipv4>, uint32_t)
{
    g_ipTx++;
}

void
OnMacTx(Ptr<const Packet>)
{
    g_macTx++;
}

void
OnIpDrop(const Ipv4Header&, Ptr<const Packet>, Ipv4L3Protocol::DropReason, Ptr<Ipv4>, uint32_t)
{
    g_ipDrop++;
}

void
OnCongState(size_t flow, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    if (now == TcpSocketState::CA_RECOVERY)
    {
        g_flows[flow].recoveries++;
    }
    else if (now == TcpSocketState::CA_LOSS)
    {
        g_flows[flow].timeouts++;
    }
}

// Every segment the sender transmits: data below the highest sent is a retransmission.
void
OnTx(size_t flow, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    uint32_t len = p->GetSize();
    if (len == 0)
    {
        return;
    }
    FlowStats& f = g_flows[flow];
    f.dataSegments++;
    SequenceNumber32 end = h.GetSequenceNumber() + len;
    if (f.sentAny && end <= f.highTx)
    {
        f.retransmissions++;
        auto [at, first] = f.retransmittedAt.try_emplace(h.GetSequenceNumber().GetValue(), f.timeouts);
        if (!first)
        {
            f.resentWithoutTimeout += at->second == f.timeouts;
            at->second = f.timeouts;
        }
    }
    if (!f.sentAny || end > f.highTx)
    {
        f.highTx = end;
        f.sentAny = true;
    }
}

// BulkSend creates its socket when it starts: hook the traces just after.
void
HookSocket(size_t flow, Ptr<BulkSendApplication> app)
{
    Ptr<Socket> s = app->GetSocket();
    if (!s)
    {
        return;
    }
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, flow));
    s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, flow));
}

} // namespace

using twin::Num;

int
main(int argc, char* argv[])
{
    uint32_t nFlows = 90;
    uint32_t seed = 1;
    double duration = 30.0;
    double warmup = 10.0;
    uint32_t delAckCount = 2;
    std::string cc = "TcpNewReno";
    CommandLine cmd(__FILE__);
    cmd.AddValue("flows", "number of sender/receiver pairs N (>= 2)", nFlows);
    cmd.AddValue("seed", "run number of ns-3's random streams (start times)", seed);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("warmup", "statistics start here (s)", warmup);
    cmd.AddValue("delack", "ACK every this many segments (the benchmark: 2)", delAckCount);
    cmd.AddValue("cc",
                 "congestion control: TcpNewReno (the benchmark's), TcpLinuxReno (window "
                 "growth per segment acknowledged, ssthresh = cwnd / 2, as Linux's Reno) or "
                 "TcpCubic (without HyStart, as ccsim's cubic by default)",
                 cc);
    cmd.Parse(argc, argv);
    if (nFlows < 2 || duration <= warmup || warmup < 0 || delAckCount < 1)
    {
        std::cerr << "dumbbell: need --flows >= 2, 0 <= warmup < duration, --delack >= 1\n";
        return 2;
    }
    if (!twin::OneOf("dumbbell", "cc", cc, {"TcpNewReno", "TcpLinuxReno", "TcpCubic"}))
    {
        return 2;
    }

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    // TCP as in ccsim's benchmark (see the header comment and common.h).
    twin::ConfigureTcp("ns3::" + cc, 10, delAckCount);

    NodeContainer senders, receivers, routers;
    senders.Create(nFlows);
    receivers.Create(nFlows);
    routers.Create(2);
    Ptr<Node> a = routers.Get(0);
    Ptr<Node> b = routers.Get(1);

    InternetStackHelper stack;
    stack.SetIpv6StackInstall(false);
    Ipv4StaticRoutingHelper staticRouting;
    stack.SetRoutingHelper(staticRouting);
    stack.InstallAll();

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
    bottleneck.SetChannelAttribute("Delay", TimeValue(MilliSeconds(2)));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1000p"));
    NetDeviceContainer core = bottleneck.Install(a, b);
    // A's device (index 0) is the bottleneck A->B.
    g_bottleneck = DynamicCast<PointToPointNetDevice>(core.Get(0))->GetQueue();
    g_bottleneck->SetMaxSize(QueueSize("900p"));

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1000p"));

    Ipv4AddressHelper addr;
    addr.SetBase("10.3.0.0", "255.255.255.252");
    Ipv4InterfaceContainer coreIf = addr.Assign(core);

    std::vector<NetDeviceContainer> sideDevs;
    std::vector<Ipv4InterfaceContainer> left(nFlows), right(nFlows);
    Ipv4AddressHelper leftAddr, rightAddr;
    leftAddr.SetBase("10.1.0.0", "255.255.255.252");
    rightAddr.SetBase("10.2.0.0", "255.255.255.252");
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        double d_ms = 1.0 + 48.0 * i / (nFlows - 1);
        // Integer nanoseconds, as the ccsim driver rounds them.
        access.SetChannelAttribute("Delay", TimeValue(NanoSeconds(std::llround(d_ms * 1e6))));
        NetDeviceContainer l = access.Install(senders.Get(i), a);
        NetDeviceContainer r = access.Install(b, receivers.Get(i));
        left[i] = leftAddr.Assign(l);
        leftAddr.NewNetwork();
        right[i] = rightAddr.Assign(r);
        rightAddr.NewNetwork();
        sideDevs.push_back(l);
        sideDevs.push_back(r);
    }

    // One buffer per link direction: remove the queue discs Assign() installed.
    TrafficControlHelper tch;
    tch.Uninstall(core);
    for (auto& d : sideDevs)
    {
        tch.Uninstall(d);
    }

    // Static routes: senders and receivers default to their router; A sends 10.2/16 to B,
    // B sends 10.1/16 to A.
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        twin::DefaultRouteToRouter(staticRouting, left[i], 0);
        twin::DefaultRouteToRouter(staticRouting, right[i], 1);
    }
    twin::RouteBetweenRouters(staticRouting, coreIf);

    // Applications: a sink on every receiver, a bulk sender on every sender.
    g_flows.assign(nFlows, FlowStats{});
    std::vector<Ptr<PacketSink>> sinks;
    Ptr<UniformRandomVariable> startVar = CreateObject<UniformRandomVariable>();
    const uint16_t port = 5000;
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sinkApp = sinkHelper.Install(receivers.Get(i));
        sinkApp.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(sinkApp.Get(0)));

        BulkSendHelper bulk("ns3::TcpSocketFactory",
                            InetSocketAddress(right[i].GetAddress(1), port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        bulk.SetAttribute("SendSize", UintegerValue(16 * 1448));
        ApplicationContainer app = bulk.Install(senders.Get(i));
        double start = startVar->GetValue(0.0, 3.0);
        g_flows[i].start = start;
        app.Start(Seconds(start));
        app.Stop(Seconds(duration));
        Simulator::Schedule(Seconds(start) + NanoSeconds(1),
                            &HookSocket,
                            size_t(i),
                            DynamicCast<BulkSendApplication>(app.Get(0)));
    }

    // Drop accounting (see the header comment).
    a->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext("UnicastForward",
                                                                MakeCallback(&OnForward));
    core.Get(0)->TraceConnectWithoutContext("MacTx", MakeCallback(&OnBottleneckMacTx));
    for (NodeList::Iterator it = NodeList::Begin(); it != NodeList::End(); ++it)
    {
        Ptr<Ipv4L3Protocol> ip = (*it)->GetObject<Ipv4L3Protocol>();
        ip->TraceConnectWithoutContext("Tx", MakeCallback(&OnIpTx));
        ip->TraceConnectWithoutContext("Drop", MakeCallback(&OnIpDrop));
        for (uint32_t k = 0; k < (*it)->GetNDevices(); ++k)
        {
            Ptr<NetDevice> dev = (*it)->GetDevice(k);
            if (DynamicCast<PointToPointNetDevice>(dev))
            {
                dev->TraceConnectWithoutContext("MacTx", MakeCallback(&OnMacTx));
            }
        }
    }

    const Time interval = MilliSeconds(10);
    Simulator::Schedule(Seconds(0), &SampleQueue, interval);
    Simulator::Schedule(Seconds(warmup), &AtWarmup, &sinks);
    Simulator::Stop(Seconds(duration));

    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    uint64_t events = Simulator::GetEventCount();

    // Sampling events fire at 0, 10 ms, ...; the one at `duration` itself does not run.
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        g_flows[i].rxAtEnd = sinks[i]->GetTotalRx();
    }
    const double window = duration - warmup;
    uint64_t arrivals = g_offered - g_offeredAtWarmup;
    uint64_t drops = (arrivals - (g_taken - g_takenAtWarmup)) +
                     (uint64_t(g_bottleneck->GetTotalDroppedPackets()) - g_queueDropAtWarmup);
    uint64_t bottleneckTcDrops = g_offered - g_taken;
    uint64_t bottleneckPackets =
        uint64_t(g_bottleneck->GetTotalReceivedPackets()) - g_bottleneck->GetNPackets();
    double utilization = double(DequeuedBytes(g_bottleneck) - g_txBytesAtWarmup) * 8.0 /
                         (100e6 * window);

    // Drops anywhere but the bottleneck (must be none): silent drops at any traffic-control
    // layer but the bottleneck's, IP drops, and drops by every other device queue.
    uint64_t otherDrops = (g_ipTx - g_macTx - bottleneckTcDrops) + g_ipDrop +
        DynamicCast<PointToPointNetDevice>(core.Get(1))->GetQueue()->GetTotalDroppedPackets();
    for (auto& d : sideDevs)
    {
        for (uint32_t k = 0; k < d.GetN(); ++k)
        {
            otherDrops +=
                DynamicCast<PointToPointNetDevice>(d.Get(k))->GetQueue()->GetTotalDroppedPackets();
        }
    }

    double sum = 0, sumSq = 0;
    std::vector<double> goodput(nFlows);
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        goodput[i] = double(g_flows[i].rxAtEnd - g_flows[i].rxAtWarmup) * 8.0 / window;
        sum += goodput[i];
        sumSq += goodput[i] * goodput[i];
    }
    double jain = sumSq > 0 ? sum * sum / (nFlows * sumSq) : NAN;

    double qSum = 0, qSq = 0;
    size_t qN = 0;
    for (size_t k = 0; k < g_sampleTimes.size(); ++k)
    {
        if (g_sampleTimes[k] >= warmup)
        {
            qSum += g_sampleLens[k];
            qSq += g_sampleLens[k] * g_sampleLens[k];
            qN++;
        }
    }
    double qMean = qN ? qSum / qN : NAN;
    double qSd = qN ? std::sqrt(std::max(0.0, qSq / qN - qMean * qMean)) : NAN;

    std::ostringstream o;
    o << "{\"simulator\":\"ns-3 " << "3.44" << "\",\"wall_s\":" << Num(wall)
      << ",\"events\":" << events << ",\"bottleneck_packets\":" << bottleneckPackets
      << ",\"peak_rss_bytes\":" << twin::PeakRssBytes() << ",\"other_drops\":" << otherDrops
      << ",\"results\":{\"seed\":" << seed << ",\"events\":" << events
      << ",\"duration_s\":" << Num(duration) << ",\"warmup_s\":" << Num(warmup) << ",\"flows\":[";
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        const FlowStats& f = g_flows[i];
        o << (i ? "," : "") << "{\"id\":" << i << ",\"start_s\":" << Num(f.start)
          << ",\"bytes_delivered\":" << (f.rxAtEnd - f.rxAtWarmup)
          << ",\"goodput_bps\":" << Num(goodput[i])
          << ",\"packets_sent\":" << (f.dataSegments - f.dataSegmentsAtWarmup)
          << ",\"retransmissions\":" << (f.retransmissions - f.retransmissionsAtWarmup)
          << ",\"timeouts\":" << (f.timeouts - f.timeoutsAtWarmup)
          << ",\"resent_without_timeout\":" << (f.resentWithoutTimeout - f.resentWithoutTimeoutAtWarmup)
          << ",\"fast_recoveries\":" << (f.recoveries - f.recoveriesAtWarmup) << "}";
    }
    o << "],\"queues\":[{\"name\":\"A->B\",\"kind\":\"droptail\",\"arrivals\":" << arrivals
      << ",\"drops\":" << drops << ",\"drop_ratio\":" << Num(arrivals ? double(drops) / arrivals : 0.0)
      << ",\"mean_len_pkts\":" << Num(qMean) << ",\"sd_len_pkts\":" << Num(qSd)
      << ",\"utilization\":" << Num(utilization) << "}]"
      << ",\"jain_index\":" << Num(jain) << ",\"bottleneck\":\"A->B\",\"utilization\":"
      << Num(utilization) << ",\"traces\":{\"time_s\":[";
    for (size_t k = 0; k < g_sampleTimes.size(); ++k)
    {
        o << (k ? "," : "") << Num(g_sampleTimes[k]);
    }
    o << "],\"queue.A->B.len_pkts\":[";
    for (size_t k = 0; k < g_sampleLens.size(); ++k)
    {
        o << (k ? "," : "") << Num(g_sampleLens[k]);
    }
    o << "]}}}";
    std::cout << o.str() << std::endl;

    Simulator::Destroy();
    return 0;
}
