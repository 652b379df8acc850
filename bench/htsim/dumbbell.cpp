// The benchmark dumbbell (docs/performance.md, "Method"), built with htsim (Broadcom/csg-htsim,
// the C++ packet-level simulator of the NDP/EQDS papers) as a speed twin of what `make bench`
// runs in ccsim (bench/bench.py) and of bench/ns3/dumbbell.cc.
//
//   N senders S_i --1 Gbit/s, d_i-- A ==100 Mbit/s, 2 ms== B --1 Gbit/s, d_i-- N receivers R_i
//   d_i = 1 + 48 i / (N - 1) ms (base RTT 4 d_i + 4 ms = 8..200 ms)
//
// Written against htsim's public API (Queue, Pipe, Route, TcpSrc/TcpSink, EventList) and
// measured (docs/performance.md, "ccsim vs htsim") with htsim's sim/ directory as
// stored in the project's reference index, github.com being out of reach (no single release;
// each file at the last commit the index holds for it), chiefly tcp.cpp @ bda0e74c, tcp.h @
// b5655457, tcppacket.h @ 5abdbf64, eventlist.cpp/.h @ a80e0783, queue.cpp @ bda0e74c,
// queue.h @ d6bfbe6c, pipe.cpp @ d6bfbe6c, network.cpp/.h @ bda0e74c, route.h @ bda0e74c. Two
// files are missing from that index and were written for the measurement: tcppacket.cpp (the
// two PacketDB pools) and ecn.h (ECN_CE / ECN_ECHO flag bits; no queue here marks ECN).
// `make bench-htsim` clones the repository instead, unless given --src.
//
// How htsim models it. A route is the list of objects a packet visits: a Queue is a
// transmitter (FIFO, byte limit, serialization at its bit rate), a Pipe is a propagation
// delay, and the last element is the TCP sink (or, on the way back, the source). Every link
// direction is one Queue followed by one Pipe, so the twin has 4N + 2 of each:
//   data: Q(S_i->A, 1G) P(d_i) Q(A->B, 100M, the bottleneck) P(2 ms) Q(B->R_i, 1G) P(d_i) TcpSink_i
//   ACKs: Q(R_i->B, 1G) P(d_i) Q(B->A, 100M) P(2 ms) Q(A->S_i, 1G) P(d_i) TcpSrc_i
// The A->B Queue and its Pipe are shared by all data routes, the B->A pair by all ACK routes.
// `--topology link` drops the access links: every flow runs from A to B over the bottleneck
// alone (routes Q(A->B) P(2 ms) TcpSink_i and Q(B->A) P(2 ms) TcpSrc_i), the shape of htsim's
// own dumbbell examples, for the per-packet cost with the fewest hops.
//
// Where the twin differs from the benchmark because htsim's TCP (tcp.cpp, TcpSrc/TcpSink)
// cannot express it, and what it does instead:
// - No SACK: cumulative ACKs only. Loss recovery is NewReno-like: fast retransmit on the 3rd
//   duplicate ACK, ssthresh = max(cwnd/2, 2 MSS) (cwnd, not flight size), cwnd = ssthresh +
//   3 MSS, inflated by one MSS per further duplicate ACK, a partial ACK retransmits the next
//   hole and deflates cwnd, the full ACK sets cwnd = min(ssthresh, flight + MSS); no fast
//   recovery again until the previous recovery point is acked (RFC 3782). A timeout sets
//   cwnd = 1 MSS and goes back N (resends from the first unacknowledged byte).
// - No delayed ACKs: TcpSink acknowledges every data packet (twice ccsim's ACKs).
// - No timestamp option and no TCP/IP header: a data packet is MSS = 1500 bytes on the wire
//   and carries 1500 bytes of sequence space, an ACK is 40 bytes. So there are as many
//   1500-byte packets on the bottleneck as in ccsim, but each delivers 1500 bytes of goodput
//   where ccsim's delivers 1448 (bench/htsim/run.py rescales htsim's goodput by 1448/1500
//   for comparison). (RTT samples are taken on every ACK from an echoed send time,
//   retransmissions included.)
// - Minimum RTO: tcp.cpp hard-codes a 250 ms floor (`if (_rto<timeFromSec(0.25))`), with
//   RTO = SRTT + 4 RTTVAR (Jacobson, gains 1/8 and 1/4), an initial RTO of 3 s, doubling per
//   timeout without a cap. The twin raises the floor to the benchmark's 1 s (`--min-rto-ms`,
//   default 1000; 250 keeps htsim's own) through a subclass of TcpSrc that re-applies it
//   after each ACK (and re-arms a timer just armed with the lower value); it changes no
//   htsim code.
//   Timeouts are found by a TcpRtxTimerScanner that looks at every flow every 10 ms (as
//   htsim's example), so a timeout fires up to one period late.
// - Handshake: TcpSrc starts with a 1-byte SYN and sends data when its ACK returns (one RTT
//   later than ccsim, which starts established; like ns-3).
// - Initial window 10 MSS (htsim's default). htsim's initial ssthresh is 100 MSS; the twin sets
//   it to 2^32-1 (unbounded, as ccsim and ns-3) unless `--htsim-ssthresh` keeps htsim's.
//   The 4 MiB windows are htsim's cwnd cap (`_maxcwnd`, set to 4 MiB); there is no receive
//   window. Window growth in congestion avoidance is MSS * acked / cwnd per ACK (acked capped
//   at one MSS).
// - Queue limits are bytes and include the packet being serialized (htsim's Queue keeps it in
//   its buffer until transmission ends). ccsim's 900-packet limit counts only packets waiting
//   for the wire, so the bottleneck gets 901 x 1500 bytes (900 waiting + 1 on the wire), and
//   the sampled queue length counts waiting packets only. Every other queue is 1000 x 1500
//   bytes; `other_drops` reports their drops (must be 0).
// - Link framing is not modelled (as in ccsim); serialization is exact (8 and 80 ps/byte).
//
// Statistics, as ccsim-bench and the ns-3 twin report them: goodput per flow = in-order bytes
// the sink acknowledged between the warm-up and the end; the bottleneck queue length (packets
// waiting) sampled every 10 ms from 0 s (the metrics keep samples from the warm-up on); drop
// ratio = drops / (accepted + dropped) at the A->B queue in [warm-up, end); bottleneck packets
// = packets the A->B queue finished transmitting in the whole run. Events = every event the
// htsim EventList executes (EventList::doNextEvent returning true, counted by this program's
// own loop: link/queue completions, pipe deliveries, TCP starts and timeouts, the RTO
// scanner, the queue sampler and the warm-up mark). Wall time covers that loop only.
// Note: without SACK, receivers hold out-of-order backlogs above unrepaired holes for
// seconds, and these drain after the warm-up, so the aggregate in-order goodput of
// [warm-up, end) can exceed the 100 Mbit/s bottleneck (109 Mbit/s at N = 90, seed 1; 123
// Mbit/s with --topology link).
//
// Output: one JSON line in the shape of the ns-3 twin's (wall_s, events, bottleneck_packets,
// peak_rss_bytes, other_drops, results{seed, events, duration_s, warmup_s, flows, queues,
// jain_index, bottleneck, utilization, traces}), numbers and peak memory through
// bench/twin_json.h as the ns-3 twins write them; run.py derives the benchmark's figures.
//
// Build (run.py builds htsim with its own -std=c++11 -O2 and this file with -std=c++17 -O2;
// -O3 for both gives the same output, about 2 % faster):
//   g++ -std=c++17 -O2 -I$HTSIM/sim -Ibench dumbbell.cpp -o dumbbell -L$HTSIM/sim -lhtsim -Wl,--gc-sections
// (--gc-sections because htsim's loggers.o, needed by every program, refers to protocol code
// that a TCP-only build of the library leaves out.)
// bench/htsim/run.py (`make bench-htsim`) builds it with -DHTSIM_VERSION naming the htsim
// source it was built against, and runs it beside ccsim-bench.
// Usage: dumbbell --flows 90 --seed 1 [--topology dumbbell] [--duration 30] [--warmup 10]
//        [--min-rto-ms 1000] [--htsim-ssthresh]
// htsim's own prints (a line per RTO on std::cout) are discarded, so that stdout carries only
// the JSON line.

