//! What a run measured: conservation checks, accessors for tests, and the results tables.

use super::*;
use crate::vars::{COUNTER_COLUMNS, CWND_COLUMN, QUEUE_COLUMNS};

impl Simulation {
    // ----- checks and results -----

    /// Packet conservation over the whole run: every packet injected by an endpoint has
    /// arrived, been dropped or lost, or is still in a queue, on a wire or in a node's
    /// processing stage.
    pub fn check_conservation(&self) -> Result<(), String> {
        let injected: u64 = self.flow_stats.iter().map(|s| s.total_injected).sum();
        let arrived: u64 = self.flow_stats.iter().map(|s| s.total_arrived).sum();
        let lost: u64 = self.flow_stats.iter().map(|s| s.total_lost).sum();
        let held: u64 = self
            .links
            .iter()
            .map(|l| l.queue.len_packets() as u64 + self.wire_packets.on(&l.wire).count() as u64)
            .sum::<u64>()
            + self.processing.iter().flatten().map(|s| s.len() as u64).sum::<u64>();
        if injected == arrived + lost + held {
            Ok(())
        } else {
            Err(format!(
                "packet conservation violated at t={} ns (seed {}): injected {injected} != arrived {arrived} + lost {lost} + in network {held}",
                self.now, self.seed
            ))
        }
    }

    /// The sender endpoint of flow `f`, for inspection.
    pub fn sender(&self, f: usize) -> &dyn Endpoint {
        &*self.endpoints[2 * f].model
    }

    /// The output queue named `from->to`, for whole-run totals and inspection.
    pub fn queue(&self, name: &str) -> Option<&Queue> {
        self.links.iter().find(|l| l.name == name).map(|l| &l.queue)
    }

    /// Statistics of flow `f` so far.
    pub fn flow_stats(&self, f: usize) -> &FlowStats {
        &self.flow_stats[f]
    }

