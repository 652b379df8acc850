//! Shortest-path routing by hop count, computed once, and again whenever a link goes down
//! or comes back up (`LinkSpec::schedule`, [`Routes::compute_with_links_up`]).
//!
//! Hosts never forward. A node with a single outgoing link sends everything on it (most
//! hosts), so only nodes with several links keep a next-hop table. Ties between equal-length
//! paths go to the lowest link index, which keeps routes deterministic.

use std::collections::VecDeque;

use crate::config::{Config, NodeKind};
use crate::error::ConfigError;

/// Sentinel for "no route".
pub const NO_ROUTE: u32 = u32::MAX;

/// Next-hop tables.
pub struct Routes {
    /// Per node: its only outgoing link, when it has exactly one.
    single: Vec<u32>,
    /// Per node: its column in the tables when packets are addressed to it (a flow's end),
    /// `NO_ROUTE` otherwise. Tables hold destinations only, so their size is the multi-link
    /// nodes times the flows' hosts, not the nodes squared (a chain of 24 000 routers would
    /// need 2.3 GB).
    column: Vec<u32>,
    /// Per node with several links: next link for every destination, by column.
    table: Vec<Vec<u32>>,
    /// Per link: the node it leads to.
    far_end: Vec<u32>,
    /// Per node: whether it forwards (a router).
    forwards: Vec<bool>,
}

/// Each node's outgoing `(link, neighbour)` list for a configuration's full-duplex links
/// `(a, b)`: link `2 i` runs from `a` to `b` of the `i`-th, `2 i + 1` back (the engine's
/// link indices). Node indices must be below `n`.
pub fn out_links(n: usize, ends: impl IntoIterator<Item = (u32, u32)>) -> Vec<Vec<(u32, u32)>> {
    let mut out = vec![Vec::new(); n];
    for (i, (a, b)) in ends.into_iter().enumerate() {
        out[a as usize].push((2 * i as u32, b));
        out[b as usize].push((2 * i as u32 + 1, a));
    }
    out
}

/// Every flow's path from its source to its destination, as the engine routes its packets:
/// link indices as [`out_links`] numbers them, empty when the two hosts are not connected
/// through routers. The Python front bounds from these what a flow can deliver before it
/// runs anything (`python/ccsim/scenario/limits.py`). Errors name a node index that does not exist.
pub fn flow_paths(cfg: &Config) -> Result<Vec<Vec<u32>>, ConfigError> {
    cfg.check_node_indices()?;
    let routes = Routes::of(cfg);
    Ok(cfg.flows.iter().map(|f| routes.path(f.src, f.dst).unwrap_or_default()).collect())
}

impl Routes {
    /// The routes of a configuration whose node indices exist
    /// ([`Config::check_node_indices`]); routers are the nodes of kind `router`.
    pub fn of(cfg: &Config) -> Routes {
        let forwards: Vec<bool> = cfg.nodes.iter().map(|v| v.kind == NodeKind::Router).collect();
        // Packets go to the two ends of a flow only: data to its destination, ACKs to its source.
        Routes::compute(&out_links(cfg.nodes.len(), cfg.links.iter().map(|l| (l.a, l.b))), &forwards, &cfg.flow_ends())
    }

    /// Compute routes for `n` nodes to the nodes `destinations` (repeats allowed; any other
    /// destination has no route). `out_links[v]` lists `(link, neighbour)` leaving v;
    /// `forwards[v]` says whether v may carry transit traffic (routers).
    ///
    /// For every destination, a breadth-first search backwards from it gives each node's
    /// hop count to it, through routers only; a node with several links then takes the
    /// lowest-index link to a neighbour one hop closer that is the destination or a router.
    /// Hosts with a single link neither forward nor keep a table, so the search does not
    /// visit them, and a node looks only at its links to routers and to the destination
    /// itself: with many hosts on few routers (a dumbbell of 9 000 flows) each search is a
    /// few steps instead of a pass over every node and every host's link.
    pub fn compute(out_links: &[Vec<(u32, u32)>], forwards: &[bool], destinations: &[u32]) -> Routes {
        Routes::compute_over(out_links, forwards, destinations, None)
    }