#include "config.h"
#include "eventlist.h"
#include "loggertypes.h"
#include "network.h"
#include "pipe.h"
#include "queue.h"
#include "route.h"
#include "tcp.h"
#include "twin_json.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#ifndef HTSIM_VERSION
#define HTSIM_VERSION "(source not named)"
#endif

namespace {

constexpr int kPacketBytes = 1500;       // data packet on the wire (htsim MSS)
constexpr uint64_t kBottleneckBps = 100000000ULL;
constexpr uint64_t kAccessBps = 1000000000ULL;

struct Options {
    uint32_t flows = 90;
    bool access_links = true;  // --topology dumbbell (true) or link
    uint64_t seed = 1;
    double duration = 30.0;
    double warmup = 10.0;
    uint32_t min_rto_ms = 1000;  // the benchmark's; 250 is htsim's own floor
    bool htsim_ssthresh = false;
};

[[noreturn]] void usage_error(const std::string& msg) {
    std::cerr << "dumbbell: " << msg << "\n"
              << "usage: dumbbell --flows N (>= 2) --seed S [--topology dumbbell|link] [--duration 30] [--warmup 10]\n"
              << "       [--min-rto-ms 1000 (>= 250)] [--htsim-ssthresh]\n";
    std::exit(2);
}

uint64_t parse_uint(const std::string& name, const std::string& v, uint64_t max) {
    if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 19)
        usage_error("--" + name + " needs a non-negative integer, not '" + v + "'");
    uint64_t x = std::strtoull(v.c_str(), nullptr, 10);
    if (x > max) usage_error("--" + name + " is too large: " + v);
    return x;
}