    /// Everything measured, over the window [warm-up, now].
    pub fn results(&mut self) -> Results {
        let now = self.now;
        for l in &mut self.links {
            l.queue.integrate(now);
        }
        let window = now.saturating_sub(self.warmup);
        let window_s = secs(window);
        let per_sec = |x: f64| if window > 0 { x / window_s } else { 0.0 };

        // The configured flows, then the workloads' in order of arrival: those retired (their
        // goodput over the whole window, like every row's), then those still running.
        let mut flows: Vec<FlowResult> = (0..self.n_configured).map(|i| self.flow_row(i)).collect();
        let mut created: Vec<FlowResult> = self.retired.clone();
        for row in &mut created {
            row.goodput_bps = per_sec(row.bytes_received as f64 * 8.0);
        }
        created.extend(
            (self.n_configured..self.flows.len()).filter(|&i| self.flows[i].id != u32::MAX).map(|i| self.flow_row(i)),
        );
        created.sort_by_key(|row| row.id);
        flows.extend(created);

        let queues: Vec<QueueResult> = self
            .links
            .iter()
            .map(|l| {
                let s = &l.queue.stats;
                let w = window.max(1) as f64;
                let mean_p = s.area_pkts as f64 / w;
                let mean_b = s.area_bytes as f64 / w;
                let sd = |sq: u128, m: f64| (sq as f64 / w - m * m).max(0.0).sqrt();
                QueueResult {
                    name: l.name.clone(),
                    kind: l.queue.kind.to_string(),
                    from: self.node_names[l.from as usize].clone(),
                    to: self.node_names[l.to as usize].clone(),
                    rate_bps: l.rate_bps,
                    arrivals: s.arrivals,
                    departures: s.departures,
                    drops: s.drops,
                    marks: s.marks,
                    drop_ratio: if s.arrivals > 0 { s.drops as f64 / s.arrivals as f64 } else { 0.0 },
                    mean_len_pkts: mean_p,
                    sd_len_pkts: sd(s.area_pkts_sq, mean_p),
                    mean_len_bytes: mean_b,
                    sd_len_bytes: sd(s.area_bytes_sq, mean_b),
                    max_len_pkts: s.max_len_pkts,
                    mean_sojourn_s: if s.departures > 0 {
                        s.sojourn_sum as f64 / s.departures as f64 / 1e9
                    } else {
                        0.0
                    },
                    mean_drop_sojourn_s: if s.drops > 0 {
                        s.drop_sojourn_sum as f64 / s.drops as f64 / 1e9
                    } else {
                        0.0
                    },
                    max_sojourn_s: secs(s.sojourn_hist.max()),
                    p50_sojourn_s: s.sojourn_hist.quantile(0.5).map_or(0.0, |v| v / 1e9),
                    p99_sojourn_s: s.sojourn_hist.quantile(0.99).map_or(0.0, |v| v / 1e9),
                    tx_bytes: l.tx_bytes,
                    // Busy time inside [warm-up, now]: the part of a transmission still in
                    // progress at `now` is not in the window yet.
                    utilization: if window > 0 {
                        l.busy_ns.saturating_sub(l.busy_until.saturating_sub(now.max(self.warmup))) as f64
                            / window as f64
                    } else {
                        0.0
                    },
                    link_losses: l.losses,
                }
            })
            .collect();

        let mut control = Vec::with_capacity(self.control.len());
        let mut control_traces = (!self.control.is_empty()).then(ControlTraceLog::default);
        for (i, c) in self.control.iter_mut().enumerate() {
            c.advance_to(now);
            control.push(c.result(i as u32));
            if let Some(log) = control_traces.as_mut() {
                c.append_trace(i as u32, log);
            }
        }

        let goodputs: Vec<f64> = self.jain_flows.iter().map(|&f| flows[f as usize].goodput_bps).collect();
        let mut traces = BTreeMap::new();
        if let Some(s) = &self.sampler {
            traces.insert("time_s".to_string(), s.time.clone());
            let mut c = 0;
            for &q in &s.queues {
                let name = &self.links[q as usize].name;
                for v in &QUEUE_COLUMNS {
                    traces.insert(format!("queue.{name}.{}", v.column()), s.columns[c].clone());
                    c += 1;
                }
            }
            for &f in &s.cwnd_flows {
                traces.insert(format!("flow.{f}.{}", CWND_COLUMN.column()), s.columns[c].clone());
                c += 1;
            }
            for &f in &s.counter_flows {
                for v in &COUNTER_COLUMNS {
                    traces.insert(format!("flow.{f}.{}", v.column()), s.columns[c].clone());
                    c += 1;
                }
            }
            for &(f, v) in &s.flow_vars {
                traces.insert(format!("flow.{f}.{}", v.column()), s.columns[c].clone());
                c += 1;
            }
            for &(q, v) in &s.queue_vars {
                let name = &self.links[q as usize].name;
                traces.insert(format!("queue.{name}.{}", v.column()), s.columns[c].clone());
                c += 1;
            }
        }
        Results {
            seed: self.seed,
            events: self.executed,
            duration_s: secs(now),
            warmup_s: secs(self.warmup),
            jain_index: jain_index(&goodputs),
            bottleneck: self.bottleneck.map(|b| self.links[b as usize].name.clone()),
            utilization: self.bottleneck.map(|b| queues[b as usize].utilization),
            flows,
            queues,
            traces,
            queue_events: self.event_log.clone(),
            messages: self.message_log.clone(),
            rtt_samples: self.rtt_sample_log(),
            control,
            control_traces,
        }
    }