    /// The routes of [`Routes::compute`] over the link directions that are up (`up[l]`),
    /// for a network whose links go down and come back (`LinkSpec::schedule`): each node
    /// takes the shortest path of links that are up. Where none joins a node with several
    /// links to a destination, the node keeps `full`'s entry, the route over every link
    /// (routes computed with all links up): its packets wait in the queue of a link that is
    /// down until it comes back, as a Linux router's do behind an interface without carrier
    /// when its route stays (`ignore_routes_with_linkdown`, off by default). So a route
    /// exists wherever `full` has one, and a packet never loops: a node on the fallback
    /// forwards only to neighbours that have no path of links up either, each one hop
    /// closer by `full`'s hop counts. Hosts with a single link always use it.
    pub fn compute_with_links_up(
        out_links: &[Vec<(u32, u32)>],
        forwards: &[bool],
        destinations: &[u32],
        up: &[bool],
        full: &Routes,
    ) -> Routes {
        let mut routes = Routes::compute_over(out_links, forwards, destinations, Some(up));
        debug_assert_eq!(routes.column, full.column, "the same destinations");
        for (table, fallback) in routes.table.iter_mut().zip(&full.table) {
            for (entry, &f) in table.iter_mut().zip(fallback) {
                if *entry == NO_ROUTE {
                    *entry = f;
                }
            }
        }
        routes
    }

    /// [`Routes::compute`], searching only the link directions `usable` allows (all when
    /// `None`); which nodes keep a table does not depend on it.
    fn compute_over(
        out_links: &[Vec<(u32, u32)>],
        forwards: &[bool],
        destinations: &[u32],
        usable: Option<&[bool]>,
    ) -> Routes {
        let usable = |l: u32| usable.is_none_or(|u| u[l as usize]);
        let n = out_links.len();
        let mut column = vec![NO_ROUTE; n];
        let mut dsts: Vec<usize> = Vec::new();
        for &d in destinations {
            if column[d as usize] == NO_ROUTE {
                column[d as usize] = dsts.len() as u32;
                dsts.push(d as usize);
            }
        }
        let links = out_links.iter().flatten().map(|&(l, _)| l as usize + 1).max().unwrap_or(0);
        let mut far_end = vec![NO_ROUTE; links];
        for &(l, w) in out_links.iter().flatten() {
            far_end[l as usize] = w;
        }
        let single: Vec<u32> = out_links.iter().map(|l| if l.len() == 1 { l[0].0 } else { NO_ROUTE }).collect();
        let multi: Vec<usize> = (0..n).filter(|&v| out_links[v].len() > 1).collect();
        let mut table: Vec<Vec<u32>> = vec![Vec::new(); n];
        for &v in &multi {
            table[v] = vec![NO_ROUTE; dsts.len()];
        }
        // Whose hop counts are ever read: routers (transit) and nodes with a table.
        let counted = |v: usize| forwards[v] || out_links[v].len() > 1;
        // in_links[w]: (link, from) arriving at w; `counted_in` keeps those from counted nodes.
        let mut in_links: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        for (v, links) in out_links.iter().enumerate() {
            for &(l, w) in links.iter().filter(|&&(l, _)| usable(l)) {
                in_links[w as usize].push((l, v as u32));
            }
        }
        let counted_in: Vec<Vec<u32>> = in_links
            .iter()
            .map(|ins| ins.iter().filter(|&&(_, v)| counted(v as usize)).map(|&(_, v)| v).collect())
            .collect();
        // Per node with a table: its links to routers.
        let to_routers: Vec<Vec<(u32, u32)>> = (0..n)
            .map(|v| {
                if out_links[v].len() > 1 {
                    out_links[v].iter().copied().filter(|&(l, w)| forwards[w as usize] && usable(l)).collect()
                } else {
                    Vec::new()
                }
            })
            .collect();
        let mut dist = vec![u32::MAX; n];
        let mut reached: Vec<u32> = Vec::new();
        let mut queue = VecDeque::new();
        for (c, &dst) in dsts.iter().enumerate() {
            for &v in &reached {
                dist[v as usize] = u32::MAX;
            }
            reached.clear();
            dist[dst] = 0;
            reached.push(dst as u32);
            queue.clear();
            queue.push_back(dst as u32);
            while let Some(w) = queue.pop_front() {
                for &v in &counted_in[w as usize] {
                    if dist[v as usize] == u32::MAX {
                        dist[v as usize] = dist[w as usize] + 1;
                        reached.push(v);
                        // Only routers can be on the way to the destination.
                        if forwards[v as usize] {
                            queue.push_back(v);
                        }
                    }
                }
            }
            let closer = |v: usize, w: u32| dist[w as usize] != u32::MAX && dist[w as usize] + 1 == dist[v];
            for &v in &multi {
                if v == dst {
                    continue;
                }
                table[v][c] =
                    to_routers[v].iter().filter(|&&(_, w)| closer(v, w)).map(|&(l, _)| l).min().unwrap_or(NO_ROUTE);
            }
            // Direct links to the destination (one hop closer when the node is one hop away).
            for &(l, v) in &in_links[dst] {
                let v = v as usize;
                if v != dst && out_links[v].len() > 1 && dist[v] == 1 {
                    table[v][c] = table[v][c].min(l);
                }
            }
        }
        Routes { single, column, table, far_end, forwards: forwards.to_vec() }
    }