double parse_double(const std::string& name, const std::string& v) {
    char* end = nullptr;
    double x = std::strtod(v.c_str(), &end);
    if (v.empty() || end != v.c_str() + v.size() || !std::isfinite(x))
        usage_error("--" + name + " needs a number, not '" + v + "'");
    return x;
}

Options parse_args(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg.rfind("--", 0) != 0) usage_error("unexpected argument '" + arg + "'");
        std::string name = arg.substr(2), value;
        bool has_value = false;
        size_t eq = name.find('=');
        if (eq != std::string::npos) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
            has_value = true;
        }
        auto need = [&]() -> std::string {
            if (has_value) return value;
            if (i + 1 >= argc) usage_error("--" + name + " needs a value");
            return argv[++i];
        };
        auto flag = [&]() {
            if (has_value) usage_error("--" + name + " takes no value");
        };
        if (name == "flows") o.flows = (uint32_t)parse_uint(name, need(), 1000000);
        else if (name == "topology") {
            const std::string t = need();
            if (t != "dumbbell" && t != "link") usage_error("--topology is dumbbell or link, not '" + t + "'");
            o.access_links = t == "dumbbell";
        } else if (name == "seed") o.seed = parse_uint(name, need(), UINT64_MAX);
        else if (name == "duration") o.duration = parse_double(name, need());
        else if (name == "warmup") o.warmup = parse_double(name, need());
        else if (name == "min-rto-ms") o.min_rto_ms = (uint32_t)parse_uint(name, need(), 3600000);
        else if (name == "htsim-ssthresh") { flag(); o.htsim_ssthresh = true; }
        else if (name == "help") {
            std::cout << "see the comment at the top of bench/htsim/dumbbell.cpp\n";
            std::exit(0);
        } else usage_error("unknown option --" + name);
    }
    if (o.flows < 2) usage_error("--flows must be >= 2 (d_i divides by N - 1)");  // as ccsim's bench
    if (!(o.warmup >= 0) || !(o.duration > o.warmup)) usage_error("need 0 <= --warmup < --duration");
    if (o.duration > 1e6) usage_error("--duration too large");
    if (o.min_rto_ms < 250) usage_error("--min-rto-ms must be >= 250 (htsim's own floor)");
    return o;
}