    /// The row of the flow in index `i`, over the window [warm-up, now].
    pub(super) fn flow_row(&self, i: usize) -> FlowResult {
        let info = &self.flows[i];
        let window = self.now.saturating_sub(self.warmup);
        let per_sec = |x: f64| if window > 0 { x / secs(window) } else { 0.0 };
        let mean = |sum: u128, n: u64| (n > 0).then(|| sum as f64 / n as f64 / 1e9);
        let s = &self.flow_stats[i];
        let mut row = FlowResult {
            id: info.id,
            name: info.name.clone(),
            group: info.group.clone(),
            src: self.node_names[info.src as usize].clone(),
            dst: self.node_names[info.dst as usize].clone(),
            transport: info.transport.clone(),
            app: info.app.clone(),
            start_s: secs(info.start),
            // A transfer is one message: complete once it is delivered and nothing is
            // pending. It starts at the flow's start, when its SYN (with a handshake)
            // or its first data packet leaves.
            fct_s: (info.app == crate::app::transfer::MODEL.name
                && self.ledgers[i].pending() == 0
                && s.last_message_at > 0)
                .then(|| secs(s.last_message_at - info.start)),
            size_bytes: info.size,
            bytes_delivered: s.bytes_delivered,
            bytes_received: s.bytes_received,
            goodput_bps: per_sec(s.bytes_received as f64 * 8.0),
            packets_sent: s.packets_sent,
            packets_received: s.packets_received,
            retransmissions: s.retransmissions,
            timeouts: s.timeouts,
            fast_recoveries: s.fast_recoveries,
            ecn_reductions: s.ecn_reductions,
            ecn_marks: s.ecn_marks,
            queue_drops: s.queue_drops,
            link_losses: s.link_losses,
            rtt_samples: s.rtt_n,
            rtt_min_s: s.rtt_min.map(secs),
            rtt_mean_s: mean(s.rtt_sum, s.rtt_n),
            rtt_max_s: s.rtt_max.map(secs),
            delay_mean_s: mean(s.delay_sum, s.delay_n),
            delay_max_s: s.delay_max.map(secs),
            delay_p50_s: s.delay_hist.quantile(0.5).map(|v| v / 1e9),
            delay_p99_s: s.delay_hist.quantile(0.99).map(|v| v / 1e9),
            messages_generated: s.messages_generated,
            messages_lost_at_sender: s.messages_lost_at_sender,
            messages_received: s.messages_received,
            messages_lost_network: s.messages_lost_network,
            messages_pending: self.ledgers[i].pending() as u64,
            message_delay_mean_s: mean(s.message_delay_sum, s.messages_received),
            message_delay_max_s: s.message_delay_max.map(secs),
            ..FlowResult::default()
        };
        // Slowdown: the completion time over the transfer's alone on an idle path.
        row.slowdown = row.fct_s.zip(info.ideal).map(|(fct, ideal)| fct / secs(ideal.max(1)));
        self.endpoints[2 * i].model.report(&mut row);
        row
    }

    /// Every flow's RTT samples merged into one log ordered by time, then flow.
    fn rtt_sample_log(&self) -> Option<RttSampleLog> {
        if !self.rtt_logs {
            return None;
        }
        let mut rows: Vec<(Time, u32, Time)> = self.retired_rtt.clone();
        for (f, s) in self.flow_stats.iter().enumerate() {
            let Some(log) = s.rtt_log.as_ref().filter(|_| self.flows[f].id != u32::MAX) else { continue };
            rows.extend(log.iter().map(|&(t, rtt)| (t, self.flows[f].id, rtt)));
        }
        // Each flow's log is already in time order; a stable sort by time keeps flows in order.
        rows.sort_by_key(|&(t, f, _)| (t, f));
        let mut log = RttSampleLog::default();
        for (t, f, rtt) in rows {
            log.time_s.push(secs(t));
            log.flow.push(f);
            log.rtt_s.push(secs(rtt));
        }
        Some(log)
    }
}

/// Jain's fairness index (Jain, Chiu, Hawe, "A Quantitative Measure of Fairness and
/// Discrimination for Resource Allocation in Shared Computer Systems", DEC-TR-301, 1984):
/// `(Σx)² / (n Σx²)`; `None` when undefined (no flows, or all zero).
pub fn jain_index(x: &[f64]) -> Option<f64> {
    let sum: f64 = x.iter().sum();
    let sum_sq: f64 = x.iter().map(|v| v * v).sum();
    (sum_sq > 0.0).then(|| sum * sum / (x.len() as f64 * sum_sq))
}