    /// The links a packet takes from `from` to `to`, or `None` when they are not connected
    /// through routers.
    pub fn path(&self, from: u32, to: u32) -> Option<Vec<u32>> {
        let mut hops = Vec::new();
        let mut node = from;
        while node != to {
            // A node with a single link always uses it, so an unreachable destination shows
            // up as a walk that never arrives, or one that reaches a host on the way (a host's
            // only link may lead to another host), rather than as a missing table entry.
            if node != from && !self.forwards[node as usize] {
                return None;
            }
            let l = self.next_link(node, to);
            if l == NO_ROUTE || hops.len() >= self.far_end.len() {
                return None;
            }
            hops.push(l);
            node = self.far_end[l as usize];
        }
        Some(hops)
    }

    /// Whether `node` forwards packets (a router).
    pub fn is_router(&self, node: u32) -> bool {
        self.forwards[node as usize]
    }

    /// The only link leaving `node`, or `NO_ROUTE` when it has none or several.
    pub fn only_link(&self, node: u32) -> u32 {
        self.single[node as usize]
    }

    /// The link `node` uses towards `dst`.
    #[inline]
    pub fn next_link(&self, node: u32, dst: u32) -> u32 {
        let s = self.single[node as usize];
        if s != NO_ROUTE {
            return s;
        }
        let c = self.column[dst as usize];
        match self.table[node as usize].get(c as usize) {
            Some(&l) => l,
            None => NO_ROUTE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, computed plainly: hop counts by a backward search through routers from
    /// every destination, then the lowest-index link to a neighbour one hop closer that is
    /// the destination or a router (the first implementation, quadratic in the nodes).
    fn by_definition(out_links: &[Vec<(u32, u32)>], forwards: &[bool], node: usize, dst: usize) -> u32 {
        let n = out_links.len();
        if out_links[node].len() == 1 {
            return out_links[node][0].0;
        }
        if out_links[node].is_empty() || node == dst {
            return NO_ROUTE;
        }
        let mut dist = vec![u32::MAX; n];
        dist[dst] = 0;
        let mut queue = VecDeque::from([dst]);
        while let Some(w) = queue.pop_front() {
            if w != dst && !forwards[w] {
                continue;
            }
            for (v, links) in out_links.iter().enumerate() {
                if dist[v] == u32::MAX && links.iter().any(|&(_, x)| x as usize == w) {
                    dist[v] = dist[w] + 1;
                    queue.push_back(v);
                }
            }
        }
        out_links[node]
            .iter()
            .filter(|&&(_, w)| {
                let w = w as usize;
                dist[w] != u32::MAX && dist[w] + 1 == dist[node] && (w == dst || forwards[w])
            })
            .map(|&(l, _)| l)
            .min()
            .unwrap_or(NO_ROUTE)
    }

    #[test]
    fn every_route_follows_the_definition_on_random_networks() {
        let mut rng = crate::sim::rng::Rng::stream(11, crate::sim::rng::Stream::Queue(0));
        for _ in 0..300 {
            let n = rng.range_u64(2, 14) as usize;
            let forwards: Vec<bool> = (0..n).map(|_| rng.chance(0.5)).collect();
            let mut out = vec![Vec::new(); n];
            let mut index = 0u32;
            for _ in 0..rng.range_u64(1, 3 * n as u64) {
                let (a, b) = (rng.range_u64(0, n as u64) as usize, rng.range_u64(0, n as u64) as usize);
                if a != b {
                    // Links come in pairs, as in the engine, in a random order of indices.
                    out[a].push((index, b as u32));
                    out[b].push((index + 1, a as u32));
                    index += 2;
                }
            }
            let r = Routes::compute(&out, &forwards, &(0..out.len() as u32).collect::<Vec<_>>());
            for node in 0..n {
                for dst in 0..n {
                    assert_eq!(
                        r.next_link(node as u32, dst as u32),
                        by_definition(&out, &forwards, node, dst),
                        "{node} -> {dst} in {out:?}, routers {forwards:?}"
                    );
                }
            }
        }
    }

    /// A walk from `from` to `to` by the definition's next hops, or `None` when it fails or
    /// goes round.
    fn walk_by_definition(
        out_links: &[Vec<(u32, u32)>],
        forwards: &[bool],
        from: usize,
        to: usize,
    ) -> Option<Vec<u32>> {
        let far_end = |l: u32| out_links.iter().flatten().find(|&&(k, _)| k == l).map(|&(_, w)| w as usize);
        let links: usize = out_links.iter().map(Vec::len).sum();
        let (mut node, mut hops) = (from, Vec::new());
        while node != to {
            if node != from && !forwards[node] {
                return None; // hosts do not forward
            }
            let l = by_definition(out_links, forwards, node, to);
            if l == NO_ROUTE || hops.len() > links {
                return None;
            }
            hops.push(l);
            node = far_end(l)?;
        }
        Some(hops)
    }

    #[test]
    fn paths_are_the_walks_of_the_definitions_next_hops_on_random_networks() {
        let mut rng = crate::sim::rng::Rng::stream(12, crate::sim::rng::Stream::Queue(0));
        let mut connected = 0;
        for _ in 0..300 {
            let n = rng.range_u64(2, 12) as usize;
            let forwards: Vec<bool> = (0..n).map(|_| rng.chance(0.5)).collect();
            let ends: Vec<(u32, u32)> = (0..rng.range_u64(1, 3 * n as u64))
                .map(|_| (rng.range_u64(0, n as u64) as u32, rng.range_u64(0, n as u64) as u32))
                .filter(|(a, b)| a != b)
                .collect();
            let out = out_links(n, ends.iter().copied());
            let r = Routes::compute(&out, &forwards, &(0..out.len() as u32).collect::<Vec<_>>());
            for from in 0..n {
                for to in 0..n {
                    let path = r.path(from as u32, to as u32);
                    assert_eq!(
                        path,
                        walk_by_definition(&out, &forwards, from, to),
                        "{from} -> {to} in {ends:?}, routers {forwards:?}"
                    );
                    if let Some(hops) = path.filter(|h| !h.is_empty()) {
                        connected += 1;
                        // The walk is joined up: link 2 i runs from ends[i].0 to ends[i].1,
                        // 2 i + 1 back.
                        let mut node = from as u32;
                        for &l in &hops {
                            let (a, b) = ends[l as usize / 2];
                            let (near, far) = if l % 2 == 0 { (a, b) } else { (b, a) };
                            assert_eq!(near, node, "{from} -> {to}: {hops:?} in {ends:?}");
                            node = far;
                        }
                        assert_eq!(node, to as u32);
                    }
                }
            }
        }
        assert!(connected > 1000, "the random networks connect enough pairs to test ({connected})");
    }

    #[test]
    fn shortest_paths_through_routers_only() {
        // h0 - r1 - r2 - h3, plus a longer detour r1 - r4 - r5 - r2 and a host h6 on r1 that
        // must never be used for transit (link r1-h6-r2 would be a shortcut through a host).
        // Links (directed): index = position.
        let links = [
            (0, 1),
            (1, 0), // 0,1: h0-r1
            (1, 2),
            (2, 1), // 2,3: r1-r2
            (2, 3),
            (3, 2), // 4,5: r2-h3
            (1, 4),
            (4, 1), // 6,7
            (4, 5),
            (5, 4), // 8,9
            (5, 2),
            (2, 5), // 10,11
            (1, 6),
            (6, 1), // 12,13: r1-h6
            (6, 2),
            (2, 6), // 14,15: h6-r2
        ];
        let mut out = vec![Vec::new(); 7];
        for (i, &(a, b)) in links.iter().enumerate() {
            out[a].push((i as u32, b as u32));
        }
        let forwards = [false, true, true, false, true, true, false];
        let r = Routes::compute(&out, &forwards, &(0..out.len() as u32).collect::<Vec<_>>());
        assert_eq!(r.next_link(0, 3), 0); // host with one link
        assert_eq!(r.next_link(1, 3), 2); // r1 -> r2 directly, not via h6
        assert_eq!(r.next_link(2, 0), 3);
        assert_eq!(r.next_link(2, 3), 4);
        assert_eq!(r.next_link(1, 4), 6);
        // r1 -> r5: two hops via r2 (link 2) or r4 (link 6); the tie goes to the lower index.
        assert_eq!(r.next_link(1, 5), 2);
    }

    #[test]
    fn routes_over_the_links_up_go_round_a_link_down_and_fall_back_where_none_is_left() {
        // h0 - r1 - r2 - h3, and r1 - r4 - r2 the long way. Links by position: 0 h0-r1,
        // 1 r1-r2, 2 r2-h3, 3 r1-r4, 4 r4-r2 (directions 2 i and 2 i + 1).
        let out = out_links(5, [(0, 1), (1, 2), (2, 3), (1, 4), (4, 2)]);
        let forwards = [false, true, true, false, true];
        let full = Routes::compute(&out, &forwards, &[0, 3]);
        let up = |down: &[u32]| (0..10).map(|l| !down.contains(&l)).collect::<Vec<bool>>();
        let routes = |down: &[u32]| Routes::compute_with_links_up(&out, &forwards, &[0, 3], &up(down), &full);
        assert_eq!(full.path(0, 3), Some(vec![0, 2, 4]));
        assert_eq!(routes(&[]).path(0, 3), Some(vec![0, 2, 4]));
        // r1 -> r2 down: the long way; back the other way still direct.
        assert_eq!(routes(&[2]).path(0, 3), Some(vec![0, 6, 8, 4]));
        assert_eq!(routes(&[2]).path(3, 0), Some(vec![5, 3, 1]));
        // Both ways down from r1: no path of links up; r1 keeps the direct route (its packets
        // wait for the link), r4 keeps its own.
        assert_eq!(routes(&[2, 6]).path(0, 3), Some(vec![0, 2, 4]));
        // A host's only link is its route whatever its state.
        assert_eq!(routes(&[0]).path(0, 3), Some(vec![0, 2, 4]));
    }

    #[test]
    fn tables_hold_the_destinations_only() {
        // h0 - r1 - r2 - ... - r2000 - h2001: every router has two links, and only the two
        // hosts receive packets. Tables of every node would hold 2000 x 2002 entries.
        let n = 2002;
        let out = out_links(n, (0..n as u32 - 1).map(|i| (i, i + 1)));
        let forwards: Vec<bool> = (0..n).map(|v| v != 0 && v != n - 1).collect();
        let r = Routes::compute(&out, &forwards, &[0, n as u32 - 1, 0]);
        assert_eq!(r.table.iter().map(Vec::len).sum::<usize>(), 2000 * 2);
        assert_eq!(r.path(0, n as u32 - 1).map(|p| p.len()), Some(n - 1));
        assert_eq!(r.path(n as u32 - 1, 0).map(|p| p.len()), Some(n - 1));
        // A router is no destination: no route to it.
        assert_eq!(r.next_link(5, 9), NO_ROUTE);
    }

    #[test]
    fn flow_paths_of_a_configuration() {
        // h0 - r1 - r2 - h3 and r1 - r4 - r2: two ways from r1 to r2 of which the direct one
        // is shorter; h5 on r4 alone. Links by position: 0 h0-r1, 1 r1-r2, 2 r2-h3, 3 r1-r4,
        // 4 r4-r2, 5 h5-r4, 6 h6 alone with h7 (hosts do not forward: h6-h7 is direct).
        let dir = r#"{"rate_bps": 1000000, "delay_ns": 1, "queue": {"kind": "droptail"}}"#;
        let link = |a: u32, b: u32| format!(r#"{{"a": {a}, "b": {b}, "ab": {dir}, "ba": {dir}}}"#);
        let node = |i: u32, kind: &str| format!(r#"{{"name": "n{i}", "kind": "{kind}"}}"#);
        let flow = |src: u32, dst: u32| {
            format!(r#"{{"src": {src}, "dst": {dst}, "transport": {{"kind": "tcp"}}, "app": {{"kind": "bulk"}}}}"#)
        };
        let kinds = ["host", "router", "router", "host", "router", "host", "host", "host"];
        let json = format!(
            r#"{{"duration_ns": 1000, "nodes": [{}], "links": [{}], "flows": [{}]}}"#,
            kinds.iter().enumerate().map(|(i, k)| node(i as u32, k)).collect::<Vec<_>>().join(","),
            [(0, 1), (1, 2), (2, 3), (1, 4), (4, 2), (5, 4), (6, 7)].map(|(a, b)| link(a, b)).join(","),
            [(0, 3), (3, 0), (5, 3), (0, 6), (6, 7)].map(|(s, d)| flow(s, d)).join(","),
        );
        let mut cfg: Config = serde_json::from_str(&json).unwrap();
        assert_eq!(
            flow_paths(&cfg).unwrap(),
            vec![
                vec![0, 2, 4],  // h0 -> r1 -> r2 -> h3, the direct way
                vec![5, 3, 1],  // back
                vec![10, 8, 4], // h5 -> r4 -> r2 -> h3
                vec![],         // h6 is not connected to h0
                vec![12],       // one link, no router needed
            ]
        );
        cfg.flows[0].dst = 8;
        let err = flow_paths(&cfg).unwrap_err();
        assert_eq!(
            (err.field.as_str(), err.message.as_str()),
            ("flows[0].dst", "node index 8 does not exist (8 nodes)")
        );
    }
}