// htsim prints to std::cout (a line per retransmission timeout, with std::endl). stdout must
// carry only the JSON line, so htsim's output is discarded.
class DiscardBuf : public std::streambuf {
protected:
    int overflow(int c) override { return traits_type::not_eof(c); }
    std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

// Counts what the bottleneck queue does, through htsim's QueueLogger hook (called by Queue on
// enqueue, drop and end of service).
class BottleneckMonitor : public QueueLogger {
public:
    void logQueue(BaseQueue&, QueueEvent ev, Packet& pkt) override {
        switch (ev) {
        case PKT_ENQUEUE: ++accepted; ++held; break;
        case PKT_DROP: ++dropped; break;
        case PKT_SERVICE: ++sent; sent_bytes += pkt.size(); --held; break;
        default: break;
        }
    }
    // Packets waiting for the wire (the one being serialized excluded).
    uint64_t waiting() const { return held > 0 ? uint64_t(held - 1) : 0; }
    uint64_t accepted = 0, dropped = 0, sent = 0, sent_bytes = 0;
    int64_t held = 0;  // packets in htsim's buffer, including the one in service
};

// Queue length every `period` from time 0.
class QueueSampler : public EventSource {
public:
    QueueSampler(EventList& ev, const BottleneckMonitor& mon, simtime_picosec period)
        : EventSource(ev, "sampler"), _mon(mon), _period(period) {
        ev.sourceIsPending(*this, 0);
    }
    void doNextEvent() override {
        times.push_back(timeAsSec(EventList::now()));
        lens.push_back(double(_mon.waiting()));
        EventList::sourceIsPendingRel(*this, _period);
    }
    std::vector<double> times, lens;
private:
    const BottleneckMonitor& _mon;
    simtime_picosec _period;
};

// TcpSrc with a higher RTO floor than htsim's built-in 250 ms (--min-rto-ms above 250).
class FlooredTcpSrc : public TcpSrc {
public:
    FlooredTcpSrc(EventList& ev, simtime_picosec floor) : TcpSrc(nullptr, nullptr, ev), _floor(floor) {}
    void receivePacket(Packet& pkt) override {
        TcpSrc::receivePacket(pkt);
        if (_rto < _floor) {
            simtime_picosec now = EventList::now();
            if (_RFC2988_RTO_timeout != timeInf && _RFC2988_RTO_timeout == now + _rto)
                _RFC2988_RTO_timeout = now + _floor;  // re-arm a timer armed by this ACK
            _rto = _floor;
        }
    }
private:
    simtime_picosec _floor;
};

struct Flow {
    TcpSrc* src = nullptr;
    TcpSink* sink = nullptr;
    double start_s = 0, delay_ms = 0;
    uint64_t acked_at_warmup = 0, sent_at_warmup = 0, fr_at_warmup = 0;
};

struct WarmupState {
    uint64_t accepted = 0, dropped = 0, sent_bytes = 0;
};

// Takes the counters' values at the warm-up.
class WarmupMark : public EventSource {
public:
    WarmupMark(EventList& ev, simtime_picosec at, std::vector<Flow>& flows,
               const BottleneckMonitor& mon, WarmupState& st)
        : EventSource(ev, "warmup"), _flows(flows), _mon(mon), _st(st) {
        ev.sourceIsPending(*this, at);
    }
    void doNextEvent() override {
        for (Flow& f : _flows) {
            f.acked_at_warmup = f.sink->_cumulative_ack;
            f.sent_at_warmup = f.src->_packets_sent;
            f.fr_at_warmup = f.src->_drops;
        }
        _st.accepted = _mon.accepted;
        _st.dropped = _mon.dropped;
        _st.sent_bytes = _mon.sent_bytes;
    }
private:
    std::vector<Flow>& _flows;
    const BottleneckMonitor& _mon;
    WarmupState& _st;
};

}  // namespace

