//! Static shortest-path routing by hop count, computed once.
//!
//! Hosts never forward. A node with a single outgoing link sends everything on it (most
//! hosts), so only nodes with several links keep a next-hop table. Ties between equal-length
//! paths go to the lowest link index, which keeps routes deterministic.

use std::collections::VecDeque;

/// Sentinel for "no route".
pub const NO_ROUTE: u32 = u32::MAX;

/// Next-hop tables.
pub struct Routes {
    /// Per node: its only outgoing link, when it has exactly one.
    single: Vec<u32>,
    /// Per node with several links: next link for every destination node.
    table: Vec<Vec<u32>>,
}

impl Routes {
    /// Compute routes for `n` nodes. `out_links[v]` lists `(link, neighbour)` leaving v;
    /// `forwards[v]` says whether v may carry transit traffic (routers).
    ///
    /// For every destination, a breadth-first search backwards from it gives each node's
    /// hop count to it, through routers only; a node with several links then takes the
    /// lowest-index link to a neighbour one hop closer that is the destination or a router.
    /// Hosts with a single link neither forward nor keep a table, so the search does not
    /// visit them, and a node looks only at its links to routers and to the destination
    /// itself: with many hosts on few routers (a dumbbell of 9 000 flows) each search is a
    /// few steps instead of a pass over every node and every host's link.
    pub fn compute(out_links: &[Vec<(u32, u32)>], forwards: &[bool]) -> Routes {
        let n = out_links.len();
        let single: Vec<u32> =
            out_links.iter().map(|l| if l.len() == 1 { l[0].0 } else { NO_ROUTE }).collect();
        let multi: Vec<usize> = (0..n).filter(|&v| out_links[v].len() > 1).collect();
        let mut table: Vec<Vec<u32>> = vec![Vec::new(); n];
        for &v in &multi {
            table[v] = vec![NO_ROUTE; n];
        }
        // Whose hop counts are ever read: routers (transit) and nodes with a table.
        let counted = |v: usize| forwards[v] || out_links[v].len() > 1;
        // in_links[w]: (link, from) arriving at w; `counted_in` keeps those from counted nodes.
        let mut in_links: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        for (v, links) in out_links.iter().enumerate() {
            for &(l, w) in links {
                in_links[w as usize].push((l, v as u32));
            }
        }
        let counted_in: Vec<Vec<u32>> =
            in_links.iter().map(|ins| ins.iter().filter(|&&(_, v)| counted(v as usize)).map(|&(_, v)| v).collect()).collect();
        // Per node with a table: its links to routers.
        let to_routers: Vec<Vec<(u32, u32)>> = (0..n)
            .map(|v| {
                if out_links[v].len() > 1 {
                    out_links[v].iter().copied().filter(|&(_, w)| forwards[w as usize]).collect()
                } else {
                    Vec::new()
                }
            })
            .collect();
        let mut dist = vec![u32::MAX; n];
        let mut reached: Vec<u32> = Vec::new();
        let mut queue = VecDeque::new();
        for dst in 0..n {
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
                table[v][dst] = to_routers[v].iter().filter(|&&(_, w)| closer(v, w)).map(|&(l, _)| l).min().unwrap_or(NO_ROUTE);
            }
            // Direct links to the destination (one hop closer when the node is one hop away).
            for &(l, v) in &in_links[dst] {
                let v = v as usize;
                if v != dst && out_links[v].len() > 1 && dist[v] == 1 {
                    table[v][dst] = table[v][dst].min(l);
                }
            }
        }
        Routes { single, table }
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
        match self.table[node as usize].get(dst as usize) {
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
            let r = Routes::compute(&out, &forwards);
            for node in 0..n {
                for dst in 0..n {
                    assert_eq!(r.next_link(node as u32, dst as u32), by_definition(&out, &forwards, node, dst), "{node} -> {dst} in {out:?}, routers {forwards:?}");
                }
            }
        }
    }

    #[test]
    fn shortest_paths_through_routers_only() {
        // h0 - r1 - r2 - h3, plus a longer detour r1 - r4 - r5 - r2 and a host h6 on r1 that
        // must never be used for transit (link r1-h6-r2 would be a shortcut through a host).
        // Links (directed): index = position.
        let links = [
            (0, 1), (1, 0), // 0,1: h0-r1
            (1, 2), (2, 1), // 2,3: r1-r2
            (2, 3), (3, 2), // 4,5: r2-h3
            (1, 4), (4, 1), // 6,7
            (4, 5), (5, 4), // 8,9
            (5, 2), (2, 5), // 10,11
            (1, 6), (6, 1), // 12,13: r1-h6
            (6, 2), (2, 6), // 14,15: h6-r2
        ];
        let mut out = vec![Vec::new(); 7];
        for (i, &(a, b)) in links.iter().enumerate() {
            out[a].push((i as u32, b as u32));
        }
        let forwards = [false, true, true, false, true, true, false];
        let r = Routes::compute(&out, &forwards);
        assert_eq!(r.next_link(0, 3), 0); // host with one link
        assert_eq!(r.next_link(1, 3), 2); // r1 -> r2 directly, not via h6
        assert_eq!(r.next_link(2, 0), 3);
        assert_eq!(r.next_link(2, 3), 4);
        assert_eq!(r.next_link(1, 4), 6);
        // r1 -> r5: two hops via r2 (link 2) or r4 (link 6); the tie goes to the lower index.
        assert_eq!(r.next_link(1, 5), 2);
    }
}