int main(int argc, char** argv) {
    const Options opt = parse_args(argc, argv);
    const uint32_t n = opt.flows;
    DiscardBuf discard;
    std::streambuf* const stdout_buf = std::cout.rdbuf(&discard);

    EventList eventlist;
    EventList::setEndtime(timeFromSec(opt.duration));  // events at or after the end are never queued
    Packet::set_packet_size(kPacketBytes);

    // The two bottleneck link directions, shared by all routes.
    BottleneckMonitor monitor;
    Queue ab_queue(kBottleneckBps, mem_b(901) * kPacketBytes, eventlist, &monitor);
    Pipe ab_pipe(timeFromMs(2), eventlist);
    Queue ba_queue(kBottleneckBps, mem_b(1000) * kPacketBytes, eventlist, nullptr);
    Pipe ba_pipe(timeFromMs(2), eventlist);

    TcpRtxTimerScanner rtx_scanner(timeFromMs(10), eventlist);

    std::mt19937_64 rng(opt.seed);
    std::uniform_real_distribution<double> start_dist(0.0, 3.0);

    // htsim's Route is not a container with an initializer-list constructor.
    auto route = [](std::initializer_list<PacketSink*> hops) {
        auto* r = new route_t();
        for (PacketSink* hop : hops) r->push_back(hop);
        return r;
    };
    std::vector<Flow> flows(n);
    std::vector<Queue*> other_queues;
    const mem_b access_limit = mem_b(1000) * kPacketBytes;
    for (uint32_t i = 0; i < n; ++i) {
        Flow& f = flows[i];
        f.delay_ms = opt.access_links ? 1.0 + 48.0 * i / (n - 1) : 0.0;

        if (opt.min_rto_ms > 250)
            f.src = new FlooredTcpSrc(eventlist, timeFromMs(int(opt.min_rto_ms)));
        else
            f.src = new TcpSrc(nullptr, nullptr, eventlist);
        f.sink = new TcpSink();
        f.src->_maxcwnd = 4u << 20;  // the 4 MiB window
        if (!opt.htsim_ssthresh) f.src->set_ssthresh(0xffffffffu);
        rtx_scanner.registerTcp(*f.src);

        route_t *out, *back;
        if (opt.access_links) {
            // Integer nanoseconds, as the ccsim driver and the ns-3 twin round them.
            const simtime_picosec d = simtime_picosec(std::llround(f.delay_ms * 1e6)) * 1000;
            auto* s_to_a = new Queue(kAccessBps, access_limit, eventlist, nullptr);
            auto* b_to_r = new Queue(kAccessBps, access_limit, eventlist, nullptr);
            auto* r_to_b = new Queue(kAccessBps, access_limit, eventlist, nullptr);
            auto* a_to_s = new Queue(kAccessBps, access_limit, eventlist, nullptr);
            other_queues.insert(other_queues.end(), {s_to_a, b_to_r, r_to_b, a_to_s});
            out = route({s_to_a, new Pipe(d, eventlist), &ab_queue, &ab_pipe, b_to_r, new Pipe(d, eventlist), f.sink});
            back = route({r_to_b, new Pipe(d, eventlist), &ba_queue, &ba_pipe, a_to_s, new Pipe(d, eventlist), f.src});
        } else {
            out = route({&ab_queue, &ab_pipe, f.sink});
            back = route({&ba_queue, &ba_pipe, f.src});
        }

        f.start_s = start_dist(rng);
        f.src->connect(*out, *back, *f.sink, timeFromSec(f.start_s));
    }
    other_queues.push_back(&ba_queue);

    QueueSampler sampler(eventlist, monitor, timeFromMs(10));
    WarmupState at_warmup;
    WarmupMark warmup_mark(eventlist, timeFromSec(opt.warmup), flows, monitor, at_warmup);

    // The event loop, driven here so that events can be counted without touching htsim.
    uint64_t events = 0;
    const auto t0 = std::chrono::steady_clock::now();
    while (EventList::doNextEvent()) ++events;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const uint64_t rss = twin::PeakRssBytes();
    std::cout.rdbuf(stdout_buf);

    const double window = opt.duration - opt.warmup;
    double sum = 0, sum_sq = 0;
    std::vector<double> goodput(n);
    for (uint32_t i = 0; i < n; ++i) {
        goodput[i] = double(flows[i].sink->_cumulative_ack - flows[i].acked_at_warmup) * 8.0 / window;
        sum += goodput[i];
        sum_sq += goodput[i] * goodput[i];
    }
    const double jain = sum_sq > 0 ? sum * sum / (n * sum_sq) : NAN;

    std::vector<double> kept;  // the queue samples from the warm-up on
    for (size_t k = 0; k < sampler.times.size(); ++k)
        if (sampler.times[k] >= opt.warmup) kept.push_back(sampler.lens[k]);
    double q_mean = 0, q_var = 0;
    for (double x : kept) q_mean += x / kept.size();
    for (double x : kept) q_var += (x - q_mean) * (x - q_mean) / kept.size();
    const double q_sd = std::sqrt(q_var);

    const uint64_t arrivals = (monitor.accepted - at_warmup.accepted) + (monitor.dropped - at_warmup.dropped);
    const uint64_t drops = monitor.dropped - at_warmup.dropped;
    const double drop_ratio = arrivals ? double(drops) / arrivals : 0.0;
    const double utilization =
        double(monitor.sent_bytes - at_warmup.sent_bytes) * 8.0 / (double(kBottleneckBps) * window);
    uint64_t other_drops = 0;
    for (Queue* q : other_queues) other_drops += uint64_t(q->num_drops());

    std::ostringstream o;
    o << "{\"simulator\":\"htsim " HTSIM_VERSION "\""
      << ",\"wall_s\":" << twin::Num(wall) << ",\"events\":" << events
      << ",\"bottleneck_packets\":" << monitor.sent << ",\"peak_rss_bytes\":" << rss
      << ",\"other_drops\":" << other_drops
      << ",\"options\":{\"topology\":\"" << (opt.access_links ? "dumbbell" : "link") << "\""
      << ",\"min_rto_ms\":" << opt.min_rto_ms
      << ",\"rto_scan_ms\":10,\"initial_ssthresh\":\""
      << (opt.htsim_ssthresh ? "htsim 100 MSS" : "unbounded") << "\"}"
      << ",\"results\":{\"seed\":" << opt.seed << ",\"events\":" << events
      << ",\"duration_s\":" << twin::Num(opt.duration) << ",\"warmup_s\":" << twin::Num(opt.warmup) << ",\"flows\":[";
    for (uint32_t i = 0; i < n; ++i) {
        const Flow& f = flows[i];
        o << (i ? "," : "") << "{\"id\":" << i << ",\"start_s\":" << twin::Num(f.start_s)
          << ",\"access_delay_ms\":" << twin::Num(f.delay_ms)
          << ",\"bytes_delivered\":" << (f.sink->_cumulative_ack - f.acked_at_warmup)
          << ",\"goodput_bps\":" << twin::Num(goodput[i])
          << ",\"packets_sent\":" << (f.src->_packets_sent - f.sent_at_warmup) / kPacketBytes
          << ",\"fast_recoveries\":" << (uint64_t(f.src->_drops) - f.fr_at_warmup);
        o << ",\"final_cwnd_bytes\":" << f.src->_cwnd << ",\"final_rto_s\":" << twin::Num(timeAsSec(f.src->_rto)) << "}";
    }
    o << "],\"queues\":[{\"name\":\"A->B\",\"kind\":\"droptail\",\"arrivals\":" << arrivals
      << ",\"drops\":" << drops << ",\"drop_ratio\":" << twin::Num(drop_ratio)
      << ",\"mean_len_pkts\":" << twin::Num(q_mean) << ",\"sd_len_pkts\":" << twin::Num(q_sd)
      << ",\"utilization\":" << twin::Num(utilization) << "}]"
      << ",\"jain_index\":" << twin::Num(jain) << ",\"bottleneck\":\"A->B\",\"utilization\":" << twin::Num(utilization)
      << ",\"traces\":{\"time_s\":[";
    for (size_t k = 0; k < sampler.times.size(); ++k) o << (k ? "," : "") << twin::Num(sampler.times[k]);
    o << "],\"queue.A->B.len_pkts\":[";
    for (size_t k = 0; k < sampler.lens.size(); ++k) o << (k ? "," : "") << twin::Num(sampler.lens[k]);
    o << "]}}}";
    std::cout << o.str() << std::endl;
    return 0;
}
